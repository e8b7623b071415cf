"""Region timers on the GPU: `intelliperf regions` and `optimize --formula overlap` on examples/overlap.

Run on the device machine: `python -m pytest -m gpu tests/gpu/test_gpu_regions.py`. Overhead and
accuracy figures live in benchmarks/regions_accuracy.py; these tests check that the timers are
complete, told apart per launch, and that the search fix is measured by them.
"""

from __future__ import annotations

import json
import sys

import pytest
import torch
from conftest import run_cli

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]
GEMM = ["--m", "512", "--n", "512", "--k", "2048"]


def _regions(tmp_path, example: str, *args: str, full_run: bool = False) -> dict:
    done = run_cli(
        "regions",
        "--device",
        "gpu",
        "--out-dir",
        str(tmp_path),
        *(["--full-run", "--all-warps"] if full_run else []),
        "--",
        sys.executable,
        f"examples/overlap/{example}",
        *args,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((tmp_path / "report.json").read_text())
    return next(e["regions"] for d in report["diagnoses"] for e in d["evidence"] if e.get("regions"))


def test_timers_are_complete_and_launches_told_apart(tmp_path):
    first = _regions(tmp_path / "w", "gemm.py", *GEMM, "--repeat", "2")  # the launch window: one launch, then stop
    assert first["launches"] == 1 and first["loop_iterations"] == 32 and first["problems"] == []
    assert first["recorded_warps"] == [0] and first["warps_per_cta"] == 1  # the first warp of its one group
    r = _regions(tmp_path / "a", "gemm.py", *GEMM, "--repeat", "2", full_run=True)  # and every warp
    assert r["launches"] == 2 and r["ctas"] == 16 and r["warps_per_cta"] == 4  # (512 / 128)^2 CTAs
    assert r["recorded_warps"] == [] and abs(r["exposed_memory_share"] - first["exposed_memory_share"]) < 0.1
    assert r["problems"] == [] and r["loop_iterations"] == 32  # 2048 / BLOCK_K, every event kept
    assert r["exposed_memory_share"] > 0.3 and r["loop_line"] == 35
    assert json.loads((tmp_path / "a" / "timeline-gemm_kernel.json").read_text())["traceEvents"]
    assert (tmp_path / "a" / "timeline-gemm_kernel.png").read_bytes()[:4] == b"\x89PNG"
    pipelined = _regions(tmp_path / "b", "gemm_pipelined.py", *GEMM, "--repeat", "1")
    assert pipelined["exposed_memory_share"] < 0.15 < r["exposed_memory_share"] / 2
    assert pipelined["iteration_cycles"] < r["iteration_cycles"]


def test_search_fixes_the_unpipelined_gemm_and_the_timers_show_it(tmp_path):
    done = run_cli(
        "optimize",
        "--device",
        "gpu",
        "--formula",
        "overlap",
        "--rewriter",
        "search",
        "--max-attempts",
        "2",
        "--out-dir",
        str(tmp_path),
        "--",
        sys.executable,
        "examples/overlap/gemm.py",
        "--m",
        "1024",
        "--n",
        "1024",
        "--k",
        "4096",
        "--repeat",
        "1",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    opt = json.loads((tmp_path / "report.json").read_text())["optimization"]
    winner = opt["attempts"][opt["winner"] - 1]
    assert opt["status"] == "won" and winner["title"].startswith("num_stages=")
    before, after = winner["before"], winner["after"]
    assert not before["metric_modelled"] and not after["metric_modelled"]  # both from the region timers
    assert after["metric"] < before["metric"] / 2 and winner["verdict"]["speedup"]["low"] > 1.2


def test_a_large_grid_reads_protons_totals_with_the_traces_shares(tmp_path):
    """examples/overlap/attention.py at its GPU default (4x16x4096: 2,048 CTAs, warp 0 of 4 recorded) is over
    TRACE_ROWS: `diagnose` reads Proton's per-scope totals, `intelliperf regions` (whose output is the
    timeline) its trace; the loop's shares agree, and the totals' pass takes seconds less."""
    traced = _regions(tmp_path / "trace", "attention.py")
    done = run_cli(
        "diagnose", "-f", "overlap", "--device", "gpu", "--counters", "off", "--output", str(tmp_path / "d.json"),
        "--", sys.executable, "examples/overlap/attention.py",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((tmp_path / "d.json").read_text())
    totals = next(e["regions"] for d in report["diagnoses"] for e in d["evidence"] if e.get("regions"))
    notes = " ".join(report["notes"])
    print("trace:", {k: traced[k] for k in ("exposed_memory_share", "compute_share", "kernel_cycles_per_warp")})
    print("totals:", {k: totals[k] for k in ("exposed_memory_share", "compute_share", "kernel_cycles_per_warp")})
    print([n for n in report["notes"] if n.startswith("region timers")])
    assert traced["source"] == "trace" and traced["ctas"] == 2048 and traced["iteration_cycles"]
    assert totals["source"] == "totals" and totals["ctas"] == 2048 and totals["problems"] == []
    assert totals["iteration_cycles"] is None and all(r["executions"] is None for r in totals["regions"])
    assert abs(totals["exposed_memory_share"] - traced["exposed_memory_share"]) < 0.03
    assert abs(totals["compute_share"] - traced["compute_share"]) < 0.03
    assert abs(totals["kernel_cycles_per_warp"] / traced["kernel_cycles_per_warp"] - 1) < 0.1
    assert "Proton's per-scope totals were read, not its trace (attention_kernel launches 2,048 rows" in notes
