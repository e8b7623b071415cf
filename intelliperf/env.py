"""The variables through which the orchestrator tells the recorder (inside the user's program)
what to record: their names, in one place both sides import. Standard library only.

The other INTELLIPERF_* variables (about 20: the capture's, the window's, the cache, the model,
the seed, ...) are still named and read where they are used; gathering them here is left to do."""

RECORD_DIR = "INTELLIPERF_RECORD_DIR"  # where each process writes record-PID.json
TRACE = "INTELLIPERF_TRACE"  # regex of kernel names to trace; unset: no trace
SAMPLE_PROGRAMS = "INTELLIPERF_SAMPLE_PROGRAMS"
TRACE_LAUNCHES = "INTELLIPERF_TRACE_LAUNCHES"
TRACE_BUDGET = "INTELLIPERF_TRACE_BUDGET_S"
STATIC_TARGETS = "INTELLIPERF_STATIC"  # comma-separated targets (cuda:90,hip:gfx942) for traced kernels
SASS_LINES = "INTELLIPERF_SASS_LINES"  # "1": keep the SASS line table of traced kernels (for ncu's counters)
