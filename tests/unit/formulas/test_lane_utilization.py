"""laneUtilization on real kernels: the trace counts the lanes each load/store issues and the ones
its mask keeps."""

import sys

import pytest
from conftest import PROGRAMS

import intelliperf

ROW_SCALE = PROGRAMS / "lane_packing" / "row_scale.py"


def _finding(cols: int):
    command = [sys.executable, str(ROW_SCALE), "--rows", "64", "--cols", str(cols)]
    report = intelliperf.diagnose(command, formula="laneUtilization", device="cpu")
    [finding] = report.diagnoses[0].findings
    return finding


@pytest.mark.slow
def test_a_block_far_wider_than_the_row_is_flagged_at_its_masked_accesses():
    finding = _finding(96)  # BLOCK 256 for 96 columns
    assert finding.present and finding.metric.name == "lane_utilization"
    assert finding.metric.value == 96 / 256
    source = ROW_SCALE.read_text().splitlines()
    assert {source[line.line - 1].strip().split("(")[0].split("=")[-1].strip() for line in finding.lines} <= {
        "tl.load",
        "tl.store",
    }
    detail = "96 of 256 lanes per call active (38% of the lanes it occupies)"
    assert all(detail in line.detail for line in finding.lines)


@pytest.mark.slow
def test_a_block_the_row_fills_is_not_flagged():
    finding = _finding(250)
    assert not finding.present and finding.metric.value > 0.9


SHORT_ROWS = PROGRAMS / "lane_packing" / "short_rows.py"


@pytest.mark.slow
def test_threads_that_outnumber_a_full_block_are_flagged_with_fewer_warps_as_the_fix():
    """64 elements, every one kept by its mask, on 4 warps: half the threads repeat the others (on an
    H100 the Unsloth RoPE kernel's fixed version runs so, and 2 warps made it 1.16x faster); on 2 warps
    the block fills them."""
    command = [sys.executable, str(SHORT_ROWS)]
    report = intelliperf.diagnose(command, formula="laneUtilization", device="cpu")
    [finding] = report.diagnoses[0].findings
    assert finding.present and finding.metric.value == 0.5
    assert "threads outnumber its blocks" in finding.explanation and "fewer warps" in finding.explanation
    filled = intelliperf.diagnose([*command, "--warps", "2"], formula="laneUtilization", device="cpu")
    [finding] = filled.diagnoses[0].findings
    assert not finding.present and finding.metric.value == 1.0
