"""Turn the recorder's per-process files into ranked kernel profiles and evidence."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import IntelliPerfError
from ..models import AccessSite, Evidence, KernelProfile, LaunchSignature, StaticFact, WaveFootprint

TRACE_BACKEND = "interpreter-trace"  # the evidence each part of a recording gives
STATIC_BACKEND = "static"


@dataclass
class Recording:
    """Everything the recorder wrote for one run of the command."""

    processes_started: int
    records: list[dict]
    errors: list[str]
    kernels: list[KernelProfile] = field(default_factory=list)
    evidence: dict[str, list[Evidence]] = field(default_factory=dict)  # per kernel id: trace, then static
    stopped_at_s: float | None = None  # the program was stopped at this time limit before it ended

    def evidence_of(self, kernel_id: str) -> list[Evidence]:
        return self.evidence.get(kernel_id, [])

    def sass_tables(self) -> dict[str, list]:
        """Kernel name -> the SASS line table of the binary that ran (first process that kept one)."""
        tables: dict[str, list] = {}
        for record in self.records:
            for k in record["kernels"]:
                if k.get("sass_lines"):
                    tables.setdefault(k["name"], k["sass_lines"])
        return tables

    @property
    def launches(self) -> int:
        return sum(r["launches"] for r in self.records)

    def first(self, key: str, default: str) -> str:
        """A per-process field from the process that launched the most kernels."""
        busiest = max(self.records, key=lambda r: r["launches"], default=None)
        return busiest[key] if busiest else default


def load_recording(record_dir: Path) -> Recording:
    started = len(list(record_dir.glob("started-*")))
    errors = [p.read_text().strip() for p in sorted(record_dir.glob("error-*.txt"))]
    records = []
    for path in sorted(record_dir.glob("record-*.json")):
        try:
            records.append(json.loads(path.read_text()))
        except (OSError, ValueError) as exc:
            raise IntelliPerfError(f"could not read the recorder's output {path}: {exc}") from None
    recording = Recording(started, records, errors)
    recording.kernels = rank_kernels(records)
    recording.evidence = collect_evidence(records)
    return recording


def kernel_id(name: str, file: str | None, line: int | None) -> str:
    return name if file is None else f"{name}@{file}:{line}"


def rank_kernels(records: list[dict]) -> list[KernelProfile]:
    """Merge kernels across processes and rank them by total time, largest first."""
    merged: dict[str, dict] = {}
    for record in records:
        for k in record["kernels"]:
            key = kernel_id(k["name"], k["file"], k["line"])
            into = merged.setdefault(
                key,
                {
                    "name": k["name"],
                    "file": k["file"],
                    "line": k["line"],
                    "launches": 0,
                    "timed_launches": 0,
                    "total_time_s": 0.0,
                    "signatures": [],
                    "signatures_dropped": 0,
                },
            )
            into["launches"] += k["launches"]
            into["timed_launches"] += k["timed_launches"]
            into["total_time_s"] += k["total_time_s"]
            into["signatures"] += k["signatures"]
            into["signatures_dropped"] += k["signatures_dropped"]
    names = [m["name"] for m in merged.values()]
    grand_total = sum(m["total_time_s"] for m in merged.values()) or 1.0
    profiles = []
    for m in merged.values():
        # Two kernels with one name (in different files) keep their names apart in reports.
        name = m["name"] if names.count(m["name"]) == 1 else f"{m['name']} ({Path(m['file'] or '?').name}:{m['line']})"
        signatures = sorted((LaunchSignature(**s) for s in m["signatures"]), key=lambda s: -s.launches)
        profiles.append(
            KernelProfile(
                id=kernel_id(m["name"], m["file"], m["line"]),
                name=name,
                file=m["file"],
                line=m["line"],
                launches=m["launches"],
                timed_launches=m["timed_launches"],
                total_time_s=m["total_time_s"],
                mean_time_s=m["total_time_s"] / max(m["launches"], 1),
                share=m["total_time_s"] / grand_total,
                signatures=signatures,
                signatures_dropped=m["signatures_dropped"],
            )
        )
    return sorted(profiles, key=lambda p: (-p.total_time_s, p.name))


def collect_evidence(records: list[dict]) -> dict[str, list[Evidence]]:
    """Per kernel id: the interpreter trace merged across processes and launches, then the
    static view (from the first process that compiled it)."""
    traces: dict[str, Evidence] = {}
    static: dict[str, Evidence] = {}
    for record in records:
        for k in record["kernels"]:
            key = kernel_id(k["name"], k["file"], k["line"])
            trace = k.get("trace")
            if trace:
                ev = traces.setdefault(key, Evidence(backend=TRACE_BACKEND, modelled=True, kernel=k["name"]))
                ev.launches_traced += trace["launches_traced"]
                ev.programs_total += trace["programs_total"]
                ev.programs_sampled += trace["programs_sampled"]
                ev.sites += [AccessSite(**s) for s in trace["sites"]]
                ev.notes += trace["notes"]
                if trace.get("wave") and ev.wave is None:
                    ev.wave = WaveFootprint(**trace["wave"])
            view = k.get("static")
            if view and key not in static:
                static[key] = Evidence(
                    backend=STATIC_BACKEND,
                    modelled=False,
                    kernel=k["name"],
                    facts=[StaticFact(**f) for f in view["facts"]],
                    notes=view["notes"],
                    resources=view.get("resources", {}),
                )
    for ev in traces.values():
        ev.sites = merge_sites(ev.sites)
    return {key: [ev for ev in (traces.get(key), static.get(key)) if ev is not None] for key in {**traces, **static}}


def merge_sites(sites: list[AccessSite]) -> list[AccessSite]:
    """One entry per (file, line, op): sums add up, maxima take the max, means are re-weighted."""
    merged: dict[tuple, AccessSite] = {}
    for s in sites:
        key = (s.file, s.line, s.op)
        m = merged.get(key)
        if m is None:
            merged[key] = s.model_copy()
            continue
        calls = m.calls + s.calls
        m.lanes_per_address_mean = _weighted(m.lanes_per_address_mean, m.calls, s.lanes_per_address_mean, s.calls)
        m.ops_per_address_mean = _weighted(m.ops_per_address_mean, m.calls, s.ops_per_address_mean, s.calls)
        m.lanes_per_address_max = _max(m.lanes_per_address_max, s.lanes_per_address_max)
        m.ops_per_address_max = _max(m.ops_per_address_max, s.ops_per_address_max)
        m.distinct_addresses = _max(m.distinct_addresses, s.distinct_addresses)
        m.other_programs_per_address = _max(m.other_programs_per_address, s.other_programs_per_address)
        m.updates_per_address = _max(m.updates_per_address, s.updates_per_address)
        m.lanes_per_program = _weighted(m.lanes_per_program, m.calls, s.lanes_per_program, s.calls)
        m.calls, m.lanes = calls, m.lanes + s.lanes
        m.lanes_issued = None if m.lanes_issued is None or s.lanes_issued is None else m.lanes_issued + s.lanes_issued
        m.bytes_requested += s.bytes_requested
        m.sectors += s.sectors
        m.sector_efficiency = min(1.0, m.bytes_requested / (32 * m.sectors)) if m.sectors else 1.0
        if m.lane_stride_elems is None:
            m.lane_stride_elems, m.lane_stride_share = s.lane_stride_elems, s.lane_stride_share
    return sorted(merged.values(), key=lambda s: (s.file, s.line, s.op))


def _weighted(a, wa, b, wb):
    if a is None or b is None:
        return a if b is None else b
    return (a * wa + b * wb) / max(wa + wb, 1)


def _max(a, b):
    return b if a is None else a if b is None else max(a, b)
