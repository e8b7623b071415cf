"""What the memory-access examples share: where they run, their options, their reference check."""

import argparse
import os

import torch


def pick_device() -> str:
    if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
        return "cpu"
    return "cuda"


def example_matrix(doc: str) -> tuple[argparse.Namespace, torch.Tensor]:
    """Parse the example's options and draw its input: an M x N float32 matrix."""
    device = pick_device()
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    # The interpreter runs every program in Python: keep CPU runs to seconds.
    size = 4096 if device == "cuda" else 512
    parser.add_argument("--m", type=int, default=size)
    parser.add_argument("--n", type=int, default=size)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    return args, torch.rand(args.m, args.n, device=device)


def check_equal(name: str, got: torch.Tensor, expected: torch.Tensor) -> None:
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    print(f"{name} on {got.device.type}: {tuple(got.shape)} OK")
