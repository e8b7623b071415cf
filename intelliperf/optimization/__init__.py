"""The optimize workflow after the diagnosis (`api.optimize` starts it): `loop.run` rounds of
candidates until a validated win or the budget is spent.

    session     what a run carries from attempt to attempt: diagnosis, settings, budget, head starts
    loop        rounds: ask the rewriters, run the attempts, rank the accepted ones
    attempt     one candidate: applied in a copy, validated, measured, judged, saved
    apply       the candidate spliced into the project's texts under the source policy
    measure     the formula's metric and the kernel time, baseline and candidate alike
    verdict     accepted, rejected or timed out; the best of the accepted
    head_start  the next candidate's Pythons and a candidate's region timers started ahead

Its modules are the API."""

__all__ = ["apply", "attempt", "head_start", "loop", "measure", "session", "verdict"]
