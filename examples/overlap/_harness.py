"""What the overlap examples share: where they run, their options, their reference checks."""

import argparse
import os

import torch


def pick_device() -> str:
    if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
        return "cpu"
    return "cuda"


def gemm_inputs(doc: str) -> tuple[argparse.Namespace, torch.Tensor, torch.Tensor]:
    """Parse the GEMM example's options and draw A (M x K) and B (K x N) in float16."""
    device = pick_device()
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    # The interpreter runs every program in Python: keep CPU runs to seconds.
    size = 4096 if device == "cuda" else 256
    parser.add_argument("--m", type=int, default=size)
    parser.add_argument("--n", type=int, default=size)
    parser.add_argument("--k", type=int, default=size)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    a = torch.randn(args.m, args.k, device=device, dtype=torch.float16)
    b = torch.randn(args.k, args.n, device=device, dtype=torch.float16)
    return args, a, b


def attention_inputs(doc: str) -> tuple[argparse.Namespace, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Parse the attention example's options and draw Q, K, V (batch, heads, sequence, 64) in float16."""
    device = pick_device()
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4 if device == "cuda" else 1)
    parser.add_argument("--heads", type=int, default=16 if device == "cuda" else 2)
    parser.add_argument("--seq", type=int, default=4096 if device == "cuda" else 256)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    shape = (args.batch, args.heads, args.seq, 64)
    q, k, v = (torch.randn(shape, device=device, dtype=torch.float16) for _ in range(3))
    return args, q, k, v


def check_gemm(name: str, c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """float16 inputs, float32 accumulation in another order: compare with a float32 product."""
    expected = (a.float() @ b.float()).to(torch.float16)
    torch.testing.assert_close(c, expected, rtol=1e-2, atol=1e-2)
    print(f"{name} on {c.device.type}: {tuple(c.shape)} OK")


def check_attention(name: str, out: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    scores = (q.float() @ k.float().transpose(-1, -2)) / q.shape[-1] ** 0.5
    expected = (torch.softmax(scores, dim=-1) @ v.float()).to(torch.float16)
    torch.testing.assert_close(out, expected, rtol=1e-2, atol=1e-2)
    print(f"{name} on {out.device.type}: {tuple(out.shape)} OK")
