"""Finding formulas: built-ins and plug-ins through one entry-point group, plus formula files."""

from __future__ import annotations

import importlib.util
import inspect
import re
import sys
import traceback
from collections.abc import Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import cast

from pydantic import BaseModel

from intelliperf.errors import FormulaLoadError, UnknownFormulaError

from .base import Formula

ENTRY_POINT_GROUP = "intelliperf.formulas"
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class Registry:
    def __init__(self) -> None:
        self._formulas: dict[str, type[Formula]] = {}
        self._sources: dict[str, str] = {}
        self.broken: dict[str, str] = {}  # plug-in name -> why it could not be loaded

    def names(self) -> list[str]:
        return sorted(self._formulas)

    def source(self, name: str) -> str:
        return self._sources[name]

    def get(self, name: str) -> type[Formula]:
        if name in self._formulas:
            return self._formulas[name]
        if name in self.broken:
            raise FormulaLoadError(f"formula {name!r} is registered but failed to load: {self.broken[name]}")
        raise UnknownFormulaError(name, self.names())

    def create(self, name: str, **options) -> Formula:
        return self.get(name)(**options)

    def register(self, cls: object, source: str) -> None:
        """Add a formula class after checking it; errors name the plug-in and what is wrong."""
        problem = _check(cls)
        if problem:
            raise FormulaLoadError(f"formula plug-in {source} is not usable: {problem}")
        formula = cast(type[Formula], cls)  # _check found it is one
        existing = self._formulas.get(formula.name)
        if existing is not None and existing is not formula:
            raise FormulaLoadError(
                f"formula name {formula.name!r} from {source} is already taken by {self._sources[formula.name]}",
                hint="Give the new formula another name.",
            )
        self._formulas[formula.name] = formula
        self._sources[formula.name] = source

    def load_entry_points(self) -> None:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            source = f"entry point {ep.name!r} ({ep.value})"
            try:
                cls = ep.load()
                self.register(cls, source)
            except FormulaLoadError as exc:
                self.broken[ep.name] = exc.message
            except Exception as exc:  # a broken third-party plug-in must not hide the others
                self.broken[ep.name] = f"{source}: {type(exc).__name__}: {exc}"

    def load_file(self, path: str | Path) -> list[str]:
        """Import a Python file and register every Formula subclass it defines."""
        path = Path(path)
        if not path.is_file():
            raise FormulaLoadError(f"formula file not found: {path}", hint="Pass the path to a .py file.")
        module_name = f"intelliperf_user_formula_{abs(hash(str(path.resolve())))}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise FormulaLoadError(f"cannot import {path}: not a Python source file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[module_name]
            where = _where(exc, path)
            raise FormulaLoadError(
                f"formula file {path} failed to import: {type(exc).__name__}: {exc}{where}",
                hint="Fix the file (run `python FILE.py` to see the full traceback).",
            ) from None
        classes = [
            c
            for c in vars(module).values()
            if inspect.isclass(c) and issubclass(c, Formula) and c.__module__ == module_name
        ]
        if not classes:
            raise FormulaLoadError(f"formula file {path} defines no subclass of intelliperf.Formula")
        for cls in classes:
            self.register(cls, f"file {path}")
        return [c.name for c in classes]


def _check(cls: object) -> str | None:
    if not (inspect.isclass(cls) and issubclass(cls, Formula)):
        return f"{cls!r} is not a subclass of intelliperf.Formula"
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not _NAME.match(name):
        return f"{cls.__name__}.name must be an identifier-like string such as 'myFormula', not {name!r}"
    if inspect.isabstract(cls):
        return f"{cls.__name__} does not implement diagnose(kernel, evidence)"
    if not (inspect.isclass(cls.Options) and issubclass(cls.Options, BaseModel)):
        return f"{cls.__name__}.Options must be a pydantic BaseModel"
    return None


def _where(exc: BaseException, path: Path) -> str:
    if isinstance(exc, SyntaxError) and exc.lineno:
        return f" (line {exc.lineno})"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
    return f" (line {frames[-1].lineno})" if frames else ""


def default_registry(formula_paths: Sequence[str | Path] = ()) -> Registry:
    registry = Registry()
    registry.load_entry_points()
    for path in formula_paths:
        registry.load_file(path)
    return registry
