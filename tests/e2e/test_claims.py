"""What `optimize` claims about the bottleneck is what `diagnose` finds in the patched program: for each formula
with a recipe, a program it fixes, the winner applied (--in-place) to a copy, and `diagnose` run there with
the same formula. The after-metric in the report is the re-diagnosis's, and "removed" is said only where the
re-diagnosis finds no such bottleneck."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, PROGRAMS, REPO, SMALL, run_cli

CASES = {
    "atomicContention": (EXAMPLES, "contended_sum.py", SMALL),
    "registerPressure": (PROGRAMS / "row_tiling", "layer_norm.py", ["4", "16000"]),
    "laneUtilization": (PROGRAMS / "lane_packing", "row_scale.py", ["--rows", "64", "--cols", "96"]),
    "memoryAccess": (
        REPO / "examples" / "memory_access",
        "column_copy.py",
        ["--m", "100", "--n", "77", "--repeat", "1"],
    ),
}


def _copy(folder: Path, tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(folder, project, ignore=shutil.ignore_patterns("__pycache__"))
    return project


@pytest.mark.parametrize("formula", list(CASES))
def test_the_claimed_after_metric_is_what_diagnose_finds_in_the_patched_program(formula, tmp_path):
    folder, script, args = CASES[formula]
    project, out = _copy(folder, tmp_path), tmp_path / "out"
    command = ["--device", "cpu", "--", sys.executable, script, *args]
    done = run_cli(
        "optimize", "-f", formula, "--rewriter", "recipes", "--max-attempts", "1", "--in-place",
        "--out-dir", str(out), *command, cwd=project,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    opt = json.loads((out / "report.json").read_text())["optimization"]
    assert opt["winner"] == 1 and opt["applied"] and opt["formula"] == formula, opt["notes"]
    after = opt["attempts"][0]["after"]

    again = tmp_path / "again.json"
    diagnosed = run_cli("diagnose", "-f", formula, "--output", str(again), *command, cwd=project)
    assert diagnosed.returncode == 0, diagnosed.stderr[-3000:]
    report = json.loads(again.read_text())
    [finding] = next(d for d in report["diagnoses"] if d["kernel"] == opt["kernel"])["findings"]
    assert after["metric"] == pytest.approx(finding["metric"]["value"]) and after["present"] == finding["present"]
    assert opt["bottleneck_removed"] is (not finding["present"])
    claim = next(line for line in (out / "report.md").read_text().splitlines() if line.startswith("- bottleneck:"))
    assert claim.startswith("- bottleneck: removed") is (not finding["present"]), claim
    assert "speed not measured" in done.stdout and "Validated" not in done.stdout  # no GPU: nothing timed


@pytest.mark.parametrize("formula", ["registerPressure", "atomicContention"])
def test_with_no_formula_named_optimize_fixes_the_bottleneck_that_weighs_most(formula, tmp_path):
    """`--formula auto` (the default) asks every formula, as `diagnose` does, and fixes the heaviest finding;
    the report names it and what else was found."""
    folder, script, args = CASES[formula]
    project, out = _copy(folder, tmp_path), tmp_path / "out"
    done = run_cli(
        "optimize", "--rewriter", "recipes", "--max-attempts", "1", "--out-dir", str(out),
        "--device", "cpu", "--", sys.executable, script, *args, cwd=project,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    chosen = next(n for n in report["notes"] if n.startswith("--formula auto: fixing"))
    assert chosen.startswith(f"--formula auto: fixing {formula} in ") and report["formula"] == formula
    found = {f["formula"] for d in report["diagnoses"] for f in d["findings"]}
    assert {"atomicContention", "registerPressure", "laneUtilization", "memoryAccess"} <= found  # every one asked
    opt = report["optimization"]
    assert opt["formula"] == formula and opt["winner"] == 1, opt["attempts"][0]["reasons"]
