"""The timing's host cover (validators.timing_worker): both sides spin alike before each timed call, for
twice the longer time either host took to queue one, whatever a side claims."""

from __future__ import annotations

import math

import pytest

from intelliperf.validators.workers.timing_worker import MAX_COVER_S, cover_s


def test_the_cover_is_twice_the_slower_hosts_queueing_plus_a_margin():
    assert cover_s([30e-6, 120e-6]) == pytest.approx(2 * 120e-6 + 20e-6)
    assert cover_s([]) == pytest.approx(20e-6)  # a worker that does not say (an older protocol)


@pytest.mark.parametrize("claim", [math.nan, math.inf, -1.0, 10.0])
def test_a_side_cannot_stretch_or_undo_the_cover_past_its_bounds(claim):
    """A candidate's worker may claim anything: the cover stays within [20 us, MAX_COVER_S], so the
    worst it buys is slower timing of both sides, never a window that times the host."""
    cover = cover_s([50e-6, claim])
    assert 20e-6 <= cover <= MAX_COVER_S and math.isfinite(cover)
    assert cover >= cover_s([50e-6])  # the honest side's own need is always covered
