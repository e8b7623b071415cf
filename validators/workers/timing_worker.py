"""The worker's side of the timing (`replay.py time`), in the process that imports the side's code:
its launcher called on fresh inputs, each call after an L2 flush and a spin kernel long enough for the
host to queue the call (`HostCover`), timed with device events; its answers (times, and a checksum of
each call's outputs) go back to the parent (`runs/performance.py`), which checks them from outside.

Why the spin: the fresh inputs and checksums of every call cost the host more than the device, so
without it the device would wait for the launcher inside the timed window, and the window would
measure the launcher's Python instead of the kernels. Imports only torch (at call time).
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

from intelliperf.profiling.inside.untouched import replaced_in_process

from .jobs import ReplayJob

L2_FLUSH_BYTES = 256 << 20
CLOCK: dict = {}  # the timing tools, bound by the worker before any candidate code is imported
MAX_COVER_S = 0.05  # the longest spin before a timed call, whatever a side says it needs


class TimingError(Exception):
    pass


def bind_clock() -> None:
    """Bind the functions that time and synchronise before the candidate's module is imported, so
    that nothing it does to `torch.cuda` afterwards reaches them."""
    import torch

    if torch.cuda.is_available():
        event = torch.cuda.Event
        CLOCK.update(
            event=event,
            record=event.record,
            elapsed=event.elapsed_time,
            synchronize=torch.cuda.synchronize,
            spin=torch.cuda._sleep,
        )


class HostCover:
    """Keeps the device busy while the host queues one timed call, so its events time the device's
    work, never the host's: a spin kernel before each call's begin event. Each side measures how long
    its host takes to queue a warm-up call (begin event, call, end event) and says so when ready; the
    parent covers both sides alike, with twice the longer of the two plus 20 us (`cover_s`)."""

    def __init__(self) -> None:
        event, record, elapsed, synchronize = (CLOCK[k] for k in ("event", "record", "elapsed", "synchronize"))
        self.spin = CLOCK["spin"]
        for _ in range(2):  # the first spin loads its kernel
            begin, end = event(enable_timing=True), event(enable_timing=True)
            record(begin)
            self.spin(1_000_000)
            record(end)
            synchronize()
        self.cycles_per_s = 1_000_000 / (elapsed(begin, end) / 1e3)

    def __call__(self, seconds: float) -> None:
        self.spin(int(min(seconds, MAX_COVER_S) * self.cycles_per_s))


def cover_s(queued: list[float]) -> float:
    """The spin before each timed call, the same on both sides: twice the longest time a side's host took
    to queue one call, plus 20 us, at most `MAX_COVER_S`."""
    said = [min(max(q, 0.0), MAX_COVER_S) if math.isfinite(q) else MAX_COVER_S for q in queued]
    return min(2 * max(said, default=0.0) + 20e-6, MAX_COVER_S)


def serve_timing(job: ReplayJob, module, cmd_fd: int, out_fd: int) -> None:
    """One side of the timing (in the replay worker, on the GPU): the launcher on the first
    trial's inputs (or this side's own kernel launch, see `_timed_call`); for each `t K` the
    parent sends, K calls, each on fresh values of the float inputs (the same values on both sides,
    drawn by this worker's own code before the call), after an L2 flush and the parent's host
    cover (`HostCover`), timed with device events; answered with their milliseconds and, per call,
    a checksum of every float tensor it returned or left in its arguments, which the parent compares
    with the reference's for the same inputs. The parent times each batch too."""
    import torch

    from .replay_inputs import fill_fresh

    commands, answers = os.fdopen(cmd_fd, "r"), os.fdopen(out_fd, "w", buffering=1)
    if not CLOCK:
        bind_clock()
    timed = _timed_call(job, module)
    if isinstance(timed, str):
        answers.write("error " + timed + "\n")
        return
    call, values, descs = timed
    fresh = [(values[d["name"]], d) for d in descs if _refilled(values.get(d["name"]), d)]
    flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    event, record, elapsed, synchronize = CLOCK["event"], CLOCK["record"], CLOCK["elapsed"], CLOCK["synchronize"]
    calls = 0

    def refill() -> None:
        nonlocal calls
        seed = torch.Generator().manual_seed(calls)
        for tensor, desc in fresh:
            fill_fresh(tensor, desc, seed)
        calls += 1

    cover, queued = HostCover(), []
    for _ in range(5):
        refill()
        flush.zero_()
        started_at = time.perf_counter()
        begin, end = event(enable_timing=True), event(enable_timing=True)
        record(begin)
        result = call()
        record(end)
        queued.append(time.perf_counter() - started_at)
        checksums(result, values)
    synchronize()
    # the first calls compile and autotune: how long the host takes to queue a call comes from the last three
    answers.write(f"ready {torch.cuda.get_device_name()}\tqueued={max(queued[2:]):.6f}\n")
    for line in commands:
        words = line.split()
        if len(words) != 3 or words[0] != "t":
            break
        pairs, sums = [], []
        for _ in range(int(words[1])):  # queued back to back, as a program runs them: device time, not latency
            refill()
            flush.zero_()
            cover(float(words[2]))
            begin, end = event(enable_timing=True), event(enable_timing=True)
            record(begin)
            result = call()
            record(end)
            sums.append(checksums(result, values))  # queued after the window, on the timed stream
            pairs.append((begin, end))
        synchronize()
        answer = {"ms": [elapsed(b, e) for b, e in pairs], "sums": [s.tolist() for s in sums]}
        answer["replaced"] = replaced_in_process()  # what the checksums and the clock read through, watched
        answers.write(json.dumps(answer) + "\n")


def _refilled(value, desc: dict) -> bool:
    """Float tensor inputs get fresh values per timed call; integer ones (indices, offsets, counts) keep the
    recorded values, which the kernel may need to stay in range."""
    return desc.get("kind") == "tensor" and getattr(value, "is_floating_point", lambda: False)()


_WEIGHTS: dict = {}


def checksums(result, values: dict):
    """Per float tensor the call returned or holds in its arguments: (sum of value x a fixed random sign,
    sum of squares), as one device tensor; a result of another type than torch.Tensor is refused, since a
    tensor subclass could put off its work until it is read."""
    import torch

    returned = list(result) if isinstance(result, (tuple, list)) else [result] if result is not None else []
    sums = []
    for t in [*returned, *values.values()]:
        if isinstance(t, torch.Tensor) and type(t) is not torch.Tensor:
            raise TimingError(f"the call returned a {type(t).__name__}, not a torch.Tensor")
        if not isinstance(t, torch.Tensor) or not t.is_floating_point() or t.numel() == 0:
            continue
        x = t.detach().reshape(-1).to(torch.float64).nan_to_num(0.0, 0.0, 0.0)
        key = (x.numel(), x.device)
        if key not in _WEIGHTS:
            signs = torch.randint(0, 2, (x.numel(),), generator=torch.Generator().manual_seed(x.numel()))
            _WEIGHTS[key] = (signs * 2 - 1).to(device=x.device, dtype=torch.float64)
        sums += [(x * _WEIGHTS[key]).sum(), (x * x).sum()]
    return torch.stack(sums) if sums else torch.zeros(0, dtype=torch.float64)


def _timed_call(job: ReplayJob, module):
    """What one timing call runs: the launcher on the first launcher trial's inputs; where the
    launch is no function (module level, a nested function), this side's own recorded launch of
    the kernel (its grid, constexprs and options, as its program ran it) on the first kernel
    trial's inputs. Returns (call, the inputs by name, their descriptions) or why there is none."""
    from ..correctness import load_tensors
    from .replay_calls import call_launcher, kernel_call, launcher_fn, placed

    notes: dict[str, list[str]] = {"notes": []}
    fn = launcher_fn(job, "_intelliperf_side", notes) if job.get("reference_launcher_args") else None
    inputs = Path(job["inputs_dir"])
    # the program's own arguments where they were kept: integer ids, masks and offsets decide the work
    given = next((inputs / n for n in ("launcher-program.pt", "launcher-0.pt") if (inputs / n).exists()), None)
    if fn is not None and given is not None:
        descs = job["reference_launcher_args"]
        values = placed(load_tensors(given), descs)
        return (lambda: call_launcher(fn, descs, values)), values, descs
    kernel = getattr(module, job["kernel"]["name"], None)
    if kernel is None or not (inputs / "kernel-0.pt").exists():
        return "; ".join(notes["notes"] + ["and the kernel's own launch has no replayed inputs"])
    descs = [d for d in job["reference_launch"]["args"] if d["kind"] == "tensor"]
    tensors = placed(load_tensors(inputs / "kernel-0.pt"), descs)
    return kernel_call(kernel, job["launch"], tensors), tensors, descs
