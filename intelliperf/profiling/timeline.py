"""Region timers' output: Proton's chrome trace -> per-warp intervals -> what they say.

Proton writes one complete event per region execution and warp: `pid` "<kernel> Core<sm>
CTA<id>", `tid` "warp <w> (line <n>)", `ts`/`dur` in cycles / 1000 (it assumes 1 GHz). Events
come grouped by launch, then SM (ascending), CTA and warp. The format has no launch id, so a
launch ends where the SM number falls or a CTA's warp comes back (a CTA id runs once per launch,
on whichever SM the scheduler picks then). Within a CTA all warps read one SM clock, so intervals of one CTA
compare exactly; across CTAs only roughly, which is why overlap is computed per CTA.

The analysis (`analyse`) is plain arithmetic on those intervals, so it runs on any machine;
`check` says when the intervals cannot be trusted (the compiler moved a timer, the buffer
overflowed) instead of reporting nonsense. For a grid whose trace would cost more than the verdict
needs, Proton writes its per-scope totals instead (its tree): `scope_totals`, `analyse_totals`.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

from ..models import Regions, RegionStat
from .regions import Region, user_kind

_PID = re.compile(r"^(?P<kernel>.*) Core(?P<sm>\d+) CTA(?P<cta>\d+)$")
_TID = re.compile(r"warp (\d+)")
WARPS_PER_GROUP = 4  # a warp group on Hopper
SIDE_OF = {"load": "memory", "store": "memory", "dot": "compute", "math": "compute"}


class Interval(NamedTuple):  # a tuple: a GEMM's trace has half a million of them
    launch: int
    sm: int
    cta: int
    warp: int
    region: str
    start: int  # cycles, on the CTA's SM clock (shifted per CTA by Proton)
    end: int


# Proton writes each complete event's keys in one order (args, cat, cname, dur, name, ph, pid, tid,
# ts): a pattern reads a 140 MB trace in 0.6 s where json.loads takes 2.1 s (benchmarks/regions_sampling.py).
_EVENT = re.compile(
    r'"cat":\s*"([^"\\]*)"[^{}]*?"dur":\s*([-0-9.eE+]+),\s*"name":\s*"([^"\\]*)",\s*"ph":\s*"X",'
    r'\s*"pid":\s*"([^"\\]*)",\s*"tid":\s*"([^"\\]*)",\s*"ts":\s*([-0-9.eE+]+)'
)
_COMPLETE = re.compile(r'"ph":\s*"X"')


def complete_events(text: str) -> list[tuple[str, str, str, str, str, str]]:
    """(cat, dur, name, pid, tid, ts) of each complete event, as written. A trace the pattern does not
    read in full (another key order, escapes in a name) is read as JSON instead."""
    found = _EVENT.findall(text)
    if len(found) == len(_COMPLETE.findall(text)):
        return found
    data = json.loads(text)
    events = data.get("traceEvents", []) if isinstance(data, dict) else data
    return [
        (
            str(e.get("cat", "")),
            str(e["dur"]),
            str(e["name"]),
            str(e.get("pid", "")),
            str(e.get("tid", "")),
            str(e["ts"]),
        )
        for e in events
        if e.get("ph") == "X"
    ]


def parse_trace(text: str, kernel: str | None = None) -> list[Interval]:
    """The intervals of a Proton chrome trace (of `kernel` only, when given)."""
    return intervals(complete_events(text), kernel)


def intervals(events: list[tuple[str, str, str, str, str, str]], kernel: str | None = None) -> list[Interval]:
    """The intervals of a trace's complete events (`complete_events`; read once for all its kernels)."""
    out: list[Interval] = []
    launch, seen, last = 0, set(), None
    pids, tids = {}, {}  # a trace has millions of events but few distinct CTA and warp names: match each once
    for cat, dur, name, raw_pid, raw_tid, ts in events:
        if cat in ("call_path", "flow"):
            continue
        if raw_pid not in pids:
            m = _PID.match(raw_pid)
            pids[raw_pid] = (m["kernel"], int(m["sm"]), int(m["cta"])) if m else None
        if raw_tid not in tids:
            m = _TID.match(raw_tid)
            tids[raw_tid] = int(m[1]) if m else None
        pid, warp = pids[raw_pid], tids[raw_tid]
        if pid is None or warp is None or (kernel and pid[0] != kernel):
            continue
        key, sm = (pid[0], pid[2], warp), pid[1]
        if last is not None and key != last[0] and (key in seen or (key[0] == last[0][0] and sm < last[1])):
            launch, seen = launch + 1, set()  # the writer came back to a CTA's warp, or to a lower SM
        seen.add(key)
        last = (key, sm)
        start = round(float(ts) * 1000)
        out.append(Interval(launch, sm, pid[2], warp, name, start, start + round(float(dur) * 1000)))
    return out


def regions_from_names(names: list[str]) -> list[Region]:
    """Regions for scopes the user named (no line information)."""
    return [Region(n, user_kind(n), 0, 0, in_loop=user_kind(n) != "user") for n in names]


def _union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def _length(spans: list[tuple[int, int]]) -> int:
    return sum(b - a for a, b in spans)


def _intersection(x: list[tuple[int, int]], y: list[tuple[int, int]]) -> int:
    total, i, j = 0, 0, 0
    while i < len(x) and j < len(y):
        lo, hi = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
        total += max(0, hi - lo)
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return total


def check(intervals: list[Interval], regions: list[Region]) -> list[str]:
    """Why these intervals cannot be taken at face value; empty when they can."""
    problems = []
    negative = sum(1 for iv in intervals if iv.end < iv.start)
    if negative:
        problems.append(f"{negative} region executions end before they start: the compiler moved a timer")
    by_name = {r.name: r for r in regions}
    counts: dict[tuple, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for iv in intervals:
        counts[(iv.launch, iv.cta, iv.warp)][iv.region] += 1
    looped = [r.name for r in regions if r.in_loop]
    uneven = 0
    for per in counts.values():
        seen = {per.get(n, 0) for n in looped if n in by_name}
        uneven += len(seen) > 1
        outer = [n for n, c in per.items() if n in by_name and not by_name[n].in_loop and c != 1]
        if outer:
            uneven += 1
    if uneven:
        problems.append(
            f"{uneven} warps have region counts that do not match (a loop region ran a different "
            "number of times than another, or an outer region is missing or repeated): events "
            "were dropped (Proton's buffer) or the compiler moved a timer across the loop"
        )
    loops = {
        (iv.launch, iv.cta, iv.warp): iv
        for iv in intervals
        if by_name.get(iv.region, None) and by_name[iv.region].kind == "loop"
    }
    outside = sum(
        1
        for iv in intervals
        if iv.region in by_name
        and by_name[iv.region].in_loop
        and (lp := loops.get((iv.launch, iv.cta, iv.warp))) is not None
        and (iv.start < lp.start or iv.end > lp.end)
    )
    if outside:
        problems.append(
            f"{outside} executions of loop regions lie outside the loop's own interval: the "
            "pipeliner moved timers out of the loop"
        )
    return problems


def analyse(intervals: list[Interval], regions: list[Region], kernel: str) -> Regions:
    """Per-region cycles, the main loop's iteration time, exposed memory and overlap."""
    launches = sorted({iv.launch for iv in intervals})
    if not launches:
        return Regions(kernel=kernel, problems=["the trace has no region of this kernel"])
    last = launches[-1]  # the last launch: caches and clocks warmed by the earlier ones
    ivs = [iv for iv in intervals if iv.launch == last]
    by_name = {r.name: r for r in regions}
    for name in sorted({iv.region for iv in ivs} - set(by_name)):  # scopes we did not insert
        by_name[name] = regions_from_names([name])[0]
    warps = sorted({(iv.cta, iv.warp) for iv in ivs})
    per_warp: dict[tuple[int, int], list[Interval]] = defaultdict(list)
    for iv in ivs:
        per_warp[(iv.cta, iv.warp)].append(iv)
    kernel_cycles = _per_warp_total(per_warp, lambda iv: by_name[iv.region].kind == "kernel")
    if not kernel_cycles:  # no whole-kernel region: the span of each warp's events
        kernel_cycles = sum(max(i.end for i in v) - min(i.start for i in v) for v in per_warp.values()) / len(warps)
    loop_cycles = _per_warp_total(per_warp, lambda iv: by_name[iv.region].kind == "loop")
    looped = [r for r in by_name.values() if r.in_loop]
    if not loop_cycles and looped:
        loop_cycles = sum(
            max(i.end for i in v if by_name[i.region].in_loop) - min(i.start for i in v if by_name[i.region].in_loop)
            for v in per_warp.values()
            if any(by_name[i.region].in_loop for i in v)
        ) / len(warps)
    by_region: dict[str, list[Interval]] = defaultdict(list)
    for iv in ivs:
        by_region[iv.region].append(iv)
    stats = []
    for name, region in by_name.items():
        mine = by_region.get(name)
        if not mine:
            continue
        total = sum(iv.end - iv.start for iv in mine)
        per = total / len(warps)
        stats.append(
            RegionStat(
                name=name,
                kind=region.kind,
                side=SIDE_OF.get(region.kind, "other"),
                first_line=region.first_line or None,
                last_line=region.last_line or None,
                executions=len(mine),
                cycles_per_warp=round(per, 1),
                cycles_per_execution=round(total / len(mine), 1),
                share_of_kernel=round(per / kernel_cycles, 4) if kernel_cycles else None,
                share_of_loop=round(per / loop_cycles, 4) if loop_cycles and region.in_loop else None,
            )
        )
    trips = max((s.executions or 0 for s in stats if by_name[s.name].in_loop), default=0) / len(warps)
    out = Regions(
        kernel=kernel,
        launches=len(launches),
        ctas=len({c for c, _ in warps}),
        warps_per_cta=max(sum(1 for c2, _ in warps if c2 == c) for c, _ in warps),
        kernel_cycles_per_warp=round(kernel_cycles, 1),
        loop_cycles_per_warp=round(loop_cycles, 1) or None,
        loop_iterations=round(trips, 2) or None,
        regions=stats,
    )
    if loop_cycles and trips:
        out.iteration_cycles = round(loop_cycles / trips, 1)
        _set_loop_shares(out, by_name, loop_cycles)
    out.overlap, out.overlap_per_cta = _overlap(ivs, by_name)
    out.critical_path = _critical_path(per_warp, by_name)
    out.warp_group_wait_cycles = _group_waits(per_warp, by_name)
    out.problems = check(intervals, list(by_name.values()))
    return out


class ScopeTotal(NamedTuple):
    cycles: float  # summed over every recorded warp and execution
    normalized: float  # the same divided by every warp the launch ran (Proton's normalized_cycles)
    parents: frozenset[str]  # the scopes it ran inside (Proton nests scopes as they ran)


def scope_totals(tree, kernel: str) -> dict[str, ScopeTotal]:
    """Proton's per-scope totals of `kernel` (its tree, `data="tree"`: ROOT, then a node per kernel, then its
    scopes nested as they ran). A scope found in two places is summed."""
    out: dict[str, ScopeTotal] = {}

    def walk(node: dict, inside: bool, parent: str) -> None:
        name = node.get("frame", {}).get("name")
        metrics = node.get("metrics", {})
        if inside and "cycles" in metrics:
            was = out.get(name, ScopeTotal(0.0, 0.0, frozenset()))
            out[name] = ScopeTotal(
                was.cycles + float(metrics["cycles"]),
                was.normalized + float(metrics.get("normalized_cycles", 0)),
                was.parents | {parent},
            )
        for child in node.get("children", []):
            walk(child, inside or name == kernel, name if inside else "")

    for root in tree if isinstance(tree, list) else [tree]:
        if isinstance(root, dict) and "frame" in root:
            walk(root, False, "")
    return out


def analyse_totals(
    totals: dict[str, ScopeTotal], regions: list[Region], kernel: str, num_warps: int, recorded: int
) -> Regions:
    """`analyse` from per-scope totals (`scope_totals`) of one launch: cycles per recorded warp and the
    loop's shares; no counts, so no per-iteration figures, and no intervals, so no overlap or critical
    path (`check_totals` says what the totals can show wrong). Proton divides by every warp the launch
    ran (`num_warps` a CTA); `recorded` of them a CTA were timed."""
    if not totals:
        return Regions(kernel=kernel, source="totals", problems=["Proton's totals have no region of this kernel"])
    by_name = {r.name: r for r in regions}
    for name in sorted(set(totals) - set(by_name)):  # scopes we did not insert
        by_name[name] = regions_from_names([name])[0]
    per_warp = {name: total.normalized * num_warps / max(1, recorded) for name, total in totals.items()}
    kernel_cycles = sum(c for n, c in per_warp.items() if by_name[n].kind == "kernel")
    loop_cycles = sum(c for n, c in per_warp.items() if by_name[n].kind == "loop")
    if not kernel_cycles:  # no whole-kernel region: its top-level regions add up to about it
        kernel_cycles = sum(c for n, c in per_warp.items() if not by_name[n].in_loop)
    stats = [
        RegionStat(
            name=name,
            kind=by_name[name].kind,
            side=SIDE_OF.get(by_name[name].kind, "other"),
            first_line=by_name[name].first_line or None,
            last_line=by_name[name].last_line or None,
            cycles_per_warp=round(cycles, 1),
            share_of_kernel=round(cycles / kernel_cycles, 4) if kernel_cycles else None,
            share_of_loop=round(cycles / loop_cycles, 4) if loop_cycles and by_name[name].in_loop else None,
        )
        for name, cycles in per_warp.items()
    ]
    whole = totals.get(next((n for n in totals if by_name[n].kind == "kernel"), ""))
    cycles, normalized = (whole.cycles, whole.normalized) if whole else (0.0, 0.0)
    out = Regions(
        kernel=kernel,
        source="totals",
        launches=1,
        ctas=round(cycles / normalized / num_warps) if normalized and num_warps else 0,
        warps_per_cta=recorded,
        kernel_cycles_per_warp=round(kernel_cycles, 1),
        loop_cycles_per_warp=round(loop_cycles, 1) or None,
        regions=stats,
    )
    looped = _set_loop_shares(out, by_name, loop_cycles) if loop_cycles else 0.0
    out.problems = check_totals(totals, by_name, looped, loop_cycles)
    return out


def _set_loop_shares(out: Regions, by_name: dict[str, Region], loop_cycles: float) -> float:
    """The loop's memory, compute and unattributed shares into `out` (from its regions' cycles per warp);
    the cycles per warp its memory and compute regions add up to."""
    looped = [s for s in out.regions if by_name[s.name].in_loop]
    memory = sum(s.cycles_per_warp for s in looped if s.side == "memory")
    compute = sum(s.cycles_per_warp for s in looped if s.side == "compute")
    out.exposed_memory_share = round(memory / loop_cycles, 4)
    out.compute_share = round(compute / loop_cycles, 4)
    out.unattributed_share = round(max(0.0, 1 - (memory + compute) / loop_cycles), 4)
    return memory + compute


def check_totals(totals: dict[str, ScopeTotal], by_name: dict[str, Region], looped: float, loop: float) -> list[str]:
    """What per-scope totals can show wrong: a loop region that ran outside the loop's scope, or loop
    regions adding up to more than the loop (`looped` and `loop`: their cycles per warp)."""
    problems = []
    loop_name = next((n for n in totals if by_name[n].kind == "loop"), None)
    outside = sorted(n for n, t in totals.items() if loop_name and by_name[n].in_loop and loop_name not in t.parents)
    if outside:
        problems.append(
            f"loop regions ran outside the loop's own scope ({', '.join(outside)}): the pipeliner moved timers "
            "out of the loop"
        )
    if loop and looped > 1.05 * loop:
        problems.append(
            f"the loop's regions add up to {looped / loop:.0%} of the loop: timers overlap or the compiler moved one"
        )
    return problems


def _per_warp_total(per_warp, keep) -> float:
    totals = [sum(iv.end - iv.start for iv in v if keep(iv)) for v in per_warp.values()]
    return sum(totals) / len(totals) if any(totals) else 0.0


def _overlap(ivs: list[Interval], by_name: dict[str, Region]) -> tuple[float | None, dict[int, float]]:
    """Per CTA: time some warp is in a memory region while some warp is in a compute region, over
    the time either is; aggregated as the sum of both over all CTAs."""
    sides: dict[int, dict[str, list]] = defaultdict(lambda: {"memory": [], "compute": []})
    for iv in ivs:
        side = SIDE_OF.get(by_name[iv.region].kind)
        if side:
            sides[iv.cta][side].append((iv.start, iv.end))
    both = either = 0
    per_cta = {}
    for cta, s in sorted(sides.items()):
        m, c = _union(s["memory"]), _union(s["compute"])
        inter = _intersection(m, c)
        union = _length(m) + _length(c) - inter
        if union:
            per_cta[cta] = round(inter / union, 4)
        both, either = both + inter, either + union
    return (round(both / either, 4) if either else None), dict(list(per_cta.items())[:64])


def _critical_path(per_warp, by_name) -> list[dict]:
    """The warp that finished last in the slowest CTA, its time by region (outermost first)."""
    if not per_warp:
        return []
    span = {k: max(i.end for i in v) - min(i.start for i in v) for k, v in per_warp.items()}
    key = max(span, key=lambda k: span[k])
    totals: dict[str, int] = defaultdict(int)
    for iv in per_warp[key]:
        totals[iv.region] += iv.end - iv.start
    return [
        {
            "cta": key[0],
            "warp": key[1],
            "region": name,
            "kind": by_name[name].kind,
            "cycles": cycles,
            "share": round(cycles / span[key], 4) if span[key] else None,
        }
        for name, cycles in sorted(totals.items(), key=lambda kv: -kv[1])
    ]


def _group_waits(per_warp, by_name) -> dict[str, float] | None:
    """Warp specialisation: when warp groups run different regions, the cycles each group spends
    in none of its regions while another group is in one of its own (waiting on the other)."""
    groups: dict[tuple[int, int], list[Interval]] = defaultdict(list)
    for (cta, warp), v in per_warp.items():
        groups[(cta, warp // WARPS_PER_GROUP)] += v
    inner = lambda v: {i.region for i in v if by_name[i.region].kind not in ("kernel", "loop")}  # noqa: E731
    names = {g: frozenset(inner(v)) for g, v in groups.items()}
    if len({n for n in names.values()}) <= 1 or len({g for _, g in groups}) <= 1:
        return None
    waits: dict[str, list[float]] = defaultdict(list)
    for (cta, g), v in groups.items():
        own = _union([(i.start, i.end) for i in v if by_name[i.region].kind not in ("kernel", "loop")])
        others = _union(
            [
                (i.start, i.end)
                for (c2, g2), w in groups.items()
                if c2 == cta and g2 != g
                for i in w
                if by_name[i.region].kind not in ("kernel", "loop")
            ]
        )
        span = (min(i.start for i in v), max(i.end for i in v))
        idle = _gaps(own, span)  # sorted and disjoint already
        waits[f"group {g}"].append(_intersection(idle, others))
    return {k: round(sum(v) / len(v), 1) for k, v in sorted(waits.items())}


def _gaps(spans: list[tuple[int, int]], within: tuple[int, int]) -> list[tuple[int, int]]:
    out, at = [], within[0]
    for a, b in spans:
        if a > at:
            out.append((at, a))
        at = max(at, b)
    if at < within[1]:
        out.append((at, within[1]))
    return out


# --- what people look at ---------------------------------------------------------------------------


def _shown(intervals: list[Interval], max_ctas: int) -> list[Interval]:
    """What the pictures show: the last launch's first `max_ctas` CTAs."""
    last = max((iv.launch for iv in intervals), default=0)
    ctas = set(sorted({iv.cta for iv in intervals if iv.launch == last})[:max_ctas])
    return [iv for iv in intervals if iv.launch == last and iv.cta in ctas]


def perfetto(intervals: list[Interval], regions: list[Region], path: Path, max_ctas: int = 8) -> Path:
    """A Chrome/Perfetto trace: one process per CTA, one track per warp, the regions as slices
    (named with their lines). Times are in cycles, written as microseconds / 1000."""
    by_name = {r.name: r for r in regions}
    shown = _shown(intervals, max_ctas)
    events = [
        {"name": "process_name", "ph": "M", "pid": cta, "args": {"name": f"CTA {cta}"}}
        for cta in sorted({iv.cta for iv in shown})
    ]
    for iv in shown:
        region = by_name.get(iv.region)
        lines = f" (lines {region.first_line}-{region.last_line})" if region and region.first_line else ""
        events.append(
            {
                "name": iv.region,
                "cat": region.kind if region else "user",
                "ph": "X",
                "pid": iv.cta,
                "tid": iv.warp,
                "ts": iv.start / 1000,
                "dur": (iv.end - iv.start) / 1000,
                "args": {"cycles": iv.end - iv.start, "sm": iv.sm, "where": lines.strip()},
            }
        )
    path.write_text(
        json.dumps(
            {
                "traceEvents": events,
                "displayTimeUnit": "ns",
                "otherData": {"time unit": "1 us on the axis = 1000 SM cycles"},
            }
        )
    )
    return path


COLOURS = {
    "load": "#1f77b4",
    "store": "#17becf",
    "dot": "#d62728",
    "math": "#ff7f0e",
    "prologue": "#bbbbbb",
    "epilogue": "#888888",
    "user": "#2ca02c",
}


def render_png(intervals: list[Interval], regions: list[Region], path: Path, title: str, max_ctas: int = 2) -> Path:
    """A picture of a few CTAs' warps: one row per warp, regions colour-coded by kind."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    by_name = {r.name: r for r in regions}
    per_row: dict[tuple[int, int], list[Interval]] = defaultdict(list)
    for iv in _shown(intervals, max_ctas):
        per_row[(iv.cta, iv.warp)].append(iv)
    rows = sorted(per_row)
    fig, ax = plt.subplots(figsize=(12, 0.35 * len(rows) + 1.5))
    kinds = set()
    for y, row in enumerate(rows):
        for iv in per_row[row]:
            kind = by_name[iv.region].kind if iv.region in by_name else "user"
            if kind in ("kernel", "loop"):  # outer regions: a thin line under the row
                ax.plot([iv.start, iv.end], [y - 0.42, y - 0.42], color="black", linewidth=0.6)
                continue
            kinds.add(kind)
            ax.broken_barh([(iv.start, max(iv.end - iv.start, 1))], (y - 0.35, 0.7), color=COLOURS.get(kind, "#999"))
    ax.set_yticks(range(len(rows)), [f"CTA {c} warp {w}" for c, w in rows])
    ax.set_xlabel("SM cycles since the CTA's first event")
    ax.set_title(title)
    ax.invert_yaxis()
    ax.legend(
        handles=[Patch(color=COLOURS.get(k, "#999"), label=k) for k in sorted(kinds)], loc="upper right", fontsize=8
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
