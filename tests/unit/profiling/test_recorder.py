"""The launch recorder, through a real subprocess running real Triton kernels (interpreter)."""

import json
import os
import shutil
import subprocess
import sys

import pytest
import torch
from conftest import PROGRAMS, py

import intelliperf


def _kernel(report, name):
    return next(k for k in report.kernels if k.name == name)


def test_counts_and_ranking(multi_report):
    kernels = multi_report.kernels
    # by total time: the heavy kernel first; the two light ones are near in interpreter wall time, which a busy
    # machine can swap, so their order is checked against their own times
    assert kernels[0].name == "heavy_kernel" and {k.name for k in kernels[1:]} == {"add_kernel", "scale_kernel"}
    assert [k.total_time_s for k in kernels] == sorted((k.total_time_s for k in kernels), reverse=True)
    assert {k.name: k.launches for k in kernels} == {"heavy_kernel": 1, "add_kernel": 5, "scale_kernel": 2}
    assert multi_report.run.launches == 8
    assert multi_report.run.mode == "interpreter"
    assert multi_report.run.time_source == "wall time (interpreter)"
    assert sum(k.share for k in multi_report.kernels) == pytest.approx(1.0)
    heavy = _kernel(multi_report, "heavy_kernel")
    assert heavy.total_time_s > _kernel(multi_report, "add_kernel").total_time_s > 0


def test_kernel_source_location(multi_report):
    add = _kernel(multi_report, "add_kernel")
    assert add.file == str(PROGRAMS / "multi_kernel.py")
    source = (PROGRAMS / "multi_kernel.py").read_text().splitlines()
    assert source[add.line - 1].startswith("def add_kernel(")


def test_arguments_grid_and_options(multi_report):
    add = _kernel(multi_report, "add_kernel")
    assert len(add.signatures) == 1
    sig = add.signatures[0]
    assert sig.launches == 5 and sig.grid == [4, 1, 1]
    args = {a.name: a for a in sig.args}
    assert args["x_ptr"].kind == "tensor"
    assert (args["x_ptr"].dtype, args["x_ptr"].shape, args["x_ptr"].strides, args["x_ptr"].device) == (
        "float32",
        [4096],
        [1],
        "cpu",
    )
    assert (args["n"].kind, args["n"].value) == ("scalar", 4096)
    assert (args["BLOCK"].kind, args["BLOCK"].value) == ("constexpr", 1024)

    scale = _kernel(multi_report, "scale_kernel").signatures[0]
    scale_args = {a.name: a for a in scale.args}
    assert scale.grid == [4, 1, 1]  # from the grid lambda: cdiv(1024, 256)
    assert scale.num_warps == 2
    assert scale_args["x_ptr"].dtype == "float16"
    assert (scale_args["alpha"].kind, scale_args["alpha"].value) == ("scalar", 2.5)


@pytest.mark.slow
def test_thousands_of_launches_are_aggregated():
    report = intelliperf.diagnose(py(PROGRAMS / "many_launches.py", "3000"), device="cpu", sample_programs=1)
    tiny = report.kernels[0]
    assert tiny.launches == 3000
    assert tiny.timed_launches == 3000  # the interpreter's wall time is taken for every launch
    assert len(tiny.signatures) == 1 and tiny.signatures[0].launches == 3000
    assert report.diagnoses[0].evidence[0].launches_traced == 1  # traced once, not 3000 times


@pytest.mark.slow
def test_python_dash_m_and_child_processes(tmp_path):
    # A package run with `python -m`, which starts a second Python process that launches too.
    pkg = tmp_path / "app"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text(
        "import subprocess, sys\n"
        f"subprocess.run([sys.executable, {str(PROGRAMS / 'many_launches.py')!r}, '7'], check=True)\n"
        f"subprocess.run([sys.executable, {str(PROGRAMS / 'many_launches.py')!r}, '5'], check=True)\n"
    )
    report = intelliperf.diagnose([sys.executable, "-m", "app"], device="cpu", cwd=str(tmp_path))
    assert report.kernels[0].launches == 12
    assert report.run.processes == 2


@pytest.mark.slow
def test_pytest_as_the_command(tmp_path):
    # Copied out of this repository, so that our own conftest and pytest settings stay out of it.
    for name in ("kernel_check.py", "many_launches.py"):
        shutil.copy(PROGRAMS / name, tmp_path / name)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "kernel_check.py"]
    report = intelliperf.diagnose(cmd, device="cpu", cwd=str(tmp_path))
    assert [(k.name, k.launches) for k in report.kernels] == [("tiny_kernel", 4)]


@pytest.mark.slow
def test_existing_sitecustomize_still_runs(tmp_path):
    # The bootstrap must not shadow a sitecustomize the user's environment relies on.
    site = tmp_path / "site"
    site.mkdir()
    marker = tmp_path / "marker.txt"
    (site / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    env = {**os.environ, "PYTHONPATH": str(site)}
    from intelliperf.workload.runner import TraceSettings, workload_env

    record = tmp_path / "rec"
    record.mkdir()
    child_env = workload_env(record, interpret=True, trace=TraceSettings(), base=env)
    subprocess.run(py(PROGRAMS / "many_launches.py", "3"), env=child_env, check=True, capture_output=True)
    assert marker.read_text() == "ran"
    data = json.loads(next(record.glob("record-*.json")).read_text())
    assert data["kernels"][0]["launches"] == 3


def test_secrets_are_not_passed_to_the_program(tmp_path):
    from intelliperf.workload.runner import TraceSettings, workload_env

    env = workload_env(
        tmp_path,
        interpret=True,
        trace=TraceSettings(),
        base={"PATH": "/bin", "OPENAI_API_KEY": "sk-x", "GITHUB_TOKEN": "ghp-x", "HOME": "/h"},
    )
    assert "OPENAI_API_KEY" not in env and "GITHUB_TOKEN" not in env
    assert env["HOME"] == "/h" and env["TRITON_INTERPRET"] == "1"
    compiled = workload_env(tmp_path, interpret=False, trace=TraceSettings(), base={"TRITON_INTERPRET": "1"})
    assert "TRITON_INTERPRET" not in compiled


class _StreamLog:
    """Stands in for the GPU's event API (the edge of the machine): remembers each record, and
    says every kernel took 1 ms."""

    def __init__(self, fail=False):
        self.streams, self.fail, self.count = [], fail, 0

    def new(self):
        self.count += 1
        return self.count

    def record(self, event, stream):
        if self.fail:
            raise RuntimeError("CUDA error 201")
        self.streams.append(stream)

    def done(self, event):
        return True

    def wait(self, event):
        pass

    def elapsed_s(self, start, end):
        return 1e-3


def test_many_compiled_launches_are_all_counted_and_a_sample_timed(tmp_path):
    # Triton's launcher (the GPU edge) replaced by a function that calls the hooks as it does.
    from triton.compiler.compiler import LazyDict

    from intelliperf.profiling.inside.recorder import TIME_ALL_FIRST, Recorder

    sys.path.insert(0, str(PROGRAMS))
    from many_launches import tiny_kernel

    rec = Recorder(str(tmp_path))
    rec.events = _StreamLog()

    def launch(jit_fn, *args, grid, warmup, **kwargs):
        metadata = LazyDict({"name": "tiny_kernel", "function": 0, "stream": 7})
        rec.on_enter(metadata)
        rec.on_exit(metadata)

    run = rec.wrap(launch, interpreted=False)
    x = torch.zeros(64)
    for _ in range(2000):
        run(tiny_kernel, x, 64, grid=(1,), warmup=False, BLOCK=64)
    rec.resolve(wait=True)
    [kernel] = rec.kernels.values()
    assert kernel.launches == 2000
    assert TIME_ALL_FIRST + 60 < kernel.timed < TIME_ALL_FIRST + 250  # about 1 in 16 after the first 64
    assert len(rec.events.streams) == 2 * kernel.timed
    assert kernel.total() == pytest.approx(2000 * 1e-3)  # scaled from the timed ones

    # what the parent reads back, and the note that tells the user the total is scaled
    from intelliperf.diagnosis.run import report_notes
    from intelliperf.formulas import default_registry
    from intelliperf.profiling.aggregate import load_recording

    rec.flush()
    recording = load_recording(tmp_path)
    [profile] = recording.kernels
    assert (profile.launches, profile.timed_launches) == (2000, kernel.timed)
    assert profile.total_time_s == pytest.approx(2.0)
    assert any(
        f"{kernel.timed} of 2000 launches were timed" in note
        for note in report_notes(default_registry(), recording, interpret=False)
    )


def test_launches_seen_only_by_the_hooks(tmp_path):
    # torch.compile (Inductor) and AOT code launch compiled kernels without JITFunction.run: the
    # C launcher hands the hooks Triton's own LazyDict, and the events go on the stream it names.
    from triton.compiler.compiler import LazyDict

    from intelliperf.profiling.aggregate import load_recording
    from intelliperf.profiling.inside.recorder import Recorder

    sys.path.insert(0, str(PROGRAMS))
    from many_launches import tiny_kernel

    rec = Recorder(str(tmp_path))
    rec.events = _StreamLog()
    rec.sources[0xF00] = tiny_kernel  # what CompiledKernel.launch_metadata reports on a GPU
    for function, name in ((0xF00, "tiny_kernel"), (0xBAD, "aot_kernel"), (0xF00, "tiny_kernel")):
        metadata = LazyDict({"name": name, "function": function, "stream": 0x1234})
        rec.on_enter(metadata)
        rec.on_exit(metadata)
    assert rec.events.streams == [0x1234] * 6
    rec.resolve(wait=True)
    rec.flush()
    kernels = {k.name: k for k in load_recording(tmp_path).kernels}
    assert kernels["tiny_kernel"].launches == 2 and kernels["tiny_kernel"].total_time_s == pytest.approx(2e-3)
    assert kernels["tiny_kernel"].file == str(PROGRAMS / "many_launches.py")
    assert (kernels["aot_kernel"].launches, kernels["aot_kernel"].file) == (1, None)  # known by name only


def test_a_failing_device_clock_never_breaks_the_program(tmp_path):
    from triton.compiler.compiler import LazyDict

    from intelliperf.profiling.inside.recorder import Recorder

    rec = Recorder(str(tmp_path))
    rec.events = _StreamLog(fail=True)
    metadata = LazyDict({"name": "k", "function": 0, "stream": 0})
    rec.on_enter(metadata)  # must not raise
    rec.on_exit(metadata)
    assert rec.timing_failed and "CUDA error 201" in rec.problems[0]
