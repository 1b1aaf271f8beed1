"""Old module paths (before the 0.2 layout) keep working for one release, via judgeflow._moved."""

import importlib
import subprocess
import sys
import warnings

import pytest

import judgeflow
from judgeflow._moved import MOVED


@pytest.mark.parametrize("old,new", sorted(MOVED.items()))
def test_old_path_is_the_new_module_with_a_warning(old, new):
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__spec__.name == new  # the alias does not overwrite the real module's spec
    messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert any(old in m and new in m for m in messages), messages


def test_old_from_import_gives_the_same_objects_and_points_at_the_caller():
    code = (
        "import warnings; warnings.simplefilter('always')\n"
        "from judgeflow.store import RunStore\n"
        "from judgeflow.calibrate import CalibrationReport\n"
        "import judgeflow.runs.store, judgeflow.calibration.agreement as a, judgeflow\n"
        "assert RunStore is judgeflow.runs.store.RunStore is judgeflow.RunStore\n"
        "assert CalibrationReport is a.CalibrationReport\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "<string>:2: DeprecationWarning: judgeflow.store moved to judgeflow.runs.store" in out.stderr
    assert "<string>:3: DeprecationWarning: judgeflow.calibrate moved to judgeflow.calibration.agreement" in out.stderr


def test_importing_an_old_path_does_not_shadow_a_public_function():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        importlib.import_module("judgeflow.calibrate")
        importlib.import_module("judgeflow.compare")
    assert callable(judgeflow.calibrate) and judgeflow.calibrate.__module__ == "judgeflow.calibration.agreement"
    assert callable(judgeflow.compare) and judgeflow.compare.__module__ == "judgeflow.calibration.comparison"


def test_no_public_name_shadows_a_module():
    import pkgutil

    modules = {m.name for m in pkgutil.iter_modules(judgeflow.__path__)}
    # `judge` (the function) still shadows judgeflow/judge.py: left for a later rename
    assert modules & set(judgeflow.__all__) <= {"judge"}
    assert not {old.rpartition(".")[2] for old in MOVED} & modules  # no file left at an old path


def test_unknown_names_still_fail():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("judgeflow.no_such_module")
