"""The candidate side of the replay (`run`, in the candidate's sandbox): the candidate's kernel and launcher on
the inputs the reference side saved, each trial's outputs saved for the parent to compare, a failing trial
recorded with its traceback; a warm worker runs its `early_mode` trials before its job comes.

Imports only torch and triton.
"""

from __future__ import annotations

import time
import traceback
from pathlib import Path

from intelliperf.profiling.inside.window import next_config

from ..correctness import load_tensors
from .fresh_memory import fresh_as
from .jobs import TRIAL_BEGUN, ReplayJob
from .replay_calls import ablate, call_launcher, launch_recorded, launcher_fn, placed, save_tensors, sync_device
from .replay_outputs import ABLATION, KernelLaunches, aliases, call_record, outputs_of
from .store_bounds import take_races


def run_candidate(job: ReplayJob, module, summary: dict, modes: tuple[str, ...] = ("kernel", "launcher")) -> None:
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


def other_modes(done: str | None) -> tuple[str, ...]:
    return tuple(mode for mode in ("kernel", "launcher") if mode != done)


def _kernel_runs(job: ReplayJob, module, summary: dict) -> None:
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
        tensors = placed(_inputs(Path(job["inputs_dir"]) / f"{run['label']}.pt", summary), tensor_descs)
        _guarded(
            summary, run, lambda tensors=tensors: launch_recorded(kernel, job["launch"], tensors, job["written"]), out
        )


def _launcher_runs(job: ReplayJob, module, summary: dict) -> None:
    """The candidate's launcher on each trial, those at unseen shapes first: their kernels are compiled for
    other sizes, which the program's run beside never compiles (a pipelined GEMM's took 4.2 s on the H100),
    while by the time they are done the program has put the recorded shape's in the Triton cache they share."""
    inputs, out = Path(job["inputs_dir"]), Path(job["out_dir"])
    launcher_runs = sorted((r for r in job["plan"] if r["mode"] == "launcher"), key=lambda r: r["shape"] == "recorded")
    fn = launcher_fn(job, module.__name__, summary) if launcher_runs else None
    if fn is None:
        return
    descs = (job["launcher"] or {}).get("args", [])  # a launcher fn was found, so it is described
    if [d["name"] for d in descs] != [d["name"] for d in job["reference_launcher_args"]]:
        summary["notes"].append("launcher replay not possible: the candidate's launcher takes other arguments")
        return
    values: dict | None = None
    calls: list[dict] = []
    launches: dict[str, int] = {}
    for run in launcher_runs:
        loaded = _inputs(inputs / f"{run['label']}.pt", summary)
        run_descs = run.get("args") or job["reference_launcher_args"]
        recorded = run["shape"] == "recorded" and run["regime"] == "captured" and not run.get("fresh")
        if recorded and values is not None:
            for name, v in loaded.items():  # the same tensors as the last trial, refilled
                if hasattr(values.get(name), "copy_"):
                    values[name].copy_(v)
        elif recorded:
            values = placed(loaded, run_descs)
        current = values if recorded else placed(loaded, run_descs)

        def call(run=run, current=current, run_descs=run_descs, given=loaded):
            with KernelLaunches("") as seen:  # (counts every Triton launch: the kernels do the work)
                result = call_launcher(fn, run_descs, current)
                sync_device()
            launches[run["label"]] = seen.any_kernel
            calls.append(call_record(run["label"], result, current))
            return outputs_of(result, current, given)

        _guarded(summary, run, call, out)
    found = aliases(calls)  # every call's returned storage against every other's, once all have run
    for done in summary["runs"]:
        if done["mode"] == "launcher" and done["label"] in found:
            done["aliases"] = found[done["label"]]
        if done["mode"] == "launcher" and done["label"] in launches:
            done["launches"] = launches[done["label"]]
    first = next((r for r in launcher_runs if r["label"] == job.get("ablation")), None)
    if first is not None:  # the kernels do the work: with them made no-ops, the outputs must change
        descs_of = first.get("args") or job["reference_launcher_args"]
        loaded = _inputs(inputs / f"{first['label']}.pt", summary)
        fresh_as("zeros")
        summary[ABLATION] = ablate(fn, descs_of, loaded, out / f"{ABLATION}.pt", first["label"])


def _inputs(path: Path, summary: dict) -> dict:
    """A trial's saved inputs, the seconds it took counted in the summary's phases."""
    mark = time.perf_counter()
    loaded = load_tensors(path)
    summary["phases"]["inputs"] = round(summary["phases"].get("inputs", 0.0) + time.perf_counter() - mark, 3)
    return loaded


def _guarded(summary: dict, run: dict, call, out: Path) -> None:
    (out / TRIAL_BEGUN).write_text(run["label"])
    next_config()  # under the interpreter: each trial with the next autotune config (a GPU may pick any)
    fresh_as("nan" if run.get("unwritten") else "mixed")
    take_races()  # (only this call's)
    begin = time.perf_counter()
    try:
        outputs = call()
    except Exception as exc:
        summary["failures"].append(
            {**run, "error": f"{type(exc).__name__}: {str(exc)[:500]}", "traceback": traceback.format_exc()[-2000:]}
        )
        return
    mark = time.perf_counter()
    save_tensors(out / f"{run['label']}.pt", outputs)
    phases = summary["phases"]
    phases["save"] = round(phases.get("save", 0.0) + time.perf_counter() - mark, 3)
    races = take_races()  # (plain stores of two programs at one address, under the interpreter)
    summary["runs"].append({**run, "seconds": round(mark - begin, 3), **({"races": races} if races else {})})
