"""Region timers: regions from the kernel's syntax, Proton traces recorded on a GPU, the analysis,
the timeline, and the overlap formula on timers and on the static view.

tests/fixtures/proton: <example>.chrome_trace are `intelliperf regions`' own traces on an H200
(Triton 3.6; 256x256x1024 GEMM, 1x1x512 attention: 4 CTAs x 4 warps, complete);
attention_dropped.chrome_trace is an H100 probe with Proton's default shared buffer, whose
earliest events were dropped (benchmarks/regions_gpu.sh makes the former); attention.hatchet is
Proton's per-scope totals (data="tree") of examples/overlap/attention.py at 4x16x4096 on the H100
(Triton 3.6, warp 0 of 4 recorded), from `intelliperf regions` with that data."""

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from intelliperf.delivery import report
from intelliperf.formulas.overlap import Overlap
from intelliperf.models import Evidence, KernelProfile, LaunchSignature, StaticFact
from intelliperf.profiling import region_timers, timeline
from intelliperf.profiling.region_timers import TimerOptions
from intelliperf.profiling.regions import Region, instrument
from intelliperf.workload.runner import PassRun

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "proton"
EXAMPLES = ROOT / "examples" / "overlap"


def _regions(name: str) -> list[Region]:
    return [Region(**r) for r in json.loads((FIXTURES / "regions.json").read_text())[name]]


def _analysed(name: str):
    intervals = timeline.parse_trace((FIXTURES / f"{name}.chrome_trace").read_text())
    return intervals, timeline.analyse(intervals, _regions(name), "gemm_kernel")


def test_regions_of_the_gemm_come_from_its_syntax():
    done = instrument((EXAMPLES / "gemm.py").read_text(), "gemm_kernel")
    kinds = [(r.name, r.kind, r.first_line, r.last_line, r.in_loop) for r in done.regions]
    assert kinds == [
        ("kernel", "kernel", 21, 44, False),
        ("prologue", "prologue", 21, 34, False),
        ("loop", "loop", 35, 40, False),
        ("load@36", "load", 36, 37, True),
        ("dot@38", "dot", 38, 38, True),
        ("epilogue", "epilogue", 41, 44, False),
    ]
    assert done.loop_line == 35
    tree = ast.parse(done.text)  # still Python; the alias is imported once, after the docstring
    assert done.text.count("import triton.profiler.language as _intelliperf_pl") == 1
    kernel = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "gemm_kernel")
    calls = [ast.unparse(n) for n in ast.walk(kernel) if isinstance(n, ast.Call) and "scope" in ast.unparse(n.func)]
    assert calls.count("_intelliperf_pl.enter_scope('load@36')") == 1
    assert calls.count("_intelliperf_pl.exit_scope('kernel')") == 1
    # pointer increments stay outside every region: the loop body's last two statements
    assert '_intelliperf_pl.exit_scope("dot@38")\n        a_ptrs += BLOCK_K * stride_ak' in done.text


def test_outer_only_and_user_scopes():
    outer = instrument((EXAMPLES / "attention.py").read_text(), "attention_kernel", inner=False)
    assert [r.kind for r in outer.regions] == ["kernel", "prologue", "loop", "epilogue"]
    own = (
        "import triton\nimport triton.profiler.language as pl\n@triton.jit\ndef k(x):\n"
        "    pl.enter_scope('mine')\n    pl.exit_scope('mine')\n"
    )
    done = instrument(own, "k")
    assert done.user_scopes and done.text == own and not done.regions
    with pytest.raises(ValueError, match="no function nope"):
        instrument(own, "nope")


def test_a_loop_in_a_jit_helper_is_left_to_the_static_view(tmp_path):
    """The attention tutorial's K/V loop lives in `_attn_fwd_inner`. Timing the kernel's own
    statements measured one call at 99 % of the kernel (H100); timing the helper's loop traced
    every iteration of 8192 programs and ran past 8 minutes. The formulas' pass leaves such a
    kernel out before anything runs, and says why."""
    from intelliperf.profiling import region_timers
    from intelliperf.profiling.regions import layout_in

    program = ROOT / "benchmarks" / "corpus" / "triton_attention_fwd.py"
    layout = layout_in(program.read_text(), "_attn_fwd")
    assert layout.via == ("_attn_fwd_inner", 69) and layout.loop_line == 24
    profile = KernelProfile(
        id="a",
        name="_attn_fwd",
        file=str(program),
        line=42,
        launches=1,
        timed_launches=1,
        total_time_s=1.0,
        mean_time_s=1.0,
        share=1.0,
        signatures=[],
    )
    done = region_timers.collect(
        PassRun(["false"], program.parent, 30), [profile], root=program.parent, timers=TimerOptions(loops_only=True)
    )  # the formulas' pass
    assert not done.evidence and any("helper _attn_fwd_inner" in n and "no region timers" in n for n in done.notes)


def test_gpu_gemm_trace_shows_the_unpipelined_loop_waiting_on_memory():
    intervals, r = _analysed("gemm")
    assert {iv.cta for iv in intervals} == {0, 1, 2, 3} and r.launches == 1
    assert r.warps_per_cta == 4 and r.loop_iterations == 16  # K / BLOCK_K = 1024 / 64
    assert timeline.check(intervals, _regions("gemm")) == []  # the tool's global buffer kept every event
    # measured: a load region of ~900 cycles and a dot of ~710 per iteration of ~1,810
    load = next(s for s in r.regions if s.name == "load@36")
    dot = next(s for s in r.regions if s.name == "dot@38")
    assert 850 < load.cycles_per_execution < 950 and 680 < dot.cycles_per_execution < 750
    assert 1700 < r.iteration_cycles < 1900 and 0.45 < r.exposed_memory_share < 0.55
    assert r.overlap is not None and r.overlap < 0.05  # warps of a CTA load together, then compute together


def test_gpu_pipelined_gemm_trace_hides_memory():
    _, r = _analysed("gemm_pipelined")
    assert r.exposed_memory_share < 0.05 and r.iteration_cycles < 700
    assert r.unattributed_share > 0.5  # the pipeliner's waits sit between the statements


def test_gpu_attention_trace_is_compute_bound_with_memory_exposed():
    intervals = timeline.parse_trace((FIXTURES / "attention.chrome_trace").read_text())
    r = timeline.analyse(intervals, _regions("attention"), "attention_kernel")
    assert r.loop_iterations == 8 and timeline.check(intervals, _regions("attention")) == []
    math = next(s for s in r.regions if s.name == "math@33")  # the softmax statements: ~3,140 of ~4,870 cycles
    assert 0.6 < math.cycles_per_execution / r.iteration_cycles < 0.7
    assert r.compute_share > 0.8 and 0.1 < r.exposed_memory_share < 0.13


def test_dropped_events_are_reported_not_analysed_as_if_complete():
    intervals = timeline.parse_trace((FIXTURES / "attention_dropped.chrome_trace").read_text())
    problems = timeline.check(intervals, _regions("attention"))
    assert any("counts that do not match" in p for p in problems)
    moved = [timeline.Interval(0, 0, 0, 0, "load@36", 100, 50)]
    assert "end before they start" in timeline.check(moved, _regions("gemm"))[0]


def test_launches_are_told_apart():
    text = (FIXTURES / "gemm.chrome_trace").read_text()
    data = json.loads(text)
    twice = json.dumps({"traceEvents": data["traceEvents"] + data["traceEvents"]})
    launches = {iv.launch for iv in timeline.parse_trace(twice)}
    assert launches == {0, 1}
    # The scheduler places CTAs on other SMs in the next launch: CTA ids, not (SM, CTA), repeat.
    ctas = sorted({re.match(r".*CTA(\d+)$", e["pid"])[1] for e in data["traceEvents"] if e.get("ph") == "X"})
    moved = json.loads(json.dumps(data["traceEvents"]))
    for e in moved:
        if e.get("ph") == "X":
            e["pid"] = re.sub(r"CTA(\d+)$", lambda m: f"CTA{ctas[(ctas.index(m[1]) + 1) % len(ctas)]}", e["pid"])
    intervals = timeline.parse_trace(json.dumps({"traceEvents": data["traceEvents"] + moved}))
    per_launch = [{iv.cta for iv in intervals if iv.launch == n} for n in (0, 1)]
    assert {iv.launch for iv in intervals} == {0, 1} and per_launch[0] == per_launch[1]


def test_the_event_pattern_reads_what_json_reads():
    """Proton's traces are read by a pattern over its fixed key order; a trace it does not read in
    full (keys in another order, a quote in a scope name) is read as JSON, with the same intervals."""
    for name in ("gemm", "gemm_pipelined", "attention", "attention_dropped"):
        text = (FIXTURES / f"{name}.chrome_trace").read_text()
        events = json.loads(text)["traceEvents"]
        reordered = json.dumps({"traceEvents": [dict(reversed(list(e.items()))) for e in events]})
        assert len(timeline._EVENT.findall(text)) == len(events) and not timeline._EVENT.findall(reordered)
        assert timeline.parse_trace(reordered) == timeline.parse_trace(text) != []
    events = json.loads((FIXTURES / "gemm.chrome_trace").read_text())["traceEvents"]
    events[5]["name"] = 'load "a"'
    intervals = timeline.parse_trace(json.dumps({"traceEvents": events}))
    assert len(intervals) == len(events) and intervals[5].region == 'load "a"'


def _with_warps(*warps: int | None) -> KernelProfile:
    sig = dict(grid=[64, 1, 1], num_stages=3, args=[], launches=1, total_time_s=1e-3)
    return _profile("gemm.py").model_copy(update={"signatures": [LaunchSignature(num_warps=w, **sig) for w in warps]})


def test_region_timers_record_the_first_warp_of_each_warp_group():
    mode = region_timers.DEFAULT_MODE
    text = {"gemm.py": (EXAMPLES / "gemm.py").read_text()}
    sampled = lambda *warps: region_timers.sampling(mode, [_with_warps(*warps)], text, False)  # noqa: E731
    assert sampled(4) == (f"{mode}:sampling_strategy=selective:sampling_options=0", [0])
    assert sampled(8, 16)[1] == [0, 4] and sampled(16)[1] == [0, 4, 8, 12] and sampled(2)[1] == [0]
    assert sampled(None)[1] == [0]  # warp 0 exists in every kernel
    assert sampled(1) == (mode, [])  # one warp: nothing to leave out
    assert region_timers.sampling(mode, [_with_warps(8)], text, True) == (mode, [])
    own = f"{mode}:sampling_strategy=selective:sampling_options=1"
    assert region_timers.sampling(own, [_with_warps(8)], text, False) == (own, [])
    # warp specialisation adds warps beyond num_warps that run the other partition's statements
    specialised = {
        "k.py": text["gemm.py"].replace("range(0, tl.cdiv(K, BLOCK_K))", "tl.range(0, 8, warp_specialize=True)")
    }
    assert specialised["k.py"] != text["gemm.py"]
    assert region_timers.sampling(mode, [_with_warps(8)], specialised, False) == (mode, [])
    _, analysed = _analysed("gemm")
    analysed.recorded_warps = [0, 4]
    assert "warp 0, 4 (the first of each warp group)" in "\n".join(report.regions_markdown(analysed))


def test_timeline_files(tmp_path):
    intervals, _ = _analysed("gemm")
    trace = json.loads(timeline.perfetto(intervals, _regions("gemm"), tmp_path / "t.json").read_text())
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert {e["tid"] for e in slices} == {0, 1, 2, 3} and all(e["dur"] >= 0 for e in slices)
    assert any(e["args"]["where"] == "(lines 36-37)" for e in slices)
    png = timeline.render_png(intervals, _regions("gemm"), tmp_path / "t.png", "gemm")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _profile(example: str) -> KernelProfile:
    return KernelProfile(
        id=f"gemm_kernel@{example}",
        name="gemm_kernel",
        file=str(EXAMPLES / example),
        line=18,
        launches=1,
        timed_launches=1,
        total_time_s=1e-3,
        mean_time_s=1e-3,
        share=1.0,
        signatures=[],
    )


def _static(example: str, kind: str, lines: tuple[int, int]) -> Evidence:
    facts = [
        StaticFact(
            target="cuda:90",
            file=str(EXAMPLES / example),
            line=n,
            kind=kind,
            count=8,
            instruction="ld.global.v4.b32" if kind == "load" else "cp.async.cg.shared.global",
        )
        for n in lines
    ]
    return Evidence(backend="static", modelled=True, kernel="gemm_kernel", facts=facts)


def test_overlap_formula_on_timers():
    cases = (
        ("gemm.py", "gemm", "load", (36, 37), True),
        ("gemm_pipelined.py", "gemm_pipelined", "async_copy", (35, 36), False),
    )
    for example, name, kind, lines, flagged in cases:
        _, r = _analysed(name)
        timed = Evidence(backend="proton", modelled=False, kernel="gemm_kernel", regions=r)
        finding = Overlap().diagnose(_profile(example), [timed, _static(example, kind, lines)])
        assert finding.present is flagged and not finding.modelled
        assert finding.metric.name == "exposed_memory_share" and finding.metric.better == "lower"
    # With a stricter threshold the pipelined trace alone (3 % in its load statements, which only issue
    # the copies) is flagged; the static view's asynchronous copies are what clears it.
    strict = Overlap(min_exposed=0.02)
    assert strict.diagnose(_profile("gemm_pipelined.py"), [timed]).present
    assert not strict.diagnose(
        _profile("gemm_pipelined.py"), [timed, _static("gemm_pipelined.py", "async_copy", (35, 36))]
    ).present
    assert any(
        line.line == 36 and "load@36" in line.detail
        for line in Overlap()
        .diagnose(
            _profile("gemm.py"), [Evidence(backend="proton", modelled=False, kernel="g", regions=_analysed("gemm")[1])]
        )
        .lines
    )


def _attention_profile(ctas: int, warps: int = 4) -> KernelProfile:
    sig = LaunchSignature(
        grid=[ctas // 64, 64, 1], num_warps=warps, num_stages=1, args=[], launches=1, total_time_s=1.0
    )
    return _profile("gemm.py").model_copy(
        update={"name": "attention_kernel", "file": str(EXAMPLES / "attention.py"), "signatures": [sig]}
    )


def test_large_grids_read_protons_per_scope_totals():
    """Past TRACE_ROWS rows (CTAs x recorded warps) the pass reads Proton's per-scope totals, not its trace:
    the same shares (the H100 attention run's trace said 13.6 % memory, 81.1 % compute; its totals, another
    run, 13.3 % and 81.4 %), cycles per recorded warp (Proton divides by every warp the launch ran), and
    no counts: no per-iteration figures. Reports and the overlap formula say so."""
    big, small = _attention_profile(2048), _attention_profile(1024)
    assert region_timers.data_kind("auto", [big], [0], True)[0] == "tree"
    assert "attention_kernel launches 2,048 rows" in region_timers.data_kind("auto", [big], [0], True)[1]
    assert region_timers.data_kind("auto", [small], [0], True) == ("trace", "")
    assert region_timers.data_kind("auto", [small], [], True)[0] == "tree"  # every warp recorded: 4,096 rows
    assert region_timers.data_kind("trace", [big], [0], True) == ("trace", "")
    assert region_timers.data_kind("auto", [big], [0], False) == ("trace", "")  # a full run: its launches add up
    assert region_timers.data_kind("tree", [small], [0], True)[0] == "tree"

    totals = timeline.scope_totals(json.loads((FIXTURES / "attention.hatchet").read_text()), "attention_kernel")
    assert set(totals) == {"kernel", "prologue", "loop", "load@30", "dot@32", "math@33", "dot@38", "epilogue"}
    assert timeline.scope_totals(json.loads((FIXTURES / "attention.hatchet").read_text()), "other_kernel") == {}
    r = timeline.analyse_totals(totals, _regions("attention"), "attention_kernel", num_warps=4, recorded=1)
    assert r.source == "totals" and r.ctas == 2048 and r.warps_per_cta == 1
    assert r.exposed_memory_share == pytest.approx(0.1331, abs=1e-4) and r.compute_share == pytest.approx(
        0.8135, abs=1e-4
    )
    assert r.kernel_cycles_per_warp == pytest.approx(361_262, rel=1e-4)  # the trace's run: 361,806
    assert r.iteration_cycles is None and r.loop_iterations is None and r.overlap is None
    assert all(x.executions is None and x.cycles_per_execution is None for x in r.regions)
    load = next(x for x in r.regions if x.name == "load@30")
    assert load.side == "memory" and load.share_of_loop == pytest.approx(0.1331, abs=1e-4) and r.problems == []
    # a loop region Proton found outside the loop's scope (the pipeliner moved its timers) is said
    tree = json.loads((FIXTURES / "attention.hatchet").read_text())
    kernel_scope = tree[0]["children"][0]["children"][0]
    loop = next(c for c in kernel_scope["children"] if c["frame"]["name"] == "loop")
    moved = next(c for c in loop["children"] if c["frame"]["name"] == "load@30")
    loop["children"].remove(moved)
    kernel_scope["children"].append(moved)
    wrong = timeline.analyse_totals(
        timeline.scope_totals(tree, "attention_kernel"), _regions("attention"), "attention_kernel", 4, 1
    )
    assert wrong.problems == [
        "loop regions ran outside the loop's own scope (load@30): the pipeliner moved timers out of the loop"
    ]

    timed = Evidence(
        backend="proton", modelled=False, kernel="attention_kernel", regions=r.model_copy(update={"loop_line": 28})
    )
    finding = Overlap().diagnose(big, [timed, _static("attention.py", "load", (30, 31))])
    assert finding.present and finding.metric.value == pytest.approx(0.1331, abs=1e-4)
    assert "cycles per warp (Proton's per-scope totals); 13% in memory statements" in finding.explanation
    assert any(line.line == 30 and "cycles per warp (memory, measured)" in line.detail for line in finding.lines)
    markdown = "\n".join(report.regions_markdown(r))
    assert "Proton's per-scope totals: no per-iteration figures" in markdown and "| `load@30` | load |" in markdown
    from intelliperf.delivery.console import regions_table

    assert "Proton's totals" in str(regions_table(r).title)


def test_the_pass_reads_protons_totals_into_evidence_and_checks_its_grid(tmp_path):
    """`read_totals` on the H100 run's totals: evidence per timed kernel; a grid the totals do not imply
    (another launch was recorded than the one timed) is said; a failed run gives no evidence, a note."""
    from types import SimpleNamespace

    from intelliperf.profiling.regions import Instrumented

    table = Instrumented(text="", regions=_regions("attention"), loop_line=28, notes=[])
    for ctas, said in ((2048, []), (4096, ["Proton's totals imply 2,048 CTAs where the recorded launches had 4,096"])):
        out, profile = region_timers.TimerRun(), _attention_profile(ctas)
        read = region_timers._Read([profile], {profile.id: table}, [0], None, tmp_path, False)
        done = SimpleNamespace(returncode=0, tail=[])
        assert region_timers.read_totals(out, FIXTURES / "attention.hatchet", done, read) == 5955
        r = out.evidence[profile.id].regions
        assert r.source == "totals" and r.loop_line == 28 and r.recorded_warps == [0]
        assert [p.split(":")[0] for p in r.problems] == said
        assert r.files == {"proton_totals": str(FIXTURES / "attention.hatchet")}
    # autotuned: its 8-warp config ran only in autotuning's benchmark; the program ran the 4-warp one
    tuned = _attention_profile(2048)
    sigs = [
        tuned.signatures[0].model_copy(update={"num_warps": w, "launches": n, "tuning_launches": t})
        for w, n, t in ((8, 5, 5), (4, 7, 2))
    ]
    tuned = tuned.model_copy(update={"signatures": sigs})
    out = region_timers.TimerRun()
    read = region_timers._Read([tuned], {tuned.id: table}, [0], None, None, False)
    region_timers.read_totals(out, FIXTURES / "attention.hatchet", SimpleNamespace(returncode=0, tail=[]), read)
    r = out.evidence[tuned.id].regions
    assert r.problems == [] and r.kernel_cycles_per_warp == pytest.approx(361_262, rel=1e-4)
    failed = region_timers.TimerRun()
    crashed = SimpleNamespace(returncode=1, tail=["RuntimeError: out of memory"])
    assert region_timers.read_totals(failed, FIXTURES / "attention.hatchet", crashed, read) is None
    assert not failed.evidence and "wrote no totals (exit 1): RuntimeError: out of memory" in failed.notes[0]


def test_a_run_told_the_originals_launches_is_read_again_with_the_candidates(tmp_path):
    """The region-timer run beside a candidate's validation is told the original's launches (the candidate's
    are known after its run). `reread` reads its totals with the grid and warps the candidate's own run
    recorded: Proton divides by the warps the launch ran, so read with the original's 4 warps an 8-warp launch
    gives half the cycles per warp and twice the CTAs (said as a problem); read again, the cycles and CTAs are
    the launch's. The shares are the same either way. Warp ids past a launch's warps record nothing."""
    from types import SimpleNamespace

    from intelliperf.profiling.regions import Instrumented

    tree = json.loads((FIXTURES / "attention.hatchet").read_text())

    def halve(node: dict) -> None:  # the same cycles, divided by twice the warps: the launch ran 8 a CTA
        if "normalized_cycles" in node.get("metrics", {}):
            node["metrics"]["normalized_cycles"] /= 2
        for child in node.get("children", []):
            halve(child)

    for root in tree:
        halve(root)
    totals = tmp_path / "proton.hatchet"
    totals.write_text(json.dumps(tree))
    table = Instrumented(text="", regions=_regions("attention"), loop_line=28, notes=[])
    original = _attention_profile(2048, warps=4)
    candidate = _attention_profile(2048, warps=8).model_copy(update={"id": "candidate"})
    run = region_timers.TimerRun()
    read = region_timers._Read([original], {original.id: table}, [0], None, None, False)
    region_timers.read_totals(run, totals, SimpleNamespace(returncode=0, tail=[]), read)
    told = run.evidence[original.id].regions
    assert told.ctas == 4096 and told.kernel_cycles_per_warp == pytest.approx(361_262 / 2, rel=1e-4)
    assert told.problems[0].startswith("Proton's totals imply 4,096 CTAs where the recorded launches had 2,048")

    again = region_timers.reread(run, original, candidate)
    assert again is not None and again.kernel == "attention_kernel" and again.regions is not None
    r = again.regions
    assert r.ctas == 2048 and r.problems == [] and r.loop_line == 28 and r.recorded_warps == [0]
    assert r.kernel_cycles_per_warp == pytest.approx(361_262, rel=1e-4)
    assert r.exposed_memory_share == told.exposed_memory_share == pytest.approx(0.1331, abs=1e-4)
    assert run.evidence[original.id].regions is told  # the run's own evidence is left as it was

    # told 8 warps (warps 0 and 4 recorded), the candidate ran 4: only warp 0 was timed in each CTA
    wide = region_timers.TimerRun()
    read8 = region_timers._Read([candidate], {candidate.id: table}, [0, 4], None, None, False)
    region_timers.read_totals(wide, FIXTURES / "attention.hatchet", SimpleNamespace(returncode=0, tail=[]), read8)
    narrow = region_timers.reread(wide, candidate, original)
    assert narrow is not None and narrow.regions is not None
    assert narrow.regions.recorded_warps == [0] and narrow.regions.warps_per_cta == 1
    assert narrow.regions.ctas == 2048 and narrow.regions.kernel_cycles_per_warp == pytest.approx(361_262, rel=1e-4)
    # nothing to read again: a run that read no totals, or did not time that kernel
    assert region_timers.reread(region_timers.TimerRun(), original, candidate) is None
    assert region_timers.reread(run, candidate, original) is None


def test_the_run_beside_the_validation_gives_the_metric_unless_the_candidate_autotunes(tmp_path, monkeypatch):
    """`optimization.measure.measure_candidate` takes the region-timer run made beside the validation, read again
    with the candidate's launches (here 8 warps where the original had 4), without another run. A candidate that
    autotunes is run once more with the config its validation run chose pinned: the run beside, told none,
    timed its configs and may have chosen another."""
    from types import SimpleNamespace

    from intelliperf.optimization import measure as loop_measure
    from intelliperf.profiling.regions import Instrumented

    table = Instrumented(text="", regions=_regions("attention"), loop_line=28, notes=[])
    original = _attention_profile(2048, warps=4)
    run = region_timers.TimerRun()
    read = region_timers._Read([original], {original.id: table}, [0], None, None, False)
    region_timers.read_totals(run, FIXTURES / "attention.hatchet", SimpleNamespace(returncode=0, tail=[]), read)
    s = SimpleNamespace(
        profile=original,
        recording=SimpleNamespace(kernels=[original]),
        formula=Overlap(),
        registry=None,
        finding=SimpleNamespace(formula="overlap", metric=None),
        report=SimpleNamespace(run=SimpleNamespace(mode="compiled")),
        progress=lambda message: None,
    )
    again: list = []

    def timer_run(s, program, profile, **place):  # the run after the validation, recorded instead of made
        again.append(profile)
        return run

    monkeypatch.setattr(loop_measure, "timer_run", timer_run)

    def measured(candidate):
        recording = SimpleNamespace(kernels=[candidate], first=lambda *a: "cuda-events", evidence_of=lambda _id: [])
        return loop_measure.measure_candidate(s, recording, None, True, tmp_path, None, run)  # type: ignore[arg-type]

    wider = _attention_profile(2048, warps=8).model_copy(update={"id": "candidate"})
    assert measured(wider).metric == pytest.approx(0.1331, abs=1e-4) and again == []
    tuned = wider.model_copy(
        update={"signatures": [wider.signatures[0].model_copy(update={"launches": 6, "tuning_launches": 5})]}
    )
    assert measured(tuned).metric == pytest.approx(0.1331, abs=1e-4) and again == [tuned]


def test_overlap_reads_a_helper_loops_instructions_at_either_line_of_its_call():
    """Triton puts an inlined helper's instructions at a line of the call: its first line with 3.9
    (this machine), its last with 3.6 (the H100's static view put the attention helper's dots at
    line 70 of a call on lines 69-70, and its loads went unread: the metric could not move)."""
    program = ROOT / "benchmarks" / "corpus" / "triton_attention_fwd.py"
    profile = KernelProfile(
        id="a",
        name="_attn_fwd",
        file=str(program),
        line=42,
        launches=1,
        timed_launches=1,
        total_time_s=1.0,
        mean_time_s=1.0,
        share=1.0,
        signatures=[],
    )

    def judged(kind: str, instruction: str):
        facts = [StaticFact(target="cuda:90", file=str(program), line=70, kind=kind, instruction=instruction, count=4)]
        return Overlap().diagnose(profile, [Evidence(backend="static", modelled=True, kernel="_attn_fwd", facts=facts)])

    plain = judged("load", "ld.global.v4.b32")
    assert plain.present and plain.metric.value == 1.0
    piped = judged("async_copy", "cp.async.cg.shared.global")
    assert not piped.present and piped.metric.value == 0.0


def _cli(*args, cwd=EXAMPLES):
    env = dict(os.environ, TRITON_DEFAULT_FP_FUSION="1")
    return subprocess.run(
        [sys.executable, "-m", "intelliperf", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600
    )


@pytest.mark.slow
def test_cpu_diagnose_uses_the_static_view():
    flagged = _cli("diagnose", "--formula", "overlap", "--device", "cpu", "--", sys.executable, "gemm.py")
    assert flagged.returncode == 0, flagged.stderr
    assert "not software-pipelined" in flagged.stdout and "region timers need compiled kernels" in flagged.stdout
    clean = _cli("diagnose", "--formula", "overlap", "--device", "cpu", "--", sys.executable, "gemm_pipelined.py")
    assert "asynchronous copies" in clean.stdout and "No overlap bottleneck" in clean.stdout


@pytest.mark.slow
def test_cpu_regions_command_says_it_needs_a_gpu(tmp_path):
    result = _cli("regions", "--device", "cpu", "--out-dir", str(tmp_path), "--", sys.executable, "gemm.py")
    assert result.returncode == 0 and "Traceback" not in result.stderr
    assert "region timers need compiled kernels on a GPU" in result.stdout
    assert "region load@36 (load, lines 36-37, in the loop): compiled for cuda:90" in result.stdout.replace("\n", " ")
    assert (tmp_path / "report.md").exists()


@pytest.mark.slow
def test_search_rewriter_pipelines_the_gemm_on_cpu(tmp_path):
    project = tmp_path / "overlap"
    project.mkdir()
    for f in ("_harness.py", "gemm.py"):
        (project / f).write_text((EXAMPLES / f).read_text())
    result = _cli(
        "optimize",
        "--formula",
        "overlap",
        "--rewriter",
        "search",
        "--max-attempts",
        "2",
        "--device",
        "cpu",
        "--",
        sys.executable,
        "gemm.py",
        cwd=project,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    report = json.loads((project / "intelliperf-out" / "report.json").read_text())
    winner = report["optimization"]["attempts"][report["optimization"]["winner"] - 1]
    assert winner["title"] == "num_stages=3 (was 1)" and winner["after"]["metric"] == 0
    assert (project / "gemm.py").read_text() == (EXAMPLES / "gemm.py").read_text()  # untouched without --in-place


def test_a_candidates_run_records_no_static_view_where_the_timers_give_the_metric():
    """On a GPU overlap's metric comes from region timers: the candidate's validation run does not compile its
    kernel for the static view's targets (2-3 s of a pipelined GEMM's run on the H100). Where the metric needs
    the static view (no timers, or a formula that reads it beside them), it is kept; a metric measured
    another way than the original's is not compared."""
    from types import SimpleNamespace

    from intelliperf.models import Attempt, Measure, Verdict
    from intelliperf.optimization import measure as loop_measure
    from intelliperf.optimization import verdict as loop_verdict
    from intelliperf.workload.runner import TraceSettings

    totals = timeline.scope_totals(json.loads((FIXTURES / "attention.hatchet").read_text()), "attention_kernel")
    r = timeline.analyse_totals(totals, _regions("attention"), "attention_kernel", num_warps=4, recorded=1)
    timed = Evidence(
        backend="proton", modelled=False, kernel="attention_kernel", regions=r.model_copy(update={"loop_line": 28})
    )
    static = _static("attention.py", "load", (30, 31))
    trace = TraceSettings(pattern="attention_kernel", sample_programs=0, static_targets=("cuda:90", "hip:gfx942"))

    def session(diagnosed: list[Evidence], formula=None):
        return SimpleNamespace(
            report=SimpleNamespace(
                diagnoses=[SimpleNamespace(kernel="attention_kernel", evidence=diagnosed)],
                run=SimpleNamespace(time_source="cuda-events"),
            ),
            profile=_attention_profile(2048),
            recording=SimpleNamespace(evidence_of=lambda _id: [static], kernels=[_attention_profile(2048)]),
            formula=formula or Overlap(),
            registry=None,
            finding=SimpleNamespace(formula="overlap", metric=None),
            trace=trace,
        )

    s = session([timed])
    baseline = loop_measure.measure_baseline(s)
    assert (baseline.metric_name, baseline.metric) == ("exposed_memory_share", pytest.approx(0.1331, abs=1e-4))
    lean = loop_measure.candidate_trace(s, baseline)
    assert lean.static_targets == () and lean.pattern is None  # nothing but the launches and the captures
    with_trace = session([timed])
    with_trace.trace = TraceSettings(pattern="k", sample_programs=32, static_targets=("cuda:90",))
    lean_traced = loop_measure.candidate_trace(with_trace, loop_measure.measure_baseline(with_trace))
    # the address trace stays: the kernel, and any kernel the original does not launch (none other here)
    assert lean_traced.pattern == "^(?:attention_kernel)$|."
    s = session([])  # no timers (a CPU, a failed pass): the metric is the static view's
    assert loop_measure.measure_baseline(s).metric_name == "synchronous_load_share"
    kept = loop_measure.candidate_trace(s, loop_measure.measure_baseline(s))
    assert kept.static_targets == trace.static_targets and kept.pattern == "^(?:attention_kernel)$|."

    class ReadsBoth(Overlap):  # a user's formula: timers' share, weighted by the static view's loads
        def diagnose(self, kernel, evidence):
            found = super().diagnose(kernel, evidence)
            loads = sum(f.count for ev in evidence for f in ev.facts)
            return found.model_copy(update={"metric": found.metric.model_copy(update={"value": loads})})

    s = session([timed], ReadsBoth())
    assert loop_measure.candidate_trace(s, loop_measure.measure_baseline(s)).static_targets == trace.static_targets

    # Before from the timers, after from the static view (the candidate's timer run failed): not compared.
    s = SimpleNamespace(formula=Overlap(), finding=SimpleNamespace(metric=None))
    attempt = Attempt(
        number=1,
        rewriter="search",
        title="t",
        status="invalid",
        before=Measure(metric=0.5, metric_name="exposed_memory_share"),
        after=Measure(metric=0.0, metric_name="synchronous_load_share"),
        verdict=Verdict(correct=True),
    )
    loop_verdict.decide(s, attempt)
    assert attempt.metric_improved is None and attempt.status != "accepted"
    assert "synchronous_load_share, the original's exposed_memory_share: they do not compare" in attempt.reasons


@pytest.mark.slow
def test_a_candidates_region_timer_run_takes_a_python_started_ahead(tmp_path):
    """The optimize loop starts the Python of a candidate's region-timer run with the candidate's others
    (`region_timers.start_timer_head_start`): the run, in the real sandbox, is handed to it where it fits, and starts
    afresh where it does not (here: another environment). The user's files stay as they were."""
    import sys

    from intelliperf.workload import sandbox as sandboxing

    box = sandboxing.make(enabled=True, hide=(tmp_path,))
    before = (EXAMPLES / "gemm.py").read_text()
    command = [sys.executable, "gemm.py", "--m", "64", "--n", "64", "--k", "64"]

    def run(name: str, started_with: dict, run_with: dict):
        where = tmp_path / name
        head = region_timers.start_timer_head_start(box, sys.executable, where, env=started_with)
        assert head is not None and (where / "project").is_dir() and not any((where / "project").iterdir())
        out = region_timers.collect(
            PassRun(command, EXAMPLES, 120, run_with),
            [_profile("gemm.py")],
            root=EXAMPLES,
            timers=TimerOptions(data="tree"),
            confined=region_timers.Sandboxed(box, where, head),
        )
        assert '.enter_scope("loop")' in (where / "project" / "gemm.py").read_text()  # the instrumented copy
        return out.notes

    taken = "region timers: the instrumented run took a Python started ahead (torch and Triton imported)"
    assert taken in run(
        "fits",
        {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
        {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
    )
    assert taken not in run("other-env", {}, {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})
    assert region_timers.start_timer_head_start(box, "/bin/sh", tmp_path / "sh") is None  # no Python to start ahead
    assert (EXAMPLES / "gemm.py").read_text() == before
