"""Which effect of program order makes TritonBench partition-K's before-version slow: its loads'
L2 reuse, or its stores leaving output sectors part-written? One launch of each variant at one
config (no autotuning), checked against torch, timed by do_bench; with a variant index, one launch
only, for Nsight Compute:

    python benchmarks/partition_k_order.py
    for i in 0 1 2 3 4 5; do ncu --metrics dram__bytes_read.sum,dram__bytes_write.sum,\
      lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,gpu__time_duration.sum \
      --kernel-name regex:_matmul_partition_k python benchmarks/partition_k_order.py $i; done

Variants: the before-version; the same with the partition index first (program_id(0)); the
maintainers' grouped order at 64 partitions with GROUP_SIZE_M 1 and 8, and at their 32; the
before-version at 32 partitions.
"""

import importlib.util
import sys

import torch
import triton
import triton.testing


def load(path, name, edit=None):
    src = open(path).read()
    if edit:
        for a, b in edit:
            assert a in src, a
            src = src.replace(a, b)
    p = f"/tmp/{name}.py"  # the edited copy, importable by Triton (it reads the kernel's source)
    open(p, "w").write(src)
    spec = importlib.util.spec_from_file_location(name, p)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


B = "benchmarks/fixes/tritonbench_matmul_partition_k_before.py"
A = "benchmarks/fixes/tritonbench_matmul_partition_k_after.py"
before = load(B, "pk_before")
pkfirst = load(
    B,
    "pk_pkfirst",
    [
        (
            """    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    pid_pk = tl.program_id(axis=2)""",
            """    pid_pk = tl.program_id(axis=0)
    pid_m = tl.program_id(axis=1)
    pid_n = tl.program_id(axis=2)""",
        )
    ],
)
after = load(A, "pk_after")
M = N = 1024
K = 16384
torch.manual_seed(0)
a = torch.randn((M, K), device="cuda", dtype=torch.float16)
b = torch.randn((K, N), device="cuda", dtype=torch.float16)
cfg = dict(BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K=64, num_warps=2, num_stages=4)


def run(variant, PK, gm=None):
    c_buf = torch.empty((M, N, PK), device="cuda", dtype=torch.float16)
    args = (a, b, c_buf, M, N, K, PK, K // PK, a.stride(0), a.stride(1), b.stride(0), b.stride(1), *c_buf.stride())
    if variant == "before":
        kernel, grid, extra = before._matmul_partition_k.fn, (M // 32, N // 32, PK), {}
    elif variant == "pkfirst":
        kernel, grid, extra = pkfirst._matmul_partition_k.fn, (PK, M // 32, N // 32), {}
    else:
        kernel, grid, extra = after._matmul_partition_k.fn, (M // 32 * N // 32 * PK,), {"GROUP_SIZE_M": gm}

    def f():
        return kernel[grid](*args, **extra, **cfg)

    f()
    torch.cuda.synchronize()
    ref = a.float() @ b.float()
    torch.testing.assert_close(c_buf.float().sum(2), ref, atol=2.0, rtol=0.05)
    return f, c_buf


variants = [
    ("before", 64, None),
    ("pkfirst", 64, None),
    ("after", 64, 1),
    ("after", 64, 8),
    ("after", 32, 8),
    ("before", 32, None),
]
if len(sys.argv) > 1:  # under ncu: one launch of the named variant
    v = variants[int(sys.argv[1])]
    f, _ = run(*v)
    torch.cuda.synchronize()
else:
    for v in variants:
        f, _ = run(*v)
        ms = triton.testing.do_bench(f, warmup=50, rep=300)
        print(v, f"{ms:.4f} ms")
