"""The GitHub Action's entry point (action.yml runs `python -m intelliperf.cli.action`).

action.yml hands every input over as an INPUT_* variable (the model key as INTELLIPERF_API_KEY,
the token as GITHUB_TOKEN: the runner strips both from the program's environment). This runs
`intelliperf optimize` with them (the findings also as SARIF, OUT_DIR/findings.sarif), then
writes the step's outputs ($GITHUB_OUTPUT: report, success, correct, speedup, pr-url, sarif), the report's
Markdown to the job summary ($GITHUB_STEP_SUMMARY), and a warning annotation on each pinpointed
source line (workflow commands on stdout), unless `annotations` is false.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path

from ..settings import OptimizeSettings
from . import NO_WIN_EXIT
from . import main as cli_main

SARIF = "findings.sarif"
OUT_DIR = str(OptimizeSettings.model_fields["out_dir"].default)  # optimize's (action.yml's out-dir says it too)


def _input(name: str, default: str = "") -> str:
    return os.environ.get(f"INPUT_{name.upper().replace('-', '_')}", default).strip()


def _flag(name: str) -> bool:
    value = _input(name, "false").lower()
    if value not in ("true", "false", ""):
        raise SystemExit(f"intelliperf action: input {name} must be true or false, got {value!r}")
    return value == "true"


def optimize_args() -> list[str]:
    """The `intelliperf optimize` command line the inputs describe."""
    command = shlex.split(_input("command"))
    if not command:
        raise SystemExit("intelliperf action: the `command` input is empty; e.g. command: python train_step.py")
    args = ["optimize", "--out-dir", _input("out-dir", OUT_DIR)]
    # An input left empty is not passed: the CLI's default, or the project's [tool.intelliperf], applies.
    names = ("formula", "top-n", "rewriter", "max-attempts", "kernel", "model", "api-base", "device", "devices")
    for name in (*names, "time-budget", "counters"):
        if _input(name):
            args += [f"--{name}", _input(name)]
    for path in re.split(r"[,\n]", _input("formula-path")):
        if path.strip():
            args += ["--formula-path", path.strip()]
    args += ["--sarif", str(Path(_input("out-dir", OUT_DIR)) / SARIF)]
    if _input("sandbox", "true").lower() == "false":
        args.append("--no-sandbox")
    if _flag("create-pr"):
        args += ["--create-pr"] + [
            arg for label in _input("pr-labels").split(",") if label.strip() for arg in ("--pr-label", label.strip())
        ]
    return [*args, "--", *command]


def write_outputs(out_dir: Path, code: int) -> None:
    """Step outputs and the job summary, from the report the run wrote (if it got that far)."""
    path = out_dir / "report.json"
    report = json.loads(path.read_text()) if path.is_file() else {}
    opt, delivery = report.get("optimization") or {}, report.get("delivery") or {}
    speedup = (opt.get("speedup") or {}).get("estimate")
    sarif = out_dir / SARIF
    correct = code == 0 and bool(opt.get("winner"))
    values = {
        "report": str(path.resolve()) if path.is_file() else "",
        "success": "true" if correct and _measured_faster(opt) else "false",
        "correct": "true" if correct else "false",
        "speedup": f"{speedup:.3f}" if speedup else "",
        "pr-url": delivery.get("pr_url") or "",
        "sarif": str(sarif.resolve()) if sarif.is_file() else "",
    }
    if os.environ.get("GITHUB_OUTPUT"):
        with open(os.environ["GITHUB_OUTPUT"], "a") as f:
            f.writelines(f"{k}={v}\n" for k, v in values.items())
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        markdown = out_dir / "report.md"
        head = f"Pull request: {values['pr-url']}\n\n" if values["pr-url"] else ""
        body = markdown.read_text() if markdown.is_file() else f"intelliperf stopped (exit {code}) before a report.\n"
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a") as f:
            f.write(head + body)


def _measured_faster(opt: dict) -> bool:
    """The winner's verdict says faster on the GPU's timing (None without a GPU: speed not measured)."""
    attempts = opt.get("attempts") or []
    winner = attempts[opt["winner"] - 1] if 0 < opt["winner"] <= len(attempts) else {}
    return (winner.get("verdict") or {}).get("faster") is True and bool(opt.get("speedup"))


def warning_commands(report: dict, workspace: Path) -> list[str]:
    """One `::warning` workflow command per pinpointed line of each present finding, the path
    relative to the workspace (where GitHub shows it on the file)."""
    out = []
    for diagnosis in report.get("diagnoses", []):
        for finding in (f for f in diagnosis["findings"] if f["present"]):
            first = finding["explanation"].split(". ")[0]
            for line in finding["lines"]:
                path = Path(line["file"]).resolve()
                shown = path.relative_to(workspace) if workspace in path.parents else path
                message = f"{diagnosis['kernel']}: {first}. {line.get('detail', '')}".strip()
                out.append(
                    f"::warning file={_escape(str(shown), True)},line={line['line']},"
                    f"title={_escape('intelliperf ' + finding['formula'], True)}::{_escape(message)}"
                )
    return out


def _escape(text: str, property_: bool = False) -> str:
    """GitHub's workflow-command escaping (data, and properties, which also escape : and ,)."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_ else text


def main() -> int:
    args = optimize_args()
    code = cli_main(args)
    out_dir = Path(_input("out-dir", OUT_DIR))
    write_outputs(out_dir, code)
    report = out_dir / "report.json"
    if report.is_file() and _input("annotations", "true").lower() != "false":
        workspace = Path(os.environ.get("GITHUB_WORKSPACE") or os.getcwd()).resolve()
        print(*warning_commands(json.loads(report.read_text()), workspace), sep="\n", flush=True)
    if code == NO_WIN_EXIT and not _flag("fail-on-no-win"):
        return 0  # the outputs say success=false; a kernel that could not be sped up is not a broken build
    return code


if __name__ == "__main__":
    sys.exit(main())
