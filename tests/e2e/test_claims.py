"""What `optimize` claims about the bottleneck is what `diagnose` finds in the patched program: for each formula,
a program where it flags the kernel on the CPU, an accepted fix (a recipe, the knob search, or a replayed expert
answer where no offline rewriter has one), the winner applied (--in-place) to a copy, and `diagnose` run there
with the same formula and options. The after-metric in the report is the re-diagnosis's, and "removed" is said
only where the re-diagnosis finds no such bottleneck."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, PROGRAMS, REPO, SMALL, run_cli

from intelliperf.rewriters.transcript import Transcript

CASES = {
    "atomicContention": (EXAMPLES, "contended_sum.py", SMALL),
    "registerPressure": (PROGRAMS / "row_tiling", "layer_norm.py", ["4", "16000"]),
    "laneUtilization": (PROGRAMS / "lane_packing", "row_scale.py", ["--rows", "64", "--cols", "96"]),
    "memoryAccess": (
        REPO / "examples" / "memory_access",
        "column_copy.py",
        ["--m", "100", "--n", "77", "--repeat", "1"],
    ),
    # a constexpr switch between row-major and grouped order, run row-major; the modelled L2 shrunk to 0.1 MiB so
    # that the CPU-sized grid (2 x 132 tiles) re-reads past it
    "memoryLocality": (PROGRAMS / "bottlenecks", "tiled_matmul.py", ["--m", "64"]),
    "overlap": (REPO / "examples" / "overlap", "gemm.py", []),  # static view: the k-loop's loads not pipelined
    "bankConflict": (REPO / "examples" / "bank_conflict", "column_sums.py", ["--repeat", "1"]),
}
OPTIONS = {"memoryLocality": ["-O", "l2_mib=0.1"]}
REWRITERS = {  # what fixes it offline; recipes by default
    "overlap": ["--rewriter", "search", "--max-attempts", "2"],  # num_stages 1 -> 3
    "bankConflict": ["--rewriter", "replay", "--max-attempts", "1"],  # + --transcript: column_sums_once.py's fix
}


def _expert_fix(formula: str, project: Path, tmp_path: Path) -> list[str]:
    """For bankConflict, whose fixes no offline rewriter writes: the example's own fix (the tiles added up in
    registers, one reduction across warps after the loop) as a model's answer, under the kernel's name."""
    if formula != "bankConflict":
        return []
    fixed = (project / "column_sums_once.py").read_text().split("@triton.jit\n")[1].split("\n\n\n")[0]
    kernel = "@triton.jit\n" + fixed.replace("column_sums_once_kernel", "column_sums_kernel") + "\n"
    transcript = tmp_path / "transcript.json"
    answer = {"kernel": kernel, "rationale": "reduce across warps once, after the loop"}
    Transcript(answers=[answer]).save(transcript)
    return ["--transcript", str(transcript)]


def _copy(folder: Path, tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(folder, project, ignore=shutil.ignore_patterns("__pycache__"))
    return project


@pytest.mark.parametrize("formula", list(CASES))
def test_the_claimed_after_metric_is_what_diagnose_finds_in_the_patched_program(formula, tmp_path):
    folder, script, args = CASES[formula]
    project, out = _copy(folder, tmp_path), tmp_path / "out"
    command = ["-f", formula, *OPTIONS.get(formula, []), "--device", "cpu", "--", sys.executable, script, *args]
    rewriter = REWRITERS.get(formula, ["--rewriter", "recipes", "--max-attempts", "1"])
    done = run_cli(
        "optimize", *rewriter, *_expert_fix(formula, project, tmp_path), "--in-place", "--out-dir", str(out),
        *command, cwd=project,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    opt = json.loads((out / "report.json").read_text())["optimization"]
    assert opt["winner"] and opt["applied"] and opt["formula"] == formula, opt["notes"]
    after = opt["attempts"][opt["winner"] - 1]["after"]
    assert after["metric_source"] == "candidate-process"  # measured on the patched program's own run
    replayed = [c for c in opt["attempts"][opt["winner"] - 1]["verdict"]["checks"] if c.startswith("replay through")]
    seeds = {s for c in replayed for s in re.search(r"seeds ([\d, ]+)", c).group(1).split(", ")}
    assert "0" in seeds and not seeds & {"1", "2"}  # one uniform draw at the recorded shape in the interpreter

    again = tmp_path / "again.json"
    diagnosed = run_cli("diagnose", "--output", str(again), *command, cwd=project)
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
