"""Timing: is the candidate faster, by more than noise?

Reference and candidate run in one process, interleaved in pairs whose order alternates
(AB, BA, ...), after warm-up, each call timed with device events on the current stream and
preceded by an L2 flush (a write over a buffer larger than the cache). The speedup is the ratio
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
import time
from pathlib import Path

import numpy as np

from .verdict import Problem, Speedup

L2_FLUSH_BYTES = 256 << 20
DEFAULT_THRESHOLD = 0.03


def speedup_interval(reference_ms, candidate_ms, confidence: float = 0.95, resamples: int = 2000,
                     seed: int = 0, method: str = "") -> Speedup:
    """Ratio of medians (reference / candidate) with a bootstrap interval over the pairs."""
    ref, cand = np.asarray(reference_ms, float), np.asarray(candidate_ms, float)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, ref.size, size=(resamples, ref.size))
    ratios = np.median(ref[picks], axis=1) / np.median(cand[picks], axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(ratios, [alpha, 1 - alpha])
    return Speedup(estimate=float(np.median(ref) / np.median(cand)), low=float(low), high=float(high),
                   confidence=confidence, reference_ms=float(np.median(ref)), candidate_ms=float(np.median(cand)),
                   pairs=int(ref.size), method=method)


def judge(speedup: Speedup, threshold: float = DEFAULT_THRESHOLD) -> tuple[bool, Problem | None]:
    """Faster only when the whole interval clears 1 + threshold."""
    if speedup.low > 1 + threshold:
        return True, None
    text = (f"{speedup.estimate:.3f}x ({speedup.confidence:.0%} interval {speedup.low:.3f}-{speedup.high:.3f}, "
            f"{speedup.pairs} interleaved pairs; reference {speedup.reference_ms:.4f} ms, candidate "
            f"{speedup.candidate_ms:.4f} ms)")
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
    return Problem(kind="implausible-speed", message=(
        f"the candidate took {speedup.candidate_ms:.4f} ms, but moving the {bytes_moved / 1e6:.1f} MB its buffers hold "
        f"takes at least {floor_ms:.4f} ms at the {bandwidth_bytes_per_s / 1e12:.2f} TB/s this device measured: "
        "it skips work, reuses a result or runs outside the timed stream"))


# --- inside the replay worker (GPU) ------------------------------------------------------------


def time_launchers(job: dict, ref_fn, cand_fn) -> dict:
    import torch

    from .replay import fill_fresh, make_inputs

    settings = job["timing"]
    descs = job["reference"]["launcher"]["args"]
    inputs = make_inputs(descs)
    generator = torch.Generator().manual_seed(job["seed"])
    for d in descs:
        if d["kind"] == "tensor" and "alias_of" not in d:
            fill_fresh(inputs[d["name"]], d, generator)
    args = [inputs[d["name"]] for d in descs]
    result = interleaved(lambda: ref_fn(*args), lambda: cand_fn(*args), **settings)
    result["bandwidth_bytes_per_s"] = device_bandwidth()
    return result


def interleaved(ref_call, cand_call, *, warmup: int = 5, min_pairs: int = 30, max_pairs: int = 400,
                budget_s: float = 20.0, target_halfwidth: float = 0.01) -> dict:
    """Time two callables in alternating pairs with an L2 flush before each call (CUDA)."""
    import torch

    flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    for _ in range(warmup):
        ref_call()
        cand_call()
    torch.cuda.synchronize()
    times = {"reference": [], "candidate": []}
    start = time.perf_counter()
    while True:
        batch = []
        for i in range(10):
            order = (("reference", ref_call), ("candidate", cand_call))
            for name, call in (order if i % 2 == 0 else order[::-1]):
                flush.zero_()
                begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                begin.record()
                call()
                end.record()
                batch.append((name, begin, end))
        torch.cuda.synchronize()
        for name, begin, end in batch:
            times[name].append(begin.elapsed_time(end))
        pairs = len(times["reference"])
        if pairs >= min_pairs:
            s = speedup_interval(times["reference"], times["candidate"], resamples=500)
            narrow = (s.high - s.low) / 2 <= target_halfwidth * s.estimate
            if narrow or pairs >= max_pairs or time.perf_counter() - start > budget_s:
                break
    return {"reference_ms": times["reference"], "candidate_ms": times["candidate"],
            "device": torch.cuda.get_device_name(), "method": "CUDA events, interleaved pairs, L2 flushed"}


def _bandwidth_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "intelliperf" / "bandwidth.json"


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
