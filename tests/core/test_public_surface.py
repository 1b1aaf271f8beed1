"""The package's public surface: plain lazy names (PEP 562), no public name shadowed by a submodule."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types
from pathlib import Path

import pytest

import judgeflow

PACKAGE = Path(judgeflow.__file__).resolve().parent


def test_no_public_name_is_also_a_submodule():
    """Importing `judgeflow.X` sets the package attribute X to the module: a public name X defined
    elsewhere would be shadowed by it (the function `judge` and the module `judge.py` were)."""
    clashes = [n for n in judgeflow.__all__ if (PACKAGE / f"{n}.py").exists() or (PACKAGE / n / "__init__.py").exists()]
    assert clashes == []


@pytest.mark.slow  # a fresh interpreter: what was imported first is the point
def test_the_package_is_a_plain_module_whatever_was_imported_first():
    assert type(judgeflow) is types.ModuleType
    code = ("import judgeflow._judge, judgeflow.workflow, judgeflow, types\n"
            "assert type(judgeflow) is types.ModuleType\n"
            "assert callable(judgeflow.judge) and judgeflow.judge.__name__ == 'judge', judgeflow.judge\n"
            "assert judgeflow.Judge.__name__ == 'Judge'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_public_name_resolves_to_what_it_names():
    for name in judgeflow.__all__:
        value = getattr(judgeflow, name)
        assert not isinstance(value, types.ModuleType), name
        assert getattr(value, "__name__", name) == name, name
    assert importlib.import_module("judgeflow._judge").judge is judgeflow.judge
