"""atomicContention recipe sum-runs-then-atomic: a scatter-add whose neighbouring lanes update the same
address sums each run in the program and issues one atomic per run. The rewritten kernel passes the
source policy, compiles for a GPU target, and adds what the original added, for sorted indices and for
unsorted ones with repeats (short runs); it declines, with its reason, where its pattern is absent.
End to end, `optimize --rewriter recipes` finds, fixes and validates the sorted segment sum."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from recipe_outputs import same_output
from recipe_request import applied, recipe_request

from intelliperf.models import AccessSite, SourceLine
from intelliperf.rewriters.recipes import RUN_SUM_HELPER, NotApplicable, apply_recipe, sum_runs_then_atomic
from intelliperf.rewriters.source import code_unit

REPO = Path(__file__).resolve().parents[3]
PROGRAM = REPO / "benchmarks" / "fixes" / "segment_sum_sorted_before.py"
ATOMIC_LINE = 24


def _request(kernel: str, lanes_per_address: float, edit: tuple[str, str] = ("", "")):
    """The request the loop hands the recipe: the atomic line pinpointed, its trace as evidence, the
    kernel's source with `edit` (old, new) applied."""
    unit = code_unit(PROGRAM, kernel, REPO)
    assert unit is not None
    if edit[0]:
        assert edit[0] in unit.source
        unit = unit.model_copy(update={"source": unit.source.replace(*edit)})
    request = recipe_request(unit, code_unit(PROGRAM, "segment_sum", REPO), "atomicContention")
    site = AccessSite(
        file=str(PROGRAM), line=ATOMIC_LINE, op="atomic_add", is_atomic=True, buffer="out_ptr", elem_bytes=4,
        calls=5, lanes=5000, bytes_requested=20000, sectors=700, sector_efficiency=0.9,
        lanes_per_address_max=78, lanes_per_address_mean=lanes_per_address,
    )  # fmt: skip
    line = SourceLine(file=str(PROGRAM), line=ATOMIC_LINE, code="tl.atomic_add(out_ptr + seg, x, mask=mask)")
    finding = request.finding.model_copy(update={"lines": [line]})
    return request.model_copy(update={"sites": [site], "finding": finding})


def _rewritten(request, tmp_path: Path) -> tuple[Path, str, str]:
    """The program with the rewritten kernel and its helper beside it, applied as the loop applies a
    candidate (the helper is held to the kernel policy too)."""
    kernel, helpers = apply_recipe(sum_runs_then_atomic, request)
    assert len(helpers) == 1
    return applied(request, tmp_path, kernel, module=helpers[0]), kernel, helpers[0]


@pytest.mark.slow
@pytest.mark.parametrize(
    "inputs",
    [
        # sorted ids, runs of about 40, a length that is not a multiple of the block
        "(lambda n: (torch.randn(n), torch.sort(torch.randint(0, 50, (n,)))[0], 50))(2000 + 77)",
        # unsorted ids with repeats: runs of one or two lanes, still each added once
        "(lambda n: (torch.randn(n), torch.randint(0, 7, (n,)), 7))(1500)",
    ],
)
def test_sum_runs_adds_what_the_original_added(tmp_path, inputs):
    request = _request("segment_sum_kernel", 61.0)
    path, kernel, helper = _rewritten(request, tmp_path)
    assert "tl.associative_scan((_ip_starts, _ip_vals), 0, _ip_segment_add)" in kernel
    assert "tl.atomic_add(_ip_ptrs, _ip_sums, mask=mask & _ip_last)" in kernel
    assert f"def {RUN_SUM_HELPER}(started_a, sum_a, started_b, sum_b)" in helper
    same_output(PROGRAM, path, request, inputs)


@pytest.mark.parametrize(
    "reason,lanes_per_address,old,new",
    [
        ("rarely share an address", 1.2, "", ""),
        ("needs atomic_add, not atomic_max", 61.0, "atomic_add", "atomic_max"),
        ("not one 1-D", 61.0, "tl.arange(0, BLOCK)", "tl.arange(0, BLOCK)[:, None]"),
        ("value is a constant", 61.0, "seg, x, mask", "seg, 1, mask"),
    ],
)
def test_sum_runs_declines_with_its_reason(reason, lanes_per_address, old, new):
    request = _request("segment_sum_kernel", lanes_per_address, (old, new))
    with pytest.raises(NotApplicable, match=reason):
        sum_runs_then_atomic(request, ATOMIC_LINE)


@pytest.mark.slow
def test_optimize_sums_the_runs_of_a_sorted_segment_sum(tmp_path):
    """The whole loop on CPU: diagnosed from the trace, rewritten by the recipe, the candidate run in
    the sandbox, its outputs compared with the reference's, its modelled metric re-measured."""
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "intelliperf", "optimize", "--formula", "atomicContention", "--rewriter", "recipes",
         "--out-dir", str(out), "--", sys.executable, str(PROGRAM), "--n", "3000", "--repeat", "1"],
        capture_output=True, text=True, timeout=600, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    opt = json.loads((out / "report.json").read_text())["optimization"]
    attempt = opt["attempts"][0]
    assert attempt["title"] == "sum-runs-then-atomic" and attempt["status"] == "accepted", attempt
    assert attempt["before"]["metric"] >= 8 * attempt["after"]["metric"]  # one atomic per run, not per lane
    assert "_ip_segment_add" in (out / "winner.patch").read_text()
