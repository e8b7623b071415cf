"""GPU truth for the counter backend: each formula's diagnosis of each example under Nsight
Compute (marker `gpu`; on the device machine: `pytest -m gpu tests/gpu/test_gpu_counters.py`)."""

import os
import shutil
import sys

import pytest
from conftest import REPO

import intelliperf

torch = pytest.importorskip("torch")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
    pytest.mark.skipif(
        shutil.which("ncu") is None and not os.environ.get("INTELLIPERF_NCU"), reason="needs Nsight Compute"
    ),
]

CASES = [  # formula, example, has the bottleneck, a line it must name
    ("memoryAccess", "memory_access/column_copy.py", True, "tl.load(x_ptr + rows * n"),
    ("memoryAccess", "memory_access/row_copy.py", False, None),
    ("memoryAccess", "memory_access/naive_transpose.py", True, "tl.store("),
    ("memoryAccess", "memory_access/tiled_transpose.py", False, None),
    ("memoryAccess", "memory_access/aos_gather.py", True, "tl.load("),
    ("memoryAccess", "memory_access/soa_gather.py", False, None),
    ("bankConflict", "bank_conflict/column_sums.py", True, "total += tl.sum(tile, axis=0)"),
    ("bankConflict", "bank_conflict/column_sums_once.py", False, None),
    ("bankConflict", "bank_conflict/row_sums.py", False, None),
    ("atomicContention", "atomic_contention/contended_sum.py", True, "tl.atomic_add("),
    ("atomicContention", "atomic_contention/reduced_sum.py", False, None),
]


@pytest.mark.parametrize(
    ("formula", "example", "present", "line"), CASES, ids=[f"{f}-{e.split('/')[1][:-3]}" for f, e, _, _ in CASES]
)
def test_diagnosis_on_counters(formula, example, present, line, tmp_path):
    report = intelliperf.diagnose(
        [sys.executable, str(REPO / "examples" / example)],
        formula=formula,
        top_n=1,
        device="gpu",
        counters="ncu",
        profile_dir=tmp_path / "ncu",
    )
    finding = report.diagnoses[0].findings[0]
    print(
        f"\n{example}: present={finding.present} {finding.metric} backend={finding.evidence_backend} "
        f"ncu pass {report.stages.get('counters', 0):.1f} s\n  {finding.explanation}"
    )
    assert finding.evidence_backend.startswith("ncu"), finding.evidence_backend
    assert finding.present is present, finding.explanation
    assert (tmp_path / "ncu" / "report.ncu-rep").exists()
    if line is not None:
        assert any(line in s.code for s in finding.lines), [s.code for s in finding.lines]
        assert all(s.file.endswith(example.split("/")[1]) for s in finding.lines)


def test_counters_off_keeps_the_model():
    report = intelliperf.diagnose(
        [sys.executable, str(REPO / "examples/memory_access/column_copy.py")],
        formula="memoryAccess",
        top_n=1,
        device="gpu",
        counters="off",
    )
    finding = report.diagnoses[0].findings[0]
    assert finding.present and finding.modelled
    assert "ncu" not in finding.evidence_backend


def test_the_counter_and_timer_passes_take_turns_side_by_side():
    """diagnoseOnly on a GEMM: ncu and the region timers run side by side, each program's own code
    in its GPU turn; the timers measure what they measure alone (no ncu pass beside them)."""
    gemm = [sys.executable, str(REPO / "examples/overlap/gemm.py"), "--m", "1024", "--n", "1024", "--k", "4096"]
    both = intelliperf.diagnose(gemm, formula="diagnoseOnly", top_n=1, device="gpu")
    alone = intelliperf.diagnose(gemm, formula="diagnoseOnly", top_n=1, device="gpu", counters="off")
    print("\n".join(n for n in both.notes if "side by side" in n or "GPU" in n), both.stages, alone.stages)
    assert any("ran side by side, taking turns on the GPU" in n for n in both.notes)
    assert sum("for its GPU turn" in n for n in both.notes) == 2  # both programs took a turn
    evidence = both.diagnoses[0].evidence
    assert any(e.backend == "ncu" and e.metrics for e in evidence)
    timed, timed_alone = (next(e.regions for e in r.diagnoses[0].evidence if e.regions) for r in (both, alone))
    assert timed.problems == [] and timed.exposed_memory_share > 0.3
    assert abs(timed.exposed_memory_share - timed_alone.exposed_memory_share) < 0.05
