"""What the checks inside a candidate's process rely on, watched: a snapshot of torch's, Triton's and
Python's namespaces taken before any candidate code is imported, and the names whose object has been
replaced since.

The capture inside the program, the replay's candidate side and the timing worker read results through
torch (`detach`, `to`, `torch.save`, sums for checksums) in the process that imports the candidate. The
source policy refuses attribute stores, but a check must not rest on one rule: whatever the candidate
replaces of these namespaces (`torch.Tensor.detach = ...` through any route) is named here, and the
parent refuses the candidate for it. The objects are compared by identity, looked up in the namespaces'
own dictionaries (no attribute look-up the candidate could redirect), with functions bound at import.
Public names only: a candidate reaches no other, and torch's private state changes as it runs.

Imports only the standard library; torch and Triton where they are already imported.
"""

from __future__ import annotations

import sys

_vars, _id, _items, _isinstance, _type, _sorted, _dict = vars, id, dict.items, isinstance, type, sorted, dict
MODULES = ("builtins", "torch", "torch.nn.functional", "torch.cuda", "torch.serialization", "triton", "numpy")
CLASSES = (("torch", "Tensor"), ("torch.cuda", "Event"), ("torch.cuda", "Stream"), ("numpy", "ndarray"))


def _namespaces() -> dict[str, dict]:
    """{label: the dictionary itself} of each watched module and class (its bases' too) imported now."""
    found: dict[str, dict] = {}
    for name in MODULES:
        module = sys.modules.get(name)
        if module is not None:
            found[name] = _vars(module)
    for module_name, attr in CLASSES:
        owner = _vars(sys.modules[module_name]).get(attr) if module_name in sys.modules else None
        if owner is not None and _isinstance(owner, _type):
            for cls in owner.__mro__[:-1]:  # not object's: no candidate code can set an attribute there
                found[f"{module_name}.{attr}" if cls is owner else f"{cls.__module__}.{cls.__qualname__}"] = _vars(cls)
    return found


class Watch:
    """The watched namespaces' objects as they are now; `replaced()` names what differs since."""

    def __init__(self) -> None:
        self._saved: dict[str, tuple] = {}
        self._kept: list[dict] = []  # the snapshotted objects, alive, so their ids stay theirs
        self.extend()

    def extend(self) -> None:
        """Snapshot the watched namespaces imported since (torch after the bootstrap, numpy later)."""
        for label, space in _items(_namespaces()):
            if label not in self._saved:
                # public names: a candidate can name no other (the policy), and private state changes as
                # torch runs (torch.cuda._initialized), which would refuse candidates for torch's own doing
                copy = {name: value for name, value in _items(_dict(space)) if not name.startswith("_")}
                self._saved[label] = (space, {name: _id(value) for name, value in _items(copy)})
                self._kept.append(copy)

    def original(self, label: str, name: str):
        """The object `label.name` was when snapshotted (KeyError where it was not)."""
        return self._kept[list(self._saved).index(label)][name]

    def replaced(self) -> list[str]:
        """`module.name` of each watched name whose object is not the one snapshotted (or was deleted)."""
        changed = []
        for label, (space, ids) in _items(self._saved):
            for name, ident in _items(ids):
                value = space.get(name, _MISSING)
                if _id(value) != ident:
                    changed.append(f"{label}.{name}")
        return _sorted(changed)


_MISSING = object()
_PROCESS: list[Watch] = []


def watch_imported(_module=None) -> None:
    """This process's watch, made or extended with what is imported now: the bootstrap calls it as torch,
    Triton and numpy are imported, before the program's code runs past their import."""
    if _PROCESS:
        _PROCESS[0].extend()
    else:
        _PROCESS.append(Watch())


def original(label: str, name: str, current):
    """`label.name` as this process's watch snapshotted it (what the checks call), else `current`."""
    try:
        return _PROCESS[0].original(label, name)
    except (IndexError, KeyError, ValueError):
        return current


def replaced_in_process() -> list[str]:
    """What this process's watch finds replaced (nothing where no watch was made)."""
    return _PROCESS[0].replaced() if _PROCESS else []


def replaced_message(names: list[str]) -> str:
    """The reason a candidate that replaced what the checks use is refused."""
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return (
        f"the candidate replaced {shown} in its process, which the checks there read results through: a rewrite "
        "computes with torch and Triton, it does not patch them"
    )


__all__ = ["Watch", "original", "replaced_in_process", "replaced_message", "watch_imported"]
