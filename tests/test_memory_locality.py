"""memoryLocality on a real tiled matmul: the trace's wave pass (the first 132 programs in launch
order) against the best rectangle of as many tiles, row-major and grouped."""

import sys

from conftest import PROGRAMS

import intelliperf

MATMUL = PROGRAMS / "bottlenecks" / "tiled_matmul.py"


def _diagnosis(order: str):
    command = [sys.executable, str(MATMUL), "--order", order]
    report = intelliperf.diagnose(command, formula="memoryLocality", device="cpu")
    return report.diagnoses[0]


def test_a_row_major_walk_over_a_wide_grid_is_flagged_at_the_tile_mapping():
    diagnosis = _diagnosis("row")
    [finding] = diagnosis.findings
    [wave] = [ev.wave for ev in diagnosis.evidence if ev.wave]
    assert wave.programs == 132 and wave.programs_total == 4 * 132
    panels = {b.buffer: b.panels for b in wave.buffers}
    assert panels["a_ptr"] <= 2 and panels["b_ptr"] >= 100  # one row of tiles, many columns
    assert finding.present and finding.metric.name == "wave_footprint_ratio" and finding.metric.value >= 2
    source = MATMUL.read_text().splitlines()
    mapped = {source[line.line - 1].strip() for line in finding.lines}
    assert "pid_m = pid // num_pid_n" in mapped and "pid_n = pid % num_pid_n" in mapped


def test_grouped_order_is_not_flagged():
    [finding] = _diagnosis("grouped").findings
    assert not finding.present and finding.metric.value < 1.5
