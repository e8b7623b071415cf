"""The fix for aos_gather.py: the records stored as a structure of arrays, each field contiguous.

    python examples/memory_access/soa_gather.py [--m M] [--n N] [--repeat R]

A clean kernel: field 0 and field 3 of consecutive records are consecutive floats. (The
layout change is done once, outside the timed loop, as a program would keep its data.)
"""

import torch
import triton
import triton.language as tl
from _harness import check_equal, example_matrix

FIELDS = 8


@triton.jit
def soa_gather_kernel(fields_ptr, out_ptr, count, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < count
    a = tl.load(fields_ptr + 0 * count + i, mask=mask)  # field 0 of every record, contiguous
    b = tl.load(fields_ptr + 3 * count + i, mask=mask)
    tl.store(out_ptr + i, a + b, mask=mask)


def soa_gather(fields: torch.Tensor, block: int = 1024) -> torch.Tensor:
    count = fields.shape[1]
    out = torch.empty(count, device=fields.device, dtype=fields.dtype)
    soa_gather_kernel[(triton.cdiv(count, block),)](fields, out, count, BLOCK=block)
    return out


def main() -> None:
    args, x = example_matrix(__doc__)
    records = x.reshape(-1, FIELDS)
    fields = records.T.contiguous()  # FIELDS x count
    for _ in range(args.repeat):
        out = soa_gather(fields)
    check_equal("soa_gather", out, records[:, 0] + records[:, 3])


if __name__ == "__main__":
    main()


# For `intelliperf eval` and benchmarks/corpus_run.py: the formulas whose bottleneck this has.
# Labels: atomicContention=no memoryAccess=no bankConflict=no overlap=no
