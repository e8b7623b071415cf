"""The diagnose workflow (`api.diagnose`, and the first half of `regions` and `optimize`): the program
run under the launch recorder, its kernels ranked, the profiler passes, the formula's findings.

    checks      a run's settings checked before anything runs: out-dir, kernel filter, device, program
    run         the diagnosis run: recording, ranking, evidence, findings in a Report
    passes      what a formula needs besides the recording: trace, static view, counters, region timers
    priorities  `--formula auto`: which bottleneck is fixed first; launch-bound kernels

Its modules are the API."""

__all__ = ["checks", "passes", "priorities", "run"]
