"""Four ways a cheating candidate could pass the validators, each closed, next to the honest candidate it must
still accept: a ring of output buffers reused across calls (aliasing over every launcher call), a block
hard-coded for twice the recorded size (the larger unseen shape), a lower-precision copy passed off as a
reordered sum (the reordering allowance from what one output element sums), and programs that race on a GPU
but not in the interpreter (a plain store of an atomic read, a program reading other programs' partials).

Real programs (tests/programs/windows, tests/programs/validation/axpy.py) and real candidates run through
`validate` in the Triton interpreter; the TTIR checks compile real kernels for sm_90 on the CPU.
"""

from __future__ import annotations

import sys

import pytest
import torch
import triton
import triton.language as tl
from conftest import PROGRAMS

from intelliperf.validators import (
    Program,
    Tolerances,
    ValidationSettings,
    capture_reference,
    compare_buffer,
    copy_project,
    validate,
)
from intelliperf.validators.compare import Reordering
from intelliperf.validators.correctness import reordering
from intelliperf.validators.inside.outputs import analyse_ttir
from intelliperf.validators.workers.replay_inputs import tensor_bytes, unseen_shapes
from intelliperf.validators.workers.replay_outputs import ALIAS_CALLS, aliases, call_record

pytestmark = pytest.mark.slow  # every test here runs programs or validations (the fast tier skips them)

AXPY = PROGRAMS / "validation"
WINDOWS = PROGRAMS / "windows"
AXPY_COMMAND = [sys.executable, "axpy.py", "4096"]
LAUNCH = "    axpy_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), alpha, BLOCK=block)\n    return out"


def _kinds(verdict) -> list[str]:
    return [p.kind for p in verdict.problems]


def _copy(project, file: str, edits: list[tuple[str, str]], where) -> Program:
    text = (project / file).read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return copy_project(project, {file: text}, where)


def _captured(tmp_path_factory, program: Program, kernel: str):
    """The reference run of `kernel` in `program`, in the interpreter: a module's fixture."""
    return capture_reference(program, kernel, interpret=True, work_dir=tmp_path_factory.mktemp(kernel))


@pytest.fixture(scope="module")
def axpy_reference(tmp_path_factory):
    return _captured(tmp_path_factory, Program(AXPY, AXPY_COMMAND), "axpy_kernel")


def _axpy(tmp_path, edits) -> Program:
    return Program(_copy(AXPY, "axpy.py", edits, tmp_path / "copy"), AXPY_COMMAND)


# --- 1. aliasing: every launcher call's returned storage against every other's ----------------------------

RING = [
    ("    out = torch.empty_like(x)\n", ""),
    (
        LAUNCH,
        """    ring, turn = RINGS.setdefault((tuple(x.shape), x.dtype, str(x.device)), ([], [0]))
    if len(ring) < 4:
        ring.append(torch.empty_like(x))
    out = ring[turn[0] % 4]
    turn[0] += 1
    axpy_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), alpha, BLOCK=block)
    return out""",
    ),
    ("def axpy(", "RINGS = {}\n\n\ndef axpy("),
]


def test_a_ring_of_four_output_buffers_is_caught_and_fresh_outputs_are_not(axpy_reference, tmp_path):
    """Four buffers per shape, handed out in turn: every value is right when returned, but the fifth call
    overwrites what the first returned. The reference's recorded shape alone has six calls on distinct
    inputs (three refills of the same tensors, three beyond the captured range), every pair compared."""
    runs = [r for r in axpy_reference.replay["runs"] if r["mode"] == "launcher"]
    assert len(runs) >= ALIAS_CALLS and len([r for r in runs if r["shape"] == "recorded"]) >= ALIAS_CALLS
    assert all(shared == [] for r in runs for shared in r["aliases"].values())  # new tensors, every call
    ring = validate(axpy_reference, _axpy(tmp_path / "ring", RING), work_dir=tmp_path / "v-ring")
    assert not ring.correct and "aliased-output" in _kinds(ring), ring.reasons()
    assert any("return[0] of launcher-" in p.message for p in ring.problems if p.kind == "aliased-output")
    honest = validate(  # a fresh output every call, retuned
        axpy_reference,
        _axpy(tmp_path / "fresh", [("block: int = 128", "block: int = 256")]),
        work_dir=tmp_path / "v-fresh",
    )
    assert honest.correct, honest.reasons()


def test_fresh_draws_make_up_six_calls_at_one_shape_where_the_reference_rejects_trials(tmp_path):
    """A reference that refuses non-finite inputs, asked for one trial: 6 calls at the recorded shape ran
    (the trial, the program's own inputs, negative, wide, sparse and edge values), so no fresh draw is
    needed to make up 6, and the ring still shows."""
    check = "def axpy(x: torch.Tensor, y: torch.Tensor, alpha: float, block: int = 128) -> torch.Tensor:\n"
    checked = [
        (check, check + "    if not bool(torch.isfinite(x).all()):\n        raise ValueError('finite x only')\n")
    ]
    project = _copy(AXPY, "axpy.py", checked, tmp_path / "project")
    ref = capture_reference(
        Program(project, AXPY_COMMAND),
        "axpy_kernel",
        interpret=True,
        work_dir=tmp_path / "r",
        settings=ValidationSettings(trials=1),
    )
    runs = {r["label"]: r for r in ref.replay["runs"] if r["mode"] == "launcher"}
    assert "launcher-nonfinite" not in runs
    assert [label for label in runs if "again" in label] == []
    assert len([r for r in runs.values() if r["shape"] == "recorded"]) >= ALIAS_CALLS
    ring = validate(
        ref, Program(_copy(project, "axpy.py", RING, tmp_path / "ring"), AXPY_COMMAND), work_dir=tmp_path / "v"
    )
    assert not ring.correct and "aliased-output" in _kinds(ring), ring.reasons()


def test_aliases_are_found_between_any_two_calls_and_overlapping_views():
    """The comparison itself, on real tensors: views of one arena overlap only where their bytes do."""
    arena = torch.empty(4 * 8)
    x = torch.empty(8)
    calls = [call_record(f"c{i}", arena[(i % 4) * 8 : (i % 4 + 1) * 8], {"x": x}) for i in range(6)]
    calls.append(call_record("in-place", x, {"x": x}))
    found = aliases(calls)
    assert found["c0"]["return[0]"] == ["return[0] of c4"] and found["c5"]["return[0]"] == ["return[0] of c1"]
    assert found["c2"]["return[0]"] == [] and found["in-place"]["return[0]"] == ["arg:x"]


# --- 2. unseen shapes: a little over twice every size that varies ------------------------------------------


def test_a_block_hard_coded_at_twice_the_recorded_size_fails_at_the_larger_unseen_shape(axpy_reference, tmp_path):
    """One program of 8,192 lanes covers the recorded 4,096 elements, the smaller shape and 3/2 of it (6,145);
    the larger unseen shape, 8,705 elements, is past it, and so is the size stretched alone. A block sized
    from the input is right everywhere."""
    shapes = [r["shape"] for r in axpy_reference.replay["runs"] if r["shape"].startswith("unseen")]
    assert shapes[:3] == [
        "unseen, smaller (x=[3071], y=[3071])",
        "unseen, larger (x=[8705], y=[8705])",
        "unseen, quarter (x=[1025], y=[1025])",
    ]
    # as far as the reference runs in a second under the interpreter (the machine decides), and the budget
    far = int(shapes[3].removeprefix("unseen, stretched-4096 (x=[").split("]")[0])
    assert 4 * 4096 < far <= 262143 and shapes[3].endswith(f"y=[{far}])")
    one_program = "    axpy_kernel[(1,)](x, y, out, x.numel(), alpha, BLOCK={})\n    return out"
    cheat = validate(
        axpy_reference, _axpy(tmp_path / "hard", [(LAUNCH, one_program.format("8192"))]), work_dir=tmp_path / "vh"
    )
    assert not cheat.correct, cheat.reasons()
    wrong = [p for p in cheat.problems if p.kind in ("mismatch", "nan", "inf")]
    assert wrong and all("larger" in p.message or "stretched" in p.message for p in wrong), cheat.reasons()
    sized = one_program.format("triton.next_power_of_2(x.numel())")
    honest = validate(axpy_reference, _axpy(tmp_path / "sized", [(LAUNCH, sized)]), work_dir=tmp_path / "vs")
    assert honest.correct, honest.reasons()


def test_the_larger_unseen_shape_is_bounded_by_bytes_but_never_below_three_halves():
    square = {"name": "a", "kind": "tensor", "dtype": "float32", "shape": [4096, 4096]}  # 64 MiB
    assert unseen_shapes([square], grow=True)[0] == {"a": [8705, 8705]}
    cap = 256 << 20
    shapes, _ = unseen_shapes([square], grow=True, max_bytes=cap)
    assert 6145 <= shapes["a"][0] < 8192 and shapes["a"][0] % 2 and tensor_bytes([square], shapes) <= cap
    assert unseen_shapes([square], grow=True, max_bytes=1 << 20)[0] == {"a": [6145, 6145]}  # today's 3/2 at least


# --- 3. the reordering allowance: what one output element sums -------------------------------------------

SCALED = [sys.executable, "scaled_copy.py", "16384", "float16"]
BF16 = "(x * 2).to(tl.bfloat16).to(x.dtype)"  # a float16 value through bfloat16: 3 bits of mantissa fewer


@pytest.fixture(scope="module")
def scaled_reference(tmp_path_factory):
    return _captured(tmp_path_factory, Program(WINDOWS, SCALED), "scale_kernel")


def test_an_element_wise_output_keeps_its_dtypes_tolerance_beside_a_real_sum(scaled_reference, tmp_path):
    """`y` (a plain store) and `acc` (an atomic add into zeros) hold one value of x per element; `total`
    sums all 16,384. Counted as the whole input's terms, bfloat16 copies of y and acc passed as reordered
    sums (a float16 allowance of half the largest value); each now gets float16's own tolerance, through
    the kernel's outputs in-program and through the launcher's results (which kernel argument each is),
    while a retuned kernel's total still sums in another order."""
    m = scaled_reference.manifest
    assert m["accumulated"] == ["acc_ptr", "total_ptr"] and m["reduced"] == ["total_ptr"]
    assert m["adds"] == {"acc_ptr": 4096, "total_ptr": 1} and m["depths"] == {"total_ptr": 4096}
    made = next(r for r in scaled_reference.replay["runs"] if r["label"] == "launcher-larger")["made_of"]
    assert made["return[0]"] == ["y_ptr"] and made["return[1]"] == ["acc_ptr"] and made["return[2]"] == ["total_ptr"]
    store, atomic = "tl.store(y_ptr + offs, x * 2, mask=mask)", "tl.atomic_add(acc_ptr + offs, x * 2, mask=mask)"
    acc = validate(
        scaled_reference,
        Program(_copy(WINDOWS, "scaled_copy.py", [(atomic, atomic.replace("x * 2", BF16))], tmp_path / "a"), SCALED),
        work_dir=tmp_path / "va",
    )
    assert not acc.correct and {p.buffer for p in acc.problems} >= {"acc_ptr", "return[1]"}, acc.reasons()
    assert {p.kind for p in acc.problems} == {"mismatch"}, acc.reasons()
    # with its launcher changed too, the kernel's y is left to the launcher's replays: there, y is y_ptr
    moved = [(store, store.replace("x * 2", BF16)), ("total = torch.zeros(1, device=x.device, dtype=x.dtype)",
                                                     "total = x.new_zeros(1)")]  # fmt: skip
    y = validate(
        scaled_reference,
        Program(_copy(WINDOWS, "scaled_copy.py", moved, tmp_path / "y"), SCALED),
        work_dir=tmp_path / "vy",
    )
    assert not y.correct and {p.buffer for p in y.problems} == {"return[0]", "arg:y_ptr"}, y.reasons()  # (+ kernel's)
    assert any("y_ptr" in c and "launcher's replays" in c for c in y.checks)
    retuned = validate(
        scaled_reference,
        Program(_copy(WINDOWS, "scaled_copy.py", [("block: int = 4096", "block: int = 1024")], tmp_path / "r"), SCALED),
        work_dir=tmp_path / "vr",
    )
    assert retuned.correct, retuned.reasons()


def test_the_terms_of_an_output_are_what_one_element_sums():
    """The counts themselves: an atomic copy of 2^20 float32 values sums one term per element, so a float16
    copy of it (errors up to 2^-11 relative) fails float32's tolerance; counted as the whole input (2^20
    terms: 4 x eps x 1,024 = 4.9e-4 relative to the largest value) it passed."""
    n = 1 << 20
    manifest = {
        "launches": [
            {
                "grid": [256, 1, 1],
                "args": [
                    {"name": "x_ptr", "kind": "tensor", "shape": [n]},
                    {"name": "acc_ptr", "kind": "tensor", "shape": [n]},
                    {"name": "total_ptr", "kind": "tensor", "shape": [1]},
                ],
            }
        ],
        "read": ["x_ptr", "acc_ptr", "total_ptr"],
        "accumulated": ["acc_ptr", "total_ptr"],
        "atomic": ["acc_ptr", "total_ptr"],
        "reduced": ["total_ptr"],
        "adds": {"acc_ptr": 4096, "total_ptr": 1},
        "shared": ["total_ptr"],
        "depths": {"total_ptr": 4096},
    }
    copy = reordering(manifest, ["acc_ptr"])
    assert copy["terms"] == Reordering(atomic=1)
    assert reordering(manifest, ["total_ptr"])["terms"].atomic == n  # 256 adds of 4,096-term sums
    x = torch.randn(n, generator=torch.Generator().manual_seed(0)) * 2
    half = x.half().float()
    as_before = compare_buffer(x, half, name="acc", dispatch=0, tol=Tolerances(), terms=Reordering(atomic=n))
    assert as_before == []  # the window: the whole input's count let the float16 copy through
    found = compare_buffer(x, half, name="acc", dispatch=0, tol=Tolerances(), **copy)
    assert [p.kind for p in found] == ["precision"]
    histogram = {**manifest, "scattered": ["acc_ptr"]}  # the data picks the element: all adds may land on one
    assert reordering(histogram, ["acc_ptr"])["terms"].atomic == n


# --- 4. races the interpreter cannot show ----------------------------------------------------------------

BLOCK_SUMS = [sys.executable, "block_sums.py"]
ATOMIC = "    tl.atomic_add(total_ptr, s)\n"


@pytest.fixture(scope="module")
def block_sums_reference(tmp_path_factory):
    return _captured(tmp_path_factory, Program(WINDOWS, BLOCK_SUMS), "block_sums_kernel")


def _block_sums(tmp_path, edits) -> Program:
    return Program(_copy(WINDOWS, "block_sums.py", edits, tmp_path / "copy"), BLOCK_SUMS)


def test_a_plain_store_of_an_atomic_read_is_a_race(block_sums_reference, tmp_path):
    """`atomic_add(total, 0)` reads the total atomically; storing the sum back plainly loses another
    program's update on a GPU, and the interpreter, one program at a time, gets it right."""
    assert block_sums_reference.manifest["rmw"] == [] and block_sums_reference.manifest["cross"] == []
    stored_back = "    old = tl.atomic_add(total_ptr, 0.0)\n    tl.store(total_ptr, old + s)\n"
    cheat = validate(
        block_sums_reference, _block_sums(tmp_path / "c", [(ATOMIC, stored_back)]), work_dir=tmp_path / "v"
    )
    assert not cheat.correct and "race" in _kinds(cheat), cheat.reasons()
    race = next(p for p in cheat.problems if p.kind == "race")
    assert race.buffer == "total_ptr" and "atomic used as a read" in race.message
    honest = validate(  # the atomic kept, relaxed (no ordering the sum needs); the partials are outputs too
        block_sums_reference,
        _block_sums(tmp_path / "h", [(ATOMIC, ATOMIC.replace("s)", 's, sem="relaxed")'))]),
        work_dir=tmp_path / "vh",
    )
    assert honest.correct, honest.reasons()


def test_a_program_reading_other_programs_partials_in_the_same_launch_is_a_race(block_sums_reference, tmp_path):
    """The last program adds up the partials the others stored: in the interpreter they are all written by
    then; on a GPU the last program id may run first."""
    last = """    if pid == tl.num_programs(0) - 1:
        acc = 0.0
        for i in range(0, tl.num_programs(0)):
            acc += tl.load(partial_ptr + i)
        tl.store(total_ptr, acc)
"""
    cheat = validate(block_sums_reference, _block_sums(tmp_path / "c", [(ATOMIC, last)]), work_dir=tmp_path / "v")
    assert not cheat.correct and "race" in _kinds(cheat), cheat.reasons()
    race = next(p for p in cheat.problems if p.kind == "race")
    assert race.buffer == "partial_ptr" and "other programs' partial results" in race.message


def test_partials_reduced_by_a_second_launch_are_no_race(tmp_path):
    """The honest way: the partials are added up by a launch of their own (FINAL=True), which starts when
    every program of the first has ended. Each launch's kernel is read on its own. (The candidate changes
    the first launch's warps: a retuned block would change the partials, an output like any other.)"""
    command = [sys.executable, "two_pass.py"]
    ref = capture_reference(Program(WINDOWS, command), "partial_sums_kernel", interpret=True, work_dir=tmp_path / "r")
    assert ref.manifest["written"] == ["out_ptr", "partial_ptr"]  # both launches' outputs
    assert ref.manifest["cross"] == [] and ref.manifest["rmw"] == []
    retuned = Program(
        _copy(WINDOWS, "two_pass.py", [("FINAL=False)", "FINAL=False, num_warps=2)")], tmp_path / "c"), command
    )
    verdict = validate(ref, retuned, work_dir=tmp_path / "v")
    assert verdict.correct, verdict.reasons()


@triton.jit
def _split_k(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.program_id(2) * BK + tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


@triton.jit
def _histogram(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    bins = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.atomic_add(hist_ptr + bins, 1.0, mask=offs < n)  # a buffer it adds into and never reads


@triton.jit
def _last_one_counts(x_ptr, partial_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """The last program to finish (an atomic counter says which) adds up the partials: ordered."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(partial_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))
    if tl.atomic_add(out_ptr + 1, 1.0) == tl.num_programs(0) - 1:
        acc = 0.0
        for i in range(0, tl.num_programs(0)):
            acc += tl.load(partial_ptr + i)
        tl.store(out_ptr, acc)


@triton.jit
def _locked(x_ptr, lock_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """A read-modify-write inside a lock: ordered."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    s = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    tl.store(out_ptr, tl.load(out_ptr) + s)
    tl.atomic_xchg(lock_ptr, 0)


def _ttir(fn, signature, constexprs):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    return triton.compile(ASTSource(fn, signature, constexprs), target=GPUTarget("cuda", 90, 32)).asm["ttir"]


def test_honest_atomic_patterns_are_no_race_and_their_terms_are_counted():
    split_k = analyse_ttir(
        _ttir(
            _split_k,
            {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"},
            {"BM": 16, "BN": 32, "BK": 64},
        )
    )
    assert split_k.accumulated == split_k.reduced == {"c_ptr"} and split_k.depths == {"c_ptr": 64}  # the dot's K
    assert split_k.adds == {"c_ptr": 16 * 32} and not split_k.shared and not split_k.scattered
    histogram = analyse_ttir(_ttir(_histogram, {"x_ptr": "*i32", "hist_ptr": "*fp32", "n": "i32"}, {"BLOCK": 64}))
    assert histogram.scattered == {"hist_ptr"} and not histogram.reduced
    signature = {"x_ptr": "*fp32", "partial_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    counted = analyse_ttir(_ttir(_last_one_counts, signature, {"BLOCK": 64}))
    locked = analyse_ttir(
        _ttir(_locked, {"x_ptr": "*fp32", "lock_ptr": "*i32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 64})
    )
    for access in (split_k, histogram, counted, locked):
        assert not access.rmw and not access.cross, access
    assert locked.reduced == {"out_ptr"} and locked.depths == {"out_ptr": 64}


def test_reduction_depths_multiply_along_a_chain_and_a_max_sums_nothing():
    @triton.jit
    def _tile(x_ptr, total_ptr, rows_ptr, peak_ptr, BLOCK: tl.constexpr):
        i = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + i[:, None] * BLOCK + i[None, :])
        tl.store(total_ptr, tl.sum(tl.sum(x, axis=1), axis=0))
        tl.store(rows_ptr + i, tl.sum(x, axis=1))
        tl.store(peak_ptr + i, tl.max(x, axis=1))

    access = analyse_ttir(
        _ttir(_tile, {"x_ptr": "*fp32", "total_ptr": "*fp32", "rows_ptr": "*fp32", "peak_ptr": "*fp32"}, {"BLOCK": 16})
    )
    assert access.depths == {"total_ptr": 256, "rows_ptr": 16} and access.reduced == {"total_ptr", "rows_ptr"}


# --- values the program never passed: a bound met exactly, a dtype ------------------------------------------

CLIPPED = [sys.executable, "clipped_sums.py"]
CLIP = "    clipped = tl.minimum(tl.maximum(x, lo), hi)\n"


@pytest.fixture(scope="module")
def clipped_reference(tmp_path_factory):
    return _captured(tmp_path_factory, Program(WINDOWS, CLIPPED), "clipped_sums_kernel")


def _clipped(tmp_path, edits) -> Program:
    return Program(_copy(WINDOWS, "clipped_sums.py", edits, tmp_path / "p"), CLIPPED)


def test_a_bound_the_data_never_meets_exactly_is_met_at_the_launchers_arguments(clipped_reference, tmp_path):
    """Uniform data never equals `hi`; clamped data does, half of it. A kernel that zeroes values equal to the
    bound (`x < hi` where `x <= hi` was meant) is right on every uniform draw and wrong there; the kernel over a
    wider block is right everywhere."""
    edge = "    clipped = tl.where(x >= hi, 0.0, tl.maximum(x, lo)) + tl.where(x > hi, hi, 0.0)\n"
    cheat = validate(clipped_reference, _clipped(tmp_path / "c", [(CLIP, edge)]), work_dir=tmp_path / "vc")
    assert not cheat.correct and any("at-arguments" in p.message for p in cheat.problems), cheat.reasons()
    # (float16 rounds some uniform values onto the bound too: that trial may see it as well)
    assert all("at-arguments" in p.message or "half" in p.message for p in cheat.problems), cheat.reasons()
    wider = ("BLOCK=triton.next_power_of_2(cols)", "BLOCK=2 * triton.next_power_of_2(cols)")
    fine = validate(clipped_reference, _clipped(tmp_path / "h", [wider]), work_dir=tmp_path / "vh")
    assert fine.correct, fine.reasons()


def test_a_dtype_the_program_never_passes_is_a_trial(clipped_reference, tmp_path):
    """The program passes float32 only; a launcher that takes another path for float16 is tried there, and one
    that computes float16 in float32 is right there too (float64 kept as it is: rounded to float32, it is
    refused, `test_compare_trials`)."""
    shape = "    rows, cols = x.shape\n"
    halved = (shape, shape + "    if x.dtype == torch.float16:\n        cols //= 2\n")
    cheat = validate(clipped_reference, _clipped(tmp_path / "c", [halved]), work_dir=tmp_path / "vc")
    assert not cheat.correct and all("half" in p.message for p in cheat.problems), cheat.reasons()
    wide = (CLIP, "    if x.dtype != tl.float64:\n        x = x.to(tl.float32)\n" + CLIP)
    fine = validate(clipped_reference, _clipped(tmp_path / "h", [wide]), work_dir=tmp_path / "vh")
    assert fine.correct, fine.reasons()


@pytest.fixture(scope="module")
def clipped_128_reference(tmp_path_factory):
    """The rows are 128 wide: the kernel's BLOCK (next_power_of_2(cols)) is compiled for exactly that size."""
    return _captured(tmp_path_factory, Program(WINDOWS, [*CLIPPED, "16", "128"]), "clipped_sums_kernel")


def test_a_size_the_kernel_is_compiled_for_is_varied_where_the_launcher_follows_it(clipped_128_reference, tmp_path):
    """BLOCK equals the width of a row, so the width is a size the kernel is compiled for; the launcher derives
    BLOCK from it, so the trials change it. A block hard-coded at the recorded width drops every column past it
    at a wider row; a launcher that derives the block another way is right everywhere."""
    program = [*CLIPPED, "16", "128"]
    derived = "BLOCK=triton.next_power_of_2(cols)"
    capped = Program(_copy(WINDOWS, "clipped_sums.py", [(derived, "BLOCK=128")], tmp_path / "c"), program)
    cheat = validate(clipped_128_reference, capped, work_dir=tmp_path / "vc")
    assert not cheat.correct and "mismatch" in _kinds(cheat), cheat.reasons()
    twice = (derived, "BLOCK=2 * triton.next_power_of_2(cols)")
    wider = Program(_copy(WINDOWS, "clipped_sums.py", [twice], tmp_path / "h"), program)
    fine = validate(clipped_128_reference, wider, work_dir=tmp_path / "vh")
    assert fine.correct, fine.reasons()


def test_a_tail_dropped_only_at_a_multiple_of_the_block_is_met_at_a_power_of_two(clipped_reference, tmp_path):
    """The recorded rows are 100 wide and the unseen ones odd: a launcher that leaves out the last 32 columns
    where the width is a multiple of 32 is wrong only at such widths, which the power-of-two trial is."""
    shape = "    rows, cols = x.shape\n"
    even = (shape, shape + "    cols = cols - 32 if cols % 32 == 0 and cols > 32 else cols\n")
    cheat = validate(clipped_reference, _clipped(tmp_path / "c", [even]), work_dir=tmp_path / "vc")
    assert not cheat.correct and all("aligned" in p.message for p in cheat.problems), cheat.reasons()


@pytest.fixture(scope="module")
def histogram_reference(tmp_path_factory):
    return _captured(
        tmp_path_factory, Program(WINDOWS, [sys.executable, "ranged_histogram.py"]), "ranged_histogram_kernel"
    )


def test_values_that_become_addresses_carry_nan_under_the_interpreter(histogram_reference, tmp_path):
    """The bins come from x, so on a GPU x keeps its captured range; the interpreter refuses an access out of
    bounds, so there x carries NaN too. A launcher that overwrites the caller's NaN in place (the counts are the
    same) is caught by the input coming back changed; a wider block is right."""
    command = [sys.executable, "ranged_histogram.py"]
    start = "    hist = torch.zeros(bins, device=x.device, dtype=torch.int32)\n"
    scrub = (start, start + "    x.masked_fill_(x != x, lo - 1.0)\n")
    cheat = validate(
        histogram_reference,
        Program(_copy(WINDOWS, "ranged_histogram.py", [scrub], tmp_path / "c"), command),
        work_dir=tmp_path / "vc",
    )
    assert not cheat.correct and any("nonfinite" in p.message for p in cheat.problems), cheat.reasons()
    wider = ("block: int = 256", "block: int = 1024")
    fine = validate(
        histogram_reference,
        Program(_copy(WINDOWS, "ranged_histogram.py", [wider], tmp_path / "h"), command),
        work_dir=tmp_path / "vh",
    )
    assert fine.correct, fine.reasons()


def test_a_read_modify_write_without_an_atomic_at_rows_the_data_picks_is_a_race(tmp_path):
    """A plain load, an add and a plain store of the row the ids name: the interpreter runs the programs one after
    another and gets every update, a GPU loses some where two programs' ids meet. Which rows meet depends on
    the data, so nothing in the code says so; the stores do: two programs stored different values at one
    address, with no lock. The atomics kept with a longer run of tokens per program are right."""
    command = [sys.executable, "scatter_rows.py"]
    reference = capture_reference(
        Program(WINDOWS, command), "scatter_rows_kernel", interpret=True, work_dir=tmp_path / "r"
    )
    atomic = "        tl.atomic_add(out_ptr + row * D + cols, g, mask=keep)\n"
    plain = "        tl.store(out_ptr + row * D + cols, tl.load(out_ptr + row * D + cols, mask=keep) + g, mask=keep)\n"
    racy = Program(_copy(WINDOWS, "scatter_rows.py", [(atomic, plain)], tmp_path / "c"), command)
    cheat = validate(reference, racy, work_dir=tmp_path / "v")
    assert not cheat.correct and "race" in _kinds(cheat), cheat.reasons()
    assert any("plain stores" in p.message for p in cheat.problems if p.kind == "race"), cheat.reasons()
    run = ("tokens: int = 8", "tokens: int = 16")
    honest = validate(
        reference, Program(_copy(WINDOWS, "scatter_rows.py", [run], tmp_path / "h"), command), work_dir=tmp_path / "vh"
    )
    assert honest.correct, honest.reasons()


def test_part_of_the_result_computed_in_torch_is_work_the_kernels_do_not_do(block_sums_reference, tmp_path):
    """The kernel adds its total into a scratch buffer (each dispatch's buffers are the reference's) and the
    launcher returns a total summed in torch: the partials need the kernel, so the call with no-op kernels
    changes them, but the total it still returns as the reference's kernel makes it. The kernels must do the
    work: refused. Keeping the atomic with wider blocks is right."""
    launch = "    block_sums_kernel[(programs,)](x, partial, total, x.numel(), BLOCK=block)\n"
    torch_total = [
        (launch, launch.replace("partial, total,", "partial, scratch,")),
        ("    total = torch.zeros(", "    scratch = torch.zeros(1, device=x.device)\n    total = torch.zeros("),
        ("    return partial, total\n", "    total += x.sum()\n    return partial, total\n"),
    ]
    cheat = validate(block_sums_reference, _block_sums(tmp_path / "c", torch_total), work_dir=tmp_path / "v")
    assert not cheat.correct and "not-launched" in _kinds(cheat), cheat.reasons()
    assert any("return[1]: 1 of the 1 elements" in p.message for p in cheat.problems), cheat.reasons()
    wider = _block_sums(tmp_path / "h", [("block: int = 256", "block: int = 512")])
    assert validate(block_sums_reference, wider, work_dir=tmp_path / "vh").correct


def test_a_block_size_the_program_never_passes_is_a_power_of_two_away(histogram_reference, tmp_path):
    """The program always launches with blocks of 256; a kernel whose offsets say 256 where BLOCK was meant
    is right there. The counts trial's 513 is no block size (the reference rejects it); the powers trial passes
    512, where it is wrong. Offsets by BLOCK with a wider default block are right."""
    command = [sys.executable, "ranged_histogram.py"]
    offsets = "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    literal = (offsets, offsets.replace("tl.program_id(0) * BLOCK", "tl.program_id(0) * 256"))
    cheat = validate(
        histogram_reference,
        Program(_copy(WINDOWS, "ranged_histogram.py", [literal], tmp_path / "c"), command),
        work_dir=tmp_path / "vc",
    )
    assert not cheat.correct and any("powers" in p.message for p in cheat.problems), cheat.reasons()
    assert histogram_reference.replay["runs"] and any(
        r["label"] == "launcher-powers" for r in histogram_reference.replay["runs"]
    )
