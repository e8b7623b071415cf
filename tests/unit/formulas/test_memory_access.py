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


@pytest.mark.slow
@pytest.mark.parametrize(
    "example,flagged,stride",
    [
        ("column_copy", ["x = tl.load(", "tl.store(y_ptr"], 192),
        ("naive_transpose", ["tl.store(y_ptr"], 128),
        ("aos_gather", ["a = tl.load(", "b = tl.load("], 8),
    ],
)
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


@pytest.mark.slow
@pytest.mark.parametrize("example", ["row_copy", "tiled_transpose", "soa_gather"])
def test_the_fixed_kernels_are_clean(example):
    report, finding = _finding(example)
    assert report.selected is None and not finding.present and finding.metric.value == 1.0
    loads = [s for s in report.diagnoses[0].evidence[0].sites if s.op == "load"]
    assert loads and all(s.lane_stride_elems == 1 for s in loads)


def test_options_are_checked():
    with pytest.raises(intelliperf.IntelliPerfError, match="min_efficiency"):
        intelliperf.default_registry().create("memoryAccess", min_efficiency=2)


def _recipe(example: str):
    from intelliperf.rewriters import HardwareFacts, RewriteRequest
    from intelliperf.rewriters.recipes import RecipeRewriter
    from intelliperf.rewriters.source import code_unit

    report, finding = _finding(example)
    profile, file = report.kernels[0], MEMORY / f"{example}.py"
    request = RewriteRequest(
        kernel=code_unit(file, profile.name, REPO),
        launcher=code_unit(file, example, REPO),
        profile=profile,
        finding=finding,
        formula="memoryAccess",
        recipes="memoryAccess",
        problem="uncoalesced",
        techniques=[],
        metric="sector_efficiency",
        hardware=HardwareFacts(device="test"),
        sites=report.diagnoses[0].evidence[0].sites,
    )
    return RecipeRewriter().rewrite(request), request


@pytest.mark.slow
@pytest.mark.parametrize("example,index", [("column_copy", "col"), ("naive_transpose", "row")])
def test_tile_program_axis_makes_the_strided_kernels_coalesced(tmp_path, example, index):
    from intelliperf.rewriters.source import check_scope, splice

    cand, request = _recipe(example)
    assert cand.title == "tile-program-axis" and cand.declined is None, cand.declined
    assert f"{index} = (tl.program_id(0) * 32 + tl.arange(0, 32))[None, :]" in cand.kernel
    assert "triton.cdiv(" in cand.launcher and ", 32)" in cand.launcher
    original = (MEMORY / f"{example}.py").read_text()
    text = splice(splice(original, request.kernel.qualname, cand.kernel), request.launcher.qualname, cand.launcher)
    check_scope(original, text, {request.kernel.name, request.launcher.name}, kernel=request.kernel.name)
    # The patched program, run for real in the interpreter at a size that is not a multiple of the
    # tile (the program checks its own output bit for bit), is no longer flagged.
    copy = tmp_path / "memory_access"
    copy.mkdir()
    (copy / "_harness.py").write_text((MEMORY / "_harness.py").read_text())
    (copy / f"{example}.py").write_text(text)
    report = intelliperf.diagnose(
        py(copy / f"{example}.py", "--m", "100", "--n", "77", "--repeat", "1"), formula="memoryAccess", device="cpu"
    )
    finding = report.diagnoses[0].findings[0]
    # Rows of 77 floats start off a sector boundary: a 32-float row segment spans 5 sectors, not 4.
    assert not finding.present and finding.metric.value > 0.75, finding.explanation


@pytest.mark.slow
def test_tile_program_axis_says_why_a_gather_is_not_tiled():
    cand, _ = _recipe("aos_gather")
    assert cand.declined and "no program axis indexes single elements" in cand.declined
    assert "another data layout" in cand.declined
