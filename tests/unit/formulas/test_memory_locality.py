"""memoryLocality on real kernels: the trace's wave pass (the first 132 programs in launch order).
Loads: a tiled matmul's wave against the best rectangle of as many tiles, row-major and grouped,
counted where the data loaded between two reads of a line does not fit in the L2 modelled.
Stores: split partial sums whose programs running together each write a slice of every sector."""

import functools
import sys

import pytest
from conftest import PROGRAMS

import intelliperf
from intelliperf.formulas.memory_locality import MemoryLocality

MATMUL = PROGRAMS / "bottlenecks" / "tiled_matmul.py"
PARTIALS = PROGRAMS / "bottlenecks" / "split_partials.py"
SMALL_L2 = {"l2_mib": 1 / 16}  # 64 KiB: the CPU-sized programs' data set against a cache their size


@functools.cache
def _report(program, order: str):
    command = [sys.executable, str(program), "--order", order]
    return intelliperf.diagnose(command, formula="memoryLocality", device="cpu", formula_options=SMALL_L2)


def _judged(report, **options):
    """The formula with other options on the same evidence (no second run of the program)."""
    [diagnosis] = report.diagnoses
    kernel = next(k for k in report.kernels if k.name == diagnosis.kernel)
    return MemoryLocality(**options).diagnose(kernel, diagnosis.evidence)


@pytest.mark.slow
def test_a_row_major_walk_over_a_wide_grid_is_flagged_at_the_tile_mapping():
    diagnosis = _report(MATMUL, "row").diagnoses[0]
    [finding] = diagnosis.findings
    [wave] = [ev.wave for ev in diagnosis.evidence if ev.wave]
    assert wave.programs == 132 and wave.programs_total == 4 * 132
    panels = {b.buffer: b.panels for b in wave.buffers}
    assert panels["a_ptr"] <= 2 and panels["b_ptr"] >= 100  # one row of tiles, many columns
    assert finding.present and finding.metric.name == "wave_footprint_ratio" and finding.metric.value >= 2
    assert "more than the L2 holds" in finding.explanation
    source = MATMUL.read_text().splitlines()
    mapped = {source[line.line - 1].strip() for line in finding.lines}
    assert "pid_m = pid // num_pid_n" in mapped and "pid_n = pid % num_pid_n" in mapped


@pytest.mark.slow
def test_the_same_walk_is_not_flagged_where_its_data_fits_in_the_l2():
    finding = _judged(_report(MATMUL, "row"))  # the default: an H100's 50 MiB
    assert not finding.present and finding.metric.value == 1.0
    assert "within the L2 (50 MiB), so the re-reads hit L2" in finding.explanation


@pytest.mark.slow
def test_grouped_order_is_not_flagged():
    [finding] = _report(MATMUL, "grouped").diagnoses[0].findings
    assert not finding.present and finding.metric.value < 1.5


@pytest.mark.slow
def test_programs_leaving_output_sectors_part_written_are_flagged_at_the_store_and_the_program_ids():
    report = _report(PARTIALS, "rows-first")
    [finding] = report.diagnoses[0].findings
    [wave] = [ev.wave for ev in report.diagnoses[0].evidence if ev.wave]
    [store] = wave.stores  # reached after the loop: the wave pass cuts loops to their first iteration
    assert store.buffer == "partial_ptr" and store.bytes_per_program == 64 and store.sector_fill == 0.125
    assert finding.present and finding.metric.value == 8.0
    assert "fill 12% of the 32-byte sectors" in finding.explanation and "read back from DRAM" in finding.explanation
    source = PARTIALS.read_text().splitlines()
    pinned = {source[line.line - 1].strip() for line in finding.lines}
    assert "r = tl.program_id(0)" in pinned and "s = tl.program_id(1)" in pinned
    assert any(line.startswith("tl.store(partial_ptr") for line in pinned)


@pytest.mark.slow
def test_part_written_sectors_are_not_flagged_when_the_output_fits_in_the_l2():
    finding = _judged(_report(PARTIALS, "rows-first"))
    assert not finding.present and "fits in L2 (50 MiB)" in finding.explanation


@pytest.mark.slow
def test_the_split_index_first_completes_the_sectors_and_is_not_flagged():
    [finding] = _report(PARTIALS, "split-first").diagnoses[0].findings
    [store] = [ev.wave for ev in _report(PARTIALS, "split-first").diagnoses[0].evidence if ev.wave][0].stores
    assert store.sector_fill > 0.9
    assert not finding.present and finding.metric.value == 1.0
