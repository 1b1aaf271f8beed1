"""Old module paths that moved in 0.2, kept importable for one release.

ONE table, {old module: new module}. A finder on `sys.meta_path` answers imports of an old name
with the new module itself (the same object, so classes and functions are identical) and a
DeprecationWarning naming the new path. No file stays at an old path.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from typing import Any

MOVED: dict[str, str] = {
    "judgeflow.baselines": "judgeflow.backends.lexical",
    "judgeflow.rouge": "judgeflow.backends.rouge",
    "judgeflow.passages": "judgeflow.backends.passages",
    "judgeflow.llm": "judgeflow.backends.llm",
    "judgeflow.store": "judgeflow.runs.store",
    "judgeflow.pricing": "judgeflow.runs.pricing",
    "judgeflow.batch": "judgeflow.runs.batch",
    "judgeflow.batch_openai": "judgeflow.runs.batch.openai",
    "judgeflow.batch_anthropic": "judgeflow.runs.batch.anthropic",
    "judgeflow.calibrate": "judgeflow.calibration.agreement",
    "judgeflow.compare": "judgeflow.calibration.comparison",
    "judgeflow.labels": "judgeflow.calibration.labels",
    "judgeflow.sampling": "judgeflow.calibration.sampling",
    "judgeflow.labeler": "judgeflow.calibration.labeller",
    "judgeflow.report_html": "judgeflow.calibration.report_html",
    "judgeflow.claims": "judgeflow.schemas",
    "judgeflow.delimit": "judgeflow.prompts",
    "judgeflow.requirements": "judgeflow.spec_review",
}


def _caller_stacklevel() -> int:
    """The stack level of the importing code, for `warnings.warn` (which itself skips the frames of
    importlib's bootstrap, so only the frames of this file are counted)."""
    frame, level = sys._getframe(2), 2  # 1 = the create_module frame that calls warn
    while frame is not None and (frame.f_code.co_filename == __file__ or _internal(frame.f_code.co_filename)):
        if frame.f_code.co_filename == __file__:
            level += 1
        frame = frame.f_back
    return level


def _internal(filename: str) -> bool:
    return "importlib" in filename and "_bootstrap" in filename


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self.new = new
        self._spec: Any = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        warnings.warn(
            f"{spec.name} moved to {self.new}; the old path goes away in the next release",
            DeprecationWarning,
            stacklevel=_caller_stacklevel(),
        )
        module = importlib.import_module(self.new)
        self._spec = module.__spec__  # the import system writes the alias spec over it; put it back
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__ = self._spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(new))


class _Package(types.ModuleType):
    """The judgeflow package: importing a module must not replace a public function of the same name
    with the module: an old path (`judgeflow.calibrate`, `judgeflow.compare`), or a module whose
    function is loaded on first use (`judgeflow.judge`, the function, from `judgeflow/judge.py`)."""

    def __setattr__(self, name: str, value: Any) -> None:
        lazy = self.__dict__.get("_LAZY", {})
        public = name in self.__dict__ or name in lazy  # bound, or loaded on first use
        if isinstance(value, types.ModuleType) and public and (f"{self.__name__}.{name}" in MOVED or name in lazy):
            return
        super().__setattr__(name, value)


def install(package: types.ModuleType) -> None:
    """Answer old paths from now on (called once by judgeflow/__init__)."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.append(_AliasFinder())
    package.__class__ = _Package
