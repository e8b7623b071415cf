"""What a replayed launcher call produced: its outputs (an argument left as it was given is UNCHANGED), the
memory its results share with its arguments and with other calls' results (aliasing), and, on the reference's
side, which kernel arguments each result is (`KernelLaunches`, the kernel's launches watched).

Imports only torch and triton.
"""

from __future__ import annotations

import re
from typing import Any

from intelliperf.profiling.inside import untouched

from ..compare import UNCHANGED, identical


def outputs_of(result, args: dict, given: dict) -> dict:
    """What a launcher produced: its return value(s) and every tensor argument after the call; an
    argument still bit for bit as `given` (the trial's host inputs) is UNCHANGED, not saved again (most
    arguments are inputs, often the largest buffers of the replay)."""
    import torch

    detach = untouched.original("torch.Tensor", "detach", torch.Tensor.detach)
    to = untouched.original("torch.Tensor", "to", torch.Tensor.to)

    def host(t):
        return to(detach(t), "cpu", copy=True)

    out: dict[str, Any] = {STRUCTURE: structure(result, args)}
    items = result if isinstance(result, (tuple, list)) else [result]
    for i, item in enumerate(items):
        if isinstance(item, torch.Tensor):
            out[f"return[{i}]"] = host(item)
    for name, value in args.items():
        if isinstance(value, torch.Tensor):
            after = host(value)
            before = given.get(name)
            out[f"arg:{name}"] = UNCHANGED if isinstance(before, torch.Tensor) and identical(before, after) else after
    return out


STRUCTURE = "structure"  # the key of a call's structure among its outputs


def structure(result, args: dict) -> str:
    """What a launcher call returned and left in its tensor arguments, as text both sides can compare: types
    and nesting, and each tensor's dtype, shape and strides (a size-1 dimension's stride means nothing)."""
    import torch

    def one(value) -> str:
        if isinstance(value, torch.Tensor):
            strides = [s if n > 1 else 0 for n, s in zip(value.shape, value.stride(), strict=True)]
            flags = ", requires grad" * value.requires_grad + ", an inference tensor" * value.is_inference()
            dtype = str(value.dtype).removeprefix("torch.")
            return f"tensor({dtype}, shape {list(value.shape)}, strides {strides}{flags})"
        if isinstance(value, (tuple, list)):
            return f"{type(value).__name__}[{', '.join(one(v) for v in value)}]"
        return type(value).__name__

    held = [f"{n}: {one(v)}" for n, v in args.items() if isinstance(v, torch.Tensor)]
    return f"returned {one(result)}" + (f", arguments {'; '.join(held)}" if held else "")


ALIAS_CALLS = 6  # launcher calls, on distinct inputs, whose returned storage is compared pair by pair


def _span(t) -> tuple[str, int, int] | None:
    """The bytes a tensor's elements occupy: (device, first, past the last); None for an empty one."""
    if t.numel() == 0:
        return None
    size = t.element_size()
    low = sum((n - 1) * st for n, st in zip(t.shape, t.stride(), strict=True) if st < 0)
    high = sum((n - 1) * st for n, st in zip(t.shape, t.stride(), strict=True) if st > 0)
    return (str(t.device), t.data_ptr() + low * size, t.data_ptr() + (high + 1) * size)


def _overlap(a, b) -> bool:
    return a is not None and b is not None and a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


def _returned(result) -> dict[str, Any]:
    import torch

    items = result if isinstance(result, (tuple, list)) else [result]
    return {f"return[{i}]": t for i, t in enumerate(items) if isinstance(t, torch.Tensor)}


def call_record(label: str, result, args: dict) -> dict:
    """What aliasing needs of one launcher call: its returned tensors (kept alive, so no later allocation
    reuses their memory) and the spans of its tensor arguments as they were at the call."""
    import torch

    return {
        "label": label,
        "returned": _returned(result),
        "args": {f"arg:{n}": _span(v) for n, v in args.items() if isinstance(v, torch.Tensor)},
    }


def aliases(calls: list[dict]) -> dict[str, dict[str, list[str]]]:
    """Per call, per returned tensor: what else its memory overlaps, among the same call's tensor arguments
    and every other call's returned tensors (`return[0] of launcher-2`), whatever order they ran in."""
    spans = [(c["label"], name, _span(t)) for c in calls for name, t in c["returned"].items()]
    found: dict[str, dict[str, list[str]]] = {}
    for c in calls:
        mine = {}
        for name, t in c["returned"].items():
            span = _span(t)
            shared = [arg for arg, other in c["args"].items() if _overlap(span, other)]
            shared += [f"{n} of {label}" for label, n, other in spans if label != c["label"] and _overlap(span, other)]
            mine[name] = sorted(shared)
        found[c["label"]] = mine
    return found


# Float types from the widest; a kernel computes in the narrowest its pointers point to or its values are rounded to.
NARROWNESS = ("float64", "float32", "bfloat16", "float16", "float8")
_TTIR_FLOATS = {"f64": "float64", "f32": "float32", "bf16": "bfloat16", "f16": "float16"}
_NARROWED = re.compile(
    r"(?:arith\.truncf|tt\.fp_to_fp)\b.*?(?:\sto\s|->)\s*(?:tensor<(?:\d+x)*)?(f64|f32|bf16|f16|f8\w*)"
)
_POINTEE = re.compile(r"!tt\.ptr<(f64|f32|bf16|f16|f8\w*)>")


def computes_in(jit, args: tuple, kwargs: dict, compiled) -> str | None:
    """The narrowest float type a launched kernel computes in, read from its TTIR (the compiled kernel's; under
    the interpreter compiled for sm_90 here): what its float pointers point to (a copy the launcher made in
    float32) and what it rounds values to (`x.to(tl.float32)`, an accumulator of float32); "float64" where it
    has no float at all. None where the TTIR could not be had."""
    try:
        ttir = getattr(compiled, "asm", {}).get("ttir") if compiled is not None else None
        if ttir is None:
            from intelliperf.profiling.static import compile_here

            names = list(getattr(jit, "arg_names", []))
            bound = {**dict(zip(names, args, strict=False)), **kwargs}
            ttir = compile_here(jit.fn, bound, "cuda:90").asm["ttir"]
    except Exception:  # (a kernel the compiler refuses for sm_90: its precision is unknown)
        return None
    found = {m.group(1) for m in _NARROWED.finditer(ttir)} | {m.group(1) for m in _POINTEE.finditer(ttir)}
    types = {_TTIR_FLOATS.get(t, "float8") for t in found} or {"float64"}
    return max(types, key=NARROWNESS.index)


PROGRAM_TRIAL = "launcher-program.pt"  # the launcher's arguments as the program passed them, the replay's inputs
ABLATION = "ablation"  # the label of the launcher call made with every Triton kernel a no-op


class NoKernels:
    """Every Triton kernel launched while installed does nothing. (An output the allocator hands back still
    holds the last call's values at its shape, which were other inputs': the ablated call runs on the first
    trial's inputs, after the later trials.)"""

    def __init__(self) -> None:
        self._undo: list[tuple[type, Any]] = []
        self.launches = 0

    def __enter__(self) -> NoKernels:
        from triton.runtime.interpreter import InterpretedFunction
        from triton.runtime.jit import JITFunction

        for cls in (JITFunction, InterpretedFunction):
            self._undo.append((cls, cls.run))
            cls.run = self._run
        return self

    def __exit__(self, *exc) -> None:
        for cls, run in reversed(self._undo):
            cls.run = run
        self._undo = []

    def _run(self, jit, *args, grid, warmup, **kwargs):
        self.launches += 0 if warmup else 1


class KernelLaunches:
    """The target kernel's launches while it is installed (the reference's launcher trials): the tensors each
    launch was given, by parameter, so that a launcher's results can be told by the kernel arguments they
    are (an output a reduction made, or one the kernel only copies); with `precision`, the narrowest float
    type any kernel launched computes in (`computes_in`, from its TTIR)."""

    def __init__(self, name: str, precision: bool = False):
        self.name = name
        self.launches: list[dict] = []
        self.any_kernel = 0  # launches of every Triton kernel while installed (the kernels do the work)
        self._undo: list[tuple[type, Any]] = []
        self.precision: dict | None = {} if precision else None  # per kernel function: the type it computes in

    def __enter__(self) -> KernelLaunches:
        from triton.runtime.interpreter import InterpretedFunction
        from triton.runtime.jit import JITFunction

        for cls in (JITFunction, InterpretedFunction):
            original = cls.run
            self._undo.append((cls, original))
            cls.run = self._wrap(original)
        return self

    def __exit__(self, *exc) -> None:
        for cls, original in reversed(self._undo):
            cls.run = original
        self._undo = []

    def _wrap(self, original):
        watcher = self

        def run(jit, *args, grid, warmup, **kwargs):
            watcher.any_kernel += 0 if warmup else 1
            if not warmup and getattr(getattr(jit, "fn", None), "__name__", None) == watcher.name:
                try:
                    watcher._record(jit, args, kwargs, grid)
                except Exception:  # never stop the reference's launch for the record's sake
                    pass
            compiled = original(jit, *args, grid=grid, warmup=warmup, **kwargs)
            if watcher.precision is not None and not warmup and jit not in watcher.precision:
                watcher.precision[jit] = computes_in(jit, args, kwargs, compiled)
            return compiled

        return run

    @property
    def computes_in(self) -> str | None:
        """The narrowest float type the kernels launched compute in ("float64", "float32", "float16"...); None
        where one's TTIR could not be read (or no kernel ran)."""
        found = list((self.precision or {}).values())
        known = [name for name in found if name is not None]
        return max(known, key=NARROWNESS.index) if known and len(known) == len(found) else None

    def _record(self, jit, args, kwargs, grid) -> None:
        import torch

        names = list(getattr(jit, "arg_names", []))
        bound = {**dict(zip(names, args, strict=False)), **{k: v for k, v in kwargs.items() if k in names}}
        g = tuple(grid({**kwargs, **bound}) if callable(grid) else grid)
        tensors = {}
        for name, value in bound.items():
            base = value if isinstance(value, torch.Tensor) else getattr(value, "base", None)
            if isinstance(base, torch.Tensor):
                tensors[name] = (list(base.shape), _span(base))
        ints = {name: value for name, value in bound.items() if type(value) is int}
        self.launches.append({"grid": [int(x) for x in g] + [1] * (3 - len(g)), "tensors": tensors, "ints": ints})

    def kept(self, compiled: dict[str, int], changed: set[int]) -> list[str]:
        """The constexprs (`compiled`: name -> the recorded launch's value) equal to a size this trial changed
        (`changed`, as recorded) that some launch still passed as recorded: the reference is built for that
        size (a record's FIELDS, a HEAD_DIM) and reads the new one wrongly, so the trial says nothing."""
        return sorted(
            name
            for name, value in compiled.items()
            if value in changed and any(launch["ints"].get(name) == value for launch in self.launches)
        )

    def made_of(self, result, args: dict) -> dict:
        """For a launcher call's outputs (`return[i]`, `arg:NAME`): the kernel parameters whose memory each
        overlaps in any launch (`made_of`; [] for a tensor made otherwise, on the host), how many launches
        reached it (`times`), and the first such launch's grid and tensor shapes (`launch`, as a capture
        describes one). Nothing where the kernel was not seen launched."""
        import torch

        if not self.launches:
            return {}
        outputs = {**_returned(result), **{f"arg:{n}": v for n, v in args.items() if isinstance(v, torch.Tensor)}}
        made: dict[str, list[str]] = {}
        times: dict[str, int] = {}
        first: dict[str, int] = {}
        for name, t in outputs.items():
            span = _span(t)
            params: set[str] = set()
            for i, launch in enumerate(self.launches):
                hit = {p for p, (_, other) in launch["tensors"].items() if _overlap(span, other)}
                if hit:
                    times[name] = times.get(name, 0) + 1
                    first.setdefault(name, i)
                params |= hit
            made[name] = sorted(params)
        index = min(first.values(), default=0)
        launch = self.launches[index]
        described = {
            "grid": launch["grid"],
            "args": [{"name": p, "kind": "tensor", "shape": shape} for p, (shape, _) in launch["tensors"].items()],
        }
        return {"made_of": made, "times": times, "launch": described}
