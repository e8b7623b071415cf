"""A pytest file that launches a Triton kernel: `intelliperf diagnose -- pytest this_file.py`."""

from many_launches import main


def test_kernel_runs():
    main(4)
