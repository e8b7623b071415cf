"""Replay harness: the reference and a candidate run on the same fresh inputs, in separate processes.

    python -m intelliperf.validators.replay prepare JOB.json   # the reference side, once per session
    python -m intelliperf.validators.replay run JOB.json       # one candidate, in its sandbox
    python -m intelliperf.validators.replay time JOB.json CMD_FD OUT_FD   # one side of the timing (GPU)
    python -m intelliperf.validators.replay serve prepare|run [EARLY.json]  # warm: the job's path on stdin

The two sides never share a process: a candidate cannot read the reference's results from the
worker's memory or patch the worker to overwrite its own. `prepare` draws the inputs of every
trial (a new seed per trial, recorded), saves them where candidates can read them, runs the
pristine reference on them and saves its outputs where no candidate can see them (the ground
truth, checksummed by the parent). `run` loads the same inputs, runs the candidate and saves its
outputs; the parent compares. The trials:

* the kernel itself, with its recorded grid and options, when the candidate kept the kernel's
  name and parameters; write-only outputs are poisoned first (NaN, or a sentinel for integers),
  so an element the candidate never writes shows; outputs that are also read (atomics,
  in-place updates) start from the same random values on both sides. Where the launcher's
  trials below ran, one such trial; else as many as the launcher would have had, and the
  inputs beyond the captured range;
* the launcher (the Python function that called `kernel[grid](...)`), when it is a module-level
  function whose arguments are tensors and scalars. The recorded-shape trials refill the same
  input tensors, so a result cached on pointers goes stale; then inputs beyond the captured range
  (all negative, wide and mixed-sign, NaN and Inf sprinkled in; not for inputs whose values the
  kernel turns into addresses, which would write out of bounds) and two unseen shapes, about 3/4
  and a little over twice (bounded in bytes, never under 3/2), every dimension of 2 or more changed
  to a size that is no multiple of any block size (except sizes the kernel is compiled for, its
  constexpr values, and sizes an integer input indexes). No call may return memory that another
  call's result or its own arguments overlap unless the reference's does (aliasing, over every
  call, at least ALIAS_CALLS on distinct inputs). On the reference's side the kernel's launches are
  watched, so each result is known as the kernel argument it is (how its values were made). Trials
  the reference itself rejects are not compared.

Imports only torch, triton, numpy (and pydantic through the package).
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
import traceback
from collections.abc import Set
from pathlib import Path
from typing import Any

from intelliperf import env as names
from intelliperf.workload.definitions import load_module, resolve

from . import racecheck
from .compare import INT_POISON, UNCHANGED, identical
from .correctness import load_tensors

IMPORTED_AT = time.time()  # (wall clock, for a benchmark's timeline: the worker's start of its run)

REGIMES = ("negative", "wide", "nonfinite")  # inputs beyond the captured range, at the recorded shape


def _looked_up(job: dict) -> tuple[str, ...]:
    """The names a replay looks up in the kernel's file: the kernel, and the launcher where it lives there."""
    side = job.get("launcher") or {}
    here = _top_name(side) if side.get("file") == job["kernel"]["file"] else None
    return (job["kernel"]["name"], here) if here else (job["kernel"]["name"],)


def _top_name(side: dict) -> str | None:
    """The module-level name a launcher is reached by; None for a launch from module level (`<module>`) or a
    function's local one (`<locals>`)."""
    qualname = side.get("qualname", "<")
    return None if "<" in qualname else qualname.split(".")[0]


class ReplayUnsupported(Exception):
    pass


# --- fresh inputs ------------------------------------------------------------------------------


def _dtype(name: str):
    import torch

    return getattr(torch, name)


def _strided_like(shape, strides, dtype, device):
    """An empty tensor of `shape` laid out in the order of `strides` (row-major, transposed...)."""
    import torch

    if not shape:
        return torch.empty((), dtype=dtype, device=device)
    order = sorted(range(len(shape)), key=lambda i: -strides[i] if i < len(strides) else 0)
    base = torch.empty([shape[i] for i in order], dtype=dtype, device=device)
    inverse = [order.index(i) for i in range(len(shape))]
    return base.permute(inverse)


def fill_fresh(tensor, desc: dict, generator, regime: str = "captured") -> None:
    """Refill in place with values drawn like the captured ones (uniform in their range), or,
    for floating-point tensors, beyond it: `negative` (all below zero), `wide` (mixed sign, 16x
    the captured magnitude), `nonfinite` (captured range with NaN, +Inf and -Inf sprinkled in).

    The values are drawn on the tensor's device (a 16M-element input drawn on the host and
    copied took most of a second per trial), from a seed the trial's generator gives."""
    import torch

    lo, hi = desc.get("min", 0.0), desc.get("max", 1.0)
    device = tensor.device
    local = torch.Generator(device=device).manual_seed(int(torch.randint(1 << 62, (1,), generator=generator)))
    draw = {"generator": local, "device": device}
    if tensor.dtype == torch.bool:
        values = torch.rand(tensor.shape, **draw) < 0.5
    elif tensor.dtype.is_floating_point:
        wide = torch.float64 if tensor.dtype == torch.float64 else torch.float32
        magnitude = max(abs(lo), abs(hi), 1.0)
        if regime == "negative":
            lo, hi = -magnitude, -magnitude / 64
        elif regime == "wide":
            big = min(16 * magnitude, float(torch.finfo(tensor.dtype).max) / 1e3)
            lo, hi = -big, big
        values = torch.rand(tensor.shape, dtype=wide, **draw) * (hi - lo) + lo
        if regime == "nonfinite" and values.numel():
            flat = values.view(-1)
            picks = torch.randint(0, flat.numel(), (max(3, flat.numel() // 97),), **draw)
            flat[picks[0::3]] = float("nan")
            flat[picks[1::3]] = float("inf")
            flat[picks[2::3]] = float("-inf")
    else:
        values = torch.randint(int(lo), int(hi) + 1, tensor.shape, dtype=torch.int64, **draw)
    tensor.copy_(values.to(tensor.dtype))


def make_inputs(descs: list[dict], shapes: dict | None = None, guarded: bool = False) -> dict:
    """Tensors (and scalars) for the described arguments; `shapes` maps names to new shapes. `guarded`:
    each float tensor sits inside a larger allocation whose rest holds NaN, so a reference that reads
    past its inputs at this shape (sizes that only hold together as recorded) shows it by NaN in its
    outputs, and the trial is not compared (`_Trial.run`)."""
    values: dict[str, Any] = {}
    for d in descs:
        if d["kind"] == "tensor":
            if d.get("alias_of") in values and shapes is None:
                values[d["name"]] = values[d["alias_of"]]
                continue
            shape = (shapes or {}).get(d["name"], d["shape"])
            tensor = _strided_like(shape, d["strides"], _dtype(d["dtype"]), d["device"])
            values[d["name"]] = _guarded_by_nan(tensor) if guarded and tensor.is_floating_point() else tensor
        elif d["kind"] == "scalar":
            values[d["name"]] = d["value"]
        elif d["kind"] == "dtype":
            values[d["name"]] = _dtype(d["value"])
        else:
            raise ReplayUnsupported(
                f"argument {d['name']!r} is a {d.get('type_name', d['kind'])}, which the replay cannot draw afresh"
            )
    return values


GUARD_ELEMENTS = 1 << 16  # NaN on each side of a guarded tensor


def _guarded_by_nan(tensor):
    """`tensor`'s shape and strides in the middle of a NaN-filled allocation."""
    import torch

    span = sum((s - 1) * st for s, st in zip(tensor.shape, tensor.stride(), strict=True)) + 1 if tensor.numel() else 0
    base = torch.full((span + 2 * GUARD_ELEMENTS,), float("nan"), dtype=tensor.dtype, device=tensor.device)
    return base.as_strided(tensor.shape, tensor.stride(), GUARD_ELEMENTS)


def _smaller(d: int) -> int:
    s = d - max(1, d // 4)
    s = s if s % 2 else s - 1
    return max(1, s if s != d else d - 1)


def _larger(d: int, factor: float = 2.0) -> int:
    """`d` grown by `factor`, odd; at 2 (the default) past double by an eighth more, 1,024 -> 2,177: a block
    hard-coded at twice a power-of-two size, 2,048 for 1,000-1,024, no longer covers it."""
    g = d + max(1, int(d * (factor - 1))) + (2 * (d // 16) if factor >= 2 else 0)
    return g if g % 2 else g + 1


# The tensors of the larger unseen shape, at most (the recorded shape's, grown by 3/2 in every dimension, fits
# whatever its size, as the program's own run did). On a device: what a trial may hold beside the program run
# (workers.AHEAD_INPUTS_BYTES). Under the interpreter, which runs each program's block in NumPy: about 1 us per
# element of a simple kernel on this 2-core machine, so 32 MiB (8M float32 elements) is seconds a call, per side.
UNSEEN_BYTES = 1 << 30
UNSEEN_BYTES_INTERPRETED = 32 << 20
SMALLEST_GROWTH = 1.5


def tensor_bytes(descs: list[dict], shapes: dict | None = None) -> int:
    """Bytes of the distinct tensors `descs` describe, at `shapes` where given."""
    total = 0
    for d in descs:
        if d["kind"] == "tensor" and "alias_of" not in d:
            shape = (shapes or {}).get(d["name"], d["shape"])
            total += math.prod(shape) * _dtype(d["dtype"]).itemsize
    return total


def unseen_shapes(
    descs: list[dict], grow: bool, compiled: Set[int] = frozenset(), max_bytes: int | None = None
) -> tuple[dict, dict]:
    """New sizes for every dimension of 2 or more: odd (so no multiple of any block size), about
    3/4 (`grow=False`) or a little over twice (`grow=True`: see `_larger`) the original; where the
    grown tensors would take more than `max_bytes`, the largest growth that fits, but never less than 3/2.
    Integer arguments equal to a changed size or element count follow. A size that an integer input's
    values index (they span 0..size-1: histogram bins, a gather's table) stays, or the indices would fall
    outside it; so does one in `compiled` (the kernel's constexpr values: it may assume that size, and no
    launch could change it)."""
    indexed = {
        int(a["max"]) + 1
        for a in descs
        if a["kind"] == "tensor" and "max" in a and not a["dtype"].startswith(("float", "bfloat", "complex", "bool"))
    }
    kept = indexed | set(compiled)
    sizes = {d for a in descs if a["kind"] == "tensor" for d in a["shape"] if d >= 2 and d not in kept}

    def grown(factor: float) -> dict[int, int]:
        return {d: _larger(d, factor) for d in sizes}

    def shapes_for(new: dict[int, int]) -> dict[str, list[int]]:
        return {a["name"]: [new.get(d, d) for d in a["shape"]] for a in descs if a["kind"] == "tensor"}

    if not grow:
        new = {d: _smaller(d) for d in sizes}
    else:
        new = grown(2.0)
        if max_bytes is not None and tensor_bytes(descs, shapes_for(new)) > max_bytes:
            low, high = SMALLEST_GROWTH, 2.0  # the largest growth that fits, to a 1/64 step
            while high - low > 1 / 64:
                mid = (low + high) / 2
                low, high = (mid, high) if tensor_bytes(descs, shapes_for(grown(mid))) <= max_bytes else (low, mid)
            new = grown(low)
    shapes = shapes_for(new)
    numels = {math.prod(a["shape"]): math.prod(shapes[a["name"]]) for a in descs if a["kind"] == "tensor"}
    scalars = {}
    for a in descs:
        if a["kind"] == "scalar" and isinstance(a["value"], int) and not isinstance(a["value"], bool):
            if a["value"] in new:
                scalars[a["name"]] = new[a["value"]]
            elif a["value"] in numels and a["value"] >= 2:
                scalars[a["name"]] = numels[a["value"]]
    return shapes, scalars


def unseen_budget(descs: list[dict]) -> int:
    """`max_bytes` of the larger unseen shape: the interpreter's where the tensors are on the host."""
    on_host = all(d.get("device", "cpu") == "cpu" for d in descs if d["kind"] == "tensor")
    return UNSEEN_BYTES_INTERPRETED if on_host else UNSEEN_BYTES


# --- what a call produced ----------------------------------------------------------------------


def _outputs_of(result, args: dict, given: dict) -> dict:
    """What a launcher produced: its return value(s) and every tensor argument after the call; an
    argument still bit for bit as `given` (the trial's host inputs) is UNCHANGED, not saved again (most
    arguments are inputs, often the largest buffers of the replay)."""
    import torch

    out: dict[str, Any] = {}
    items = result if isinstance(result, (tuple, list)) else [result]
    for i, item in enumerate(items):
        if isinstance(item, torch.Tensor):
            out[f"return[{i}]"] = item.detach().to("cpu", copy=True)
    for name, value in args.items():
        if isinstance(value, torch.Tensor):
            after = value.detach().to("cpu", copy=True)
            before = given.get(name)
            out[f"arg:{name}"] = UNCHANGED if isinstance(before, torch.Tensor) and identical(before, after) else after
    return out


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


def _call_record(label: str, result, args: dict) -> dict:
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


class KernelLaunches:
    """The target kernel's launches while it is installed (the reference's launcher trials): the tensors each
    launch was given, by parameter, so that a launcher's results can be told by the kernel arguments they
    are (an output a reduction made, or one the kernel only copies)."""

    def __init__(self, name: str):
        self.name = name
        self.launches: list[dict] = []
        self._undo: list[tuple[type, Any]] = []

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
            if not warmup and getattr(getattr(jit, "fn", None), "__name__", None) == watcher.name:
                try:
                    watcher._record(jit, args, kwargs, grid)
                except Exception:  # never stop the reference's launch for the record's sake
                    pass
            return original(jit, *args, grid=grid, warmup=warmup, **kwargs)

        return run

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
        self.launches.append({"grid": [int(x) for x in g] + [1] * (3 - len(g)), "tensors": tensors})

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


def _sync() -> None:
    import torch

    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def _kernel_args(launch: dict, tensors: dict) -> dict:
    args = {}
    for d in launch["args"]:
        if d["kind"] == "tensor":
            args[d["name"]] = tensors.get(d["name"])
        elif d["kind"] == "scalar":
            args[d["name"]] = d["value"]
        else:
            raise ReplayUnsupported(f"kernel argument {d['name']!r} ({d['kind']}) cannot be replayed")
    return args


def compiled_sizes(job: dict) -> set[int]:
    """The integers the kernel was compiled for at the recorded launch (its constexpr arguments): a
    tensor dimension equal to one may be built into the kernel (a record's 8 fields strided by
    FIELDS=8, a head dimension one HEAD_DIM tile covers), so an unseen shape that changed it would
    read out of bounds in the reference too, and compare garbage with garbage."""
    constexprs = set(job["kernel"].get("constexprs", ()))
    return {
        d["value"]
        for d in job["launch"]["args"]
        if d["name"] in constexprs and d["kind"] == "scalar" and type(d["value"]) is int and d["value"] >= 2
    }


def jit_of(kernel):
    """The @triton.jit function under @triton.autotune / @triton.heuristics: a recorded launch
    already holds the config they chose, which the decorators would refuse to be given again."""
    from triton.runtime.autotuner import Autotuner, Heuristics

    while isinstance(kernel, (Autotuner, Heuristics)):
        kernel = kernel.fn
    return kernel


def kernel_call(kernel, launch: dict, tensors: dict):
    """The recorded launch (grid, arguments, options) of `kernel` on `tensors`, ready to call."""
    fn, grid = jit_of(kernel), tuple(launch["grid"])
    kwargs = {**_kernel_args(launch, tensors), **launch.get("options", {})}
    return lambda: fn[grid](**kwargs)


def _launch(kernel, launch: dict, tensors: dict, written) -> dict:
    kernel_call(kernel, launch, tensors)()
    _sync()
    return {f"arg:{n}": tensors[n].detach().to("cpu", copy=True) for n in written if n in tensors}


def call_launcher(fn, descs, values):
    """The launcher called as the program called it: positional, keyword-only and `**kwargs` entries."""
    args, kwargs = [], {}
    for d in descs:
        how = d.get("pass", "positional")
        if how == "positional":
            args.append(values[d["name"]])
        else:
            kwargs[d["name"] if how == "keyword" else how.split(":", 1)[1]] = values[d["name"]]
    return fn(*args, **kwargs)


def _save(path: Path, payload: dict) -> None:
    import torch

    torch.save(payload, path)


# --- the reference side ------------------------------------------------------------------------


def prepare(job: dict, module, summary: dict) -> None:
    """Inputs for every trial (saved for candidates) and the reference's outputs on them (the truth).

    The launcher's trials come first: where they ran (fresh inputs on refilled tensors, inputs
    beyond the captured range, unseen shapes), the kernel's own trials add only what the launcher
    cannot show, one trial with its write-only outputs poisoned. Every trial costs a call on each
    side, and under the interpreter a call of a large kernel takes seconds."""
    inputs, truth = Path(job["inputs_dir"]), Path(job["out_dir"])
    kernel = getattr(module, job["kernel"]["name"], None)
    fn = _launcher_fn(job, "_intelliperf_side", summary)
    if fn is not None:
        try:
            _prepare_launcher(job, fn, inputs, truth, summary, compiled_sizes(job))
        except ReplayUnsupported as exc:
            summary["notes"].append(f"launcher replay not possible: {exc}")
    covered = any(r["mode"] == "launcher" and r["regime"] != "captured" for r in summary["runs"])
    try:
        _prepare_kernel(job, kernel, inputs, truth, summary, poisoned_only=covered)
    except ReplayUnsupported as exc:
        summary["notes"].append(f"kernel replay not possible: {exc}")


def _prepare_kernel(job, kernel, inputs: Path, truth: Path, summary: dict, poisoned_only: bool = False) -> None:
    import torch

    launch = job["launch"]
    written, read = set(job["written"]), set(job["read"])
    descs = [d for d in launch["args"] if d["kind"] == "tensor"]
    _kernel_args(launch, {})  # raises ReplayUnsupported for arguments it cannot draw
    trials = [("captured", t) for t in range(job["trials"])] + [(r, job["trials"] + i) for i, r in enumerate(REGIMES)]
    if poisoned_only:
        trials = trials[:1]
    for regime, trial in trials:
        seed = job["seed"] + 100 + trial
        generator = torch.Generator().manual_seed(seed)
        tensors = make_inputs(descs)
        poisoned = []
        for d in descs:
            if "alias_of" in d:
                continue
            t = tensors[d["name"]]
            if d["name"] in written and d["name"] not in read:
                t.fill_(float("nan") if t.dtype.is_floating_point else INT_POISON)
                poisoned.append(d["name"])
            elif d["name"] in job.get("locks", ()):
                t.fill_(d.get("min") or 0)  # released, as the program's zero-filled locks start
            else:
                fill_fresh(t, d, generator, regime if d["name"] not in job.get("indexes", ()) else "captured")
        label = f"kernel-{trial if regime == 'captured' else regime}"
        _save(inputs / f"{label}.pt", {n: t.detach().to("cpu", copy=True) for n, t in tensors.items()})
        try:
            out = _launch(kernel, launch, tensors, written)
        except Exception as exc:
            if regime == "captured":
                raise
            summary["notes"].append(
                f"{label}: the reference rejected {regime} inputs ({type(exc).__name__}); not compared"
            )
            continue
        _save(truth / f"{label}.pt", out)
        _ran(
            summary,
            truth,
            {
                "label": label,
                "mode": "kernel",
                "seed": seed,
                "shape": "recorded",
                "regime": regime,
                "poisoned": poisoned,
            },
        )


def _prepare_launcher(job, fn, inputs: Path, truth: Path, summary: dict, compiled: Set[int]) -> None:
    """The launcher's trials: fresh draws on the same tensors, inputs beyond the captured range, the unseen
    shapes; every call's returned storage then compared with every other's. At least ALIAS_CALLS of those
    calls, on distinct inputs, are at one shape (a ring of output buffers kept per shape shows there): the
    recorded shape has them with the default 3 trials; where the reference rejected some, or fewer trials
    were asked for, fresh draws make up the count at the shape where that costs least."""
    descs = job["launcher"]["args"]
    values = make_inputs(descs)
    calls: list[dict] = []
    trial = _Trial(job, fn, inputs, truth, summary, calls)
    # per shape replayed: how to draw its inputs, its tensors' bytes and the calls made at it
    shapes_run = {"recorded": {"descs": descs, "shapes": None, "bytes": tensor_bytes(descs), "calls": 0}}
    for t in range(job["trials"]):  # the same tensors every trial, refilled: pointer caches go stale
        seed = job["seed"] + t
        _refill(values, descs, seed)
        trial.run(f"launcher-{t}", descs, values, {"seed": seed, "shape": "recorded", "regime": "captured"}, True)
        shapes_run["recorded"]["calls"] += 1
    for i, regime in enumerate(REGIMES):
        seed = job["seed"] + 500 + i
        fresh = make_inputs(descs)
        _refill(fresh, descs, seed, lambda d, regime=regime: "captured" if _indexes(d, job) else regime)
        info = {"seed": seed, "shape": "recorded", "regime": regime}
        shapes_run["recorded"]["calls"] += trial.run(f"launcher-{regime}", descs, fresh, info)
    for grow in (False, True):
        budget = unseen_budget(descs)
        shapes, scalars = unseen_shapes(descs, grow, compiled, max_bytes=budget)
        label = _changed(shapes, descs)
        if not label:
            summary["notes"].append(
                "no unseen shape tried: every dimension of the launcher's tensors is 1, indexed by an integer "
                "input, or a size the kernel is compiled for (a constexpr value)"
            )
            break
        twice = unseen_shapes(descs, True, compiled)[0]
        if grow and twice != shapes:
            summary["notes"].append(
                f"the larger unseen shape grows the sizes by less than twice: twice ({_changed(twice, descs)}) "
                f"would take {tensor_bytes(descs, twice) / 2**20:,.0f} MiB of tensors, more than the "
                f"{budget / 2**20:,.0f} MiB a replay's trial may take here"
            )
        new_descs = [{**d, "value": scalars.get(d["name"], d.get("value"))} for d in descs]
        seed = job["seed"] + (1001 if grow else 1000)
        fresh = make_inputs(new_descs, shapes, guarded=True)
        _refill(fresh, new_descs, seed)
        shape = f"unseen, {'larger' if grow else 'smaller'} ({label})"
        info = {"seed": seed, "shape": shape, "regime": "captured", "args": new_descs}
        if trial.run(f"launcher-{'larger' if grow else 'smaller'}", new_descs, fresh, info):
            shapes_run[shape] = {"descs": new_descs, "shapes": shapes, "bytes": tensor_bytes(descs, shapes), "calls": 1}
    shape, where = min(
        ((k, v) for k, v in shapes_run.items() if v["calls"]),
        key=lambda kv: (max(0, ALIAS_CALLS - kv[1]["calls"]) * kv[1]["bytes"], kv[1]["bytes"]),
    )
    for k in range(max(0, ALIAS_CALLS - where["calls"])):
        seed = job["seed"] + 2000 + k
        fresh = make_inputs(where["descs"], where["shapes"], guarded=where["shapes"] is not None)
        _refill(fresh, where["descs"], seed)
        info = {"seed": seed, "shape": shape, "regime": "captured", "fresh": True, "args": where["descs"]}
        trial.run(f"launcher-again-{k}", where["descs"], fresh, info)
    found = aliases(calls)
    for run in summary["runs"]:
        if run["mode"] == "launcher" and run["label"] in found:
            run["aliases"] = found[run["label"]]
    _ran(summary, truth, None)


def _changed(shapes: dict, descs: list[dict]) -> str:
    """The shapes that differ from the recorded ones, `name=[...]`."""
    return ", ".join(f"{n}={s}" for n, s in shapes.items() if s != next(d["shape"] for d in descs if d["name"] == n))


class _Trial:
    """One launcher trial on the reference's side: its inputs saved, the call (the kernel's launches watched),
    its outputs saved as the truth and the call kept for the aliasing comparison."""

    def __init__(self, job: dict, fn, inputs: Path, truth: Path, summary: dict, calls: list[dict]):
        self.job, self.fn, self.inputs, self.truth, self.summary, self.calls = job, fn, inputs, truth, summary, calls

    def run(self, label: str, descs: list[dict], values: dict, info: dict, must: bool = False) -> bool:
        """Whether the reference took the trial (`must`: one at the captured shape and range, which it has to)."""
        given = _host(values)
        _save(self.inputs / f"{label}.pt", given)
        try:
            with KernelLaunches(self.job["kernel"]["name"]) as launches:
                result = call_launcher(self.fn, descs, values)
                _sync()
        except Exception as exc:
            if must:
                raise
            self.summary["notes"].append(
                f"{label}: the reference itself rejected these inputs "
                f"({type(exc).__name__}: {str(exc)[:200]}); not compared"
            )
            return False
        outputs = _outputs_of(result, values, given)
        if info["shape"].startswith("unseen") and _nan_from_nowhere(outputs, given):
            self.summary["notes"].append(
                f"{label}: the reference read past its inputs at this shape (NaN from the guard around them reached "
                "its outputs: its sizes only hold together as recorded); not compared"
            )
            return False
        self.calls.append(_call_record(label, result, values))
        _save(self.truth / f"{label}.pt", outputs)
        run = {"label": label, "mode": "launcher", "poisoned": [], **info, **launches.made_of(result, values)}
        _ran(self.summary, self.truth, run)
        return True


def _refill(values: dict, descs: list[dict], seed: int, regime=lambda desc: "captured") -> None:
    """Each distinct tensor in `values` drawn afresh from `seed`, in the regime `regime(desc)` names
    (a tensor shared by two arguments is drawn once)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    drawn = set()
    for d in descs:
        if d["kind"] == "tensor" and id(values[d["name"]]) not in drawn:
            drawn.add(id(values[d["name"]]))
            fill_fresh(values[d["name"]], d, generator, regime(d))


def _indexes(desc: dict, job: dict) -> bool:
    """A launcher argument that is (by dtype and shape) a kernel argument whose values become
    addresses: values outside its captured range would write out of bounds, in the reference too."""
    index_args = [a for a in job["launch"]["args"] if a["name"] in job.get("indexes", ()) and a["kind"] == "tensor"]
    return any(a["dtype"] == desc["dtype"] and a["shape"] == desc["shape"] for a in index_args)


def _nan_from_nowhere(outputs: dict, given: dict) -> bool:
    """NaN in an output of a trial whose inputs held none."""
    import torch

    def nan(t) -> bool:
        return isinstance(t, torch.Tensor) and t.is_floating_point() and bool(torch.isnan(t).any())

    return not any(nan(t) for t in given.values()) and any(nan(t) for t in outputs.values())


def _ran(summary: dict, out: Path, run: dict | None) -> None:
    """Record a finished trial at once: if a later one brings the process down (an out-of-bounds
    write on an unseen shape), the trials before it still count. (None: the summary as it is now.)"""
    if run is not None:
        summary["runs"].append(run)
    (out / "replay.json").write_text(json.dumps(summary))


def _host(values: dict) -> dict:
    import torch

    return {
        n: (v.detach().to("cpu", copy=True) if isinstance(v, torch.Tensor) else v)
        for n, v in values.items()
        if isinstance(v, (torch.Tensor, int, float, bool)) or v is None
    }


# --- the candidate side ------------------------------------------------------------------------


def run_candidate(job: dict, module, summary: dict, modes: tuple[str, ...] = ("kernel", "launcher")) -> None:
    """The candidate on each trial of `modes` the reference ran; outputs saved for the parent to compare.
    (A warm worker runs its `early_mode` first, the others once its job comes.)"""
    if "kernel" in modes:
        _kernel_runs(job, module, summary)
    if "launcher" in modes:
        _launcher_runs(job, module, summary)


def early_mode(plan: list[dict]) -> str | None:
    """The trials a warm worker runs before its job, on the reference's description of what the candidate
    calls: the launcher's where there are any (its body may change, not where it is or what it takes);
    else, for a launch from module level, the kernel's own, at the reference's recorded launch."""
    modes = {run["mode"] for run in plan}
    return next((mode for mode in ("launcher", "kernel") if mode in modes), None)


def _other_modes(done: str | None) -> tuple[str, ...]:
    return tuple(mode for mode in ("kernel", "launcher") if mode != done)


def _kernel_runs(job: dict, module, summary: dict) -> None:
    out, plan = Path(job["out_dir"]), job["plan"]
    kernel = getattr(module, job["kernel"]["name"], None)
    kernel_runs = [r for r in plan if r["mode"] == "kernel"]
    if kernel_runs and (kernel is None or job["kernel"]["params"] != job["reference_params"]):
        summary["notes"].append(
            f"kernel replay not possible: the candidate renamed {job['kernel']['name']!r} or changed its parameters"
        )
        kernel_runs = []
    tensor_descs = [d for d in job["reference_launch"]["args"] if d["kind"] == "tensor"]
    for run in kernel_runs:
        tensors = _placed(_inputs(Path(job["inputs_dir"]) / f"{run['label']}.pt", summary), tensor_descs)
        _guarded(summary, run, lambda tensors=tensors: _launch(kernel, job["launch"], tensors, job["written"]), out)


def _launcher_runs(job: dict, module, summary: dict) -> None:
    """The candidate's launcher on each trial, those at unseen shapes first: their kernels are compiled for
    other sizes, which the program's run beside never compiles (a pipelined GEMM's took 4.2 s on the H100),
    while by the time they are done the program has put the recorded shape's in the Triton cache they share."""
    inputs, out = Path(job["inputs_dir"]), Path(job["out_dir"])
    launcher_runs = sorted((r for r in job["plan"] if r["mode"] == "launcher"), key=lambda r: r["shape"] == "recorded")
    fn = _launcher_fn(job, module.__name__, summary) if launcher_runs else None
    if fn is None:
        return
    descs = job["launcher"]["args"]
    if [d["name"] for d in descs] != [d["name"] for d in job["reference_launcher_args"]]:
        summary["notes"].append("launcher replay not possible: the candidate's launcher takes other arguments")
        return
    values: dict | None = None
    calls: list[dict] = []
    for run in launcher_runs:
        loaded = _inputs(inputs / f"{run['label']}.pt", summary)
        run_descs = run.get("args") or job["reference_launcher_args"]
        recorded = run["shape"] == "recorded" and run["regime"] == "captured" and not run.get("fresh")
        if recorded and values is not None:
            for name, v in loaded.items():  # the same tensors as the last trial, refilled
                if hasattr(values.get(name), "copy_"):
                    values[name].copy_(v)
        elif recorded:
            values = _placed(loaded, run_descs)
        current = values if recorded else _placed(loaded, run_descs)

        def call(run=run, current=current, run_descs=run_descs, given=loaded):
            result = call_launcher(fn, run_descs, current)
            _sync()
            calls.append(_call_record(run["label"], result, current))
            return _outputs_of(result, current, given)

        _guarded(summary, run, call, out)
    found = aliases(calls)  # every call's returned storage against every other's, once all have run
    for done in summary["runs"]:
        if done["mode"] == "launcher" and done["label"] in found:
            done["aliases"] = found[done["label"]]


def _inputs(path: Path, summary: dict) -> dict:
    """A trial's saved inputs, the seconds it took counted in the summary's phases."""
    mark = time.perf_counter()
    loaded = load_tensors(path)
    summary["phases"]["inputs"] = round(summary["phases"].get("inputs", 0.0) + time.perf_counter() - mark, 3)
    return loaded


def _placed(loaded: dict, descs: list[dict]) -> dict:
    """Loaded host inputs on the devices the descriptions name, shared storage kept shared."""
    values: dict[str, Any] = {}
    for d in descs:
        if d["kind"] == "tensor":
            values[d["name"]] = (
                values[d["alias_of"]]
                if d.get("alias_of") in values
                else loaded[d["name"]].to(d["device"], copy=True)  # never the loaded tensor: it is the trial's record
            )
        elif d["kind"] == "dtype":
            values[d["name"]] = _dtype(d["value"])
        else:
            values[d["name"]] = loaded.get(d["name"], d.get("value"))
    return values


def _guarded(summary: dict, run: dict, call, out: Path) -> None:
    begin = time.perf_counter()
    try:
        outputs = call()
    except Exception as exc:
        summary["failures"].append(
            {**run, "error": f"{type(exc).__name__}: {str(exc)[:500]}", "traceback": traceback.format_exc()[-2000:]}
        )
        return
    mark = time.perf_counter()
    _save(out / f"{run['label']}.pt", outputs)
    phases = summary["phases"]
    phases["save"] = round(phases.get("save", 0.0) + time.perf_counter() - mark, 3)
    summary["runs"].append({**run, "seconds": round(mark - begin, 3)})  # the call: compiling, launching, waiting


def _launcher_fn(job: dict, alias: str, summary: dict):
    side = job.get("launcher")
    if not side:
        summary["notes"].append("launcher replay not possible: the kernel was not called from a Python function")
        return None
    if side.get("varargs"):
        summary["notes"].append(f"launcher replay not possible: {side['qualname']} takes *args/**kwargs")
        return None
    module = sys.modules[alias]
    top = _top_name(side)
    if side["file"] != module.__file__ and top:
        module = load_module(side["file"], alias + "_launcher", needs=(top,))
    fn = resolve(module, side["qualname"])
    if fn is None:
        summary["notes"].append(
            f"launcher replay not possible: {side['qualname']} in {side['file']} is not a module-level function"
        )
    elif side.get("autograd"):  # Function.forward(ctx, ...): called as the program does, through apply
        owner = resolve(module, side["qualname"].rsplit(".", 1)[0])
        return _through_apply(owner)
    return fn


def _through_apply(function_class):
    """`Function.apply` taking the forward's arguments as the program passed them (apply takes no keywords:
    keyword-only ones follow in the forward's order)."""

    def call(*args, **kwargs):
        return function_class.apply(*args, *kwargs.values())

    return call


# --- the worker --------------------------------------------------------------------------------


def main(mode: str, *args: str) -> int:
    """`prepare JOB`, `run JOB`, `time JOB CMD_FD OUT_FD`, or `serve prepare|run [EARLY_JOB]`."""
    # Under the interpreter, as in the program's processes: no timer to tune with. Under compute-sanitizer
    # each config runs once, untimed.
    sanitized = _under_cuda_tool()
    if os.environ.get("TRITON_INTERPRET") == "1" or sanitized:
        from triton.runtime import autotuner

        from intelliperf.profiling.window import untimed_autotune

        untimed_autotune(autotuner, run_each=sanitized)
    racecheck_ctas = os.environ.get(names.RACECHECK_CTAS, "0")
    if racecheck_ctas != "0":
        racecheck.cap_grids(None if racecheck_ctas == "sm" else int(racecheck_ctas))
    late = os.environ.get(names.CUDA_LATE) == "1"
    for name in [n for n in os.environ if n.startswith(names.PREFIX)]:
        del os.environ[name]  # read by now: the candidate's code finds none of ours
    if mode == "time":
        from .performance import bind_clock

        bind_clock()  # before the candidate's module is imported
    if mode == "serve":
        return _serve(args[0], args[1] if len(args) > 1 else None, late)
    _work(mode, json.loads(Path(args[0]).read_text()), fds=tuple(int(fd) for fd in args[1:]))
    return 0


def _new_summary() -> dict:
    """What a worker's replay.json holds: the runs done, the trials that failed, notes, phase times, and when
    (wall clock, for a benchmark's timeline: `at`) its early trials, its job and its end came."""
    return {"runs": [], "failures": [], "notes": [], "phases": {}, "at": {"imported": IMPORTED_AT}}


def _serve(mode: str, early_path: str | None, late: bool = False) -> int:
    """A warm worker: started while the program still runs, it imports torch and Triton (and sets up
    the GPU) at once, then waits for its job's path on stdin (end of input: nothing to do). With an
    early job (its `early_mode` trials), those run while it waits; the job then says whether they stand
    (`early_done`: the mode whose early trials ran what the candidate's own run called)."""
    import torch
    import triton  # noqa: F401  (the import is the start-up this worker takes off the critical path)

    if torch.cuda.is_available() and not late:  # (late: no room beside the program)
        torch.cuda.init()
    early = None
    if early_path:
        job = json.loads(Path(early_path).read_text())
        summary = _new_summary()
        summary["at"]["early"] = time.time()
        mark = time.perf_counter()
        try:
            module = load_module(job["kernel"]["file"], "_intelliperf_side", needs=_looked_up(job))
            first = early_mode(job["plan"])
            run_candidate(job, module, summary, modes=(first,) if first else ())
            summary["phases"]["early"] = round(time.perf_counter() - mark, 3)
            early = (module, summary)
        except (Exception, SystemExit):  # the job proper runs it all again and reports what goes wrong
            sys.modules.pop("_intelliperf_side", None)
    line = sys.stdin.readline().strip()
    if not line:
        return 0
    job = json.loads(Path(line).read_text())
    os.chdir(Path(job["kernel"]["file"]).parent)  # where a one-shot worker would have started
    if early:
        early[1]["at"]["job"] = time.time()
    if early and job.get("early_done"):
        _work(mode, job, *early)
    else:
        _work(mode, {**job, "early_done": None})
    return 0


def _work(mode: str, job: dict, module=None, summary: dict | None = None, fds: tuple[int, ...] = ()) -> None:
    """One job of `prepare`, `run` or `time`; replay.json in its out_dir says what ran, or why it
    could not (`time` answers on its pipes instead, and writes replay.json only when it fails)."""
    out = Path(job["out_dir"])
    out.mkdir(parents=True, exist_ok=True)
    summary = summary or _new_summary()
    mark = time.perf_counter()
    try:
        if module is None:
            module = load_module(job["kernel"]["file"], "_intelliperf_side", needs=_looked_up(job))
        summary["phases"]["load"] = round(time.perf_counter() - mark, 3)
        if mode == "time":
            from .performance import serve_timing

            serve_timing(job, module, *fds)
            return
        if mode == "prepare":
            prepare(job, module, summary)
        else:
            run_candidate(job, module, summary, modes=_other_modes(job.get("early_done")))
        summary["phases"][mode] = round(time.perf_counter() - mark - summary["phases"]["load"], 3)
    except (Exception, SystemExit) as exc:  # the parent makes it a reason; the traceback helps the rewriter
        summary["error"] = f"{type(exc).__name__}: {str(exc)[:1000]}"
        summary["traceback"] = traceback.format_exc()[-3000:]
    summary["notes"] += racecheck.notes()
    summary.setdefault("at", {})["done"] = time.time()
    (out / "replay.json").write_text(json.dumps(summary))


def _under_cuda_tool() -> bool:
    """A CUDA tool injected into this process: compute-sanitizer sets NV_SANITIZER_INJECTION_*, Nsight tools
    CUDA_INJECTION64_PATH."""
    return any(name == "CUDA_INJECTION64_PATH" or name.startswith("NV_SANITIZER_INJECTION") for name in os.environ)


def _exit(code: int) -> None:
    """The answer is written: the parent waits for this exit, and Python's and torch's teardown (about a
    second with a CUDA context; 1.1 s under racecheck, on the critical path of a GEMM's attempt, H100) is no
    part of it. Under compute-sanitizer too: with its options here (memcheck, racecheck; no leak check) it
    reports a finding as the kernel ends, before the answer is written after a synchronize, and its front end
    (this worker's parent) turns a finding into the exit code (`--error-exitcode`) whatever this exit is. An
    Nsight tool (CUDA_INJECTION64_PATH) writes its report at the exit it sees, so there the exit is a full one."""
    if "CUDA_INJECTION64_PATH" in os.environ:
        sys.exit(code)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    _exit(main(*sys.argv[1:]))
