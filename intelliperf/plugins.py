"""Plug-ins of one kind (formulas, rewriters) by name, from one entry-point group each.

The package registers its own formulas and rewriters in those groups too, so the path a third-party
plug-in takes runs on every command. Ours load first: a plug-in cannot take a built-in's name. A
plug-in that fails to load is recorded with the reason and hides no other; it is an error only when
it is the one asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Generic, TypeVar, cast

from .errors import UsageError

T = TypeVar("T")
OWN_DISTRIBUTION = "intelliperf"


class PluginError(UsageError):
    """A class that is not a usable plug-in of its kind, or a name already taken."""


class Registry(Generic[T]):
    """Classes of one kind by name, each with where it came from; plug-ins that failed, with why."""

    def __init__(self, kind: str, group: str, check: Callable[[object], str | None]) -> None:
        self.kind = kind  # "formula", "rewriter": what messages call one
        self.group = group
        self._check = check  # None for a usable class, else what is wrong with it
        self._classes: dict[str, type[T]] = {}
        self._sources: dict[str, str] = {}
        self.broken: dict[str, str] = {}  # name -> why it could not be loaded

    def names(self) -> list[str]:
        return sorted(self._classes)

    def classes(self) -> dict[str, type[T]]:
        return dict(self._classes)

    def source(self, name: str) -> str:
        return self._sources[name]

    def built_in(self, name: str) -> bool:
        return self._sources[name].startswith("built-in")

    def find(self, name: str) -> type[T] | None:
        """The class registered as `name`; None when there is none. A broken plug-in's name is an error."""
        if name in self._classes:
            return self._classes[name]
        if name in self.broken:
            raise PluginError(f"the {self.kind} plug-in {name!r} failed to load: {self.broken[name]}")
        return None

    def register(self, cls: object, source: str) -> type[T]:
        """Add a class after checking it, and return it; errors name the plug-in and what is wrong."""
        problem = self._check(cls)
        if problem:
            raise PluginError(f"{self.kind} plug-in {source} is not usable: {problem}")
        name = str(getattr(cls, "name", ""))  # the check found one
        existing = self._classes.get(name)
        if existing is not None and existing is not cls:
            raise PluginError(
                f"{self.kind} name {name!r} from {source} is already taken by {self._sources[name]}",
                hint=f"Give the new {self.kind} another name.",
            )
        self._classes[name] = cast(type[T], cls)
        self._sources[name] = source
        return self._classes[name]

    def load_entry_points(self) -> Registry[T]:
        points = sorted(entry_points(group=self.group), key=lambda ep: not _ours(ep))  # ours first
        for ep in points:
            source = "built-in" if _ours(ep) else f"entry point {ep.name!r} ({ep.value})"
            try:
                cls = ep.load()
                named = getattr(cls, "name", None)
                if named != ep.name:
                    raise PluginError(f"the class's name is {named!r}, the entry point's {ep.name!r}")
                self.register(cls, source)
            except UsageError as exc:  # PluginError, or a kind's own error for the same
                self.broken[ep.name] = exc.message
            except Exception as exc:  # a broken third-party plug-in must not hide the others
                self.broken[ep.name] = f"{source}: {type(exc).__name__}: {exc}"
        return self


def _ours(ep: EntryPoint) -> bool:
    dist = getattr(ep, "dist", None)
    return dist is not None and dist.name == OWN_DISTRIBUTION
