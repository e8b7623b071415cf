"""Every package says what it exports: an `__all__`, constants first and then sorted, each name real. A
package whose modules are its API lists exactly its modules; one that re-exports names resolves each. The
public names of `intelliperf` stay what they are whatever sub-packages are loaded (a sub-package named
like one of them would take its place on import)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

import intelliperf

REPO = Path(__file__).resolve().parents[2]
ROOTS = {
    "intelliperf": REPO / "intelliperf",
    "intelliperf.formulas": REPO / "formulas",
    "intelliperf.validators": REPO / "validators",
}


def _packages() -> dict[str, Path]:
    found = {}
    for name, root in ROOTS.items():
        for init in root.rglob("__init__.py"):
            found[".".join((name, *init.parent.relative_to(root).parts))] = init.parent
    return found


def _modules(folder: Path) -> set[str]:
    files = {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")}
    return files | {p.parent.name for p in folder.glob("*/__init__.py")}


PACKAGES = _packages()


def test_the_scan_finds_the_packages():
    assert {"intelliperf.diagnosis", "intelliperf.optimization", "intelliperf.validators"} <= set(PACKAGES)


def test_every_package_is_installed():
    """pyproject.toml lists the packages a wheel holds, one by one: a folder missing there is missing from a
    plain `pip install` (the Action's), though an editable install finds it."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # 3.10: the tomli backport, a dependency there
        import tomli as tomllib

    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    assert set(PACKAGES) - listed == set(), "packages missing from [tool.setuptools] packages"


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_each_package_declares_its_exports(name):
    package = importlib.import_module(name)
    exported = getattr(package, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    assert len(set(exported)) == len(exported), f"{name}: a name twice in __all__"
    assert list(exported) == sorted(exported, key=lambda n: (not n.isupper(), n)), f"{name}: __all__ unsorted"
    modules = _modules(PACKAGES[name])
    missing = [n for n in exported if n not in modules and not hasattr(package, n)]
    assert missing == [], f"{name} exports names it does not have: {missing}"
    if exported and set(exported) <= modules:  # its modules are the API: all of them
        assert set(exported) == modules, f"{name}: __all__ lists modules but not {sorted(modules - set(exported))}"


def test_the_public_names_stay_functions_and_classes_with_every_package_loaded():
    for name in PACKAGES:
        if name != "intelliperf.bootstrap":  # loaded from PYTHONPATH by the program, never imported
            importlib.import_module(name)
    assert dir(intelliperf) == intelliperf.__all__
    modules = [n for n in intelliperf.__all__ if isinstance(getattr(intelliperf, n), ModuleType)]
    assert modules == [], f"intelliperf.{modules} is a module, not the public name"
