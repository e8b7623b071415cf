"""What runs inside the user's program in a validation run (the bootstrap attaches it to the launch recorder
when INTELLIPERF_CAPTURE is set):

    capture   the buffers the target kernel writes, copied after each of its dispatches, and the
              launches, launcher and inputs described for the replay (`from_env`)
    outputs   which pointer arguments a kernel writes and what one element sums, read from its TTIR

Imports only the standard library, torch, triton and intelliperf's recorder. Its modules are the API."""

__all__ = ["capture", "outputs"]
