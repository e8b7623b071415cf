"""The passes that measure a program: the launch recorder and window, the interpreter trace,
the static view of compiled kernels, hardware counters and region timers. Its modules are the API."""

__all__ = [
    "aggregate",
    "clock",
    "counters",
    "launch_tallies",
    "ncu",
    "recorder",
    "region_timers",
    "regions",
    "rocprof",
    "static",
    "timeline",
    "trace",
    "trace_worker",
    "window",
]
