"""The public-kernel corpus (benchmarks/corpus/) through `intelliperf diagnose`, scored per formula.

    python benchmarks/corpus_run.py [--device cpu|gpu] [--only REGEX] [--formula F] [--optimize]
                                    [--timeout S] [--jobs N] [--out FILE.json]

Every program in benchmarks/corpus/ names its source, its license and its labels in its
docstring (`Labels: atomicContention=yes memoryAccess=no ...`, read from the code). Each one
runs once under `intelliperf diagnose -f diagnoseOnly`, which asks every formula; a formula's
verdict for the program is "flagged" when it finds its bottleneck in any diagnosed kernel.
Per formula the table counts right / missed (labelled yes, not flagged) / false flag.
With --optimize, each positive cell also runs `intelliperf optimize -f FORMULA` with the
offline rewriters and records whether a validated win came out, and its speedup.

--jobs N diagnoses N programs at once (verdicts only: with --optimize, whose timings need the
device to themselves, it is refused).

Results go to a JSON file, rewritten after every program (a cut-off run keeps what it
measured), and a Markdown table beside it. On the CPU the programs run at their small sizes in
Triton's interpreter; on a GPU at the sizes they were written for.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from intelliperf.evaluation.run import labels as read_labels

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "benchmarks" / "corpus"
FORMULAS = ("atomicContention", "memoryAccess", "bankConflict", "overlap")
_FIELD = re.compile(r"^(Source|License):\s*(.+)$", re.M)


def labels(program: Path) -> dict[str, bool]:
    """{formula: labelled positive} from the program's `Labels:` line (read as `intelliperf eval` reads it)."""
    pairs = read_labels(program)
    if pairs is None:
        raise ValueError(f"{program} has no 'Labels:' line in its docstring")
    missing = set(FORMULAS) - set(pairs)
    if missing:
        raise ValueError(f"{program}: labels must give yes/no for each of {', '.join(FORMULAS)}")
    return {f: pairs[f] for f in FORMULAS}


def provenance(program: Path) -> dict[str, str]:
    return {k.lower(): v.strip() for k, v in _FIELD.findall(program.read_text())}


def programs(only: str | None = None) -> list[Path]:
    return [p for p in sorted(CORPUS.glob("*.py")) if not only or re.search(only, p.stem)]


def _intelliperf(args: list[str], timeout: float) -> tuple[int, float, str]:
    begin = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "intelliperf", *args], cwd=CORPUS, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return 124, time.perf_counter() - begin, f"timed out after {timeout:.0f} s"
    return done.returncode, time.perf_counter() - begin, (done.stdout + done.stderr)[-2000:]


def diagnose(program: Path, device: str, timeout: float = 600, formula: str = "diagnoseOnly") -> dict:
    """One diagnose run (every formula by default): {formula: flagged} plus why, per kernel."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        rc, seconds, tail = _intelliperf(
            ["diagnose", "-f", formula, "--device", device, "-o", str(out), "--", sys.executable, program.name], timeout
        )
        if rc != 0 or not out.exists():
            return {"error": f"exit {rc}: {tail}", "seconds": round(seconds, 1)}
        report = json.loads(out.read_text())
    flagged = {f: False for f in (FORMULAS if formula == "diagnoseOnly" else (formula,))}
    why = {}
    for diagnosis in report["diagnoses"]:
        for finding in diagnosis["findings"]:
            if finding["formula"] in flagged and finding["present"]:
                flagged[finding["formula"]] = True
                why.setdefault(finding["formula"], f"{diagnosis['kernel']}: {finding['explanation'][:300]}")
    return {"flagged": flagged, "why": why, "seconds": round(seconds, 1), "top": report["top"]}


def optimize(program: Path, formula: str, device: str, timeout: float = 1800, attempts: int = 6) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        rc, seconds, tail = _intelliperf(
            [
                "optimize",
                "-f",
                formula,
                "--device",
                device,
                "--max-attempts",
                str(attempts),
                "--sandbox-env",
                "CORPUS_SMALL",
                "--out-dir",
                str(Path(tmp) / "run"),
                "-o",
                str(out),
                "--",
                sys.executable,
                program.name,
            ],
            timeout,
        )
        if not out.exists():
            return {"status": "error", "detail": tail, "seconds": round(seconds, 1)}
        opt = json.loads(out.read_text()).get("optimization") or {}
    winner = next((a for a in opt.get("attempts", []) if a["number"] == opt.get("winner")), None)
    speedup = opt.get("speedup") or {}
    return {
        "status": opt.get("status", "error"),
        "exit": rc,
        "seconds": round(seconds, 1),
        "winner": winner["title"] if winner else None,
        "rewriter": winner["rewriter"] if winner else None,
        "speedup": speedup.get("estimate"),
        "interval": [speedup.get("low"), speedup.get("high")],
        "attempts": [
            f"{a['rewriter']}: {a['title']} -> {a['status']}"
            + (f" ({a['reasons'][:400]})" if a["status"] != "accepted" and a.get("reasons") else "")
            for a in opt.get("attempts", [])
        ],
    }


def score(rows: list[dict]) -> dict[str, dict[str, int]]:
    """Per formula: right, missed (labelled yes, not flagged), false (flagged, labelled no), errors."""
    table = {f: {"right": 0, "missed": 0, "false": 0, "error": 0} for f in FORMULAS}
    for row in rows:
        for f in FORMULAS:
            if "flagged" in row and f not in row["flagged"]:
                continue  # a run of one formula
            if "flagged" not in row:
                table[f]["error"] += 1
            elif row["flagged"][f] == row["labels"][f]:
                table[f]["right"] += 1
            else:
                table[f]["missed" if row["labels"][f] else "false"] += 1
    return table


def markdown(rows: list[dict], device: str) -> str:
    table = score(rows)
    out = [
        f"Corpus diagnosis on {device}: {len(rows)} programs",
        "",
        "| formula | right | missed | false flag | error |",
        "|---|---|---|---|---|",
    ]
    out += [f"| {f} | {t['right']} | {t['missed']} | {t['false']} | {t['error']} |" for f, t in table.items()]
    out += ["", "| program | source | license | labelled yes | flagged | optimize |", "|---|---|---|---|---|---|"]
    for row in rows:
        yes = ", ".join(f for f in FORMULAS if row["labels"][f]) or "-"
        flagged = "error" if "flagged" not in row else ", ".join(f for f in row["flagged"] if row["flagged"][f]) or "-"
        opt = (
            "; ".join(
                f"{f}: {o['status']}" + (f" {o['speedup']:.2f}x ({o['winner']})" if o.get("speedup") else "")
                for f, o in row.get("optimize", {}).items()
            )
            or "-"
        )
        out.append(f"| {row['program']} | {row['source']} | {row['license']} | {yes} | {flagged} | {opt} |")
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=("cpu", "gpu"))
    parser.add_argument("--only", help="regex on the program's file name")
    parser.add_argument("--optimize", action="store_true", help="also optimize each labelled-positive formula")
    parser.add_argument("--formula", default="diagnoseOnly", help="diagnose with this formula only (faster)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per intelliperf run")
    parser.add_argument("--attempts", type=int, default=6, help="--max-attempts of each optimize run")
    parser.add_argument("--jobs", type=int, default=1, help="programs diagnosed at once (not with --optimize)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "corpus.json")
    args = parser.parse_args()
    if args.jobs > 1 and args.optimize:
        parser.error("--jobs runs diagnoses side by side; optimize timings need the device alone (drop --jobs)")
    rows: list[dict] = []

    def run(program: Path) -> dict:
        row = {"program": program.name, "labels": labels(program), **provenance(program)}
        row.update(diagnose(program, args.device, args.timeout, args.formula))
        if args.optimize:
            row["optimize"] = {
                f: optimize(program, f, args.device, args.timeout, args.attempts)
                for f, yes in row["labels"].items()
                if yes and f in row.get("flagged", {})
            }
        return row

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for done in as_completed([pool.submit(run, program) for program in programs(args.only)]):
            row = done.result()
            rows.append(row)
            rows.sort(key=lambda r: r["program"])  # the table in file order, whatever finished first
            print(
                json.dumps({k: row.get(k) for k in ("program", "labels", "flagged", "seconds", "error", "optimize")}),
                flush=True,
            )
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps({"device": args.device, "rows": rows, "score": score(rows)}, indent=1))
            args.out.with_suffix(".md").write_text(markdown(rows, args.device))
    print(markdown(rows, args.device))


if __name__ == "__main__":
    main()
