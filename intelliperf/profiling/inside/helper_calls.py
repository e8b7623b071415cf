"""Calls of `@triton.jit` helpers under the interpreter, made cheap (the program's processes, the replay workers).

The interpreter patches `triton.language` (every member, through `inspect`) when a launch starts, and again at
every call of a jit helper from inside it: a kernel that calls a helper per program pays that per program,
1.5 ms here, six times the program's own work (25,000 rows of a softmax: 39 s instead of 6). Within one launch
the modules are already patched, so a helper whose modules the launch patched skips it; the launch's end
restores them as before.

Imports Triton's interpreter module when installed; with a Triton whose interpreter is laid out otherwise it
changes nothing.
"""

from __future__ import annotations

import inspect

_PATCHED: set[int] = set()  # the language modules patched by the launch in progress


def patch_once_per_launch(interpreter) -> None:
    """Patch `triton.runtime.interpreter` as the module docstring says."""
    scope_type = getattr(interpreter, "_LangPatchScope", None)
    patch_lang = getattr(interpreter, "_patch_lang", None)
    if scope_type is None or patch_lang is None:
        return
    restore = scope_type.restore
    langs = {id(interpreter.tl), id(interpreter.tl.core)}

    def patched(fn):
        modules = {id(v) for v in fn.__globals__.values() if inspect.ismodule(v) and id(v) in langs}
        if modules and modules <= _PATCHED:
            return scope_type()  # nothing to undo: the launch's own scope restores the modules
        scope = patch_lang(fn)
        _PATCHED.update(modules)
        return scope

    def restored(self):
        _PATCHED.clear()
        return restore(self)

    interpreter._patch_lang = patched
    scope_type.restore = restored
