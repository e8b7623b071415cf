"""Timing: is the candidate faster, by more than noise?

Reference and candidate run in two processes (a candidate never shares one with the
reference), interleaved by the parent in pairs whose order alternates (AB, BA, ...), after
warm-up, each call timed with device events on the current stream, after an L2 flush and a spin
that covers the host's queueing of the call (`workers/timing_worker.py`). The parent's own clock checks
the candidate's reported times (`forged`), and each call's checksums the outputs (`unchecked`). The speedup is the ratio
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
import os
import threading
import time
from pathlib import Path

import numpy as np

from intelliperf.profiling.inside.untouched import replaced_message
from intelliperf.workload.runner import kill

from ..settings import DEFAULT_THRESHOLD
from ..verdict import Problem, Speedup
from ..workers.timing_worker import TimingError, cover_s


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


CHECK_AGREES = 0.25  # a timed call's checksum may differ from the reference's by this share of the output's norm
CHECK_MISSES = 0.05  # the share of timed calls whose checksum may disagree (at least one)


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
        self.replaced: set[str] = set()  # what the worker's watch found replaced (profiling.inside.untouched)

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
        self.replaced |= {str(name) for name in parsed.get("replaced") or []}
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
    replaced = sides["candidate"].replaced - sides["reference"].replaced  # the program's own patches are its own
    if replaced:
        raise TimingError(replaced_message(sorted(replaced)))
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
