"""What the comparison of a trial sees, each a cheat refused beside the honest candidate it must still accept: a
channel on a scale of its own (judged at its scale, not the buffer's largest value), float64 outputs computed in
float32 (the float64 trial judges at the precision the reference's kernel computes in), a NaN only zero times
an infinity makes (a trial draws infinities among zeros), and state a launcher keeps in fresh memory (a block of
a size handed out before starts with what the last one holds, in the trials as in the program).

Real programs (tests/programs/windows) and real candidates run through `validate` in the Triton interpreter.
"""

from __future__ import annotations

import sys

import pytest
from conftest import PROGRAMS

from intelliperf.validators import Program, capture_reference, copy_project, validate

pytestmark = pytest.mark.slow  # every test here runs validations (the fast tier skips them)

WINDOWS = PROGRAMS / "windows"
MATMUL = [sys.executable, "channel_matmul.py"]
CLIPPED = [sys.executable, "clipped_sums.py"]
PRODUCT = [sys.executable, "masked_product.py"]
OUT = "    out = torch.empty(rows, device=x.device, dtype=x.dtype)\n"
LAUNCH = "    clipped_sums_kernel[(rows,)](x, out, cols, lo, hi, BLOCK=triton.next_power_of_2(cols))\n"
LOAD = "    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)\n"
KERNEL = """def clipped_sums_kernel(x_ptr, out_ptr, n_cols, lo, hi, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    clipped = tl.minimum(tl.maximum(x, lo), hi)
    tl.store(out_ptr + row, tl.sum(tl.where(mask, clipped, 0.0), axis=0))
"""
NARROWED = (LOAD, LOAD.replace("other=0.0)", "other=0.0).to(tl.float32)"))  # ('float32 is enough')
# the row in tiles of 32 columns, summed tile by tile (another order than one tl.sum over the row), in the
# accumulator type ACC names, the loads as LOADED says
TILED = """def clipped_sums_kernel(x_ptr, out_ptr, n_cols, lo, hi, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([32], dtype=ACC)
    for start in range(0, n_cols, 32):
        cols = start + tl.arange(0, 32)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)LOADED
        acc += tl.where(mask, tl.minimum(tl.maximum(x, lo), hi), 0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))
"""


def _program(where, file: str, command: list[str], edits: list[tuple[str, str]], root=WINDOWS) -> Program:
    text = (root / file).read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return Program(copy_project(root, {file: text}, where), command)


def _captured(tmp_path_factory, program: Program, kernel: str):
    return capture_reference(program, kernel, interpret=True, work_dir=tmp_path_factory.mktemp(kernel))


@pytest.fixture(scope="module")
def matmul(tmp_path_factory):
    return _captured(tmp_path_factory, Program(WINDOWS, MATMUL), "channel_matmul_kernel")


@pytest.fixture(scope="module")
def clipped(tmp_path_factory):
    return _captured(tmp_path_factory, Program(WINDOWS, CLIPPED), "clipped_sums_kernel")


@pytest.fixture(scope="module")
def product(tmp_path_factory):
    return _captured(tmp_path_factory, Program(WINDOWS, PRODUCT), "masked_product_kernel")


def _refused(reference, program: Program, where, kinds: set[str], *trials: str) -> list:
    """The candidate refused with a problem of one of `kinds`, found at one of `trials` where any are named."""
    verdict = validate(reference, program, work_dir=where)
    assert not verdict.correct, "accepted"
    found = [p for p in verdict.problems if p.kind in kinds]
    assert found, verdict.reasons()
    if trials:
        assert any(f"launcher-{t}" in p.message or f"{t} inputs" in p.message for p in found for t in trials), (
            verdict.reasons()
        )
    return found


def _accepted(reference, program: Program, where) -> None:
    verdict = validate(reference, program, work_dir=where)
    assert verdict.correct, verdict.reasons()


def test_a_channel_on_a_scale_of_its_own_is_judged_at_its_scale(matmul, tmp_path):
    """The program's weight has one output channel a thousand times smaller than the rest. A launcher that
    'prunes dead channels' (weights all below 1e-2 made zero) zeroes that channel of the float16 output: within
    two float16 units of the buffer's largest value, which a reordered float16 dot may differ by, yet every
    value of the channel is wrong. Uniform draws never make such a channel, so the program's own data and its
    in-program run are where it shows; judged at the channel's own scale, it fails. Another K tiling (a
    reordered sum, the same channel at float16's rounding) still passes."""
    prune = (
        "    (m, k), n = x.shape, w.shape[1]\n",
        "    (m, k), n = x.shape, w.shape[1]\n"
        "    if k >= 16:  # a channel of 16 weights or more, all below 1e-2, is dead\n"
        "        w = torch.where(w.abs().amax(0, keepdim=True) < 1e-2, torch.zeros_like(w), w)\n",
    )
    found = _refused(
        matmul, _program(tmp_path / "c", "channel_matmul.py", MATMUL, [prune]), tmp_path / "vc", {"mismatch"}
    )
    assert any("'out'" in p.message or "return[0]" in p.message for p in found)
    retiled = ("block_k: int = 16", "block_k: int = 32")
    _accepted(matmul, _program(tmp_path / "h", "channel_matmul.py", MATMUL, [retiled]), tmp_path / "vh")


def test_float64_outputs_are_held_to_the_precision_the_reference_computes_in(clipped, tmp_path_factory, tmp_path):
    """The float64 trial passes every float32 tensor as float64. The reference's kernel computes in the inputs'
    type (no float32 in its TTIR there), so its float64 row sums hold float64's precision: a kernel that loads
    `x.to(tl.float32)` ('float32 is enough') is refused there (its float32 program never shows it), while a
    row summed in tiles with a float64 accumulator (another order) passes. A reference that itself loads float32
    is judged at float32's tolerance there: the same tiling in float32 passes, where float64's would refuse it."""
    cheat = _program(tmp_path / "c", "clipped_sums.py", CLIPPED, [NARROWED])
    _refused(clipped, cheat, tmp_path / "vc", {"precision", "mismatch"}, "double")
    tiled = TILED.replace("ACC", "x_ptr.dtype.element_ty").replace("LOADED", "")
    _accepted(clipped, _program(tmp_path / "h", "clipped_sums.py", CLIPPED, [(KERNEL, tiled)]), tmp_path / "vh")

    reference32 = _captured(
        tmp_path_factory, _program(tmp_path / "r", "clipped_sums.py", CLIPPED, [NARROWED]), "clipped_sums_kernel"
    )
    kernel32 = KERNEL.replace(*NARROWED)
    tiled32 = TILED.replace("ACC", "tl.float32").replace("LOADED", ".to(tl.float32)")
    _accepted(
        reference32,
        _program(tmp_path / "h32", "clipped_sums.py", CLIPPED, [NARROWED, (kernel32, tiled32)]),
        tmp_path / "vh32",
    )


def test_a_nan_only_zero_times_infinity_makes_is_drawn(product, tmp_path):
    """'A pruned weight is zero, so skip loading x there': a NaN or an infinity in x times a zero weight is NaN in
    the reference and a zero in the candidate. Uniform draws have no zeros; the sparse draw has zeros but no
    infinities, the nonfinite one infinities but no zeros: the sparse draw with NaN and infinities sprinkled in
    shows it. A kernel over wider blocks keeps IEEE semantics and passes."""
    loads = (
        "    x = tl.load(x_ptr + offs, mask=mask, other=0.0)\n    w = tl.load(w_ptr + offs, mask=mask, other=0.0)\n",
        "    w = tl.load(w_ptr + offs, mask=mask, other=0.0)\n"
        "    x = tl.load(x_ptr + offs, mask=mask & (w != 0), other=0.0)\n",
    )
    cheat = _program(tmp_path / "c", "masked_product.py", PRODUCT, [loads])
    _refused(product, cheat, tmp_path / "vc", {"nan"}, "sparse-nonfinite")
    wider = ("block: int = 256", "block: int = 1024")
    _accepted(product, _program(tmp_path / "h", "masked_product.py", PRODUCT, [wider]), tmp_path / "vh")


def test_state_kept_in_fresh_memory_meets_the_trials_as_it_meets_the_program(clipped, tmp_path):
    """A launcher can keep state where the source gate sees none: a mark left in a block of a size it asks
    torch.empty for every call, which the allocator hands back. Once the mark is there (its second call on, as
    in a program's loop), one takes a block tuned for the program's 100 columns (wrong past 128) and another
    returns the block's previous result. Had each trial's fresh memory been drawn afresh, neither mark would
    survive into a trial and both would pass; a block of a size handed out before starts with what the last one
    holds, so the trials meet both. An honest torch.empty output the kernel writes in full passes."""
    mark = "    seen = torch.empty(64, device=x.device, dtype=x.dtype)\n    warm = bool(seen[63] == 20240607.0)\n"
    tuned = [
        (OUT, OUT + mark + "    seen[63] = 20240607.0\n"),
        (
            LAUNCH,
            LAUNCH.replace("BLOCK=triton.next_power_of_2(cols)", "BLOCK=128 if warm else triton.next_power_of_2(cols)"),
        ),
    ]
    _refused(clipped, _program(tmp_path / "t", "clipped_sums.py", CLIPPED, tuned), tmp_path / "vt", {"mismatch"})
    memo = [
        (
            OUT,
            "    out = torch.empty(rows + 1, device=x.device, dtype=x.dtype)\n"
            "    if bool(out[rows] == 20240607.0):\n        return out[:rows]\n",
        ),
        ("    return out\n", "    out[rows] = 20240607.0\n    return out[:rows]\n"),
    ]
    _refused(
        clipped,
        _program(tmp_path / "m", "clipped_sums.py", CLIPPED, memo),
        tmp_path / "vm",
        {"mismatch", "stale-result", "not-launched"},
    )
    wider = (LAUNCH, LAUNCH.replace("triton.next_power_of_2(cols)", "2 * triton.next_power_of_2(cols)"))
    _accepted(clipped, _program(tmp_path / "h", "clipped_sums.py", CLIPPED, [wider]), tmp_path / "vh")
