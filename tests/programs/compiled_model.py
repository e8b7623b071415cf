"""A PyTorch function compiled by torch.compile: Inductor writes and launches Triton kernels."""

import torch


@torch.compile
def step(x, y):
    return torch.sin(x) * torch.cos(y) + x.sum()


def main() -> None:
    x, y = torch.rand(1 << 20, device="cuda"), torch.rand(1 << 20, device="cuda")
    for _ in range(5):
        out = step(x, y)
    torch.testing.assert_close(out, torch.sin(x) * torch.cos(y) + x.sum(), rtol=1e-4, atol=1e-4)
    print("compiled_model OK")


if __name__ == "__main__":
    main()
