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

_PATCHED: list[set[int]] = []  # per launch in progress: the language modules it has patched


def patch_once_per_launch(interpreter) -> None:
    """Patch `triton.runtime.interpreter` as the module docstring says."""
    executor = getattr(interpreter, "GridExecutor", None)
    patch_lang = getattr(interpreter, "_patch_lang", None)
    if executor is None or patch_lang is None or not hasattr(interpreter, "_LangPatchScope"):
        return
    call = executor.__call__
    langs = {id(interpreter.tl), id(interpreter.tl.core)}

    def patched(fn):
        modules = {id(v) for v in fn.__globals__.values() if inspect.ismodule(v) and id(v) in langs}
        if _PATCHED and modules and modules <= _PATCHED[-1]:
            return interpreter._LangPatchScope()  # nothing to undo: the launch's own scope restores the modules
        scope = patch_lang(fn)
        if _PATCHED:
            _PATCHED[-1].update(modules)
        return scope

    def launch(self, *args, **kwargs):
        _PATCHED.append(set())
        try:
            return call(self, *args, **kwargs)
        finally:
            _PATCHED.pop()

    interpreter._patch_lang = patched
    executor.__call__ = launch
