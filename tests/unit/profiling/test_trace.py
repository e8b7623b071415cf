"""The interpreter address trace on kernels whose answers are known by hand."""

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from intelliperf.profiling.trace import count_sectors, sample_program_ids, trace_launch


@triton.jit
def strided_load_kernel(x_ptr, out_ptr, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs * STRIDE)
    tl.store(out_ptr + offs, x)


@triton.jit
def one_address_atomic_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr + tl.zeros([BLOCK], dtype=tl.int32), tl.load(x_ptr + offs))


@triton.jit
def masked_half_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=0.0), mask=offs < n)


def _sites(result):
    return {(s["op"]): s for s in result["sites"]}


def _line_of(fn, needle):
    import inspect

    lines, first = inspect.getsourcelines(fn.fn)
    return first + next(i for i, text in enumerate(lines) if needle in text)


@pytest.mark.parametrize("stride, efficiency", [(1, 1.0), (2, 0.5), (8, 0.125), (16, 0.125)])
def test_sector_efficiency_of_strided_float32_loads(stride, efficiency):
    block, programs = 128, 4
    x = torch.rand(block * programs * stride)
    out = torch.zeros(block * programs)
    bound = {"x_ptr": x, "out_ptr": out, "STRIDE": stride, "BLOCK": block}
    result = trace_launch(strided_load_kernel.fn, bound, (programs, 1, 1), sample=32, budget_s=60)
    sites = _sites(result)
    assert result["notes"] == []
    assert sites["load"]["sector_efficiency"] == pytest.approx(efficiency)
    assert sites["load"]["line"] == _line_of(strided_load_kernel, "tl.load")
    assert sites["load"]["buffer"] == "x_ptr"
    assert sites["load"]["bytes_requested"] == block * programs * 4
    assert sites["store"]["sector_efficiency"] == 1.0
    assert sites["store"]["buffer"] == "out_ptr"
    # the trace works on copies: the user's tensors are untouched
    assert torch.count_nonzero(out) == 0


def test_lane_wide_atomic_on_one_address_has_depth_block_size():
    block, programs = 256, 8
    x = torch.ones(block * programs)
    out = torch.zeros(1)
    result = trace_launch(
        one_address_atomic_kernel.fn,
        {"x_ptr": x, "out_ptr": out, "BLOCK": block},
        (programs, 1, 1),
        sample=32,
        budget_s=60,
    )
    atomic = _sites(result)["atomic_add"]
    assert atomic["is_atomic"]
    assert atomic["lanes_per_address_max"] == block
    assert atomic["lanes_per_address_mean"] == block
    assert atomic["distinct_addresses"] == 1
    assert atomic["ops_per_address_max"] == block * programs
    assert atomic["line"] == _line_of(one_address_atomic_kernel, "tl.atomic_add")
    assert out.item() == 0.0  # never applied to the real output


def test_masked_lanes_do_not_count():
    block = 128
    x, out = torch.rand(block), torch.zeros(block)
    result = trace_launch(
        masked_half_kernel.fn, {"x_ptr": x, "out_ptr": out, "n": 64, "BLOCK": block}, (1, 1, 1), sample=32, budget_s=60
    )
    load = _sites(result)["load"]
    assert load["lanes"] == 64
    assert load["sectors"] == 8  # 64 floats = 256 bytes = 8 sectors; masked lanes touch nothing
    assert load["sector_efficiency"] == 1.0


def test_sampling_bounds_the_programs_run():
    block, programs = 64, 5000
    x, out = torch.rand(block * programs), torch.zeros(block * programs)
    result = trace_launch(
        strided_load_kernel.fn,
        {"x_ptr": x, "out_ptr": out, "STRIDE": 1, "BLOCK": block},
        (programs, 1, 1),
        sample=16,
        budget_s=60,
    )
    assert result["programs_total"] == programs
    assert result["programs_sampled"] == 16
    assert _sites(result)["load"]["calls"] == 16


def test_a_16m_program_grid_runs_only_the_sample():
    n = 1 << 24  # one element per program: 16M programs
    x, out = torch.rand(n), torch.empty(n)
    result = trace_launch(
        strided_load_kernel.fn, {"x_ptr": x, "out_ptr": out, "STRIDE": 1, "BLOCK": 1}, (n, 1, 1), sample=32, budget_s=60
    )
    assert (result["programs_total"], result["programs_sampled"]) == (n, 32)
    assert _sites(result)["load"]["calls"] == 32


def test_sample_program_ids_are_deterministic_and_cover_both_ends():
    ids = sample_program_ids((100, 3, 2), 10)
    assert ids == sample_program_ids((100, 3, 2), 10)
    assert ids[0] == (0, 0, 0) and ids[-1] == (99, 2, 1)
    assert len(ids) == 10
    assert sample_program_ids((4, 1, 1), 10) == [(0, 0, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0)]


def test_count_sectors_counts_each_32_lane_group_separately():
    contiguous = np.arange(64, dtype=np.uint64) * 4  # two warps, 128 bytes each
    assert count_sectors(contiguous, np.ones(64, bool)) == 8
    same_sector_split_across_warps = np.zeros(64, dtype=np.uint64)
    assert count_sectors(same_sector_split_across_warps, np.ones(64, bool)) == 2
    assert count_sectors(contiguous, np.zeros(64, bool)) == 0


def test_a_kernel_the_interpreter_cannot_run_gives_a_note_not_an_error():
    @triton.jit
    def bad_kernel(x_ptr, BLOCK: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
        tl.store(x_ptr + tl.arange(0, BLOCK), y)

    result = trace_launch(bad_kernel.fn, {"x_ptr": torch.zeros(16), "BLOCK": 16}, (1, 1, 1), sample=4, budget_s=60)
    assert result["programs_sampled"] == 0
    assert result["notes"] and "interpreter trace failed" in result["notes"][0]


def test_a_launch_the_trace_cannot_set_up_gives_a_note_not_an_error():
    result = trace_launch(strided_load_kernel.fn, {"x_ptr": torch.zeros(4), "BLOCK": 4}, (1, 1, 1), 4, 60)
    assert result["programs_sampled"] == 0 and result["sites"] == []
    assert "interpreter trace failed" in result["notes"][0] and "out_ptr" in result["notes"][0]


def test_tracing_leaves_triton_language_usable_by_the_compiler():
    # In a compiled-mode process the trace patches triton.language for a moment; the compiler
    # must find it exactly as before (compiling for an H100 needs no GPU).
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    result = trace_launch(
        one_address_atomic_kernel.fn,
        {"x_ptr": torch.ones(64), "out_ptr": torch.zeros(1), "BLOCK": 64},
        (1, 1, 1),
        4,
        60,
    )
    assert result["notes"] == []
    src = ASTSource(
        one_address_atomic_kernel,
        signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "BLOCK": "constexpr"},
        constexprs={"BLOCK": 64},
    )
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32))
    assert "atom.global" in compiled.asm["ptx"]


@triton.jit
def loop_over_scalar_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, tl.cdiv(n, BLOCK)):  # a loop bound made of a scalar argument: tensor.__index__
        acc += tl.load(x_ptr + i * BLOCK + tl.arange(0, BLOCK))
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)


def test_scalar_loop_bounds_trace_with_one_element_scalars():
    # Triton <= 3.6 holds scalars as 1-element arrays and int()s them, which NumPy >= 2.4 refuses;
    # the trace must run such loops whatever the Triton version (it failed on the H100 machine).
    from triton.runtime.interpreter import TensorHandle

    from intelliperf.profiling.trace import interpreter_semantics

    with interpreter_semantics(loop_over_scalar_kernel.fn):
        one = tl.core.tensor(TensorHandle(np.array([3], dtype=np.int32), tl.int32), tl.int32)
        assert list(range(one)) == [0, 1, 2]
    assert "__index__" not in tl.core.tensor.__dict__  # put back for the compiler
    result = trace_launch(
        loop_over_scalar_kernel.fn,
        {"x_ptr": torch.ones(64), "out_ptr": torch.zeros(16), "n": 64, "BLOCK": 16},
        (1, 1, 1),
        1,
        60,
    )
    assert result["notes"] == [] and _sites(result)["load"]["calls"] == 4  # n / BLOCK iterations


DEFERRED = """
import torch, triton, triton.language as tl

@triton.jit
def gather(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    i = tl.load(idx_ptr + offs, mask=offs < n, other=0)
    tl.atomic_add(out_ptr + i % 4, tl.load(x_ptr + i * 3, mask=offs < n, other=0.0), mask=offs < n)

def launch_nested(x, out):
    @triton.jit
    def nested(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs * 2))
    nested[(2,)](x, out, BLOCK=64)

torch.manual_seed(0)
x, idx, out = torch.rand(3 * 1000), torch.randint(0, 1000, (1000,)), torch.zeros(4)
# First, so that its trace is the worker's first: no other module has put libs/ on its path yet.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "libs"))  # where only the program looks
from pkg.kern import scaled
scaled[(4,)](x, torch.zeros(256), BLOCK=64)
gather[(8,)](x, idx, out, 1000, BLOCK=128)
launch_nested(x, torch.zeros(128))
print("done", out.sum().item())
"""
PACKAGE = {  # a kernel in a package's module, with a relative import: imported again by its name
    "libs/pkg/__init__.py": "",
    "libs/pkg/consts.py": "STRIDE = 5\n",
    "libs/pkg/kern.py": (
        "import triton, triton.language as tl\nfrom .consts import STRIDE\n\n@triton.jit\n"
        "def scaled(x_ptr, out_ptr, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs * STRIDE) * 2)\n"
    ),
}


@pytest.mark.slow
def test_a_trace_deferred_to_its_worker_records_what_the_program_would_have(tmp_path):
    """On a GPU, `diagnose` defers the trace of a module-level kernel to trace_worker, beside the next
    passes (Recorder.trace_later): the launch's host copies are saved and traced after the run, by the
    same trace_launch. The evidence must be the program's own: same sites, programs and notes as the
    trace taken in the program, here under the interpreter on both sides, for a script's kernel (its
    file imported for its definitions only) and a package module's kernel with a relative import
    (imported by its name, on the program's own sys.path). A kernel defined inside a function cannot
    be imported again by name: it is traced in the program. The user's tensors are not touched
    either way (same output)."""
    import subprocess
    import sys

    from intelliperf.profiling.aggregate import collect_evidence, load_recording
    from intelliperf.profiling.trace_worker import LaterTraces
    from intelliperf.workload.runner import TraceSettings, workload_env

    script = tmp_path / "program.py"
    script.write_text(DEFERRED)
    for name, text in PACKAGE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)

    def run(name: str, later: LaterTraces | None) -> tuple[str, dict]:
        record = tmp_path / name
        record.mkdir()
        trace = TraceSettings(pattern=".", sample_programs=4, later_dir=str(later.folder) if later else None)
        env = workload_env(record, True, trace)
        if later is not None:
            later.warm(str(tmp_path))  # as diagnose does: its imports beside the program's run
        done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
        recording = load_recording(record)
        if later is not None:
            assert later.jobs() == 2  # gather's and scaled's launches; the nested kernel was traced in the program
            later.start(str(tmp_path))
            traced, notes = later.finish(120)
            assert notes and "traced after the run" in notes[0], notes
            recording.evidence = collect_evidence(recording.records + traced)
        return done.stdout, {k: [e.model_dump() for e in v] for k, v in recording.evidence.items()}

    here_out, here = run("here", None)
    later = LaterTraces()
    later_out, deferred = run("later", later)
    assert later_out == here_out and not later.folder.exists()
    assert deferred == here
    traces = [e for v in here.values() for e in v if e["backend"] == "interpreter-trace"]
    assert len(traces) == 3 and all(t["sites"] and t["programs_sampled"] for t in traces)
    assert {t["kernel"] for t in traces} == {"gather", "nested", "scaled"}
    idle = LaterTraces()  # a warm worker with nothing saved for it is stopped, not waited for
    idle.warm(str(tmp_path))
    idle.start(str(tmp_path))
    assert idle.worker is None and idle.finish(1) == ([], [])
