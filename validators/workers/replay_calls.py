"""Calling what the replay replays, in a worker: the kernel at its recorded launch (grid, arguments, options),
the launcher as the program called it (found in the kernel's module or its own file, through
`Function.apply` for an autograd forward), inputs placed on their devices, and trials' tensors saved.

Imports only torch and triton (and pydantic through the package).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from intelliperf.profiling.inside import untouched
from intelliperf.workload.definitions import load_module, resolve

from .jobs import ReplayJob
from .replay_forms import arranged
from .replay_inputs import ReplayUnsupported, fill_gaps, strided_view, torch_dtype


def top_name(side: dict) -> str | None:
    """The module-level name a launcher is reached by; None for a launch from module level (`<module>`) or a
    function's local one (`<locals>`)."""
    qualname = side.get("qualname", "<")
    return None if "<" in qualname else qualname.split(".")[0]


def sync_device() -> None:
    import torch

    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def kernel_args(launch: dict, tensors: dict) -> dict:
    args = {}
    for d in launch["args"]:
        if d["kind"] == "tensor":
            args[d["name"]] = tensors.get(d["name"])
        elif d["kind"] == "scalar":
            args[d["name"]] = d["value"]
        else:
            raise ReplayUnsupported(f"kernel argument {d['name']!r} ({d['kind']}) cannot be replayed")
    return args


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
    kwargs = {**kernel_args(launch, tensors), **launch.get("options", {})}
    return lambda: fn[grid](**kwargs)


def launch_recorded(kernel, launch: dict, tensors: dict, written) -> dict:
    kernel_call(kernel, launch, tensors)()
    sync_device()
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


def ablate(fn, descs: list[dict], loaded: dict, path: Path, of: str) -> dict:
    """The launcher called once more on trial `of`'s inputs (`loaded`) with every Triton kernel a no-op
    (`NoKernels`); its outputs saved at `path`. What the summary says of it: the trial, the launches it
    skipped, or the error the call raised (its kernels' work was needed)."""
    from .replay_outputs import NoKernels, outputs_of

    values = placed(loaded, descs)
    try:
        with NoKernels() as off:
            result = call_launcher(fn, descs, values)
            sync_device()
        save_tensors(path, outputs_of(result, values, loaded))
    except Exception as exc:
        return {"of": of, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    return {"of": of, "launches": off.launches}


def save_tensors(path: Path, payload: dict) -> None:
    import torch

    untouched.original("torch", "save", torch.save)(payload, path)


def placed(loaded: dict, descs: list[dict]) -> dict:
    """Loaded host inputs on the devices the descriptions name, shared storage kept shared."""
    values: dict[str, Any] = {}
    for d in descs:
        if d["kind"] == "tensor" and d.get("alias_of") in values:
            values[d["name"]] = values[d["alias_of"]]
        elif d["kind"] == "tensor" and d.get("layout") == "strided":  # the trial's views, as the reference had them
            host = loaded[d["name"]]
            values[d["name"]] = strided_view(list(host.shape), host.dtype, d["device"]).copy_(host)
            fill_gaps(values[d["name"]])
        elif d["kind"] == "tensor":  # never the loaded tensor (the record); laid out as the trial's (`replay_forms`)
            values[d["name"]] = arranged(loaded[d["name"]].to(d["device"], copy=True), d)
        elif d["kind"] == "dtype":
            values[d["name"]] = torch_dtype(d["value"])
        else:
            values[d["name"]] = loaded.get(d["name"], d.get("value"))
    return values


def launcher_fn(job: ReplayJob, alias: str, summary: dict):
    side = job.get("launcher")
    if not side:
        summary["notes"].append("launcher replay not possible: the kernel was not called from a Python function")
        return None
    if side.get("varargs"):
        summary["notes"].append(f"launcher replay not possible: {side['qualname']} takes *args/**kwargs")
        return None
    module = sys.modules[alias]
    top = top_name(side)
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
