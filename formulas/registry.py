"""Finding formulas: built-ins and plug-ins through one entry-point group (`intelliperf.plugins`), plus
formula files."""

from __future__ import annotations

import importlib.util
import inspect
import re
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from intelliperf import plugins
from intelliperf.errors import FormulaLoadError, UnknownFormulaError

from .base import Formula

ENTRY_POINT_GROUP = "intelliperf.formulas"
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class Registry(plugins.Registry[Formula]):
    """The formulas by name: entry points (built-ins included) and formula files."""

    def __init__(self) -> None:
        super().__init__("formula", ENTRY_POINT_GROUP, _check)
        self._instances: dict[str, Formula] = {}  # registered as instances: `create(name)` returns them

    def get(self, name: str) -> type[Formula]:
        try:
            found = self.find(name)
        except plugins.PluginError as exc:
            raise FormulaLoadError(exc.message) from None
        if found is None:
            raise UnknownFormulaError(name, self.names())
        return found

    def create(self, name: str, **options) -> Formula:
        if not options and name in self._instances:
            return self._instances[name]
        return self.get(name)(**options)

    def register(self, formula: object, source: str | None = None) -> type[Formula]:
        """Add a Formula subclass, or an instance (its class, and the instance that `create(name)` with no
        options returns: options set once). Returns the class; a wrong one is a FormulaLoadError."""
        cls = type(formula) if isinstance(formula, Formula) else formula
        if source is None:
            source = f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', cls)} (registered from Python)"
        try:
            registered = super().register(cls, source)
        except plugins.PluginError as exc:
            raise FormulaLoadError(exc.message, hint=exc.hint) from None
        if isinstance(formula, Formula):
            self._instances[formula.name] = formula
        return registered

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


class DefaultRegistry:
    """`default_registry()` builds the registry every command and API call uses: the entry points (built-ins
    first), the formulas registered here from Python, then the files given. `default_registry.register(F)`
    adds a Formula subclass or instance for the rest of the process (`intelliperf.diagnose(cmd, formula=F.name)`,
    `--formula auto` and `diagnoseOnly` then ask it too); it is checked at once."""

    def __init__(self) -> None:
        self._registered: dict[str, Formula | type[Formula]] = {}

    def __call__(self, formula_paths: Sequence[str | Path] = ()) -> Registry:
        registry = Registry()
        registry.load_entry_points()  # a broken plug-in is a note (registry.broken), not an error
        for formula in self._registered.values():
            registry.register(formula)
        for path in formula_paths:
            registry.load_file(path)
        return registry

    def register(self, formula: Formula | type[Formula]) -> type[Formula]:
        """Register a Formula subclass or instance; returns the class, so it also serves as a decorator."""
        cls = self().register(formula)  # checked now: what is wrong is said where it is registered
        self._registered[cls.name] = formula
        return cls

    def unregister(self, name: str) -> None:
        """Forget a formula registered from Python (no error when none is registered under `name`)."""
        self._registered.pop(name, None)

    def registered(self) -> list[str]:
        """The names of the formulas registered from Python."""
        return sorted(self._registered)


default_registry = DefaultRegistry()
