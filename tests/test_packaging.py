"""The wheel ships the criteria inside the package, and `load_criterion` finds them there
(not only in an editable install, where they are read from the repository's criteria/)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the wheel offline with the installed backend (no build isolation, no index)."""
    pytest.importorskip("hatchling", reason="the build backend (hatchling) is not installed: pip install -e '.[test]'")
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "-w", str(out), str(ROOT)],
        capture_output=True, text=True, timeout=300,
    )
    if proc.returncode != 0:
        pytest.skip(f"could not build the wheel here: {proc.stderr.strip()[-500:]}")
    (whl,) = out.glob("judgeflow-*.whl")
    return whl


@pytest.mark.slow
def test_wheel_contains_every_criterion(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = sorted(p.name for p in (ROOT / "criteria").glob("*.toml"))
    assert shipped
    for name in shipped:
        assert f"judgeflow/criteria/{name}" in names
    assert not any(n.startswith("criteria/") for n in names)  # only inside the package


@pytest.fixture
def wheel_judgeflow(wheel: Path, tmp_path: Path) -> Iterator[object]:
    """Import judgeflow from the unpacked wheel in place of the checkout, then restore it."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    saved = {k: v for k, v in sys.modules.items() if k == "judgeflow" or k.startswith("judgeflow.")}
    for k in saved:
        del sys.modules[k]
    sys.path.insert(0, str(site))
    try:
        import judgeflow

        assert Path(judgeflow.__file__).is_relative_to(site)
        yield judgeflow
    finally:
        sys.path.remove(str(site))
        for k in [k for k in sys.modules if k == "judgeflow" or k.startswith("judgeflow.")]:
            del sys.modules[k]
        sys.modules.update(saved)


@pytest.mark.slow  # builds the wheel (pip wheel)
def test_load_criterion_finds_them_in_the_wheel_layout(wheel_judgeflow: object, tmp_path: Path) -> None:
    from judgeflow.criteria import criteria_dirs, list_criteria, load_criterion

    site = tmp_path / "site"
    assert criteria_dirs() == [site / "judgeflow" / "criteria"]  # no checkout beside the unpacked wheel
    shipped = sorted(p.stem for p in (ROOT / "criteria").glob("*.toml"))
    assert list_criteria() == shipped
    for name in shipped:
        crit = load_criterion(name)
        assert crit.name == name and Path(crit.path).is_relative_to(site)


@pytest.mark.slow
def test_wheel_ships_license_and_py_typed_with_metadata(wheel: Path) -> None:
    z = zipfile.ZipFile(wheel)
    names = set(z.namelist())
    assert "judgeflow/py.typed" in names
    assert any(n.endswith("licenses/LICENSE") for n in names), sorted(n for n in names if "dist-info" in n)
    meta = z.read(next(n for n in names if n.endswith("dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in meta
    assert "Classifier: Programming Language :: Python :: 3.10" in meta
    assert "Classifier: Typing :: Typed" in meta
    assert "Requires-Dist: tomli>=1.1; python_version < '3.11'" in meta.replace('"', "'")
    assert "Apache License" in (ROOT / "LICENSE").read_text() and (ROOT / "CHANGELOG.md").is_file()


@pytest.mark.slow
def test_wheel_ships_the_review_page(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in ("index.html", "app.js", "app.css"):
        assert f"judgeflow/calibration/label_app/static/{name}" in names
