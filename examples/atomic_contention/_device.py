"""Where the examples run: the GPU when there is one, else the CPU under Triton's interpreter."""

import os

import torch


def pick_device() -> str:
    # Not triton's get_active_torch_device(): it raises "0 active drivers" on a machine
    # without a GPU driver, even under TRITON_INTERPRET=1.
    if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
        return "cpu"
    return "cuda"


def default_size(device: str) -> int:
    # The interpreter runs every program in Python: keep CPU runs to seconds.
    return 1 << 24 if device == "cuda" else 1 << 20
