"""Replay harness: reference and candidate run side by side on fresh inputs, in one worker process.

    python -m intelliperf.validators.replay JOB.json

The worker runs in the candidate's isolated copy (a subprocess with a timeout and no secrets).
It loads both versions of the kernel's module by path, then for each trial draws fresh inputs
like the captured ones (same shapes, dtypes and strides; values in the captured range; a new
seed per trial, recorded) and runs:

* the kernel itself, with its recorded grid and options, when the candidate kept the kernel's
  name and parameters; write-only outputs are poisoned first (NaN, or a sentinel for integers),
  so an element the candidate never writes shows; outputs that are also read (atomics,
  in-place updates) start from the same random values on both sides;
* the launcher (the Python function that called `kernel[grid](...)`), when it is a module-level
  function whose arguments are tensors and scalars: it may change the grid, block sizes or
  scratch buffers. The same input tensors are refilled in place for every trial, so a result
  cached on pointers goes stale, and a last run on an unseen shape (sizes that are no multiple
  of any block) checks the tail handling.

Outputs are saved for the parent to compare: candidate code never sees the comparator. With
`timing` in the job, the launchers (or kernels) are then timed interleaved (`performance.py`).
Imports only torch, triton, numpy (and pydantic through the package).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import sys
import time
import traceback
from pathlib import Path

from .compare import INT_POISON


def load_module(path: str, alias: str):
    """Import a file under a private name, with its folder first on sys.path (for its siblings)."""
    folder = os.path.dirname(path)
    sys.path.insert(0, folder)
    try:
        spec = importlib.util.spec_from_file_location(alias, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[alias] = module
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(folder)


def resolve(module, qualname: str):
    obj = module
    for part in qualname.split("."):
        if part == "<locals>":
            return None
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


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


def fill_fresh(tensor, desc: dict, generator) -> None:
    """Refill in place with values drawn like the captured ones (uniform in their range).

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
        values = torch.rand(tensor.shape, dtype=wide, **draw) * (hi - lo) + lo
    else:
        values = torch.randint(int(lo), int(hi) + 1, tensor.shape, dtype=torch.int64, **draw)
    tensor.copy_(values.to(tensor.dtype))


def make_inputs(descs: list[dict], shapes: dict | None = None) -> dict:
    """Tensors (and scalars) for the described arguments; `shapes` maps names to new shapes."""
    values = {}
    for d in descs:
        if d["kind"] == "tensor":
            if d.get("alias_of") in values and shapes is None:
                values[d["name"]] = values[d["alias_of"]]
                continue
            shape = (shapes or {}).get(d["name"], d["shape"])
            values[d["name"]] = _strided_like(shape, d["strides"], _dtype(d["dtype"]), d["device"])
        elif d["kind"] == "scalar":
            values[d["name"]] = d["value"]
        elif d["kind"] == "dtype":
            values[d["name"]] = _dtype(d["value"])
        else:
            raise ReplayUnsupported(f"argument {d['name']!r} is a {d.get('type_name', d['kind'])}, which the replay "
                                    "cannot draw afresh")
    return values


class ReplayUnsupported(Exception):
    pass


def unseen_shapes(descs: list[dict]) -> tuple[dict, dict]:
    """New sizes for the large dimensions (>= 64): odd, so no multiple of any block size, and
    about 3/4 of the original. Integer arguments equal to a changed size or element count follow."""
    sizes = {d for a in descs if a["kind"] == "tensor" for d in a["shape"] if d >= 64}
    new = {d: (d - d // 4) | 1 for d in sizes}
    shapes = {a["name"]: [new.get(d, d) for d in a["shape"]] for a in descs if a["kind"] == "tensor"}
    numels = {math.prod(a["shape"]): math.prod(shapes[a["name"]]) for a in descs if a["kind"] == "tensor"}
    scalars = {}
    for a in descs:
        if a["kind"] == "scalar" and isinstance(a["value"], int) and not isinstance(a["value"], bool):
            if a["value"] in new:
                scalars[a["name"]] = new[a["value"]]
            elif a["value"] in numels and a["value"] >= 64:
                scalars[a["name"]] = numels[a["value"]]
    return shapes, scalars


# --- one side's run ----------------------------------------------------------------------------


def _outputs_of(result, args: dict) -> dict:
    """What a launcher produced: its return value(s) and every tensor argument after the call."""
    import torch

    out = {}
    items = result if isinstance(result, (tuple, list)) else [result]
    for i, item in enumerate(items):
        if isinstance(item, torch.Tensor):
            out[f"return[{i}]"] = item.detach().to("cpu", copy=True)
    for name, value in args.items():
        if isinstance(value, torch.Tensor):
            out[f"arg:{name}"] = value.detach().to("cpu", copy=True)
    return out


def _call(fn, descs, values):
    positional = [values[d["name"]] for d in descs]
    return fn(*positional)


def run_launchers(job: dict, ref_fn, cand_fn, out: Path, summary: dict) -> None:
    import torch

    descs = job["reference"]["launcher"]["args"]
    ref_in = make_inputs(descs)
    cand_in = {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in ref_in.items()}
    for trial in range(job["trials"]):
        seed = job["seed"] + trial
        generator = torch.Generator().manual_seed(seed)
        for d in descs:  # the same tensors every trial, refilled: results cached on pointers go stale
            if d["kind"] == "tensor" and "alias_of" not in d:
                fill_fresh(ref_in[d["name"]], d, generator)
                cand_in[d["name"]].copy_(ref_in[d["name"]])
        _side_by_side(f"launcher-{trial}", lambda: _call(ref_fn, descs, ref_in), lambda: _call(cand_fn, descs, cand_in),
                      ref_in, cand_in, out, summary, {"seed": seed, "shape": "recorded"})
    shapes, scalars = unseen_shapes(descs)
    if not scalars and all(shapes[d["name"]] == d["shape"] for d in descs if d["kind"] == "tensor"):
        summary["notes"].append("no unseen shape tried: the launcher's tensors have no dimension of 64 or more")
        return
    new_descs = [{**d, "value": scalars.get(d["name"], d.get("value"))} for d in descs]
    ref_in, generator = make_inputs(new_descs, shapes), torch.Generator().manual_seed(job["seed"] + 1000)
    for d in new_descs:
        if d["kind"] == "tensor":
            fill_fresh(ref_in[d["name"]], d, generator)
    cand_in = {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in ref_in.items()}
    label = ", ".join(f"{n}={s}" for n, s in shapes.items() if s != next(d["shape"] for d in descs if d["name"] == n))
    _side_by_side("launcher-unseen", lambda: _call(ref_fn, new_descs, ref_in),
                  lambda: _call(cand_fn, new_descs, cand_in), ref_in, cand_in, out, summary,
                  {"seed": job["seed"] + 1000, "shape": f"unseen ({label})"}, reference_may_fail=True)


def _side_by_side(label, ref_call, cand_call, ref_in, cand_in, out, summary, info, reference_may_fail=False) -> None:
    import torch

    try:
        ref_out = _outputs_of(ref_call(), ref_in)
    except Exception as exc:
        if reference_may_fail:
            summary["notes"].append(f"{label}: the reference itself rejected these inputs "
                                    f"({type(exc).__name__}: {str(exc)[:200]}); not compared")
            return
        raise
    try:
        cand_out = _outputs_of(cand_call(), cand_in)
    except Exception as exc:
        summary["failures"].append({"label": label, **info, "error": f"{type(exc).__name__}: {str(exc)[:500]}",
                                    "traceback": traceback.format_exc()[-2000:]})
        return
    _sync()
    torch.save({"reference": ref_out, "candidate": cand_out}, out / f"{label}.pt")
    summary["runs"].append({"label": label, "mode": "launcher", **info, "poisoned": []})


def run_kernels(job: dict, ref_kernel, cand_kernel, out: Path, summary: dict) -> None:
    """The kernels themselves, on their own recorded launches, with outputs poisoned."""
    import torch

    ref_launch, cand_launch = job["reference"]["launch"], job["candidate"]["launch"]
    written, read = set(job["written"]), set(job["read"])
    descs = [d for d in ref_launch["args"] if d["kind"] == "tensor"]
    for trial in range(job["trials"]):
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
            else:
                fill_fresh(t, d, generator)
        ref_args = _kernel_args(ref_launch, tensors)
        cand_tensors = {k: v.clone() for k, v in tensors.items()}
        cand_args = _kernel_args(cand_launch, cand_tensors)
        info = {"seed": seed, "shape": "recorded", "poisoned": poisoned}
        ref_out = _launch(ref_kernel, ref_launch, ref_args, tensors, written)
        try:
            cand_out = _launch(cand_kernel, cand_launch, cand_args, cand_tensors, written)
        except Exception as exc:
            summary["failures"].append({"label": f"kernel-{trial}", **info,
                                        "error": f"{type(exc).__name__}: {str(exc)[:500]}",
                                        "traceback": traceback.format_exc()[-2000:]})
            continue
        torch.save({"reference": ref_out, "candidate": cand_out}, out / f"kernel-{trial}.pt")
        summary["runs"].append({"label": f"kernel-{trial}", "mode": "kernel", **info})


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


def _launch(kernel, launch: dict, args: dict, tensors: dict, written: set) -> dict:
    grid = tuple(launch["grid"])
    kernel[grid](**args, **launch.get("options", {}))
    _sync()
    return {f"arg:{n}": tensors[n].detach().to("cpu", copy=True) for n in written if n in tensors}


def _sync() -> None:
    import torch

    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


# --- the worker --------------------------------------------------------------------------------


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    out = Path(job["out_dir"])
    out.mkdir(parents=True, exist_ok=True)
    summary = {"runs": [], "failures": [], "notes": [], "timing": None, "phases": {}}
    phases, mark = summary["phases"], time.perf_counter()

    def phase(name: str) -> None:  # seconds per phase, so a slow validation can be explained
        nonlocal mark
        phases[name] = round(time.perf_counter() - mark, 3)
        mark = time.perf_counter()

    try:
        ref_mod = load_module(job["reference"]["kernel"]["file"], "_intelliperf_reference")
        cand_mod = load_module(job["candidate"]["kernel"]["file"], "_intelliperf_candidate")
        name = job["reference"]["kernel"]["name"]
        ref_kernel, cand_kernel = getattr(ref_mod, name, None), getattr(cand_mod, name, None)
        launchers = _launchers(job, summary)
        phase("load")
        if cand_kernel is not None and job["candidate"]["kernel"]["params"] == job["reference"]["kernel"]["params"]:
            try:
                run_kernels(job, ref_kernel, cand_kernel, out, summary)
            except ReplayUnsupported as exc:
                summary["notes"].append(f"kernel replay not possible: {exc}")
        else:
            summary["notes"].append(f"kernel replay not possible: the candidate renamed {name!r} or changed its "
                                    "parameters")
        phase("kernel_replay")
        if launchers is not None:
            try:
                run_launchers(job, *launchers, out, summary)
            except ReplayUnsupported as exc:
                summary["notes"].append(f"launcher replay not possible: {exc}")
        phase("launcher_replay")
        if job.get("timing") and launchers is not None:
            from .performance import time_launchers

            summary["timing"] = time_launchers(job, *launchers)
            phase("timing")
    except Exception as exc:  # the parent turns this into a reason; the traceback helps the rewriter
        summary["error"] = f"{type(exc).__name__}: {str(exc)[:1000]}"
        summary["traceback"] = traceback.format_exc()[-3000:]
    (out / "replay.json").write_text(json.dumps(summary))
    return 0


def _launchers(job: dict, summary: dict):
    ref, cand = job["reference"].get("launcher"), job["candidate"].get("launcher")
    if not ref or not cand:
        summary["notes"].append("launcher replay not possible: the kernel was not called from a Python function")
        return None
    if ref.get("varargs"):
        summary["notes"].append(f"launcher replay not possible: {ref['qualname']} takes *args/**kwargs")
        return None
    fns = []
    for side, kernel_module in ((ref, "_intelliperf_reference"), (cand, "_intelliperf_candidate")):
        same_file = side["file"] == sys.modules[kernel_module].__file__
        module = sys.modules[kernel_module] if same_file else load_module(side["file"], kernel_module + "_launcher")
        fn = resolve(module, side["qualname"])
        if fn is None:
            summary["notes"].append(f"launcher replay not possible: {side['qualname']} in {side['file']} is not a "
                                    "module-level function")
            return None
        fns.append(fn)
    if [a["name"] for a in ref["args"]] != [a["name"] for a in cand["args"]]:
        summary["notes"].append("launcher replay not possible: the candidate's launcher takes other arguments")
        return None
    return fns


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

