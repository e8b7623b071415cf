"""The runs a validation starts, from intelliperf's side (its own process): the reference run, the worker
processes beside a candidate's program, the sanitizer and the timing runs, and what their answers say.

    reference         step 1: the pristine program captured (same workload, or stop), its replay
                      prepared, the ground truth kept out of every candidate's reach
    worker_processes  which workers a candidate gets, under which tool, their folders, environment, start
    beside            how the workers fit the machine: time limits, the GPU, the set started ahead
    head_starts       a candidate's Pythons started before it exists, each handed its run where it fits
    sanitizers        step 4b: compute-sanitizer's memcheck and racecheck beside the replay
    timing            step 5 (GPU): the two sides timed in interleaved pairs
    performance       the timing's statistics (speedup interval, judge) and the parent's checks of what
                      the timing workers report

Its modules are the API."""

__all__ = ["beside", "head_starts", "performance", "reference", "sanitizers", "timing", "worker_processes"]
