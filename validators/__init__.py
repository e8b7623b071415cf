"""Validators: correctness and timing verdicts for candidate kernels (`intelliperf.validators`).

Empty until the validators issue lands: the buffer comparator, replay harness, anti-cheat
guards and timing statistics will live here, importing only torch, triton, numpy and pydantic.
"""

__all__: list[str] = []
