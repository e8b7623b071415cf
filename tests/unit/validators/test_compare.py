"""Tolerances that follow the data: a 16-bit reduction's rounding, and NaN handling that a reference
leaves to its hardware atomics, judged without letting a dropped NaN or a wrong value through."""

from __future__ import annotations

import torch

from intelliperf.validators.compare import Reordering, Tolerances, compare_buffer


def _kinds(problems) -> list[str]:
    return [p.kind for p in problems]


def _attention_like(seed: int, dtype=torch.float16, drop_block: bool = False) -> torch.Tensor:
    """Softmax(QK^T)V with the probabilities rounded to `dtype` before the second product, as an fp16
    attention kernel does; `seed` perturbs the scores by a few float32 units (another order of the first product)."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(128, 64, generator=g) for _ in range(3))
    scores = q @ k.T / 8
    scores = scores * (1 + 1e-6 * torch.randn(scores.shape, generator=torch.Generator().manual_seed(seed)))
    if drop_block:
        scores[:, :16] = -torch.inf  # a candidate that skips the first key block
    p = torch.softmax(scores, dim=-1).to(dtype).float()
    return (p @ v.to(dtype).float()).to(dtype)


def test_a_16_bit_reduction_may_differ_by_its_own_rounding_but_not_by_a_dropped_block():
    ref, retuned = _attention_like(1), _attention_like(2)
    plain = compare_buffer(ref, retuned, name="o", dispatch=0, tol=Tolerances())
    assert _kinds(plain) == ["mismatch"]  # the per-element fp16 tolerance alone refuses another order
    reduced = {"name": "o", "dispatch": 0, "tol": Tolerances(), "terms": Reordering(reduced=128)}
    assert compare_buffer(ref, retuned, **reduced) == []
    wrong = compare_buffer(ref, _attention_like(2, drop_block=True), **reduced)
    assert _kinds(wrong) == ["mismatch"]
    # float32 outputs keep float32's reduction allowance: a float16 copy of the computation still fails
    ref32 = _attention_like(1, dtype=torch.float32)
    copy16 = _attention_like(2).float()
    assert _kinds(compare_buffer(ref32, copy16, **reduced)) in (
        ["mismatch"],
        ["precision"],
    )


def test_nan_propagation_may_be_added_where_atomics_ignored_nan_never_dropped():
    ref = torch.tensor([1.0, 2.0, float("nan"), 4.0])
    propagates = torch.tensor([1.0, float("nan"), float("nan"), 4.0])  # NaN where the atomic_max ignored it
    drops = torch.tensor([1.0, 2.0, 3.0, 4.0])  # a number where the reference propagated NaN
    tol = Tolerances()
    assert _kinds(compare_buffer(ref, propagates, name="m", dispatch=0, tol=tol, atomic=True)) == ["nan-handling"]
    assert _kinds(compare_buffer(ref, propagates, name="m", dispatch=0, tol=tol)) == ["nan"]
    for atomic in (False, True):
        found = compare_buffer(ref, drops, name="m", dispatch=0, tol=tol, atomic=atomic)
        assert _kinds(found) == ["nan"] and "NaN propagation dropped" in found[0].message
    # the NaN note does not hide a wrong number elsewhere in the buffer
    wrong = torch.tensor([1.5, float("nan"), float("nan"), 4.0])
    found = compare_buffer(ref, wrong, name="m", dispatch=0, tol=tol, atomic=True)
    assert _kinds(found) == ["nan-handling", "mismatch"]


def test_a_float32_atomic_sum_past_two_over_epsilon_terms_is_judged_by_its_order_of_magnitude():
    """35.6M float32 adds of about 0.5 into one element (an unseen shape of twice 16M): past 2^24 the
    running sum no longer absorbs them, so the reference's atomics stop near 2^24 while a block-then-
    atomic sum gets 1.78e7; both are what float32 atomics give. At 16M terms the sum is still exact
    enough to judge: a dropped block of 1% fails."""
    import torch

    from intelliperf.validators.compare import Tolerances, compare_buffer

    stopped, blocked = torch.tensor([16_777_216.0]), torch.tensor([17_825_792.0])
    assert (
        compare_buffer(
            stopped, blocked, name="out", dispatch=None, tol=Tolerances(), terms=Reordering(atomic=35_651_585)
        )
        == []
    )
    exact, dropped = torch.tensor([8_388_608.0]), torch.tensor([8_388_608.0 * 0.99])
    found = compare_buffer(
        exact, dropped, name="out", dispatch=None, tol=Tolerances(), terms=Reordering(atomic=16_777_216)
    )
    assert [p.kind for p in found] == ["mismatch"]


def test_the_nan_note_holds_only_where_an_input_held_a_nan():
    """`reordering` exempts a NaN where the reference's atomics gave a number only when the launch's inputs
    (arguments the kernel does not write) held a NaN its atomics could ignore."""
    from intelliperf.validators.correctness import reordering

    manifest = {"written": ["out"], "atomic": ["out"], "accumulated": [], "launches": []}

    def launch(nan: bool) -> dict:
        return {"grid": [4, 1, 1], "args": [{"name": "x", "kind": "tensor", "shape": [8], "nan": nan},
                                            {"name": "out", "kind": "tensor", "shape": [4], "nan": True}]}  # fmt: skip

    assert reordering(manifest, ["out"], launch(True))["atomic"] is True
    assert reordering(manifest, ["out"], launch(False))["atomic"] is False  # a NaN only in the output: poison
    assert reordering(manifest, ["out"], launch(False), nan=True)["atomic"] is True  # a replay's own inputs
    ref = torch.tensor([1.0, 2.0])
    propagated = torch.tensor([1.0, float("nan")])
    kw = reordering(manifest, ["out"], launch(False))
    assert _kinds(compare_buffer(ref, propagated, name="out", dispatch=0, tol=Tolerances(), **kw)) == ["nan"]


def _channels(seed: int, k_order: int = 1, scale: float = 1e-3) -> torch.Tensor:
    """x @ w in float16 (accumulated in float32, then rounded), w's channel 5 `scale` times the rest; `k_order`
    sums K in that many chunks, added in turn (another tiling of the same dot)."""
    g = torch.Generator().manual_seed(seed)
    x, w = torch.randn(64, 64, generator=g).half().float(), torch.randn(64, 48, generator=g)
    w[:, 5] *= scale
    w = w.half().float()
    parts = [x[:, i::k_order] @ w[i::k_order] for i in range(k_order)]
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total.half()


def test_a_channel_on_a_scale_of_its_own_is_judged_at_its_scale():
    """A reordered float16 dot may differ by two float16 units of an element's scale. At the buffer's largest
    value that let a zeroed channel a thousand times smaller through; at the channel's own scale (the largest
    value of its column) it fails, and so does one garbled by 30 %, while another tiling still passes."""
    ref, retiled = _channels(0), _channels(0, k_order=4)
    assert not torch.equal(ref, retiled)
    judge = dict(name="out", dispatch=0, tol=Tolerances(), terms=Reordering(reduced=64))
    assert compare_buffer(ref, retiled, **judge) == []
    for wrong in (0.0, 1.3):
        cheat = ref.clone()
        cheat[:, 5] = cheat[:, 5] * wrong
        found = compare_buffer(ref, cheat, **judge)
        assert _kinds(found) == ["mismatch"] and found[0].elements >= 60, found
        assert all(d.index[1] == 5 for d in found[0].examples)
    # a row on a small scale (a short row of 4 is too few values to stand for a scale: its column's is used)
    rows = _channels(1).t().contiguous()
    zeroed = rows.clone()
    zeroed[5] = 0
    assert _kinds(compare_buffer(rows, zeroed, **judge)) == ["mismatch"]
    # the scale is the smaller of the row's and the column's largest value; 4 values are no row to go by
    from intelliperf.validators.compare import local_scale

    grid = torch.arange(1.0, 257.0).reshape(64, 4)
    assert torch.equal(local_scale(grid).reshape(64, 4), grid[-1:].expand(64, 4))
    assert torch.equal(local_scale(grid.t()).reshape(4, 64), grid[-1:].t().expand(4, 64))
    square = torch.ones(16, 16)
    square[3, 7] = 100.0
    assert local_scale(square).reshape(16, 16)[3, 0] == 1.0 and local_scale(square).max() == 100.0


def test_a_float64_output_is_held_to_the_precision_its_reference_computes_in():
    """float64's rtol of 1e-7 lets one float32 rounding pass (half an ulp is 6e-8): where the reference computes in
    float64, errors of float32's size are a precision problem; where it computes in float32, float32's own
    tolerance judges; unknown (None), the dtype's."""
    g = torch.Generator().manual_seed(0)
    ref = torch.rand(4096, generator=g, dtype=torch.float64) * 32 - 16
    through_float32 = ref.float().double()
    reordered = ref * (1 + 1e-15 * torch.randn(4096, generator=g, dtype=torch.float64))

    def judged(cand, computed_in):
        terms = Reordering(computed_in=computed_in)
        return _kinds(compare_buffer(ref, cand, name="o", dispatch=0, tol=Tolerances(), terms=terms))

    assert judged(through_float32, None) == []
    assert judged(through_float32, "float64") == ["precision"]
    assert judged(through_float32, "float32") == []
    assert judged(reordered, "float64") == []
    # a float32 computation whose sums ran in another order: float32-sized errors pass at float32's tolerance only
    sums32 = ref.float().double() * (1 + 2e-6 * torch.randn(4096, generator=g, dtype=torch.float64))
    assert judged(sums32, "float32") == []
    assert judged(sums32, "float64") in (["mismatch"], ["precision"])


def test_the_quick_screen_decides_as_the_full_comparison_would_on_rows_and_columns():
    """`agrees` must pass exactly what `judged` passes where the allowance follows each element's row and column
    (2-D buffers with rows and columns on scales of their own, a few elements edited)."""
    import numpy as np

    from intelliperf.validators.compare import agrees, judged

    rng = np.random.default_rng(1)
    decided = {True: 0, False: 0, None: 0}
    for case in range(200):
        shape = (int(rng.integers(1, 40)), int(rng.integers(1, 40)))
        base = torch.from_numpy(rng.standard_normal(shape))
        base[int(rng.integers(0, shape[0]))] *= 10.0 ** -int(rng.integers(0, 5))
        base[:, int(rng.integers(0, shape[1]))] *= 10.0 ** -int(rng.integers(0, 5))
        base = base.to([torch.float32, torch.float16][case % 2])
        cand = base.clone()
        flat = cand.view(-1)
        picks = torch.from_numpy(rng.integers(0, flat.numel(), size=int(rng.integers(1, 4))))
        flat[picks] = flat[picks] * float(rng.choice([0.0, 1 + 1e-4, 1 + 1e-2, 1.5]))
        terms = Reordering(reduced=int(rng.choice([0, 64, 4096])))
        full = judged(base, cand, "o", {}, Tolerances(), terms, False)
        quick = agrees(base, cand, Tolerances(), terms)
        decided[quick] += 1
        assert quick is None or quick == (full == []), (case, full)
    assert decided[True] > 20 and decided[False] > 20
