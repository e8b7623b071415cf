"""The top of what runs inside the user's program: the runner (workload/runner.py) puts this folder on
PYTHONPATH, so `sitecustomize` loads in every Python process of the command and patches Triton as it
loads (the recorder and launch window of profiling/inside/, the output capture of validators/inside/ in a
validation run; seeds), and `intelliperf_head_start` is the side of a Python started ahead of its run.
Both import only the standard library at first; nothing in intelliperf imports them."""

__all__: list[str] = []  # loaded from PYTHONPATH as top-level modules, never as intelliperf.bootstrap.*
