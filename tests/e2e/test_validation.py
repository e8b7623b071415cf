"""The validators: output analysis, comparator, capture, replay, guards, isolation, statistics.

End-to-end tests run a real program (tests/programs/validation/axpy.py) and real candidates,
each a copy of it with one trick, through the Triton interpreter in subprocesses.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from conftest import PROGRAMS, REPO, doc_block

from intelliperf.validators import (
    Program,
    Tolerances,
    ValidationSettings,
    capture_reference,
    compare_buffer,
    copy_project,
    judge,
    speedup_interval,
    validate,
)
from intelliperf.validators.compare import Reordering, agrees, dtype_name, identical, judged
from intelliperf.validators.inside.outputs import analyse_ttir
from intelliperf.validators.workers.replay_inputs import unseen_shapes

AXPY = PROGRAMS / "validation"
COMMAND = [sys.executable, "axpy.py", "4096"]
TOL = Tolerances()

# --- which arguments a kernel writes (TTIR, compiled for sm_90 on the CPU) ---------------------


@triton.jit
def _gather_add(x_ptr, idx_ptr, out_ptr, n, step, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    p = out_ptr
    for _ in range(2):
        p += step  # a pointer carried through a loop
    j = tl.load(idx_ptr + offs)
    tl.atomic_add(p + offs, tl.load(x_ptr + j, mask=offs < n))  # a loaded index is not a pointer's origin


@triton.jit
def _in_place(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def _ttir(fn, signature, constexprs):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    return triton.compile(ASTSource(fn, signature, constexprs), target=GPUTarget("cuda", 90, 32)).asm["ttir"]


def test_outputs_follow_pointers_not_loaded_indices():
    ttir = _ttir(
        _gather_add,
        {"x_ptr": "*fp32", "idx_ptr": "*i32", "out_ptr": "*fp32", "n": "i32", "step": "i32", "BLOCK": "constexpr"},
        {"BLOCK": 64},
    )
    access = analyse_ttir(ttir)
    assert access.written == {"out_ptr"}
    assert access.accumulated == {"out_ptr"}  # a float atomic add: order-dependent rounding allowed
    assert access.read == {"x_ptr", "idx_ptr", "out_ptr"}


def test_in_place_kernel_writes_its_input():
    access = analyse_ttir(_ttir(_in_place, {"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 64}))
    assert access.written == {"x_ptr"} and access.read == {"x_ptr"} and not access.accumulated
    assert not access.reduced  # element by element: no sum whose order a retuning could change


@triton.jit
def _sums_and_copy(x_ptr, sums_ptr, copy_ptr, w_ptr, dots_ptr, m, n, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    total = tl.zeros((BLOCK,), tl.float32)
    dst = copy_ptr + cols
    for start in range(0, m, BLOCK):  # a pointer carried through the loop is no accumulator
        rows = start + tl.arange(0, BLOCK)
        total += tl.sum(tl.load(x_ptr + rows[:, None] * n + cols[None, :]), axis=0)
        tl.store(dst, tl.load(x_ptr + start * n + cols))
        dst += n
    tl.store(sums_ptr + cols, total)
    tile = tl.load(x_ptr + cols[:, None] * n + cols[None, :])
    tl.store(dots_ptr + cols[:, None] * BLOCK + cols[None, :], tl.dot(tile, tl.load(w_ptr + cols[:, None] + cols)))


def test_outputs_a_reduction_made_are_told_from_copies():
    """A retuned reduction sums in another order (tl.sum's tree, the loop's blocks, tl.dot's K split), so
    its outputs get the reordering allowance; a copy made in the same kernel keeps the exact tolerance."""
    ptr = "*fp32"
    signature = {"x_ptr": ptr, "sums_ptr": ptr, "copy_ptr": ptr, "w_ptr": ptr, "dots_ptr": ptr, "m": "i32", "n": "i32"}
    access = analyse_ttir(_ttir(_sums_and_copy, {**signature, "BLOCK": "constexpr"}, {"BLOCK": 32}))
    assert access.written == {"sums_ptr", "copy_ptr", "dots_ptr"}
    assert access.reduced == {"sums_ptr", "dots_ptr"}


@triton.jit
def _racy_asm(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Every thread of a CTA writes one shared-memory word and reads it back, no barrier: a race racecheck
    reports; the output is x + 1 all the same."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    junk = tl.inline_asm_elementwise(
        "{ .shared .align 4 .b32 slot; st.shared.b32 [slot], $1; ld.shared.b32 $0, [slot]; }",
        "=r,r",
        [offs],
        dtype=tl.int32,
        is_pure=False,
        pack=1,
    )
    tl.store(out_ptr + offs, x + 1.0 + (junk * 0).to(tl.float32), mask=offs < n)


def test_racecheck_runs_the_first_ctas_only_where_a_race_would_be_the_compilers():
    """racecheck's grid cap: x, then y, then z, at most the limit; a kernel with atomics or inline assembly
    keeps its full grid (checked on the Triton IR compiled for sm_90 here, as the worker reads it there)."""
    from intelliperf.validators.workers.racecheck import capped, why_full_grid

    assert capped((1024,), 132) == (132,) and capped((1024, 8, 2), 132) == (132, 1, 1)
    assert capped((4, 1000, 3), 132) == (4, 33, 1) and capped((7, 1, 1), 132) == (7, 1, 1)
    assert capped((0, 5), 132) == (0, 5) and capped((1, 1, 500), 132) == (1, 1, 132)  # an empty launch stays empty
    plain = _ttir(_in_place, {"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 64})
    atomic = _ttir(
        _gather_add,
        {"x_ptr": "*fp32", "idx_ptr": "*i32", "out_ptr": "*fp32", "n": "i32", "step": "i32", "BLOCK": "constexpr"},
        {"BLOCK": 64},
    )
    asm = _ttir(_racy_asm, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 256})
    assert why_full_grid(plain) is None
    assert why_full_grid(atomic) == "atomics" and why_full_grid(asm) == "inline assembly"


def test_only_the_racecheck_workers_own_notes_reach_the_verdict(tmp_path, monkeypatch):
    """The racecheck worker's replay.json is the candidate's to write: only short notes of the worker's form
    get through, scrubbed; anything else (not JSON, not a dict, other notes) adds nothing."""
    from intelliperf.validators.runs.sanitizers import racecheck_notes

    folder = tmp_path / "racecheck"
    folder.mkdir()
    assert racecheck_notes(folder) == []
    (folder / "replay.json").write_text("[1, 2")
    assert racecheck_notes(folder) == []
    (folder / "replay.json").write_text(json.dumps(["racecheck ran k on every CTA (atomics)"]))
    assert racecheck_notes(folder) == []
    secret = "hf_racecheck_secret_3"
    monkeypatch.setenv("HF_TOKEN", secret)
    notes = ["accepted: 10x faster", 7, f"racecheck ran k on its first 132 of 1,024 CTAs {secret}" + "x" * 500]
    (folder / "replay.json").write_text(json.dumps({"notes": notes * 5}))
    said = racecheck_notes(folder)
    assert len(said) == 5 and all(n.startswith("racecheck ran k on its first 132") for n in said)
    assert all(secret not in n and "[redacted HF_TOKEN]" in n and len(n) <= 310 for n in said)


# --- the comparator ----------------------------------------------------------------------------


def _kinds(problems):
    return [p.kind for p in problems]


def test_dtype_aware_tolerances():
    ref = torch.linspace(1, 2, 1000)
    assert compare_buffer(ref, ref * (1 + 5e-6), name="o", dispatch=0, tol=TOL) == []
    problems = compare_buffer(ref, ref * (1 + 1e-4), name="o", dispatch=0, tol=TOL)
    assert _kinds(problems) == ["mismatch"] and problems[0].elements == 1000
    assert problems[0].examples[0].index == [0] and "max rel error" in problems[0].message
    half = ref.half()
    assert compare_buffer(half, (half.float() * (1 + 4e-4)).half(), name="o", dispatch=0, tol=TOL) == []
    loose = Tolerances(overrides={"float32": (1e-3, 1e-6)})
    assert compare_buffer(ref, ref * (1 + 1e-4), name="o", dispatch=0, tol=loose) == []
    ints = torch.arange(10, dtype=torch.int32)
    assert _kinds(compare_buffer(ints, ints + (ints == 3), name="h", dispatch=0, tol=TOL)) == ["mismatch"]


def test_bit_identical_buffers_pass_at_once_and_one_changed_bit_is_still_judged():
    poisoned = torch.full((1000,), float("nan"))
    poisoned[:900] = torch.linspace(1, 2, 900)
    assert compare_buffer(poisoned, poisoned.clone(), name="o", dispatch=None, tol=TOL, poisoned=True) == []
    ints = torch.arange(10, dtype=torch.int32).reshape(2, 5).t()  # not contiguous
    assert compare_buffer(ints, ints.clone(), name="h", dispatch=0, tol=TOL) == []
    signed_zero = torch.zeros(4)
    assert compare_buffer(signed_zero, -signed_zero, name="o", dispatch=0, tol=TOL) == []  # other bits, same value
    flipped = poisoned.clone()
    flipped.view(torch.int32)[950] ^= 1  # a NaN's payload: still a NaN where the reference wrote none
    assert compare_buffer(poisoned, flipped, name="o", dispatch=None, tol=TOL, poisoned=True) == []
    flipped.view(torch.int32)[5] ^= 1 << 22  # a written value's mantissa
    assert _kinds(compare_buffer(poisoned, flipped, name="o", dispatch=None, tol=TOL, poisoned=True)) == ["mismatch"]


def _edited(base: torch.Tensor, rng: np.random.Generator) -> torch.Tensor:
    """`base` with a few random edits of the kinds the comparator must judge."""
    cand = base.clone()
    flat = cand.view(-1)
    for _ in range(int(rng.integers(0, 4))):
        i = torch.from_numpy(rng.integers(0, flat.numel(), size=int(rng.integers(1, 5))))
        edit = rng.choice(["within", "beyond", "nan", "inf", "-0", "zero-all", "payload", "huge"])
        if edit == "within":
            flat[i] = flat[i] * (1 + float(rng.uniform(-1, 1)) * TOL.for_dtype(dtype_name(base))[0] / 4)
        elif edit == "beyond":
            flat[i] = flat[i] * (1 + 10 * TOL.for_dtype(dtype_name(base))[0]) + 1e-3
        elif edit == "nan":
            flat[i] = float("nan")
        elif edit == "inf":
            flat[i] = float(rng.choice([float("inf"), -float("inf")]))
        elif edit == "-0":
            flat[i] = -flat[i] * 0
        elif edit == "zero-all":
            flat.zero_()
        elif edit == "payload":  # another NaN (or a neighbouring value): other bits
            flat.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[flat.element_size()])[i] ^= 1
        else:
            flat[i] = flat[i] * 1e4
    return cand


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_the_quick_screen_decides_as_the_full_comparison_would(dtype):
    """`agrees` (only the elements whose bits differ, converted and judged) must pass exactly the
    candidates the full float64 comparison passes: a screen that let one through would accept a wrong
    output without the full comparison ever seeing it."""
    rng = np.random.default_rng(0)
    decided = {True: 0, False: 0, None: 0}
    for case in range(300):
        base = torch.from_numpy(rng.standard_normal(int(rng.integers(1, 300)))).to(dtype)
        if case % 5 == 0:
            base[: base.numel() // 2] = 0  # outputs that are mostly zeros (padding, masks)
        if case % 13 == 0:
            base[3:] = 0  # a few values: a candidate that zeroes them differs in a few elements only
        if case % 7 == 0:
            base[-1] = float("nan")  # a reference NaN (or a poisoned element the reference left)
        if case % 11 == 0:
            base[0] = float("inf")
        cand = _edited(base, rng)
        terms = Reordering(atomic=int(rng.choice([0, 1000])), reduced=int(rng.choice([0, 1000])))
        poisoned = bool(case % 3 == 0)
        full = judged(base, cand, "o", {}, TOL, terms, poisoned)
        quick = agrees(base, cand, TOL, terms)
        decided[quick] += 1
        assert quick is None or quick == (full == []), (case, full, base, cand)
        assert (
            compare_buffer(
                base,
                cand,
                name="o",
                dispatch=0,
                tol=TOL,
                terms=terms,
                poisoned=poisoned,
            )
            == []
        ) == (full == [])
    assert decided[True] > 30 and decided[False] > 30  # both answers were exercised
    ref = torch.zeros(64)
    ref[0], ref[1] = 5e-7, float("nan")  # one value, within atol of zero
    zeroed = torch.zeros(64)
    zeroed[1] = float("nan")
    zeroed.view(torch.int32)[1] ^= 1  # a NaN with another payload is no value written
    assert _kinds(judged(ref, zeroed, "o", {}, TOL, Reordering(), False)) == ["all-zero"]
    assert agrees(ref, zeroed, TOL, Reordering()) is False


def test_nan_inf_zeros_shape_dtype():
    ref = torch.tensor([1.0, float("inf"), -2.0, 3.0])
    assert (
        _kinds(
            compare_buffer(ref, torch.tensor([1.0, float("inf"), float("nan"), 3.0]), name="o", dispatch=1, tol=TOL)
        )[0]
        == "nan"
    )
    assert "inf" in _kinds(
        compare_buffer(ref, torch.tensor([1.0, float("-inf"), -2.0, 3.0]), name="o", dispatch=1, tol=TOL)
    )
    tiny = torch.full((64,), 1e-8)  # within atol=1e-6 of zero, but zero is not the answer
    assert _kinds(compare_buffer(tiny, torch.zeros(64), name="o", dispatch=1, tol=TOL)) == ["all-zero"]
    assert _kinds(compare_buffer(ref, ref[:3], name="o", dispatch=1, tol=TOL)) == ["shape"]
    assert _kinds(compare_buffer(ref, ref.double(), name="o", dispatch=1, tol=TOL)) == ["dtype"]


def test_poisoned_elements_the_candidate_never_wrote():
    ref = torch.randn(256)
    cand = ref.clone()
    cand[200:] = float("nan")  # still the poison
    problems = compare_buffer(ref, cand, name="o", dispatch=None, tol=TOL, poisoned=True)
    assert _kinds(problems) == ["unwritten"] and problems[0].elements == 56


def test_float32_math_done_in_float16_is_named():
    ref = torch.randn(4096)
    problems = compare_buffer(ref, ref.half().float(), name="o", dispatch=0, tol=TOL)
    assert _kinds(problems) == ["precision"] and "float16" in problems[0].message


def test_reordered_float_sum_passes_and_a_dropped_block_fails():
    """16M floats: every element added one by one in order (what per-lane atomics do) against a
    sum of per-block partial sums (the pre-reduced kernel). Both are correct; a sum that drops
    one block of 1024 (of typical size) is not."""
    n, block = 1 << 24, 1024
    x = torch.randn(n, generator=torch.Generator().manual_seed(0)).numpy()
    per_element = np.cumsum(x, dtype=np.float32)[-1:]
    partials = x.reshape(-1, block).sum(axis=1, dtype=np.float32)
    pre_reduced = np.cumsum(partials, dtype=np.float32)[-1:]
    typical = np.argsort(np.abs(partials))[partials.size // 2]  # a block whose sum has the median size
    dropped = np.cumsum(np.delete(partials, typical), dtype=np.float32)[-1:]
    ref = torch.from_numpy(pre_reduced)
    assert (
        compare_buffer(ref, torch.from_numpy(per_element), name="out", dispatch=0, tol=TOL, terms=Reordering(atomic=n))
        == []
    )
    assert _kinds(
        compare_buffer(ref, torch.from_numpy(dropped), name="out", dispatch=0, tol=TOL, terms=Reordering(atomic=n))
    ) == ["mismatch"]
    # without knowing it is an accumulation, the plain float32 tolerance would reject the reordering
    assert compare_buffer(ref, torch.from_numpy(per_element), name="out", dispatch=0, tol=TOL) != []


def _blocked_column_sums(x: np.ndarray, block: int) -> np.ndarray:
    """Column sums as a tiled kernel makes them in float32: each block of rows summed, then added in order."""
    total = np.zeros(x.shape[1], np.float32)
    for start in range(0, x.shape[0], block):
        total += x[start : start + block].sum(axis=0, dtype=np.float32)
    return total


def test_a_retuned_reduction_passes_and_a_wrong_or_cheaper_one_fails():
    """Mixed-sign column sums (the replay's wide inputs) with 64-row and 128-row blocks: both correct, yet
    elements that cancel differ past float32's rtol. With the reduction's terms the retuning passes; a
    sum that drops the last row, or reads float16 or bfloat16 copies of its inputs, still fails."""
    m = 4096
    x = (torch.rand(m, 1024, generator=torch.Generator().manual_seed(3)) * 32 - 16).numpy()
    ref = torch.from_numpy(_blocked_column_sums(x, 64))

    def judged(values: np.ndarray, terms: int | None = m):
        return compare_buffer(
            ref, torch.from_numpy(values), name="out", dispatch=0, tol=TOL, terms=Reordering(reduced=terms)
        )

    retuned = _blocked_column_sums(x, 128)
    assert _kinds(judged(retuned, terms=None)) == ["mismatch"]  # the exact tolerance rejects a correct kernel
    assert judged(retuned) == []
    assert judged(_blocked_column_sums(x[:-1], 128)) != []
    for cheaper in (torch.float16, torch.bfloat16):
        assert judged(_blocked_column_sums(torch.from_numpy(x).to(cheaper).float().numpy(), 128)) != []
    # float16 outputs of a reduction were summed in float32: the allowance is float32's, not float16's
    half = ref.half()
    reordered = compare_buffer(
        half, (half.float() * (1 + 3e-3)).half(), name="o", dispatch=0, tol=TOL, terms=Reordering(reduced=m)
    )
    assert _kinds(reordered) in (["mismatch"], ["precision"])


# --- statistics --------------------------------------------------------------------------------


def test_identical_timings_are_never_faster():
    rng = np.random.default_rng(1)
    false_faster = 0
    for trial in range(100):
        base = 0.05 * (1 + 0.02 * rng.standard_normal(60)) + rng.exponential(0.001, 60)
        other = 0.05 * (1 + 0.02 * rng.standard_normal(60)) + rng.exponential(0.001, 60)
        faster, _ = judge(speedup_interval(base, other, seed=trial))
        false_faster += faster
    assert false_faster == 0


def test_a_clear_win_is_faster_and_a_loss_is_slower():
    rng = np.random.default_rng(2)
    ref = 1.0 + 0.01 * rng.standard_normal(40)
    fast = speedup_interval(ref, 0.5 + 0.005 * rng.standard_normal(40))
    assert judge(fast)[0] and 1.9 < fast.low < fast.estimate < fast.high < 2.1
    slow_verdict, problem = judge(speedup_interval(ref, 1.2 + 0.01 * rng.standard_normal(40)))
    assert not slow_verdict and problem.kind == "slower"


# --- end to end: real programs, real candidates, the interpreter ------------------------------


@pytest.fixture(scope="module")
def axpy_reference(tmp_path_factory):
    return capture_reference(
        Program(AXPY, COMMAND), "axpy_kernel", interpret=True, work_dir=tmp_path_factory.mktemp("reference")
    )


def _candidate(tmp_path, edits: list[tuple[str, str]]) -> Program:
    text = (AXPY / "axpy.py").read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return Program(copy_project(AXPY, {"axpy.py": text}, tmp_path / "copy"), COMMAND)


STORE = "tl.store(out_ptr + offs, alpha * x + y, mask=mask)"
LAUNCH = "    axpy_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), alpha, BLOCK=block)\n    return out"

TRICKS = {
    "returns zeros": ([(STORE, "tl.store(out_ptr + offs, x * 0.0, mask=mask)")], "all-zero"),
    "caches the result keyed on pointers": (
        [
            (
                LAUNCH,
                """    key = (x.data_ptr(), y.data_ptr())
    if key in CACHE:
        return CACHE[key]
    axpy_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), alpha, BLOCK=block)
    CACHE[key] = out
    return out""",
            ),
            ("def axpy(", "CACHE = {}\n\n\ndef axpy("),
        ],
        "stale-result",
    ),
    "writes only part of the output": (
        [
            (
                "tl.store(out_ptr + offs, alpha * x + y, mask=mask)",
                "tl.store(out_ptr + offs, alpha * x + y, mask=mask & (offs < n - 100))",
            )
        ],
        "unwritten",
    ),
    # (the tail it never writes is the launcher's torch.empty, which starts as zeros or stale values in a
    # candidate's replays, never as the reference's numbers)
    "drops the tail block": ([("triton.cdiv(x.numel(), block)", "x.numel() // block")], "mismatch"),
    "skips every other dispatch": (
        [
            (
                LAUNCH,
                """    global CALLS
    CALLS += 1
    if CALLS % 2 == 0:
        return torch.zeros_like(x)
    axpy_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), alpha, BLOCK=block)
    return out""",
            ),
            ("def axpy(", "CALLS = 0\n\n\ndef axpy("),
        ],
        "dispatch-count",
    ),
    "uses its input as scratch space": (  # out is right; x, which the reference leaves alone, is not
        [(STORE, STORE + "\n    tl.store(x_ptr + offs, y, mask=mask)")],
        "mismatch",
    ),
    # the in-program capture and the replay read results through torch: a candidate that replaces what they
    # call (here detach, halving what is read back of a kernel that doubles its output) is named for it
    "doubles its output and replaces torch.Tensor.detach to halve what the checks read": (
        [
            (STORE, "tl.store(out_ptr + offs, 2.0 * (alpha * x + y), mask=mask)"),
            (
                "def axpy(",
                "_DETACH = torch.Tensor.detach\n"
                "torch.Tensor.detach = lambda self: _DETACH(self) * 0.5 if self.dtype == torch.float32 "
                "else _DETACH(self)\n\n\ndef axpy(",
            ),
        ],
        "capture",
    ),
    # the kernels must do the work: torch computes the result in the launcher, the kernel copies it onto itself
    "computes the result with torch in the launcher, the kernel adding zero": (
        [
            (STORE, "tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask) + 0.0, mask=mask)"),
            ("alpha, BLOCK: tl.constexpr):", "alpha, unused, BLOCK: tl.constexpr):"),  # (no kernel-level replay)
            ("    out = torch.empty_like(x)\n", "    out = alpha * x + y\n"),
            ("x.numel(), alpha, BLOCK=block)", "x.numel(), alpha, 0, BLOCK=block)"),
        ],
        "not-launched",
    ),
    # under the interpreter a store past a buffer writes into its neighbour silently: the replays refuse it
    "writes 8 elements past the end of its output": (
        [(STORE, "tl.store(out_ptr + offs, alpha * x + y, mask=offs < n + 8)")],
        "crash",
    ),
    # right in its first autotune config only: under the interpreter the replays run every config in turn
    "wrong in its second autotune config": (
        [
            (
                "@triton.jit\ndef axpy_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):",
                "@triton.autotune(configs=[triton.Config({'SCALE': 1.0}), triton.Config({'SCALE': 2.0})], key=['n'])\n"
                "@triton.jit\n"
                "def axpy_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr, SCALE: tl.constexpr):",
            ),
            (STORE, "tl.store(out_ptr + offs, SCALE * (alpha * x + y), mask=mask)"),
        ],
        "mismatch",
    ),
    "downgrades float32 math to float16": (
        [(STORE, "tl.store(out_ptr + offs, (alpha * x.to(tl.float16) + y.to(tl.float16)).to(tl.float32), mask=mask)")],
        "precision",
    ),
}


@pytest.mark.parametrize("trick", list(TRICKS))
def test_adversarial_candidate_is_rejected(trick, axpy_reference, tmp_path):
    edits, kind = TRICKS[trick]
    verdict = validate(axpy_reference, _candidate(tmp_path, edits), work_dir=tmp_path / "v")
    assert not verdict.correct and not verdict.accepted
    assert kind in _kinds(verdict.problems), verdict.reasons()
    if kind == "capture":
        assert "torch.Tensor.detach" in verdict.reasons(), verdict.reasons()
    if trick == "uses its input as scratch space":  # the reference saved x as UNCHANGED: read from its inputs
        assert any(p.buffer == "arg:x" for p in verdict.problems), verdict.reasons()


def test_correct_candidates_are_accepted(axpy_reference, tmp_path):
    same = validate(axpy_reference, _candidate(tmp_path / "a", []), work_dir=tmp_path / "va")
    assert same.correct, same.reasons()
    assert any("4 of 4 dispatches" in c for c in same.checks)
    assert any("unseen" in c for c in same.checks) and any("poisoned" in c for c in same.checks)
    assert same.faster is None and "interpreter" in same.notes[-1]  # no GPU: no time, said so
    # The candidate's launcher trials at unseen shapes ran first (their kernels compile for other sizes, the
    # recorded shape's is the program's), each with its seconds; all of the reference's trials ran.
    runs = json.loads((tmp_path / "va" / "replay" / "replay.json").read_text())["runs"]
    shapes = [run["shape"] for run in runs if run["mode"] == "launcher"]
    assert shapes[0].startswith("unseen") and shapes[-1] == "recorded"
    assert sorted(shapes, key=lambda shape: shape == "recorded") == shapes and "recorded" in shapes
    assert {run["label"] for run in runs} == {run["label"] for run in axpy_reference.replay["runs"]}
    assert all(run["seconds"] >= 0 for run in runs)
    retuned = validate(
        axpy_reference, _candidate(tmp_path / "b", [("block: int = 128", "block: int = 512")]), work_dir=tmp_path / "vb"
    )
    assert retuned.correct, retuned.reasons()


def test_unseen_shapes_keep_the_sizes_a_kernel_indexes():
    records = {"name": "records", "kind": "tensor", "dtype": "float32", "shape": [4096, 8]}
    bins = {"name": "bins", "kind": "tensor", "dtype": "int64", "shape": [4096], "min": 0.0, "max": 15.0}
    hist = {"name": "hist", "kind": "tensor", "dtype": "float32", "shape": [16]}
    count = {"name": "count", "kind": "scalar", "value": 4096}
    shapes, scalars = unseen_shapes([records, bins, hist, count], grow=False)
    assert shapes == {"records": [3071, 5], "bins": [3071], "hist": [16]} and scalars == {"count": 3071}
    shapes, _ = unseen_shapes([records, bins, hist, count], grow=True)
    assert shapes["records"] == [8705, 17] and shapes["hist"] == [16]  # the bins' values index it


def test_a_record_layout_the_kernel_is_compiled_for_survives_the_unseen_shapes(tmp_path):
    """aos_gather strides its records by FIELDS=8, a constexpr: an unseen shape of 5 fields would make the
    reference read past its input, and a correct retuning would be rejected for garbage that differs."""
    command = [sys.executable, "aos_gather.py", "--m", "64", "--n", "96", "--repeat", "1"]
    project = REPO / "examples" / "memory_access"
    ref = capture_reference(Program(project, command), "aos_gather_kernel", interpret=True, work_dir=tmp_path / "r")
    unseen = [run["shape"] for run in ref.replay["runs"] if run["shape"].startswith("unseen")]
    assert unseen[:3] == [
        "unseen, smaller (records=[575, 8])",
        "unseen, larger (records=[1633, 8])",
        "unseen, quarter (records=[193, 8])",
    ]
    assert all(shape.endswith(", 8])") for shape in unseen), unseen  # FIELDS=8 kept in every one
    text = (project / "aos_gather.py").read_text().replace("block: int = 1024", "block: int = 256")
    retuned = Program(copy_project(project, {"aos_gather.py": text}, tmp_path / "copy"), command)
    verdict = validate(ref, retuned, work_dir=tmp_path / "v")
    assert verdict.correct, verdict.reasons()


def test_column_sums_retuned_to_other_blocks_are_correct_and_one_that_drops_rows_is_not(tmp_path):
    """The replay's wide inputs are mixed-sign: column sums cancel, and a 128-row tiling rounds elements
    differently past float32's rtol. The capture marks the sums as a reduction's, so that is allowed;
    a candidate that skips the last block of rows is still rejected (the allowance against wrong and
    cheaper sums: test_a_retuned_reduction_passes_and_a_wrong_or_cheaper_one_fails)."""
    command = [sys.executable, "column_sums.py", "--repeat", "1"]
    project = REPO / "examples" / "bank_conflict"
    ref = capture_reference(Program(project, command), "column_sums_kernel", interpret=True, work_dir=tmp_path / "r")
    assert ref.manifest["reduced"] == ["out_ptr"]
    source = (project / "column_sums.py").read_text()
    edits = {
        "retuned": ("BLOCK_M=block, BLOCK_N=block", "BLOCK_M=2 * block, BLOCK_N=block"),
        "drops rows": ("for start in range(0, m, BLOCK_M)", "for start in range(0, m - BLOCK_M, BLOCK_M)"),
    }
    verdicts = {}
    for name, (old, new) in edits.items():
        assert old in source
        copy = copy_project(project, {"column_sums.py": source.replace(old, new)}, tmp_path / name)
        verdicts[name] = validate(ref, Program(copy, command), work_dir=tmp_path / f"v-{name}")
    assert verdicts["retuned"].correct, verdicts["retuned"].reasons()
    assert not verdicts["drops rows"].correct  # (here the program's own check already fails it)


def test_a_crash_a_hang_and_an_import_error_are_failed_validations(axpy_reference, tmp_path):
    crash = validate(
        axpy_reference,
        _candidate(tmp_path / "a", [(LAUNCH, "    raise RuntimeError('boom')")]),
        work_dir=tmp_path / "va",
    )
    assert _kinds(crash.problems) == ["crash"] and "RuntimeError: boom" in crash.problems[0].message
    sleep = ("def main() -> None:\n", "def main() -> None:\n    import time; time.sleep(60)\n")
    hang = validate(
        axpy_reference,
        _candidate(tmp_path / "b", [sleep]),
        work_dir=tmp_path / "vb",
        settings=ValidationSettings(timeout_s=3),
    )
    assert _kinds(hang.problems) == ["timeout"]
    bad_import = ("import torch\n", "import torch\nimport no_such_mod\n")
    missing = validate(axpy_reference, _candidate(tmp_path / "c", [bad_import]), work_dir=tmp_path / "vc")
    assert _kinds(missing.problems) == ["crash"] and "no_such_mod" in missing.problems[0].message


def test_secrets_never_reach_candidate_code(axpy_reference, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-test")
    monkeypatch.setenv("MY_SERVICE_PASSWORD", "hunter2")
    monkeypatch.setenv("HARMLESS", "1")
    monkeypatch.setenv("MIRROR", "https://user:pw-123456@mirror.example/simple")  # a secret by its value
    spy = (
        "def main() -> None:\n",
        "def main() -> None:\n    open('env.txt', 'w').write(' '.join(sorted(os.environ)))\n",
    )
    candidate = _candidate(tmp_path, [spy])
    verdict = validate(
        axpy_reference, candidate, work_dir=tmp_path / "v", settings=ValidationSettings(secrets=["MY_SERVICE_PASSWORD"])
    )
    assert verdict.correct, verdict.reasons()
    seen = (candidate.root / "env.txt").read_text().split()
    assert "PATH" in seen and "HARMLESS" in seen  # configuration passes: the same workload as profiled
    assert not {"OPENAI_API_KEY", "GITHUB_TOKEN", "MY_SERVICE_PASSWORD", "MIRROR"} & set(seen)


# compute-sanitizer is NVIDIA's; on the CPU a stand-in at the edge of the machine takes its command line
# (`--tool T --error-exitcode N --print-limit M <worker>`) and runs the warm worker as its child, as it does.
FAKE_SANITIZER = """#!{python}
import subprocess, sys
args = sys.argv[1:]
tool, code = args[args.index("--tool") + 1], int(args[args.index("--error-exitcode") + 1])
rc = subprocess.call(args[args.index("--show-backtrace") + 2 :])  # the worker: its job's path comes on stdin
print("========= COMPUTE-SANITIZER", tool)
if {finds} and tool == "memcheck" and rc == 0:
    print("========= Invalid __global__ write of size 4 bytes at axpy_kernel+0x90")
    print("========= ERROR SUMMARY: 1 error")
    sys.exit(code)
sys.exit(rc)
"""


def _use_fake_sanitizer(root, finds: bool, monkeypatch) -> None:
    """The stand-in, inside the candidate's copy (the sandbox shows it, as it would /usr/local/cuda)."""
    tool = root / "compute-sanitizer"
    tool.write_text(FAKE_SANITIZER.format(python=sys.executable, finds=finds))
    tool.chmod(0o755)
    monkeypatch.setenv("INTELLIPERF_COMPUTE_SANITIZER", str(tool))


@pytest.mark.parametrize(("finds", "turns"), [(False, False), (True, False), (True, True)])
def test_compute_sanitizer_runs_beside_the_replay_and_a_finding_rejects(
    finds, turns, axpy_reference, tmp_path, monkeypatch
):
    """`turns`: inputs over the limit, so the sanitizers get their jobs after the replay, not beside it."""
    if turns:
        monkeypatch.setattr(sys.modules["intelliperf.validators.runs.beside"], "AHEAD_INPUTS_BYTES", 1000)
    candidate = _candidate(tmp_path, [])
    _use_fake_sanitizer(candidate.root, finds, monkeypatch)
    work = tmp_path / "v"
    verdict = validate(axpy_reference, candidate, work_dir=work, settings=ValidationSettings(sanitizer=True))
    for check in ("memcheck", "racecheck"):
        # each worker ran the launcher's first trial while the program ran, in its own folder; the job then said
        # it stands, and the kernel's own trial (the same kernel at the same shape) was left out
        job = json.loads((work / "sanitizer" / check / "job.json").read_text())
        assert job["early_done"] == "launcher" and [run["mode"] for run in job["plan"]] == ["launcher"]
        summary = json.loads((work / "sanitizer" / check / "replay.json").read_text())
        assert "early" in summary["phases"] and [run["label"] for run in summary["runs"]] == ["launcher-0"]
    assert "sanitizer" in verdict.seconds
    if finds:
        assert not verdict.correct and _kinds(verdict.problems) == ["sanitizer"]
        message = verdict.problems[0].message
        assert message.startswith("compute-sanitizer memcheck found") and "Invalid __global__ write" in message
    else:
        assert verdict.correct, verdict.reasons()
        assert any(
            c.startswith("compute-sanitizer (memcheck, racecheck)") and c.endswith("clean") for c in verdict.checks
        )


def test_capture_keeps_first_last_and_a_sample_of_many_dispatches(tmp_path):
    program = Program(PROGRAMS, [sys.executable, "many_launches.py", "300"])
    ref = capture_reference(
        program, "tiny_kernel", interpret=True, work_dir=tmp_path, settings=ValidationSettings(capture_limits=(4, 3, 5))
    )
    kept = ref.manifest["kept"]
    assert ref.manifest["dispatches"] == 300 and ref.manifest["written"] == ["x_ptr"]
    assert kept[:4] == [0, 1, 2, 3] and kept[-3:] == [297, 298, 299]
    middle = kept[4:-3]
    assert 0 < len(middle) <= 5 and len({b - a for a, b in zip(middle, middle[1:], strict=False)}) <= 1  # one stride
    assert len(list(ref.capture_dir.glob("dispatch-*.pt"))) == len(kept)


def test_a_program_that_differs_between_runs_is_judged_on_the_replays(tmp_path):
    """Seeding makes unseeded torch.randn repeatable; inputs from os.urandom are not, so the two
    reference runs disagree: that is said, and an honest candidate is not blamed for it."""
    noisy = (
        (AXPY / "axpy.py")
        .read_text()
        .replace("    torch.manual_seed(0)\n", "    torch.manual_seed(int.from_bytes(os.urandom(4), 'little'))\n")
    )
    project = copy_project(AXPY, {"axpy.py": noisy}, tmp_path / "project")
    ref = capture_reference(Program(project, COMMAND), "axpy_kernel", interpret=True, work_dir=tmp_path / "ref")
    assert not ref.stability_known and ref.unstable == []  # asked only when a candidate differs
    # a kernel-only change (a changed launcher would leave the kernel's values to the launcher's replays)
    rewritten = noisy.replace("mask = offs < n\n", "mask = (offs < n) & (offs >= 0)\n")
    assert rewritten != noisy
    retuned = copy_project(project, {"axpy.py": rewritten}, tmp_path / "copy")
    verdict = validate(ref, Program(retuned, COMMAND), work_dir=tmp_path / "v")
    assert verdict.correct, verdict.reasons()
    assert ref.unstable == ["out_ptr"] and any("not deterministic" in n for n in verdict.notes)
    assert ref.check_stability(ValidationSettings()) == []  # once per session
    again = validate(ref, Program(retuned, COMMAND), work_dir=tmp_path / "v2")
    assert again.correct and not any("not deterministic" in n for n in again.notes)


def test_a_second_reference_run_that_fails_leaves_the_verdict_to_the_comparison(tmp_path):
    """The unchanged program's second run, asked for when a candidate differs, fails (here: it
    refuses to run twice in one folder): validate still answers, with a note, and the wrong
    candidate stays wrong."""
    once = (
        (AXPY / "axpy.py")
        .read_text()
        .replace(
            "def main() -> None:\n",
            "def main() -> None:\n    if os.path.exists('ran-once'):\n        sys.exit(3)\n"
            "    open('ran-once', 'w').close()\n",
        )
    )
    project = copy_project(AXPY, {"axpy.py": once}, tmp_path / "project")
    ref = capture_reference(Program(project, COMMAND), "axpy_kernel", interpret=True, work_dir=tmp_path / "ref")
    wrong = copy_project(
        project, {"axpy.py": once.replace("alpha * x + y, mask", "alpha * x - y, mask")}, tmp_path / "c"
    )
    verdict = validate(ref, Program(wrong, COMMAND), work_dir=tmp_path / "v")
    assert not verdict.correct and any(p.kind == "mismatch" for p in verdict.problems), verdict.reasons()
    assert any("second run of the unchanged program failed" in n for n in verdict.notes)
    assert ref.stability_known and ref.unstable == []


def test_a_deterministic_program_is_run_once_when_candidates_match(tmp_path):
    """The second run of the unchanged program can change no verdict while every candidate matches the first."""
    ref = capture_reference(Program(AXPY, COMMAND), "axpy_kernel", interpret=True, work_dir=tmp_path / "ref")
    retuned = copy_project(
        AXPY,
        {"axpy.py": (AXPY / "axpy.py").read_text().replace("block: int = 128", "block: int = 512")},
        tmp_path / "copy",
    )
    verdict = validate(ref, Program(retuned, COMMAND), work_dir=tmp_path / "v")
    assert verdict.correct, verdict.reasons()
    assert not ref.stability_known and not (tmp_path / "ref" / "again").exists()
    assert any("replay through the launcher" in c for c in verdict.checks)
    # its launcher's trials ran while its program did (the warm worker's early phase), and stood
    assert "early" in json.loads((tmp_path / "v" / "replay" / "replay.json").read_text())["phases"]


# axpy launched from module level, as many scripts do: no launcher to replay, only the kernel's own launch
MODULE_LEVEL = (
    (AXPY / "axpy.py").read_text().split("def axpy(")[0].replace("import os\n", "import os\n\ntorch_seed = 0\n")
    + """device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
n = int(sys.argv[1])
torch.manual_seed(0)
for _ in range(3):
    x, y = torch.randn(n, device=device), torch.randn(n, device=device)
    out = torch.empty_like(x)
    axpy_kernel[(triton.cdiv(n, 128),)](x, y, out, n, 2.0, BLOCK=128)
print(float(out.sum()))
"""
)


@pytest.fixture(scope="module")
def module_level_reference(tmp_path_factory):
    project = copy_project(AXPY, {"axpy.py": MODULE_LEVEL}, tmp_path_factory.mktemp("module-level") / "p")
    return capture_reference(
        Program(project, COMMAND), "axpy_kernel", interpret=True, work_dir=tmp_path_factory.mktemp("mref")
    )


@pytest.mark.parametrize(
    ("edit", "stands", "correct"),
    [
        (("alpha * x + y, mask", "y + x * alpha, mask"), True, True),  # the same launch: the early trials stand
        (
            (
                "(triton.cdiv(n, 128),)](x, y, out, n, 2.0, BLOCK=128)",
                "(triton.cdiv(n, 256),)](x, y, out, n, 2.0, BLOCK=256)",
            ),
            False,
            True,
        ),
        (("alpha * x + y, mask", "alpha * x + y + (x > 2.5), mask"), True, False),  # wrong on the replays' inputs
    ],
    ids=["same-launch", "other-launch", "wrong-same-launch"],
)
def test_a_module_level_launch_is_replayed_while_the_program_runs(
    edit, stands, correct, module_level_reference, tmp_path
):
    """With no launcher, the warm replay worker runs the kernel's own trials at the reference's recorded
    launch while the candidate's program runs; they stand only where the candidate launched its kernel the
    same way (here BLOCK=256 and its grid do not), and what they found counts as a trial run later would."""
    ref = module_level_reference
    assert {run["mode"] for run in ref.replay["runs"]} == {"kernel"}
    old, new = edit
    project = copy_project(ref.program.root, {"axpy.py": MODULE_LEVEL.replace(old, new)}, tmp_path / "c")
    verdict = validate(ref, Program(project, COMMAND), work_dir=tmp_path / "v")
    job = json.loads((tmp_path / "v" / "replay" / "job.json").read_text())
    summary = json.loads((tmp_path / "v" / "replay" / "replay.json").read_text())
    assert job["early_done"] == ("kernel" if stands else None)
    assert ("early" in summary["phases"]) == stands  # the kernel's trials that ran before the job came count
    assert [run["label"] for run in summary["runs"]] == [run["label"] for run in ref.replay["runs"]]
    assert verdict.correct == correct, verdict.reasons()
    if not correct:
        assert any(p.kind == "mismatch" and "replay" in p.message for p in verdict.problems), verdict.reasons()


def test_the_sanitizers_check_a_module_level_kernel_while_the_program_runs(
    module_level_reference, tmp_path, monkeypatch
):
    """With no launcher, each sanitizer worker's one trial (the kernel's first, at the reference's launch)
    runs before the candidate's run ends; the job then leaves nothing to run. The candidate that would
    fool it: one that launches its kernel another way in the program (then the trial runs again, at the
    candidate's launch, as test_a_module_level_launch_is_replayed_while_the_program_runs shows for the
    replay)."""
    project = copy_project(module_level_reference.program.root, {}, tmp_path / "c")
    _use_fake_sanitizer(project, False, monkeypatch)
    work = tmp_path / "v"
    settings = ValidationSettings(sanitizer=True)
    verdict = validate(module_level_reference, Program(project, COMMAND), work_dir=work, settings=settings)
    assert verdict.correct, verdict.reasons()
    for check in ("memcheck", "racecheck"):
        job = json.loads((work / "sanitizer" / check / "job.json").read_text())
        assert job["early_done"] == "kernel" and [run["label"] for run in job["plan"]] == ["kernel-0"]
        summary = json.loads((work / "sanitizer" / check / "replay.json").read_text())
        assert "early" in summary["phases"] and [run["label"] for run in summary["runs"]] == ["kernel-0"]
    assert any(c.startswith("compute-sanitizer (memcheck, racecheck)") for c in verdict.checks)


def test_early_work_stands_only_for_what_the_candidate_called(module_level_reference, tmp_path):
    """`_stands`: each part of a kernel launch or of a launcher that the early trials and timing assumed;
    changed, they run again (the candidate that would fool a looser key: the same kernel at another grid,
    block or scalar, or another kernel in the same file)."""
    stands = sys.modules["intelliperf.validators.runs.timing"].stands
    project = copy_project(module_level_reference.program.root, {}, tmp_path / "c")
    validate(module_level_reference, Program(project, COMMAND), work_dir=tmp_path / "v")
    job = json.loads((tmp_path / "v" / "replay" / "job.json").read_text())
    assert stands(job, json.loads(json.dumps(job)), "kernel") and not stands(None, job, "kernel")
    launch = job["launch"]
    for changed in (
        {"grid": [launch["grid"][0] + 1, *launch["grid"][1:]]},
        {"options": {**launch.get("options", {}), "num_warps": 8}},
        {"args": [{**a, "value": 3.0} if a["name"] == "alpha" else a for a in launch["args"]]},
        {"args": [{**a, "value": 256} if a["name"] == "BLOCK" else a for a in launch["args"]]},
    ):
        assert not stands(job, {**job, "launch": {**launch, **changed}}, "kernel"), changed
    assert not stands(job, {**job, "kernel": {**job["kernel"], "name": "other_kernel"}}, "kernel")
    assert not stands(job, {**job, "kernel": {**job["kernel"], "params": job["kernel"]["params"][:-1]}}, "kernel")


TIMER = """import json, os, sys, time
commands, answers = os.fdopen(int(sys.argv[1])), os.fdopen(int(sys.argv[2]), "w", buffering=1)
takes, claims, stale = float(sys.argv[3]), float(sys.argv[4]), sys.argv[6] == "stale"
answers.write("ready test device\\n")
done = 0
for line in commands:
    calls = int(line.split()[1])
    time.sleep(calls * takes / 1e3)
    # each call's outputs' checksum (weighted sum, sum of squares): the call's own, or the first call's
    sums = [[0.0 if stale else float(done + i), 1.0] for i in range(calls)]
    done += calls
    answers.write(json.dumps({"ms": [claims] * calls, "sums": sums}) + "\\n")
time.sleep(float(sys.argv[5]))  # a worker's exit: torch and CUDA tearing down
"""


def _timer(takes_ms: float, claims_ms: float, exit_s: float = 0, stale: bool = False):
    import subprocess

    def start(cmd_fd: int, out_fd: int):
        argv = [str(cmd_fd), str(out_fd), str(takes_ms), str(claims_ms), str(exit_s), "stale" if stale else "own"]
        return subprocess.Popen([sys.executable, "-c", TIMER, *argv], pass_fds=(cmd_fd, out_fd))

    return start


def test_two_process_timing_and_the_parents_clock():
    """The parent drives two timing workers (real processes speaking the worker's protocol) and
    checks their reported times against its own clock: an honest 2x is 2x; a worker that takes
    5 ms a call and reports 0.5 ms is caught."""
    from intelliperf.validators.runs.performance import forged, interleaved, unchecked

    honest = interleaved(_timer(4, 4), _timer(2, 2), min_pairs=20, max_pairs=20)
    assert len(honest["reference_ms"]) == len(honest["candidate_ms"]) == 20 and honest["device"] == "test device"
    assert speedup_interval(honest["reference_ms"], honest["candidate_ms"]).estimate == 2 and forged(honest) is None
    liar = interleaved(_timer(4, 4), _timer(5, 0.5), min_pairs=20, max_pairs=20)
    problem = forged(liar)
    assert problem is not None and problem.kind == "implausible-speed" and "tampered" in problem.message
    # a worker whose timed calls answer with one call's outputs (a cache) is caught by the checksums
    assert unchecked(honest) is None
    cached = interleaved(_timer(4, 4), _timer(2, 2, stale=True), min_pairs=20, max_pairs=20)
    problem = unchecked(cached)
    assert problem is not None and "19 of 20 timed calls" in problem.message


def test_timing_workers_started_ahead_are_timed_later_or_stopped_at_once():
    """validate starts both timing workers while the replay runs: started ones are timed as usual (the
    verdict does not wait for their exit, which ends by itself beside what comes next), and one never
    used (the replay failed) is stopped at once even while it is still starting."""
    import time

    from intelliperf.validators.runs.performance import interleaved, started

    ahead = [started(_timer(4, 4, exit_s=3)), started(_timer(2, 2, exit_s=3))]
    time.sleep(0.5)  # the replay, meanwhile
    begin = time.perf_counter()
    timed = interleaved(*ahead, min_pairs=20, max_pairs=20)
    assert time.perf_counter() - begin < 2.5 and all(side.proc.poll() is None for side in ahead)
    assert speedup_interval(timed["reference_ms"], timed["candidate_ms"]).estimate == 2
    assert [side.proc.wait(timeout=10) for side in ahead] == [0, 0]
    import subprocess

    slow = started(
        lambda cmd_fd, out_fd: subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)"], pass_fds=(cmd_fd, out_fd)
        )
    )
    begin = time.perf_counter()
    slow.stop()
    assert time.perf_counter() - begin < 5 and slow.proc.poll() is not None


def test_timing_workers_started_ahead_are_kept_only_for_what_they_expected(
    axpy_reference, module_level_reference, tmp_path, monkeypatch
):
    """On a GPU validate starts both timing workers before the candidate's program runs, the candidate's on
    the reference's description of the launcher in the copy (or, for a module-level launch, of the kernel's
    launch); when the candidate's own run called another launcher, that worker is replaced, and the
    reference's is kept."""
    import dataclasses

    from intelliperf.validators.replay_checks import candidate_job
    from intelliperf.validators.runs.beside import WorkersBeside
    from intelliperf.validators.runs.performance import started
    from intelliperf.validators.runs.timing import start_timing

    compiled = dataclasses.replace(axpy_reference, interpret=False)  # as on a GPU: timing is due
    job = candidate_job(compiled, axpy_reference.manifest, tmp_path / "replay")
    settings = ValidationSettings()

    def ahead() -> WorkersBeside:
        warm = WorkersBeside(replay=None, early=None, sanitizers={})  # type: ignore[arg-type]
        warm.timing = {"reference": started(_timer(4, 4)), "candidate": started(_timer(2, 2))}
        warm.timed, warm.timed_mode = job, "launcher"
        return warm

    warm = ahead()
    expected = dict(warm.timing)
    sides = start_timing(compiled, job, AXPY, tmp_path, settings, {}, warm)
    assert sides == expected and not warm.timing  # both kept; the warm set no longer owns them
    renamed = {**job, "launcher": {**job["launcher"], "qualname": "axpy_fast"}}
    warm = ahead()
    expected = dict(warm.timing)
    replaced = start_timing(compiled, renamed, AXPY, tmp_path, settings, {}, warm)
    try:
        assert replaced["reference"] is expected["reference"]
        assert replaced["candidate"] is not expected["candidate"] and expected["candidate"].proc.poll() is not None
        assert (
            json.loads((tmp_path / "timing-candidate" / "job.json").read_text())["launcher"]["qualname"] == "axpy_fast"
        )
    finally:
        for side in [*sides.values(), *replaced.values()]:
            side.stop()
    # Inputs too large to hold on the GPU while the program runs: nothing is started ahead.
    from intelliperf.validators.runs.timing import time_ahead

    workers_module = sys.modules["intelliperf.validators.runs.beside"]

    program = Program(AXPY, COMMAND)
    for limit, ahead_sides in ((1 << 30, {"reference", "candidate"}), (1000, set())):
        monkeypatch.setattr(workers_module, "AHEAD_INPUTS_BYTES", limit)
        warm = WorkersBeside(replay=None, early=None, sanitizers={})  # type: ignore[arg-type]
        time_ahead(warm, compiled, job, program, tmp_path / f"ahead-{limit}", settings)
        try:
            assert set(warm.timing) == ahead_sides and warm.timed_mode == ("launcher" if ahead_sides else None)
        finally:
            for side in warm.timing.values():
                side.stop()
    # A module-level launch: the candidate's timing starts ahead at the reference's launch of the kernel, and
    # is kept only where the candidate launched it the same way.
    monkeypatch.setattr(workers_module, "AHEAD_INPUTS_BYTES", 1 << 30)
    module_level = dataclasses.replace(module_level_reference, interpret=False)
    kernel_job = candidate_job(module_level, module_level.manifest, tmp_path / "replay-m")
    warm = WorkersBeside(replay=None, early=None, sanitizers={})  # type: ignore[arg-type]
    time_ahead(warm, module_level, kernel_job, module_level.program, tmp_path / "ahead-m", settings)
    for side in warm.timing.values():
        side.stop()
    assert set(warm.timing) == {"reference", "candidate"} and warm.timed_mode == "kernel"
    regridded = {**kernel_job, "launch": {**kernel_job["launch"], "grid": [16, 1, 1]}}
    for cand_job, kept in ((kernel_job, True), (regridded, False)):
        warm = ahead()
        warm.timed_mode = "kernel"
        warm.timed = kernel_job
        before = dict(warm.timing)
        sides = start_timing(module_level, cand_job, module_level.program.root, tmp_path, settings, {}, warm)
        try:
            assert (sides["candidate"] is before["candidate"]) == kept
        finally:
            for side in [*sides.values(), *before.values()]:
                side.stop()


def test_nothing_runs_beside_a_program_that_leaves_no_room_on_the_gpu(axpy_reference, tmp_path, monkeypatch):
    """The workers started beside a candidate's run (replay, sanitizers, timing) each hold a CUDA context
    and a trial's inputs; a program whose own peak leaves no room for them would run out of memory in the
    candidate's run because of them, and the candidate would be rejected for nothing: they take turns after
    the run instead. The capture records the peak (none under the interpreter)."""
    import dataclasses

    validate_module = sys.modules["intelliperf.validators.validate"]  # the package's `validate` is the function
    workers_module = sys.modules["intelliperf.validators.runs.beside"]
    assert axpy_reference.manifest["gpu_memory"] is None  # no CUDA device in this run
    assert workers_module.fits_beside(axpy_reference)
    gib = 1 << 30
    started: list[dict] = []

    class Started:  # the worker that would have started: its environment and early job, kept
        def __init__(self, *args, env, early=None, **kwargs):
            started.append({"env": env, "early": early})

        def stop(self):
            pass

    monkeypatch.setattr(validate_module, "start_worker", Started)
    settings = ValidationSettings(sanitizer=False, timing=False)
    candidate = _candidate(tmp_path, [])
    for peak, fits in ((10 * gib, True), (70 * gib, False)):
        memory = {"peak_reserved": peak, "total": 80 * gib}
        manifest = {**axpy_reference.manifest, "gpu_memory": memory}
        near = dataclasses.replace(axpy_reference, manifest=manifest, interpret=False)  # as on a GPU
        assert workers_module.fits_beside(near) == fits, peak
        started.clear()
        validate_module.start_workers(near, candidate, tmp_path / f"w{peak}", settings)
        # no room: the replay worker runs no trial before the program ends, nor makes its CUDA context
        assert (started[0]["early"] is not None) == fits
        assert (started[0]["env"].get("INTELLIPERF_CUDA_LATE") == "1") != fits


def test_tampered_ground_truth_stops_the_verdict(axpy_reference):
    import dataclasses

    from intelliperf.validators.settings import GroundTruthError

    unread = dataclasses.replace(axpy_reference, _loaded={}, _prefetching=None)  # nothing read and kept yet
    kept = dataclasses.replace(axpy_reference, _loaded={}, _prefetching=None)
    kept.prefetch()  # read and checked while a candidate's program would run: what is compared from then on
    saved = next(axpy_reference.truth.rglob("*.pt"))
    original, stat = saved.read_bytes(), saved.stat()
    before = kept.load(saved)
    try:
        saved.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))
        with pytest.raises(GroundTruthError, match="changed after they were taken"):
            axpy_reference.verify()
        # The tamperer who restores the modification time passes the cheap check; the bytes read are caught.
        os.utime(saved, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        axpy_reference.verify()
        with pytest.raises(GroundTruthError, match="changed after they were taken"):
            unread.load(saved)
        unread.prefetch()  # reads every file but the tampered one, which stays for `load` to refuse
        with pytest.raises(GroundTruthError, match="changed after they were taken"):
            unread.load(saved)
        after = kept.load(saved)  # read before the change: the tampered bytes are never compared with
        assert after.keys() == before.keys()
        assert all(identical(v, before[k]) if isinstance(v, torch.Tensor) else v == before[k] for k, v in after.items())
        saved.with_name("planted.pt").write_bytes(original)  # a file added
        with pytest.raises(GroundTruthError, match="planted.pt"):
            axpy_reference.verify()
    finally:
        saved.with_name("planted.pt").unlink(missing_ok=True)
        saved.write_bytes(original)
        os.utime(saved, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    axpy_reference.verify()
    assert set(axpy_reference.load(saved)) == set(torch.load(saved, weights_only=True))


@triton.jit
def _locked_add(x_ptr, acc_ptr, lock_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    tl.store(acc_ptr + offs, tl.load(acc_ptr + offs) + tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
    tl.atomic_xchg(lock_ptr, 0)


def test_a_lock_buffer_is_told_apart_so_replays_start_it_released():
    """A replay that drew the lock's state afresh (a 1 where the program had 0) made the
    reference's own replay spin forever; the TTIR names the lock so it starts released."""
    access = analyse_ttir(
        _ttir(
            _locked_add,
            {"x_ptr": "*fp32", "acc_ptr": "*fp32", "lock_ptr": "*i32", "n": "i32", "BLOCK": "constexpr"},
            {"BLOCK": 64},
        )
    )
    assert access.locks == {"lock_ptr"} and "acc_ptr" not in access.locks
    assert {"acc_ptr", "lock_ptr"} <= access.written


def test_the_readmes_validators_example_runs_and_leaves_nothing_behind(tmp_path, monkeypatch):
    """The snippet under <!-- validators-example --> in docs/validation.md, run as it is (from the repo
    root, in this CPU-only process): the fix is judged correct, speed not judged, no problem, and
    its work folder is gone afterwards (it used to leave 31 MB under /tmp)."""
    import contextlib
    import io
    import os
    import tempfile

    block = doc_block("docs/validation.md", "validators-example")
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block, "docs/validation.md", "exec"), {})
    lines = printed.getvalue().splitlines()
    assert lines[0] == "correct True faster None speedup None" and lines[1] == "no problems"
    assert any("in-program" in line for line in lines[2:])
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("tool", [None, "NV_SANITIZER_INJECTION_PORT_BASE", "CUDA_INJECTION64_PATH"])
def test_a_worker_leaves_without_teardown_unless_a_cuda_tool_watches_its_exit(tool):
    """The answer written, a replay worker's exit skips Python's teardown (torch's and CUDA's, a second on
    the GPU: the parent waits for that exit), under compute-sanitizer too (its findings are reported as each
    kernel ends; the GPU tests reject a race and an out-of-bounds write so); under an Nsight tool it exits
    fully, where the tool writes its report. Its exit code is kept either way."""
    import subprocess

    code = "import atexit\nfrom intelliperf.validators.workers.replay import _exit\n"
    code += "atexit.register(print, 'teardown')\n"
    code += "_exit(3)"
    env = {k: v for k, v in os.environ.items() if k != "CUDA_INJECTION64_PATH" and "SANITIZER" not in k}
    if tool:
        env[tool] = "1"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 3
    assert ("teardown" in done.stdout) == (tool == "CUDA_INJECTION64_PATH")


AUTOTUNED = """import sys, torch, triton, triton.language as tl
from triton.runtime import autotuner
from intelliperf.profiling.inside.window import untimed_autotune
untimed_autotune(autotuner, run_each=sys.argv[1] == "each")

@triton.autotune(configs=[triton.Config({"B": b}) for b in (16, 32, 64)], key=["n"])
@triton.jit
def count(c_ptr, n, B: tl.constexpr):
    tl.atomic_add(c_ptr + tl.arange(0, B) * 0, 1, mask=tl.arange(0, B) == 0)

c = torch.zeros(1, dtype=torch.int32)
count[(1,)](c, 8)
print(int(c.item()), count.best_config.kwargs["B"])
"""


@pytest.mark.parametrize("each", [False, True])
def test_under_compute_sanitizer_every_autotune_config_runs_once(each):
    """A replay worker under compute-sanitizer does not time an autotuned kernel's configs (hundreds of
    instrumented launches each) but runs each once, so the config a real run picks was checked too; under
    the interpreter none runs before the first config is taken."""
    import subprocess

    env = {**os.environ, "TRITON_INTERPRET": "1"}
    mode = "each" if each else "none"
    done = subprocess.run([sys.executable, "-c", AUTOTUNED, mode], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == (["4", "16"] if each else ["1", "16"])  # 3 configs once each, then the run


def test_a_candidates_triton_cache_starts_as_a_copy_of_the_references(tmp_path):
    """Each candidate's $HOME gets the reference's Triton cache (launchers and driver modules built with the C
    compiler, kernels it did not change), one way: a link in it stays a link (resolved inside the candidate's
    sandbox, never followed by the parent), and under the interpreter (nothing compiled) nothing is copied."""
    from types import SimpleNamespace

    from intelliperf.validators import ReferenceRun

    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("not for candidates")
    cache = tmp_path / "reference" / "home" / "triton-cache" / "ABC"
    cache.mkdir(parents=True)
    (cache / "cuda_utils.so").write_bytes(b"\x7fELF built once")
    (cache / "link").symlink_to(secret)
    reference = SimpleNamespace(home=tmp_path / "reference" / "home", interpret=False)
    home = tmp_path / "candidate" / "home"
    home.mkdir(parents=True)  # made ahead for a started Python, as start_head_starts does
    ReferenceRun.seed_cache(reference, home)
    assert (home / "triton-cache" / "ABC" / "cuda_utils.so").read_bytes() == b"\x7fELF built once"
    assert (home / "triton-cache" / "ABC" / "link").is_symlink()
    (home / "triton-cache" / "ABC" / "cuda_utils.so").write_bytes(b"a candidate's")  # its copy, not the source
    assert (cache / "cuda_utils.so").read_bytes() == b"\x7fELF built once"
    for other in (SimpleNamespace(home=reference.home, interpret=True), SimpleNamespace(home=None, interpret=False)):
        ReferenceRun.seed_cache(other, tmp_path / "other")
        assert not (tmp_path / "other").exists()


def test_the_programs_own_data_is_a_trial_whatever_the_launcher_changed(tmp_path):
    """The program passes whole-number x, which no drawn trial gives a whole block of. A kernel wrong only on
    such blocks, whose launcher changed too (so its in-program mismatches are left to the launcher's replays),
    fails on the program's own arguments; the same launcher change alone is correct."""
    drawn = "x, y = torch.randn(n, device=device), torch.randn(n, device=device)"
    whole = "x, y = torch.randint(-3, 4, (n,), device=device).float(), torch.randn(n, device=device)"
    text = (AXPY / "axpy.py").read_text()
    assert drawn in text
    project = copy_project(AXPY, {"axpy.py": text.replace(drawn, whole)}, tmp_path / "project")
    ref = capture_reference(Program(project, COMMAND), "axpy_kernel", interpret=True, work_dir=tmp_path / "r")
    assert any(r["regime"] == "program" for r in ref.replay["runs"])

    def candidate(name: str, edits: list[tuple[str, str]]) -> Program:
        changed = (project / "axpy.py").read_text()
        for old, new in edits:
            assert old in changed, old
            changed = changed.replace(old, new)
        return Program(copy_project(project, {"axpy.py": changed}, tmp_path / name), COMMAND)

    retuned = [("block: int = 128", "block: int = 256")]
    whole_blocks = (
        "frac = tl.sum(tl.where(mask, x - tl.floor(x), 0.0), axis=0)\n"
        "    tl.store(out_ptr + offs, tl.where(frac == 0.0, alpha * x, alpha * x + y), mask=mask)"
    )
    cheat = validate(ref, candidate("cheat", [*retuned, (STORE, whole_blocks)]), work_dir=tmp_path / "vc")
    assert not cheat.correct and any("launcher-program" in p.message for p in cheat.problems), cheat.reasons()
    # (tl.floor takes no float16: the float16 trial, which the reference runs, crashes the cheat too)
    assert all("launcher-program" in p.message or "launcher-half" in p.message for p in cheat.problems)
    honest = validate(ref, candidate("honest", retuned), work_dir=tmp_path / "vh")
    assert honest.correct, honest.reasons()
