"""Real fixes, offered to the validators as a rewriter's answer would be (benchmarks/fixes/): the
maintainers' own after-version of a kernel must be accepted as correct for its before-version on the
CPU, whichever way the fix changed the code. Each pair here stands for a class the validators used to
refuse: per-program partials its launcher sums (a kernel output reshaped), work moved from the
launcher into the kernel with a launcher that rebinds its arguments, a privatized histogram, and fixes
that add helpers and kernels beside the kernel."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
import fixes_run  # noqa: E402

MANIFEST = {e["name"]: e for e in json.loads((REPO / "benchmarks" / "fixes" / "MANIFEST.json").read_text())}


@pytest.mark.parametrize("name", ["liger_layer_norm_backward", "liger_tvd_forward", "vllm_bincount_privatized"])
def test_a_maintainers_fix_is_correct_for_its_before_version(name, tmp_path):
    row = fixes_run.run_pair(MANIFEST[name], gpu=False, work=tmp_path)
    assert row["status"] == "correct", row.get("reason") or row.get("reasons")
    assert not row["reasons"], row["reasons"]


def test_a_fix_that_adds_helpers_beside_the_kernel_is_taken_and_validated(tmp_path):
    """A fix that adds module-level helpers (a @triton.jit helper and a Python heuristic the launcher
    calls) is spliced in beside the kernel and judged like any other."""
    row = fixes_run.run_pair(MANIFEST["flaggems_softmax_inner"], gpu=False, work=tmp_path)
    assert row["status"] == "correct", row.get("reason") or row.get("reasons")


def test_a_fix_whose_kernel_needs_divisible_sizes_is_taken_and_judged_at_an_odd_size(tmp_path):
    """The partition-K fix adds the helper that builds its autotune configs: it passes the policy and the
    scope and is validated. Neither version masks K, so at the unseen odd K the replays use (3,071 here)
    neither computes a matmul, and the two differ: the verdict says where."""
    row = fixes_run.run_pair(MANIFEST["tritonbench_matmul_partition_k"], gpu=False, work=tmp_path)
    assert row["status"] in ("correct", "rejected"), row.get("reason")
    if row["status"] == "rejected":
        assert "unseen" in row["reasons"] and "launcher-0 " not in row["reasons"], row["reasons"]


def test_a_fix_that_relies_on_sorted_ids_is_judged_on_sorted_ids(tmp_path):
    """The segment sum's ids are sorted, and the expert's gather (one program per segment, ranges by
    torch.searchsorted) relies on it: the replays draw fresh ids sorted as the program's were, so the
    fix is correct, not a mismatch on ids no run of the program has."""
    row = fixes_run.run_pair(MANIFEST["segment_sum_sorted"], gpu=False, work=tmp_path)
    assert row["status"] == "correct", row.get("reason") or row.get("reasons")


def test_fresh_integer_inputs_keep_the_order_only_of_sorted_captures():
    """Sorted along the last axis stays sorted (per row); ids captured unsorted are drawn unsorted, so
    a fix that assumed an order the program's data does not have still meets data without it."""
    import torch

    from intelliperf.validators.inside.capture import describe_value
    from intelliperf.validators.workers.replay_inputs import fill_fresh

    generator = torch.Generator().manual_seed(0)
    rows = torch.sort(torch.randint(0, 1000, (3, 500)), dim=-1).values
    shuffled = torch.randint(0, 1000, (500,))
    for captured, keeps_order in ((rows, True), (shuffled, False), (torch.arange(7), True)):
        desc = describe_value(captured, stats=True)
        assert desc["sorted"] is keeps_order
        fresh = torch.empty_like(captured)
        fill_fresh(fresh, desc, generator)
        assert bool((fresh[..., 1:] >= fresh[..., :-1]).all()) is keeps_order
        assert fresh.min() >= captured.min() and fresh.max() <= captured.max()
    assert "sorted" not in describe_value(torch.randn(8), stats=True)
