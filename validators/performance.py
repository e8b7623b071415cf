"""Timing: is the candidate faster, by more than noise?

Reference and candidate run in two processes (a candidate never shares one with the
reference), interleaved by the parent in pairs whose order alternates (AB, BA, ...), after
warm-up, each call timed with device events on the current stream and preceded by an L2 flush
(a write over a buffer larger than the cache) and a spin kernel long enough for the host to queue
the call (`HostCover`): the fresh inputs and checksums of every call cost the host more than the
device, and without the spin the device would wait for the launcher inside the timed window, so
the window would measure the launcher's Python instead of the kernels. The parent's own clock
checks the candidate's reported times (`forged`). The speedup is the ratio
of the median times; its 95 % interval comes from a bootstrap over the pairs, so slow drifts
(clocks, temperature) hit both sides alike. Pairs are added in batches until the interval is
narrow enough or the time budget is spent. A candidate is faster only when the interval's lower
bound is above 1 + threshold (3 % by default), so identical kernels are not judged faster.

A speedup that would need more bytes per second than the device moves (a large device copy,
measured once per device and cached) is flagged as implausible rather than celebrated.

On the CPU there is no device time: the verdict uses the formula's modelled metric and says so.
Imports only numpy and torch.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from pathlib import Path

import numpy as np

from intelliperf.workload.runner import kill

from .jobs import ReplayJob
from .verdict import Problem, Speedup

L2_FLUSH_BYTES = 256 << 20
DEFAULT_THRESHOLD = 0.03


def speedup_interval(
    reference_ms, candidate_ms, confidence: float = 0.95, resamples: int = 2000, seed: int = 0, method: str = ""
) -> Speedup:
    """Ratio of medians (reference / candidate) with a bootstrap interval over the pairs."""
    ref, cand = np.asarray(reference_ms, float), np.asarray(candidate_ms, float)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, ref.size, size=(resamples, ref.size))
    ratios = np.median(ref[picks], axis=1) / np.median(cand[picks], axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(ratios, [alpha, 1 - alpha])
    return Speedup(
        estimate=float(np.median(ref) / np.median(cand)),
        low=float(low),
        high=float(high),
        confidence=confidence,
        reference_ms=float(np.median(ref)),
        candidate_ms=float(np.median(cand)),
        pairs=int(ref.size),
        method=method,
    )


def judge(speedup: Speedup, threshold: float = DEFAULT_THRESHOLD) -> tuple[bool, Problem | None]:
    """Faster only when the whole interval clears 1 + threshold."""
    if speedup.low > 1 + threshold:
        return True, None
    text = (
        f"{speedup.estimate:.3f}x ({speedup.confidence:.0%} interval {speedup.low:.3f}-{speedup.high:.3f}, "
        f"{speedup.pairs} interleaved pairs; reference {speedup.reference_ms:.4f} ms, candidate "
        f"{speedup.candidate_ms:.4f} ms)"
    )
    if speedup.high < 1:
        return False, Problem(kind="slower", message=f"the candidate is slower: {text}")
    return False, Problem(kind="not-faster", message=f"not faster by more than {threshold:.0%}: {text}")


def plausibility(speedup: Speedup, bytes_moved: int, bandwidth_bytes_per_s: float | None) -> Problem | None:
    """A candidate time below what the bytes it must move take at the device's bandwidth."""
    if not bandwidth_bytes_per_s or not bytes_moved:
        return None
    floor_ms = bytes_moved / bandwidth_bytes_per_s * 1e3
    if speedup.candidate_ms >= floor_ms:
        return None
    return Problem(
        kind="implausible-speed",
        message=(
            f"the candidate took {speedup.candidate_ms:.4f} ms, but moving the {bytes_moved / 1e6:.1f} MB its "
            "buffers hold "
            f"takes at least {floor_ms:.4f} ms at the {bandwidth_bytes_per_s / 1e12:.2f} TB/s this device measured: "
            "it skips work, reuses a result or runs outside the timed stream"
        ),
    )


# --- timing in two processes, interleaved by the parent -----------------------------------------


CLOCK: dict = {}  # the timing tools, bound by the worker before any candidate code is imported
CHECK_AGREES = 0.25  # a timed call's checksum may differ from the reference's by this share of the output's norm
CHECK_MISSES = 0.05  # the share of timed calls whose checksum may disagree (at least one)


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


MAX_COVER_S = 0.05


def cover_s(queued: list[float]) -> float:
    """The spin before each timed call, the same on both sides: twice the longest time a side's host took
    to queue one call, plus 20 us, at most `MAX_COVER_S`."""
    said = [min(max(q, 0.0), MAX_COVER_S) if math.isfinite(q) else MAX_COVER_S for q in queued]
    return min(2 * max(said, default=0.0) + 20e-6, MAX_COVER_S)


def serve_timing(job: ReplayJob, module, cmd_fd: int, out_fd: int) -> None:
    """One side of the timing (in the replay worker, on the GPU): the launcher on the first
    trial's inputs (or this side's own kernel launch, see `_timed_call`); for each `t K` the
    parent sends, K calls, each on fresh values of the float inputs (the same values on both sides,
    drawn by this worker's own code before the call) and after an L2 flush, timed with device
    events; answered with their milliseconds and, per call, a checksum of every float tensor it
    returned or left in its arguments, which the parent compares with the reference's for the same
    inputs. The parent times each batch too."""
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
    from .correctness import load_tensors
    from .replay_calls import call_launcher, kernel_call, launcher_fn, placed

    notes: dict[str, list[str]] = {"notes": []}
    fn = launcher_fn(job, "_intelliperf_side", notes) if job.get("reference_launcher_args") else None
    inputs = Path(job["inputs_dir"])
    if fn is not None and (inputs / "launcher-0.pt").exists():
        descs = job["reference_launcher_args"]
        values = placed(load_tensors(inputs / "launcher-0.pt"), descs)
        return (lambda: call_launcher(fn, descs, values)), values, descs
    kernel = getattr(module, job["kernel"]["name"], None)
    if kernel is None or not (inputs / "kernel-0.pt").exists():
        return "; ".join(notes["notes"] + ["and the kernel's own launch has no replayed inputs"])
    descs = [d for d in job["reference_launch"]["args"] if d["kind"] == "tensor"]
    tensors = placed(load_tensors(inputs / "kernel-0.pt"), descs)
    return kernel_call(kernel, job["launch"], tensors), tensors, descs


class TimingError(Exception):
    pass


class _Side:
    """The parent's end of one timing worker: send `t K`, read K times, time the round trip."""

    def __init__(self, start, timeout_s: float) -> None:
        import subprocess

        cmd_r, self.cmd_w = os.pipe()
        self.out_r, out_w = os.pipe()
        self.timeout_s = timeout_s
        self.proc: subprocess.Popen = start(cmd_r, out_w)
        os.close(cmd_r)
        os.close(out_w)
        self.fds_open = True
        self.buffer = b""

    def readline(self) -> str:
        import select

        deadline = time.perf_counter() + self.timeout_s
        while b"\n" not in self.buffer:
            left = deadline - time.perf_counter()
            ready, _, _ = select.select([self.out_r], [], [], max(left, 0))
            if not ready:
                raise TimingError(f"no answer within {self.timeout_s:.0f} s")
            chunk = os.read(self.out_r, 4096)
            if not chunk:
                raise TimingError("the worker exited")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode(errors="replace")

    def batch(self, calls: int, cover: float = 0.0) -> tuple[list[float], float, list[list[float]]]:
        """Device milliseconds of `calls` calls, each after a spin of `cover` seconds (`HostCover`), the
        parent's milliseconds per call, and each call's checksums."""
        begin = time.perf_counter()
        os.write(self.cmd_w, f"t {calls} {cover:.6f}\n".encode())
        answer = self.readline()
        wall = (time.perf_counter() - begin) * 1e3 / calls
        try:
            parsed = json.loads(answer)
            times = [float(x) for x in parsed["ms"]]
            sums = [[float(v) for v in row] for row in parsed["sums"]]
        except (ValueError, TypeError, KeyError):
            raise TimingError(f"unexpected answer {answer[:200]!r}") from None
        if len(times) != calls or len(sums) != calls:
            raise TimingError(f"asked for {calls} times, got {len(times)}")
        return times, wall, sums

    def stop(self) -> None:
        """Ends a worker that may still be starting (an unused one: the candidate failed its replay)."""
        kill(self.proc)
        self.proc.wait()  # killed: no teardown to wait for, and the caller may count on it being gone
        self.close()

    def close(self) -> None:
        """The pipes closed (the worker reads the end of its commands and exits); its exit, a second
        or more of torch and CUDA tearing down, is awaited beside what comes next, not before it."""
        # Once: a second os.close could close a descriptor another thread has opened since.
        fds, self.fds_open = (self.cmd_w, self.out_r) if self.fds_open else (), False
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass
        threading.Thread(target=_reap, args=(self.proc,), daemon=True).start()


def _reap(proc) -> None:
    try:
        proc.wait(timeout=10)
    except Exception:
        kill(proc)
        proc.wait()


def started(start, timeout_s: float = 600) -> _Side:
    """A timing worker started now, to be timed later by `interleaved` (its start-up meanwhile)."""
    return _Side(start, timeout_s)


def interleaved(
    start_reference,
    start_candidate,
    *,
    min_pairs: int = 30,
    max_pairs: int = 400,
    budget_s: float = 20.0,
    target_halfwidth: float = 0.01,
    timeout_s: float = 600,
    batch: int = 10,
) -> dict:
    """Time two workers (each started by `start_x(cmd_fd, out_fd)`, or already by `started`) in
    alternating batches (AB, BA, ...); the i-th call of each side's batch make a pair."""
    sides = {}
    try:
        sides["reference"] = (
            start_reference if isinstance(start_reference, _Side) else _Side(start_reference, timeout_s)
        )
        sides["candidate"] = (
            start_candidate if isinstance(start_candidate, _Side) else _Side(start_candidate, timeout_s)
        )
        device, queued = "", []
        for name, side in sides.items():
            line = side.readline()
            if not line.startswith("ready"):
                raise TimingError(f"the {name} side could not be timed: {line[:300]}")
            said, _, extra = line.removeprefix("ready").partition("\tqueued=")
            device = device or said.strip()
            try:
                queued.append(float(extra) if extra else 0.0)
            except ValueError:
                raise TimingError(f"the {name} side's ready line is malformed: {line[:300]}") from None
        cover = cover_s(queued)
        times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in sides}
        sums: dict[str, list[list[float]]] = {name: [] for name in sides}
        start = time.perf_counter()
        while True:
            for i in range(2):
                for name in ("reference", "candidate") if i % 2 == 0 else ("candidate", "reference"):
                    ms, wall, checks = sides[name].batch(batch, cover)
                    times[name][0].extend(ms)
                    times[name][1].extend([wall] * batch)
                    sums[name].extend(checks)
            pairs = len(times["reference"][0])
            if pairs >= min_pairs:
                s = speedup_interval(times["reference"][0], times["candidate"][0], resamples=500)
                narrow = (s.high - s.low) / 2 <= target_halfwidth * s.estimate
                if narrow or pairs >= max_pairs or time.perf_counter() - start > budget_s:
                    break
    finally:
        for side in sides.values():
            side.close()
    return {
        "reference_ms": times["reference"][0],
        "candidate_ms": times["candidate"][0],
        "reference_wall_ms": times["reference"][1],
        "candidate_wall_ms": times["candidate"][1],
        "reference_sums": sums["reference"],
        "candidate_sums": sums["candidate"],
        "device": device,
        "method": "CUDA events, interleaved pairs of two processes, fresh inputs per call, L2 flushed",
    }


def forged(timing: dict) -> Problem | None:
    """The candidate's own process reports its times; the parent's clock checks them. Both sides
    pay the same untimed costs per call (the flush, a share of the round trip), so a candidate
    whose calls take much longer than its events say has reported times it did not take."""

    def untimed(side: str) -> float:
        return float(np.median(np.asarray(timing[f"{side}_wall_ms"]) - np.asarray(timing[f"{side}_ms"])))

    ref, cand = untimed("reference"), untimed("candidate")
    if cand <= 2 * ref + 0.5:
        return None
    return Problem(
        kind="implausible-speed",
        message=(
            f"the candidate's calls took {cand:.3f} ms more than its own device events report (the reference's: "
            f"{ref:.3f} ms): its timing was tampered with, or it works outside the timed stream"
        ),
    )


def unchecked(timing: dict) -> Problem | None:
    """Each timed call's outputs, as checksums the parent compares: the candidate's must be the
    reference's for the same inputs, call by call, so a timed call that answers from a cache, skips
    work or leaves it for later did not compute what was timed."""
    ref, cand = timing.get("reference_sums") or [], timing.get("candidate_sums") or []
    misses = []
    for i, (r, c) in enumerate(zip(ref, cand, strict=False)):
        if len(r) != len(c):
            misses.append((i, float("inf")))
            continue
        worst = 0.0
        for j in range(0, len(r), 2):
            norm = max(r[j + 1], c[j + 1], 0.0) ** 0.5
            worst = max(worst, abs(c[j] - r[j]) / norm if norm > 0 else 0.0)
        if worst > CHECK_AGREES:
            misses.append((i, worst))
    if len(misses) <= max(1, CHECK_MISSES * len(ref)):
        return None
    return Problem(
        kind="implausible-speed",
        message=(
            f"{len(misses)} of {len(ref)} timed calls did not compute the reference's outputs for their inputs "
            f"(each call gets fresh inputs; the first at call {misses[0][0]}): the timed calls answer from a "
            "cache, skip work or leave it outside the timed stream"
        ),
    )


def _bandwidth_cache() -> Path:
    from intelliperf.env import cache_root

    return cache_root() / "bandwidth.json"


def _known_bandwidths() -> dict:
    try:
        return json.loads(_bandwidth_cache().read_text())
    except (OSError, ValueError):
        return {}


def cached_bandwidth(device_name: str) -> float | None:
    """The copy bandwidth measured earlier for this device, without touching the GPU."""
    return _known_bandwidths().get(device_name)


def device_bandwidth() -> float:
    """Bytes per second of a large device-to-device copy (read + write), cached per device."""
    import torch

    name = torch.cuda.get_device_name()
    known = _known_bandwidths()
    if name in known:
        return known[name]
    src = torch.empty(1 << 28, dtype=torch.float32, device="cuda")  # 1 GiB
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    for _ in range(10):
        dst.copy_(src)
    end.record()
    torch.cuda.synchronize()
    value = 10 * 2 * src.numel() * 4 / (begin.elapsed_time(end) / 1e3)
    known[name] = value
    try:
        cache = _bandwidth_cache()
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(known))
    except OSError:
        pass
    return value
