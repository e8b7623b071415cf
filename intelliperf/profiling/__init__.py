"""The passes that measure a program: the interpreter trace, the static view of compiled kernels,
hardware counters, region timers and the merge of the program's records; `inside/` is what runs
in the program itself (the recorder, the device clock, the launch window). Its modules are the API."""

__all__ = [
    "aggregate",
    "counters",
    "inside",
    "ncu",
    "region_timers",
    "regions",
    "rocprof",
    "static",
    "timeline",
    "trace",
    "trace_worker",
]
