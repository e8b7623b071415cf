"""Real fixes, offered to the validators as a rewriter's answer would be (benchmarks/fixes/): the
maintainers' own after-version of a kernel must be accepted as correct for its before-version on the
CPU, whichever way the fix changed the code. Each pair here stands for a class the validators used to
refuse: per-program partials its launcher sums (a kernel output reshaped), work moved from the
launcher into the kernel with a launcher that rebinds its arguments, and a privatized histogram."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import fixes_run  # noqa: E402

MANIFEST = {e["name"]: e for e in json.loads((REPO / "benchmarks" / "fixes" / "MANIFEST.json").read_text())}


@pytest.mark.parametrize("name", ["liger_layer_norm_backward", "liger_tvd_forward", "vllm_bincount_privatized"])
def test_a_maintainers_fix_is_correct_for_its_before_version(name, tmp_path):
    row = fixes_run.run_pair(MANIFEST[name], gpu=False, work=tmp_path)
    assert row["status"] == "correct", row.get("reason") or row.get("reasons")
    assert not row["reasons"], row["reasons"]


def test_a_fix_that_adds_a_module_level_helper_is_refused_with_the_reason(tmp_path):
    """What the answer path still cannot take: only the kernel and its launcher are spliced."""
    row = fixes_run.run_pair(MANIFEST["tritonbench_matmul_partition_k"], gpu=False, work=tmp_path)
    assert row["status"] in ("refused", "rejected")
    assert "get_mm_configs" in (row.get("reason") or row.get("reasons") or "")
