"""Sum two fields of an array of 8-float records: each lane gathers a float 32 bytes from its neighbour's.

    python examples/memory_access/aos_gather.py [--m M] [--n N] [--repeat R]

The input is M*N/8 records of 8 floats (array of structures). Reading field 0 and field 3 of
consecutive records is a strided gather (stride 8 floats), so each 32-byte sector serves one
lane: 12.5 % used. The fix is soa_gather.py (structure of arrays: each field contiguous).
"""

import torch
import triton
import triton.language as tl
from _harness import check_equal, example_matrix

FIELDS = 8


@triton.jit
def aos_gather_kernel(records_ptr, out_ptr, count, FIELDS: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < count
    a = tl.load(records_ptr + i * FIELDS + 0, mask=mask)  # stride FIELDS floats between lanes
    b = tl.load(records_ptr + i * FIELDS + 3, mask=mask)
    tl.store(out_ptr + i, a + b, mask=mask)


def aos_gather(records: torch.Tensor, block: int = 1024) -> torch.Tensor:
    count = records.shape[0]
    out = torch.empty(count, device=records.device, dtype=records.dtype)
    aos_gather_kernel[(triton.cdiv(count, block),)](records, out, count, FIELDS=FIELDS, BLOCK=block)
    return out


def main() -> None:
    args, x = example_matrix(__doc__)
    records = x.reshape(-1, FIELDS)
    for _ in range(args.repeat):
        out = aos_gather(records)
    check_equal("aos_gather", out, records[:, 0] + records[:, 3])


if __name__ == "__main__":
    main()


# For `intelliperf eval` and benchmarks/corpus_run.py: the formulas whose bottleneck this has.
# Labels: atomicContention=no memoryAccess=yes bankConflict=no overlap=no
