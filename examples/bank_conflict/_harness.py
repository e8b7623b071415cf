"""What the bank-conflict examples share: where they run, their options, their reference check."""

import argparse
import os

import torch


def example_matrix(doc: str) -> tuple[argparse.Namespace, torch.Tensor]:
    """Parse the example's options and draw its input: an M x N float32 matrix, wide enough that
    one program per 64 columns fills an H100 (512 programs)."""
    gpu = os.environ.get("TRITON_INTERPRET") != "1" and torch.cuda.is_available()
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    # The interpreter runs every program in Python: keep CPU runs to seconds.
    parser.add_argument("--m", type=int, default=2048 if gpu else 128)
    parser.add_argument("--n", type=int, default=32768 if gpu else 256)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    return args, torch.rand(args.m, args.n, device="cuda" if gpu else "cpu")


def check_close(name: str, got: torch.Tensor, expected: torch.Tensor) -> None:
    """float32 sums in another order: compare against float64 with a float32 tolerance."""
    torch.testing.assert_close(got.double(), expected, rtol=1e-5, atol=1e-4)
    print(f"{name} on {got.device.type}: {tuple(got.shape)} OK")
