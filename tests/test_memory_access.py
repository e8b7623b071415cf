"""memoryAccess on the examples, on CPU (interpreter trace): the right kernel, line and stride."""

from __future__ import annotations

import pytest
from conftest import REPO, py

import intelliperf

MEMORY = REPO / "examples" / "memory_access"
SIZE = ["--m", "128", "--n", "192", "--repeat", "1"]


def _finding(example: str):
    report = intelliperf.diagnose(py(MEMORY / f"{example}.py", *SIZE), formula="memoryAccess", device="cpu")
    return report, report.diagnoses[0].findings[0]


def _line(example: str, text: str) -> int:
    return next(i for i, line in enumerate((MEMORY / f"{example}.py").read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize("example,flagged,stride", [
    ("column_copy", ["x = tl.load(", "tl.store(y_ptr"], 192),
    ("naive_transpose", ["tl.store(y_ptr"], 128),
    ("aos_gather", ["a = tl.load(", "b = tl.load("], 8),
])
def test_uncoalesced_lines_are_named_with_their_stride(example, flagged, stride):
    report, finding = _finding(example)
    assert report.selected == f"{example}_kernel" and finding.present and finding.severity == "high"
    assert finding.modelled and finding.evidence_backend == "interpreter-trace+static"
    assert all("compiled: cuda:90" in src.detail and "hip:gfx942" in src.detail for src in finding.lines)
    assert [src.line for src in finding.lines] == [_line(example, text) for text in flagged]
    assert all("12.5% of each sector used" in src.detail for src in finding.lines)
    assert all(f"consecutive lanes are {stride} element(s) apart" in src.detail for src in finding.lines)
    assert finding.metric.name == "sector_efficiency" and finding.metric.better == "higher"
    assert finding.metric.value < 0.5


@pytest.mark.parametrize("example", ["row_copy", "tiled_transpose", "soa_gather"])
def test_the_fixed_kernels_are_clean(example):
    report, finding = _finding(example)
    assert report.selected is None and not finding.present and finding.metric.value == 1.0
    loads = [s for s in report.diagnoses[0].evidence[0].sites if s.op == "load"]
    assert loads and all(s.lane_stride_elems == 1 for s in loads)


def test_options_are_checked():
    with pytest.raises(intelliperf.IntelliPerfError, match="min_efficiency"):
        intelliperf.default_registry().create("memoryAccess", min_efficiency=2)
