"""What runs in the worker processes beside a candidate's program, each started as
`python -m intelliperf.validators.workers.replay MODE` (in the sandbox, or under compute-sanitizer):

    replay            the entry: prepare (the reference side), run (a candidate), time, serve (warm)
    replay_reference  the reference side: every trial's inputs drawn and saved, the ground truth run
    replay_candidate  the candidate side: its kernel and launcher on the saved inputs
    replay_calls      calling the kernel at its recorded launch and the launcher as the program did
    replay_inputs     fresh inputs: recorded layouts, drawn values, unseen shapes
    replay_forms      inputs in other layouts and dtypes, requiring grad; the reference's plain call to match
    replay_outputs    what a call produced: outputs, aliasing, the kernel's launches watched (their precision)
    timing_worker     one side of the timing: calls after an L2 flush and a host cover, device events
    fresh_memory      memory a launcher allocates without writing it: NaN, or as the program would have it
    store_bounds      out-of-bounds and racing stores under the interpreter
    racecheck         compute-sanitizer's racecheck on the first CTAs of each launch
    jobs              what the parent asks of a worker (job.json)

The workers save tensors and device times only; every comparison and clock is intelliperf's. Imports only
torch, triton, numpy and pydantic. Its modules are the API."""

__all__ = [
    "fresh_memory",
    "jobs",
    "racecheck",
    "replay",
    "replay_calls",
    "replay_candidate",
    "replay_forms",
    "replay_inputs",
    "replay_outputs",
    "replay_reference",
    "store_bounds",
    "timing_worker",
]
