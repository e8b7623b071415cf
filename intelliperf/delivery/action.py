"""The GitHub Action's entry point (action.yml runs `python -m intelliperf.delivery.action`).

action.yml hands every input over as an INPUT_* variable (the model key as INTELLIPERF_API_KEY,
the token as GITHUB_TOKEN: the runner strips both from the program's environment). This runs
`intelliperf optimize` with them, then writes the step's outputs ($GITHUB_OUTPUT: report,
success, speedup, pr-url) and the report's Markdown to the job summary ($GITHUB_STEP_SUMMARY).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from ..cli import NO_WIN_EXIT
from ..cli import main as cli_main


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
    args = ["optimize", "--formula", _input("formula", "atomicContention"), "--top-n", _input("top-n", "10"),
            "--rewriter", _input("rewriter", "auto"), "--max-attempts", _input("max-attempts", "6"),
            "--out-dir", _input("out-dir", "intelliperf-out")]
    for name in ("kernel", "model", "api-base", "device"):
        if _input(name):
            args += [f"--{name}", _input(name)]
    if _input("sandbox", "true").lower() == "false":
        args.append("--no-sandbox")
    if _flag("create-pr"):
        args += ["--create-pr"] + [arg for label in _input("pr-labels").split(",") if label.strip()
                                   for arg in ("--pr-label", label.strip())]
    return [*args, "--", *command]


def write_outputs(out_dir: Path, code: int) -> None:
    """Step outputs and the job summary, from the report the run wrote (if it got that far)."""
    path = out_dir / "report.json"
    report = json.loads(path.read_text()) if path.is_file() else {}
    opt, delivery = report.get("optimization") or {}, report.get("delivery") or {}
    speedup = (opt.get("speedup") or {}).get("estimate")
    values = {"report": str(path.resolve()) if path.is_file() else "",
              "success": "true" if code == 0 and opt.get("winner") else "false",
              "speedup": f"{speedup:.3f}" if speedup else "", "pr-url": delivery.get("pr_url") or ""}
    if os.environ.get("GITHUB_OUTPUT"):
        with open(os.environ["GITHUB_OUTPUT"], "a") as f:
            f.writelines(f"{k}={v}\n" for k, v in values.items())
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        markdown = out_dir / "report.md"
        head = f"Pull request: {values['pr-url']}\n\n" if values["pr-url"] else ""
        body = markdown.read_text() if markdown.is_file() else f"intelliperf stopped (exit {code}) before a report.\n"
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a") as f:
            f.write(head + body)


def main() -> int:
    args = optimize_args()
    code = cli_main(args)
    write_outputs(Path(_input("out-dir", "intelliperf-out")), code)
    if code == NO_WIN_EXIT and not _flag("fail-on-no-win"):
        return 0  # the outputs say success=false; a kernel that could not be sped up is not a broken build
    return code


if __name__ == "__main__":
    sys.exit(main())
