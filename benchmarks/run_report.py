"""The example suite's results as a Markdown table and a PNG of speedups (benchmarks/run.py)."""

from __future__ import annotations

import sys
from pathlib import Path


def markdown(meta: dict, rows: list[dict]) -> str:
    out = [
        f"# intelliperf benchmark: {meta['device']}",
        "",
        f"{meta['date']}, driver {meta['driver']}, torch {meta['torch']}, Triton {meta['triton']}, Python "
        f"{meta['python']}. Command: `{meta['command']}`. Peaks measured in this run: copy "
        f"{meta['peaks']['copy_bytes_per_s'] / 1e12:.2f} TB/s, bf16 matmul "
        f"{meta['peaks']['bf16_flops_per_s'] / 1e12:.0f} TFLOP/s.",
        "",
        "| case | formula | expected | found | optimize | speedup [95 % CI] | autotune | hand fix | metric | "
        "roofline before → after (fix) | rerun | program runs | stages (s) | s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---:|---|---:|",
    ]
    for r in rows:
        d, o = r["diagnose"], r.get("optimize") or {}
        found = "error" if "error" in d else ("yes" if d["flagged"] else "no")
        ok = found == ("yes" if r["positive"] else "no")
        sp = o.get("speedup")
        speed = f"{sp['estimate']:.2f}x [{sp['low']:.2f}, {sp['high']:.2f}]" if sp else "–"
        fix = f"{r['fix_speedup']:.2f}x" if r.get("fix_speedup") else "–"
        tuned = (r.get("autotune") or {}).get("speedup")
        tuned = f"{tuned:.2f}x" if tuned else ("error" if r.get("autotune") else "–")
        stages = " · ".join(f"{k} {v:.0f}" for k, v in (o.get("stages") or {}).items() if v >= 0.5) or (
            f"diagnose {d['wall_s']:.0f}" if d.get("wall_s") else "–"
        )
        metric = " → ".join(f"{m:g}" for m in o.get("metric") or [] if m is not None) or "–"
        roof = r["roofline"]
        pct = " → ".join(f"{x:.0%}" for x in (roof["before"], roof["after"]) if x is not None)
        pct += f" ({roof['fix']:.0%})" if roof.get("fix") is not None else ""
        name = r["case"] + (" (held back)" if r["held_back"] else "")
        out.append(
            f"| {name} | {r['formula']} | {'positive' if r['positive'] else 'clean'} | {found}"
            f"{'' if ok else ' ✗'} | {o.get('status', '–') if r['positive'] else '–'} | {speed} | {tuned} | "
            f"{fix} | {metric} | {pct or '–'} | {o.get('rerun_ok', '–')} | {o.get('program_runs', 1)} | "
            f"{stages} | {r['seconds']:.0f} |"
        )
    clean_flagged = sum(1 for r in rows if not r["positive"] and r["diagnose"].get("flagged"))
    wrong = sum(1 for r in rows if (r.get("optimize") or {}).get("rerun_ok") is False)
    if meta.get("scaling", {}).get("runs"):
        sc = meta["scaling"]
        out += [
            "",
            f"Time to a verdict, `optimize --rewriter search --max-attempts {sc['max_attempts']}` on "
            f"{sc['case']}: "
            + "; ".join(
                f"{r['gpus']} GPU(s) {r['wall_s']:.0f} s in all, {r['attempts_s'] or 0:.0f} s of attempts, "
                f"{len(r['attempts'])} attempts, {r['status']}"
                for r in sc["runs"]
            )
            + ".",
        ]
    out += [
        "",
        "Speedup: the validators' interleaved CUDA-event timing of the kernel (L2 flushed). Hand fix and "
        "autotune: the original, the hand-written fix and `triton.autotune` over num_warps (and num_stages for "
        "kernels with a loop), each through its example's launcher with `triton.testing.do_bench` (L2 flushed, "
        "median; benchmarks/autotune_baseline.py), so these two columns share one method and the speedup "
        "column has another (the two compare roughly). Roofline: before and after from the validators' times "
        "of the original and the winner, the hand fix from its do_bench time; bytes = every tensor argument "
        "once (a model). Program runs: "
        f"runs of the user's program by optimize (profile, then one per attempt; at most {meta.get('max_attempts', 3)} "
        "attempts).",
        "",
        f"Clean kernels flagged: {clean_flagged}. Accepted winners failing their own check on rerun: {wrong}.",
        f"Cases took {sum(r['seconds'] for r in rows):.0f} s in all (peaks and start-up not counted); the "
        f"command ran {meta.get('seconds', 0):.0f} s with the cases spread over {meta.get('gpus', 1)} GPU(s), "
        "one case per GPU at a time.",
    ]
    return "\n".join(out) + "\n"


def plot(rows: list[dict], path: Path) -> None:
    try:
        import matplotlib
    except ImportError:
        print(
            f"no matplotlib here: {path} not drawn (python benchmarks/run.py --render FILE.json draws it elsewhere)",
            file=sys.stderr,
        )
        return

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [r for r in rows if r["positive"] and r.get("fix_speedup")]
    if not shown:
        return
    fig, ax = plt.subplots(figsize=(max(6, len(shown) * 1.2), 4))
    xs = range(len(shown))
    ax.bar(
        [x - 0.27 for x in xs],
        [((r.get("optimize") or {}).get("speedup") or {}).get("estimate", 1.0) for r in shown],
        0.27,
        label="intelliperf (1: no win)",
    )
    ax.bar(list(xs), [r["fix_speedup"] for r in shown], 0.27, label="hand-written fix")
    ax.bar(
        [x + 0.27 for x in xs],
        [(r.get("autotune") or {}).get("speedup") or 0 for r in shown],
        0.27,
        label="triton.autotune",
    )
    ax.set_yscale("log")
    ax.set_xticks(
        list(xs), [r["case"].split(" ")[0] + ("*" if r["held_back"] else "") for r in shown], rotation=30, ha="right"
    )
    ax.set_ylabel("speedup over the original (log)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
