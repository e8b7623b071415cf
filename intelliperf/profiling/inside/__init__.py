"""What runs inside the user's program, put there by the bootstrap (intelliperf/bootstrap/sitecustomize.py):
the launch recorder and its tallies, the device clock, the CUDA graphs the program makes (`graphs`), the
launch window of the profiler passes (whose settings the passes write and the program reads), and the watch
on what the checks in a candidate's process rely on (`untouched`). Standard library at import; torch and
Triton only when the program has them."""

__all__ = ["clock", "graphs", "helper_calls", "launch_tallies", "recorder", "untouched", "window"]
