"""Total variation distance forward from Liger-Kernel: per-row loss and gradient over the vocabulary.

Source: linkedin/Liger-Kernel, src/liger_kernel/ops/tvd.py (commit de79f63a68764322ec1ade896345deefd6b18121)
License: BSD 2-Clause (Copyright 2024 LinkedIn Corporation)
Fix: 5c9cecc85c20473aaf2c00b789c6804469319960 (#1127) passes the reduction's scale (1/n_non_ignore for batchmean) into the kernel and applies it to the stored gradient and row loss, instead of the kernel storing +-0.5 and the launcher dividing the whole (BT, V) gradient tensor afterwards; one full read+write pass over the gradient disappears (about 1.7x faster forward on H100).
Bottleneck: memoryAccess
Changes: only the forward kernel and its launcher tv_distance_forward_triton are kept, with the module constants and get_num_warps they use; the driver is new.
"""

import argparse

import torch
import triton
import triton.language as tl


MAX_FUSED_SIZE = 65536 // 4


_REDUCTION_MODE_NONE = tl.constexpr(0)


_REDUCTION_MODE_SUM = tl.constexpr(1)


_REDUCTION_MODE_MEAN = tl.constexpr(2)


_REDUCTION_MODE_BATCHMEAN = tl.constexpr(3)


_str_to_reduction_mode = {
    "none": _REDUCTION_MODE_NONE.value,
    "sum": _REDUCTION_MODE_SUM.value,
    "mean": _REDUCTION_MODE_MEAN.value,
    "batchmean": _REDUCTION_MODE_BATCHMEAN.value,
}


def get_num_warps(BLOCK_SIZE):
    num_warps = 4
    if BLOCK_SIZE >= 32768:
        num_warps = 32
    elif BLOCK_SIZE >= 8192:
        num_warps = 16
    elif BLOCK_SIZE >= 2048:
        num_warps = 8

    return num_warps


@triton.jit
def _tv_distance_kernel(
    p_ptr,
    p_stride,
    q_ptr,
    q_stride,
    loss_ptr,
    loss_stride,
    grads_ptr,
    grads_stride,
    label_ptr,
    ignore_index: tl.constexpr,
    n_cols,
    BLOCK_SIZE: tl.constexpr,
    HAS_LABEL: tl.constexpr,
    reduction: tl.constexpr = _REDUCTION_MODE_BATCHMEAN,
):
    pid = tl.program_id(0).to(tl.int64)
    p_ptr += pid * p_stride
    q_ptr += pid * q_stride
    loss_ptr += pid * loss_stride
    grads_ptr += pid * grads_stride
    label_ptr += pid

    base_offsets = tl.arange(0, BLOCK_SIZE)

    if HAS_LABEL:
        label = tl.load(label_ptr)
        if label == ignore_index:
            for i in range(0, n_cols, BLOCK_SIZE):
                offsets = i + base_offsets
                mask = offsets < n_cols
                tl.store(grads_ptr + offsets, 0.0, mask=mask)
                if reduction == _REDUCTION_MODE_NONE:
                    tl.store(loss_ptr + offsets, 0.0, mask=mask)
            return

    loss_sum = 0.0
    for i in range(0, n_cols, BLOCK_SIZE):
        offsets = i + base_offsets
        mask = offsets < n_cols

        p = tl.load(p_ptr + offsets, mask=mask, other=0.0)
        q = tl.load(q_ptr + offsets, mask=mask, other=0.0)

        # TVD(P || Q) = 0.5 * |P - Q|
        tv_loss = 0.5 * tl.abs(p - q)

        grad_res = tl.where(p > q, 0.5, -0.5)

        tl.store(grads_ptr + offsets, grad_res, mask=mask)

        if reduction == _REDUCTION_MODE_NONE:
            tl.store(loss_ptr + offsets, tv_loss, mask=mask)
        else:
            loss_sum += tl.sum(tv_loss, axis=0)

    if reduction != _REDUCTION_MODE_NONE:
        tl.store(loss_ptr, loss_sum)


def tv_distance_forward_triton(p, q, shift_labels, reduction, ignore_index, has_label):
    BT, V = p.shape

    BLOCK_SIZE = min(MAX_FUSED_SIZE, triton.next_power_of_2(V))
    num_warps = get_num_warps(BLOCK_SIZE)

    grid = (BT,)

    reduction = _str_to_reduction_mode[reduction]

    out_size = (BT, V) if reduction == _REDUCTION_MODE_NONE.value else (BT,)
    output_tensor = torch.zeros(out_size, device=p.device, dtype=torch.float32)
    grads = torch.empty_like(p)

    n_non_ignore = (shift_labels != ignore_index).sum().item() if has_label else BT

    _tv_distance_kernel[grid](
        p,
        p.stride(0),
        q,
        q.stride(0),
        output_tensor,
        output_tensor.stride(0),
        grads,
        grads.stride(0),
        shift_labels if has_label else torch.empty(1, device=p.device),
        ignore_index,
        V,
        BLOCK_SIZE=BLOCK_SIZE,
        HAS_LABEL=has_label,
        num_warps=num_warps,
        reduction=reduction,
    )

    if reduction == _REDUCTION_MODE_BATCHMEAN.value:
        return output_tensor.sum() / n_non_ignore, grads / n_non_ignore
    elif reduction == _REDUCTION_MODE_SUM.value:
        return output_tensor.sum(dim=0), grads
    elif reduction == _REDUCTION_MODE_MEAN.value:
        return output_tensor.sum() / (n_non_ignore * V), grads / (n_non_ignore * V)
    else:
        return output_tensor, grads


def main():
    on_gpu = torch.cuda.is_available()
    device = "cuda" if on_gpu else "cpu"
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=16384 if on_gpu else 32)
    parser.add_argument("--vocab", type=int, default=32768 if on_gpu else 4096)
    args = parser.parse_args()
    torch.manual_seed(0)
    p = torch.randn(args.rows, args.vocab, device=device).softmax(dim=-1)
    q = torch.randn(args.rows, args.vocab, device=device).softmax(dim=-1)
    labels = torch.empty(1, device=device)
    for _ in range(3):
        loss, grads = tv_distance_forward_triton(p, q, labels, "batchmean", -100, False)
    ref_loss = (0.5 * (p - q).abs()).sum() / args.rows
    ref_grads = torch.where(p > q, 0.5, -0.5) / args.rows
    torch.testing.assert_close(loss, ref_loss, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(grads, ref_grads, atol=1e-7, rtol=1e-6)
    print(f"liger tvd forward OK rows={args.rows} vocab={args.vocab}")


if __name__ == "__main__":
    main()
