"""registerPressure on real kernels: the static view's spills (ptxas's cubin and the AMDGCN listing,
compiled here without a GPU) flag a row held whole in an oversized block and stay silent once it fits."""

import sys

import pytest
from conftest import PROGRAMS

import intelliperf

LAYER_NORM = PROGRAMS / "row_tiling" / "layer_norm.py"


def _finding(*args: str):
    report = intelliperf.diagnose([sys.executable, str(LAYER_NORM), *args], formula="registerPressure", device="cpu")
    [finding] = report.diagnoses[0].findings
    return finding


@pytest.mark.slow
def test_a_whole_row_in_one_block_spills_and_is_pinpointed():
    finding = _finding("4", "16000")  # BLOCK 16384 at 4 warps: 128 values per thread per row vector
    assert finding.present and finding.formula == "registerPressure"
    assert finding.metric.name == "spilled_bytes_per_thread" and finding.metric.value >= 16
    assert "cuda:90" in finding.explanation and "spilled bytes per thread" in finding.explanation
    assert finding.lines, "the lines with spill instructions are pinpointed"
    assert all(line.file.endswith("layer_norm.py") and "spill" in line.detail for line in finding.lines)
    source = LAYER_NORM.read_text().splitlines()
    assert all(source[line.line - 1].strip() for line in finding.lines)


@pytest.mark.slow
def test_a_row_that_fits_is_not_flagged():
    finding = _finding("4", "1000")
    assert not finding.present and finding.metric.value == 0
    assert "fits in registers" in finding.explanation
