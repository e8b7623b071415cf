"""Time to a verdict: bounded profiling passes, no pass that cannot change the verdict, timeouts
that are verdicts of their own. Real subprocesses under Triton's interpreter; the GPU side of the
same code (ncu's NVTX range, Proton's buffer) is checked by benchmarks/stage_times.py on a GPU."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

from conftest import REPO, run_cli

from intelliperf import env as intelliperf_env
from intelliperf.models import Attempt, KernelProfile, LaunchSignature, Measure
from intelliperf.profiling import ncu, region_timers
from intelliperf.profiling.inside import window
from intelliperf.profiling.regions import layout_of, untimed
from intelliperf.validators import Problem, Verdict
from intelliperf.workload.runner import PassRun, bootstrap_env, uncompiled_note

PROGRAM = textwrap.dedent("""
    import atexit, sys
    import torch, triton, triton.language as tl

    @triton.jit
    def add_one(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

    @triton.jit
    def other(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), tl.zeros([BLOCK], tl.float32))

    x, y = torch.zeros(64), torch.zeros(16)
    atexit.register(lambda: open(sys.argv[1], "w").write(str(int(x[0]))))  # Proton writes its trace like this
    for i in range(200):
        other[(1,)](y, BLOCK=16)
        add_one[(1,)](x, 64, BLOCK=64)
    print("ran to the end", flush=True)
""")


def _run(tmp_path: Path, skips: dict[str, int], count: int) -> tuple[subprocess.CompletedProcess, Path]:
    script, marks, seen = tmp_path / "prog.py", tmp_path / "marks", tmp_path / "seen.txt"
    script.write_text(PROGRAM)
    marks.mkdir()
    env = bootstrap_env(interpret=True) | window.settings(skips, count, str(marks))
    done = subprocess.run(
        [sys.executable, str(script), str(seen)], env=env, capture_output=True, text=True, timeout=300
    )
    return done, marks


def test_the_window_stops_the_program_after_the_chosen_launches(tmp_path):
    done, marks = _run(tmp_path, {"add_one": 1}, count=2)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ran to the end" not in done.stdout  # 3 of 200 launches, then it stopped
    (marker,) = window.stopped(marks)
    assert marker["launches"] == {"add_one": 3} and marker["problems"] == []
    assert (tmp_path / "seen.txt").read_text() == "3"  # exit handlers ran, after the device work of launch 3
    assert "stopped once the top kernels had the launches" in window.notes(marks, "ncu")[0]


TURNS = textwrap.dedent("""
    import subprocess, sys, time
    import torch, triton, triton.language as tl

    @triton.jit
    def add_one(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)

    open(sys.argv[1], "w").write(str(time.time()))  # the program's own code begins: its GPU turn
    # A Python it starts must not wait for the turn its parent holds (it would wait forever).
    subprocess.run([sys.executable, "-c", "pass"], check=True, timeout=60)
    time.sleep(1.5)
    add_one[(1,)](torch.zeros(16), BLOCK=16)
    print("ran to the end", flush=True)
""")


def test_passes_side_by_side_take_turns_on_the_gpu(tmp_path):
    """Two programs with one GPU-turn file: each one's own code runs only once the other's window
    closed (no kernel of one beside a kernel the other measures); their start-up runs side by side."""
    script = tmp_path / "prog.py"
    script.write_text(TURNS)
    runs = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        env = bootstrap_env(interpret=True) | window.settings({"add_one": 0}, 1, str(tmp_path / name))
        env[intelliperf_env.GPU_TURN] = str(tmp_path / "gpu.lock")
        cmd = [sys.executable, str(script), str(tmp_path / name / "began")]
        if name == "a":  # through a Python that never imports torch nor Triton (as ncu's own does)
            cmd = [sys.executable, "-c", "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))", *cmd]
        runs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for run in runs:
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0 and "ran to the end" not in out, err[-2000:]
    began = sorted(float((tmp_path / name / "began").read_text()) for name in ("a", "b"))
    assert began[1] - began[0] >= 1.4  # the second began after the first's window closed
    waits = sorted(window.stopped(tmp_path / name)[0]["gpu_wait_s"] for name in ("a", "b"))
    assert waits[0] < 1.0 <= waits[1]
    assert any("for its GPU turn" in n for name in ("a", "b") for n in window.notes(tmp_path / name, "x"))


def test_a_kernel_that_never_launches_lets_the_program_run_to_its_end(tmp_path):
    done, marks = _run(tmp_path, {"add_one": 0, "never_launched": 0}, count=1)
    assert done.returncode == 0 and "ran to the end" in done.stdout
    assert window.stopped(marks) == [] and window.notes(marks, "ncu") == []
    assert (tmp_path / "seen.txt").read_text() == "200"


def test_autotunings_benchmark_launches_are_not_the_programs():
    """Triton's Autotuner._bench runs each config through JITFunction.run: those launches must not
    use up the window (the profiled launch would be a config that lost)."""

    class Autotuner:
        def _bench(self, check):
            return check()

    window.track_tuning(SimpleNamespace(Autotuner=Autotuner))
    w = window.Window({"kernels": {"k": 0}, "count": 1, "dir": "/nonexistent", "nvtx": None})
    assert Autotuner()._bench(lambda: w.selected("k")) is False and w.selected("k") is True
    assert Autotuner()._bench(window.autotuning) is True and window.autotuning() is False


def test_an_autotuners_configs_are_compiled_together_before_it_times_them(monkeypatch):
    """Triton's own Autotuner (a subclass, so the patch stays in this test): each pruned config is
    compiled once, with the launch's arguments and the config's knobs, all inside one
    AsyncCompileMode (a thread pool); the configs it times are unchanged; a compile that fails is
    left to the autotuner, which compiles it again and reports it; nothing where the autotuner keeps its
    results on disk (a hit needs the chosen config only) or under the interpreter.
    The kernel is a stand-in: compiling for a GPU needs one (benchmarks/sweep_cost.py times it)."""
    import triton
    from triton import knobs
    from triton.runtime import autotuner
    from triton.runtime._async_compile import active_mode

    class Tuner(autotuner.Autotuner):
        pass

    problems: list[str] = []
    window.compile_together(SimpleNamespace(Autotuner=Tuner), problems)
    window.compile_together(SimpleNamespace(Autotuner=Tuner), problems)  # once: not wrapped twice

    class Kernel:
        def __init__(self, fail: bool = False) -> None:
            self.compiled: list[tuple] = []
            self.fail = fail
            self.fn = textwrap.dedent  # any Python function: what the Autotuner unwraps the kernel to

        def warmup(self, *args, grid, **kwargs):
            assert active_mode.get() is not None and grid == (1,) and "warmup" not in kwargs
            self.compiled.append((args, kwargs["SCALE"], kwargs["BLOCK"], kwargs["num_warps"], kwargs["num_stages"]))
            if self.fail:
                raise RuntimeError("ptxas failed")

    configs = [triton.Config({"BLOCK": 64}, num_warps=w, num_stages=s) for w in (1, 4) for s in (2, 3)]
    # What Autotuner.run passes on: the launch's keywords, with the grid and warmup flag Triton adds.
    launch = {"grid": (4,), "warmup": False, "SCALE": 2}
    names = ["x_ptr", "n", "SCALE", "BLOCK"]
    kernel = Kernel()
    tuner = Tuner(kernel, names, configs, [], None, None)
    tuner.nargs = {"x_ptr": "X", "n": 100}
    assert tuner.prune_configs(launch) == configs
    assert sorted(kernel.compiled) == sorted((("X", 100), 2, 64, w, s) for w in (1, 4) for s in (2, 3))
    failing = Kernel(fail=True)
    tuner = Tuner(failing, names, configs, [], None, None)
    tuner.nargs = {"x_ptr": "X", "n": 100}
    assert tuner.prune_configs(launch) == configs and failing.compiled and active_mode.get() is None
    assert problems == [
        "autotuning: compiling its configs together failed (RuntimeError: ptxas failed); Triton compiled them"
    ]
    cached = Kernel()  # results kept on disk: a hit compiles the chosen config only, so nothing here
    tuner = Tuner(cached, names, configs, [], None, None, cache_results=True)
    tuner.nargs = {"x_ptr": "X", "n": 100}
    assert tuner.prune_configs(launch) == configs and cached.compiled == []
    monkeypatch.setattr(knobs.runtime, "interpret", True)
    quiet = Kernel()
    tuner = Tuner(quiet, names, configs, [], None, None)
    tuner.nargs = {"x_ptr": "X", "n": 100}
    assert tuner.prune_configs(launch) == configs and quiet.compiled == []


TUNED = textwrap.dedent("""
    import torch, triton, triton.language as tl

    @triton.autotune([triton.Config({"BLOCK": 32}, num_warps=1), triton.Config({"BLOCK": 64}, num_warps=4)],
                     key=["n"])
    @triton.jit
    def tuned(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

    x = torch.zeros(100)
    tuned[lambda meta: (triton.cdiv(100, meta["BLOCK"]),)](x, 100)
    print("config", tuned.best_config.kwargs["BLOCK"], tuned.best_config.num_warps)
""")


def test_profiler_passes_run_the_config_the_program_chose(tmp_path):
    """The recorded run's config is pinned: no benchmarking under the profiler (the interpreter
    would pick the first config, BLOCK=32)."""
    script = tmp_path / "tuned.py"
    script.write_text(TUNED)
    chosen = {"tuned": {"num_warps": 4, "num_stages": None, "kwargs": {"BLOCK": 64}}}
    env = bootstrap_env(interpret=True) | window.settings({"tuned": 0}, 5, str(tmp_path), configs=chosen)
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert "config 64 4" in done.stdout, done.stderr[-2000:]
    plain = subprocess.run(
        [sys.executable, str(script)], env=bootstrap_env(interpret=True), capture_output=True, text=True, timeout=300
    )
    assert "config 32 1" in plain.stdout, plain.stderr[-2000:]
    sig = LaunchSignature(
        grid=[2, 1, 1],
        num_warps=4,
        args=[{"name": "BLOCK", "kind": "constexpr", "value": 64}],
        launches=3,
        tuning_launches=0,
        total_time_s=0.1,
    )
    lost = LaunchSignature(
        grid=[4, 1, 1],
        num_warps=1,
        args=[{"name": "BLOCK", "kind": "constexpr", "value": 32}],
        launches=40,
        tuning_launches=40,
        total_time_s=0.1,
    )
    assert window.tuned_configs([_profile("tuned", None, [lost, sig])]) == chosen

    class Autotuner:  # Triton <= 3.6 benchmarks a single remaining config too: a pinned one is not run
        base_fn = SimpleNamespace(__name__="tuned")

        def prune_configs(self, kwargs):
            return []

        def _bench(self, *args, **kwargs):
            raise AssertionError("a pinned config was benchmarked")

    window.pin_configs(SimpleNamespace(Autotuner=Autotuner), chosen)
    assert Autotuner()._bench(config=None) == [0.0, 0.0, 0.0]


def test_ncu_profiles_only_the_windows_launches():
    req = ncu.NcuRequest(kernels=["k"], metrics=["m"], nvtx_range=window.NVTX_RANGE)
    args = ncu.profile_command("ncu", req, Path("r"), ["python", "p.py"])
    assert args[args.index("--nvtx-include") + 1] == "intelliperf/" and "--nvtx" in args
    assert "--nvtx" not in ncu.profile_command("ncu", ncu.NcuRequest(kernels=["k"], metrics=[]), Path("r"), ["x"])


def test_region_timers_only_where_they_can_change_the_verdict():
    examples = REPO / "examples"
    sum_file, gemm_file = examples / "atomic_contention" / "reduced_sum.py", examples / "overlap" / "gemm.py"
    assert "no loop with loads" in untimed(layout_of(str(sum_file), "reduced_sum_kernel"), "reduced_sum_kernel")
    assert untimed(layout_of(str(gemm_file), "gemm_kernel"), "gemm_kernel") is None
    profile = _profile("reduced_sum_kernel", str(sum_file), [])
    # loops_only: the kernel is left out before anything runs (no Proton on this machine: a run would fail)
    passing = PassRun(["false"], examples, 5)
    run = region_timers.collect(passing, [profile], root=examples, timers=region_timers.TimerOptions(loops_only=True))
    assert run.evidence == {} and any("no region timers for it" in n for n in run.notes)


def _profile(name: str, file: str | None, signatures: list) -> KernelProfile:
    return KernelProfile(
        id=f"{name}@{file}:1",
        name=name,
        file=file,
        line=None,
        launches=3,
        timed_launches=3,
        total_time_s=1.0,
        mean_time_s=0.3,
        share=1.0,
        signatures=signatures,
    )


def test_proton_buffer_grows_to_what_the_first_run_needed():
    profile = _profile("k", None, [LaunchSignature(grid=[256, 1, 1], launches=1, total_time_s=0.1, args=[])])
    mode = region_timers.DEFAULT_MODE
    assert region_timers.bigger_buffer([], mode, [profile]) is None
    bigger = region_timers.bigger_buffer([(8192, 30000), (8192, 41000)], mode, [profile])
    assert "buffer_size=524288" in bigger and "clock32" in bigger  # 65536 x 41000/8192 x 1.25, to a power of 2
    huge = [(8192, 8192 * 4096)]  # 256 CTAs x 256 MiB each would not fit: no retry
    assert region_timers.bigger_buffer(huge, mode, [profile]) is None
    assert "kept 8192 of up to 41000" in region_timers.dropped_note([(8192, 30000), (8192, 41000)], mode)


def test_a_timeout_is_a_verdict_of_its_own():
    from intelliperf.optimization import verdict as loop_verdict

    s = SimpleNamespace(formula=SimpleNamespace(metric="m"), finding=SimpleNamespace(metric=None))
    killed = Attempt(
        number=1,
        rewriter="recipes",
        title="t",
        status="invalid",
        before=Measure(),
        verdict=Verdict(correct=False, problems=[Problem(kind="timeout", message="ran past 60 s")]),
    )
    loop_verdict.decide(s, killed)
    assert killed.status == "timed-out"
    wrong = Attempt(
        number=2,
        rewriter="recipes",
        title="t",
        status="invalid",
        before=Measure(),
        verdict=Verdict(
            correct=False, problems=[Problem(kind="timeout", message="x"), Problem(kind="mismatch", message="y")]
        ),
    )
    loop_verdict.decide(s, wrong)
    assert wrong.status == "rejected"


def test_candidate_timeout_is_checked_before_anything_runs(tmp_path):
    result = run_cli(
        "optimize", "--candidate-timeout", "0", "--out-dir", str(tmp_path / "out"), "--", "python", "nope.py"
    )
    assert result.returncode == 2 and "--candidate-timeout must be a positive" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "out").exists()


def test_limits_scale_with_the_load(monkeypatch):
    import importlib

    from intelliperf.validators import ValidationSettings

    v = importlib.import_module("intelliperf.validators.runs.beside")

    monkeypatch.setattr(v.os, "getloadavg", lambda: (8.0, 8.0, 8.0))
    monkeypatch.setattr(v.os, "cpu_count", lambda: 2)
    assert v.load_factor() == 4.0 and v.busy()
    assert v.default_limit(10, ValidationSettings()) == 280  # (4 x 10 + 30) x 4
    assert v.default_limit(10, ValidationSettings(patience=2)) == 560
    monkeypatch.setattr(v.os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    assert v.load_factor() == 1.0 and not v.busy()


def test_protons_dropped_event_warnings_are_counted_not_printed(tmp_path, capfd):
    """Proton prints one warning per CTA and warp whose buffer overflowed (100 KB on a long loop):
    the pass keeps their counts for the buffer's resize and passes everything else through."""
    warn = "first 12 events are dropped due to insufficient buffer size (8192/8204)"
    code = f"import sys; print('program output'); [print({warn!r}, file=sys.stderr) for _ in range(3)]"
    program = PassRun([sys.executable, "-c", code], tmp_path, 60, {})
    result, counts = region_timers._run(program, tmp_path / "proton", region_timers.DEFAULT_MODE)
    assert result.returncode == 0 and counts == [(8192, 8204)] * 3
    shown = capfd.readouterr()
    assert "program output" in shown.err and "events are dropped" not in shown.out + shown.err


def test_a_module_python_may_not_compile_is_named_with_the_command_that_compiles_it(tmp_path, monkeypatch):
    """A read-only install without bytecode (a container image built without compiling it) costs every
    Python process the run starts seconds of compiling torch: the report says so and how to fix it."""
    package = tmp_path / "heavy_dependency"
    package.mkdir()
    (package / "__init__.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert uncompiled_note(("heavy_dependency",)) is None  # the first import writes the bytecode

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    note = uncompiled_note(("heavy_dependency",))
    assert note and note.startswith("heavy_dependency has no compiled bytecode")
    command = note.split("Compile it once: ")[1].split()
    assert command[-1] == str(package)
    subprocess.run([sys.executable if c == "python" else c for c in command], check=True, timeout=60)
    assert uncompiled_note(("heavy_dependency",)) is None


def test_formulas_that_read_the_static_view_only_get_no_address_trace():
    """bankConflict and overlap read the static view, never the interpreter trace: no program is traced
    for them (on a GPU the trace took 10 s of a 14 s profile run), and the verdict is the one the static
    view gives. atomicContention reads both, and gets both."""
    import intelliperf
    from intelliperf.diagnosis.passes import trace_settings
    from intelliperf.formulas import default_registry

    registry = default_registry()
    for name, sample in (("bankConflict", 0), ("overlap", 0), ("atomicContention", 32), ("diagnoseOnly", 32)):
        settings = trace_settings(registry.create(name), registry, None, 32, interpret=False)
        assert settings.pattern == "." and settings.static_targets and settings.sample_programs == sample, name
        assert settings.budget_s == 10.0  # beside a GPU run, bounded like the other passes
    program = REPO / "examples" / "bank_conflict" / "column_sums.py"
    report = intelliperf.diagnose([sys.executable, str(program)], formula="bankConflict", device="cpu")
    (diagnosis,) = report.diagnoses
    assert [ev.backend for ev in diagnosis.evidence] == ["static"]
    assert diagnosis.findings[0].present and diagnosis.findings[0].evidence_backend == "static"


def test_a_program_told_to_take_its_gpu_turn_at_its_first_launch_waits_there(tmp_path):
    """The optimize loop's region-timer run beside a candidate's validation starts, runs its program up to its
    first launch (compiled, on a GPU), says so (window.PARKED) and waits there for the GPU turn the loop holds;
    given the turn, it launches and the window stops it as usual."""
    import os
    import time

    from intelliperf.workload.runner import Running

    lock = tmp_path / "gpu-turn.lock"
    held = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    os.lockf(held, os.F_LOCK, 0)
    folder = tmp_path / "window"
    folder.mkdir()
    env = bootstrap_env(interpret=True) | window.settings(
        {"contended_sum_kernel": 0}, 1, str(folder), turn_at_launch=True
    )
    env[intelliperf_env.GPU_TURN] = str(lock)
    running = Running([sys.executable, "contended_sum.py"], cwd=str(REPO / "examples" / "atomic_contention"), env=env)
    try:
        deadline = time.monotonic() + 120
        while not window.parked(folder) and running.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert window.parked(folder), list(running.tail)
        time.sleep(0.5)
        assert running.proc.poll() is None and window.stopped(folder) == []  # waiting, not launched
    finally:
        os.close(held)  # the turn
    done = running.wait(120)
    assert done.returncode == 0, list(done.tail)
    (marker,) = window.stopped(folder)
    assert marker["launches"] == {"contended_sum_kernel": 1} and marker["gpu_wait_s"] >= 0.5

    # Told to take it at import (the default), the program never parks: it waits before any GPU work.
    plain = window.settings({"contended_sum_kernel": 0}, 1, str(tmp_path / "plain"))
    assert json.loads(plain[window.ENV])["turn"] == "import"


def test_the_timing_waits_until_the_run_beside_it_waits_for_its_turn(tmp_path, monkeypatch):
    """`TimersBeside.quiet`: nothing to wait for once the run is parked or has ended; a note where it never
    reached its first launch in time. `finish` gives the turn back and returns the run."""
    import os
    import threading
    import time

    from intelliperf.optimization import head_start as loop_head_start

    where = tmp_path / "timers"
    lock = region_timers.turn_file(where)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    os.lockf(fd, os.F_LOCK, 0)
    release = threading.Event()
    out: list = []

    def run():  # a stand-in for collect's run: parks after a while, ends once released
        time.sleep(0.3)
        (where / "out" / window.PARKED.format(pid=1)).touch()
        release.wait(10)
        out.append(region_timers.TimerRun(notes=["ran"]))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    beside = loop_head_start.TimersBeside(where, fd, thread, out)
    begin = time.perf_counter()
    assert beside.quiet() is None and time.perf_counter() - begin >= 0.25  # it waited for the park
    release.set()
    assert beside.finish(10) is out[0] and beside.lock == -1 and out[0].notes == ["ran"]

    monkeypatch.setattr(loop_head_start, "PARK_WAIT_S", 0.2)
    stuck = threading.Thread(target=lambda: time.sleep(2), daemon=True)
    stuck.start()
    late = loop_head_start.TimersBeside(tmp_path / "stuck", -1, stuck, [])
    assert "had not reached its first launch after 0.2 s" in (late.quiet() or "")
    assert late.finish(0) is None
