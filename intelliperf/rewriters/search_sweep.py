"""The knob search's sweep: the kernel put under `@triton.autotune` over num_warps x num_stages.

A sweep is a screen, never the fix: the loop runs it, compares its outputs, and reads from the
run's recording which config the autotuner chose on this device; that choice is the next
candidate, pinned and validated in full. Warps whose threads cannot hold the kernel's largest
tile accumulator in registers are left out; a kernel without a loop is swept over num_warps alone.
"""

from __future__ import annotations

import ast
import math

from ..syntax import indent_of
from .kernel_syntax import plain_function
from .source import Node, launch_call, lines_of, replace_spans

SWEEP_WARPS = (1, 2, 4, 8, 16)
SWEEP_STAGES = (1, 2, 3, 4)  # pipelining depths: swept only where the kernel has a loop to pipeline
SWEEP = "sweep: "  # how every sweep's title starts
# A screen's benchmark, not the measurement a choice is judged by (the pinned choice is timed with
# statistics): each config 25 ms after 5 ms of warm-up, against Triton's 100 and 25 (0.12 s a config
# on the H100, benchmarks/sweep_cost.py).
SWEEP_BENCH = (
    "lambda kernel_call, quantiles: triton.testing.do_bench(kernel_call, warmup=5, rep=25, quantiles=quantiles)"
)


# Registers a thread may hold on NVIDIA GPUs: a config whose tile accumulator alone needs more spills all
# of it (never the autotuner's choice) and is the slowest to compile: a 128x128 GEMM tile on one warp
# took ptxas 23 s, on two 4.7 s, on four 1-2 s (sm_90, Triton 3.9 on the CPU machine).
REGISTERS_PER_THREAD = 255


def sweep_warps(kernel: str, constexprs: dict) -> tuple[int, ...]:
    """The num_warps values a sweep tries: those whose threads can hold the kernel's largest tile
    accumulator (`tl.zeros`/`tl.full` of a shape the launch's constexprs give) in registers."""
    elements = _largest_tile(kernel, constexprs)
    fits = tuple(w for w in SWEEP_WARPS if elements <= REGISTERS_PER_THREAD * 32 * w)
    return fits or SWEEP_WARPS[-1:]


def _largest_tile(kernel: str, constexprs: dict) -> int:
    """Elements of the largest tile the kernel allocates with a shape known at the launch (0: none)."""
    largest = 0
    for node in ast.walk(plain_function(kernel)):
        if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], (ast.Tuple, ast.List))):
            continue
        if ast.unparse(node.func).split(".")[-1] not in ("zeros", "full"):
            continue
        dims = [
            e.value if isinstance(e, ast.Constant) else constexprs.get(e.id) if isinstance(e, ast.Name) else None
            for e in node.args[0].elts
        ]
        if all(isinstance(d, int) and d > 0 for d in dims):
            largest = max(largest, math.prod(dims))  # type: ignore[arg-type]  # ints, checked above
    return largest


def sweep_title(stages: bool, warps: tuple[int, ...] = SWEEP_WARPS) -> str:
    left_out = [w for w in SWEEP_WARPS if w not in warps]
    why = f"; num_warps {', '.join(map(str, left_out))} left out: its threads cannot hold the tile" if left_out else ""
    if stages:
        return f"sweep: num_warps x num_stages ({len(warps) * len(SWEEP_STAGES)} configs{why}) through triton.autotune"
    return f"sweep: num_warps ({len(warps)} configs; no loop to pipeline{why}) through triton.autotune"


def has_loop(kernel: str) -> bool:
    """Whether the kernel has a loop, the only code num_stages changes (software pipelining)."""
    return any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(plain_function(kernel)))


def sweep_kernel(kernel: str, written: list[str], warps: tuple[int, ...] = SWEEP_WARPS) -> str:
    """The kernel under `@triton.autotune` over num_warps x num_stages (num_warps alone where it has no
    loop), a screen the loop runs to learn which config the autotuner picks on this device (the
    launch's own num_warps/num_stages are overridden by the config's), each config benchmarked
    briefly (SWEEP_BENCH). Outputs the kernel writes are restored after each config's benchmark, so
    accumulating kernels do not add up the benchmark runs."""
    fn = plain_function(kernel)
    jit = next(
        (
            d
            for d in fn.decorator_list
            if ast.unparse(d.func if isinstance(d, ast.Call) else d) in ("triton.jit", "triton.language.jit")
        ),
        None,
    )
    if jit is None:
        raise ValueError(
            "the kernel is not decorated with @triton.jit by that name, so the sweep cannot name triton.autotune"
        )
    first = min(fn.decorator_list, key=lambda d: d.lineno)
    lines = lines_of(kernel)
    indent = indent_of(lines[first.lineno - 1])
    configs = (
        f"[triton.Config({{}}, num_warps=w, num_stages=s) for w in {warps} for s in {SWEEP_STAGES}]"
        if has_loop(kernel)
        else f"[triton.Config({{}}, num_warps=w) for w in {warps}]"
    )
    decorator = (
        f"{indent}@triton.autotune(configs={configs}, key=[], restore_value={sorted(written)!r}, "
        f"do_bench={SWEEP_BENCH})"
    )
    lines.insert(first.lineno - 1, decorator)
    return "\n".join(lines) + "\n"


def unpinned(launcher: str, kernel: str) -> str:
    """The launcher with the launch's own num_warps/num_stages dropped, for the sweep: Triton's
    autotuner passes the config's values beside the launch's keywords, which would collide. The
    sweep is a screen, never the patch, so a keyword becomes `**{}` (valid anywhere a keyword is)."""
    call = launch_call(ast.parse(launcher), kernel)
    if call is None:
        raise ValueError(f"the launcher does not launch {kernel}[grid](...) directly")
    edits: list[tuple[Node, str]] = [(k, "**{}") for k in call.keywords if k.arg in ("num_warps", "num_stages")]
    edits += [
        (
            k.value,
            f"{{_ip_k: _ip_v for _ip_k, _ip_v in ({ast.unparse(k.value)}).items() "
            "if _ip_k not in ('num_warps', 'num_stages')}",
        )
        for k in call.keywords
        if k.arg is None
    ]
    return replace_spans(launcher, edits)
