"""How well a rewriter optimizes, over labelled cases, and the LLM rewriter tuned on them.

    run     `intelliperf eval`: the cases (a `Labels:` line each), one `api.optimize` per case and row,
            the outcomes by failure class and their totals, the resumable report, the plot
    tuning  `intelliperf tune`: the DSPy program tuned on the eval's cases, only validated answers kept

Its modules are the API."""

__all__ = ["run", "tuning"]
