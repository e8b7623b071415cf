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
