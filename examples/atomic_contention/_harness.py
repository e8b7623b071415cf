"""What the four examples share: where they run, their options, and their reference checks."""

import argparse
import os

import torch


def pick_device() -> str:
    # Not triton's get_active_torch_device(): it raises "0 active drivers" on a machine
    # without a GPU driver, even under TRITON_INTERPRET=1.
    if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
        return "cpu"
    return "cuda"


def example_input(doc: str, histogram: bool = False) -> tuple[argparse.Namespace, torch.Tensor]:
    """Parse the example's options and draw its input: uniform floats in [0, 1)."""
    device = pick_device()
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    # The interpreter runs every program in Python: keep CPU runs to seconds.
    parser.add_argument("--n", type=int, default=1 << 24 if device == "cuda" else 1 << 20)
    parser.add_argument("--repeat", type=int, default=3)
    if histogram:
        parser.add_argument("--bins", type=int, default=16, help="a power of two")
    args = parser.parse_args()
    if histogram and args.bins & (args.bins - 1):
        parser.error("--bins must be a power of two (tl.histogram needs one)")
    torch.manual_seed(0)
    return args, torch.rand(args.n, device=device)


def check_sum(name: str, got: torch.Tensor, x: torch.Tensor) -> None:
    # Atomics add in any order: compare in float64 with a relative tolerance.
    expected = x.double().sum()
    torch.testing.assert_close(got.double()[0], expected, rtol=1e-4, atol=1e-3)
    print(f"{name} on {x.device.type}: n={x.numel()} sum={got.item():.3f} (reference {expected.item():.3f}) OK")


def check_histogram(name: str, got: torch.Tensor, x: torch.Tensor, bins: int) -> None:
    idx = (x.double() * bins).long().clamp(max=bins - 1)
    torch.testing.assert_close(got, torch.bincount(idx, minlength=bins).to(torch.int32), rtol=0, atol=0)
    print(f"{name} on {x.device.type}: n={x.numel()} bins={bins} OK")
