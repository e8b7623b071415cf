"""The llm rewriter's DSPy program: a module-level Signature and Module.

Imported only when the llm rewriter asks its first question (DSPy is the optional extra
`intelliperf[llm]`). Being ordinary DSPy objects, the program can be saved, loaded and tuned
with DSPy's own optimizers (MIPROv2, GEPA, BootstrapFewShot) against any metric, e.g. the
validators' verdict, and handed back to `optimize --program FILE`:

    from intelliperf.rewriters.program import KernelRewriter
    program = KernelRewriter()
    ...  # compile it with a DSPy optimizer on your own examples
    program.save("rewriter.json")
"""

from __future__ import annotations

import dspy

INSTRUCTIONS = """You are a GPU performance engineer. Rewrite the Triton kernel so that the bottleneck described
below goes away, while every output buffer gets the same values for every input (up to floating-point
reordering). Return the complete @triton.jit function with the same name and parameters. Change the
launcher only if the launch must change (grid, block sizes, num_warps, a second kernel); keep its name and
parameters; otherwise leave that field empty. You may add @triton.jit helpers and more kernels (a two-stage
reduction, a reduce kernel after a split), Python helpers the launcher calls and module constants: give
them in `beside`. Kernels use the Triton language only; launchers use tensor constructors, shapes and
strides, triton.cdiv/next_power_of_2 and kernel launches. The checks refuse, and name, anything else:
imports, files, the environment, other modules' attributes, classes, global state, caching results
between calls, other streams. Learn from the earlier attempts: each one says why it was rejected."""


class RewriteKernel(dspy.Signature):
    __doc__ = INSTRUCTIONS

    problem: str = dspy.InputField(desc="the bottleneck, the formula's explanation and the metric to improve")
    pinpointed_lines: list[str] = dspy.InputField(desc="file:line: `code` -- what the evidence says about it")
    counters: list[str] = dspy.InputField(
        desc="hardware counters (ncu): whole kernel, then per pinpointed line; empty without a GPU"
    )
    regions: str = dspy.InputField(
        desc="region timers inserted by the compiler: where a warp's time goes in the "
        "main loop; empty when not measured"
    )
    static_facts: list[str] = dspy.InputField(
        desc="registers and spilled bytes per thread per target, the first wave's loads per buffer, then "
        "instructions per kernel line in the compiled code, per target"
    )
    kernel_source: str = dspy.InputField(desc="the @triton.jit kernel to rewrite")
    launcher_source: str = dspy.InputField(desc="the Python function that launches it")
    launch: str = dspy.InputField(desc="the recorded launch: grid, constexprs, num_warps, argument shapes")
    hardware: str = dspy.InputField()
    techniques: list[str] = dspy.InputField(desc="fixes known to work for this bottleneck")
    history: list[str] = dspy.InputField(desc="earlier attempts and why each was rejected; empty at the first")
    last_change: str = dspy.InputField(desc="the diff of the latest attempt that changed code; empty if none")
    kernel: str = dspy.OutputField(desc="the complete rewritten @triton.jit function, in a python code block")
    launcher: str = dspy.OutputField(desc="the complete rewritten launcher, or empty when it is unchanged")
    beside: str = dspy.OutputField(
        desc="new top-level code the kernel or launcher needs (more @triton.jit kernels and helpers, Python "
        "helpers, constants), in a python code block; empty when there is none"
    )
    rationale: str = dspy.OutputField(desc="one short paragraph: what changed and why it is faster")


class KernelRewriter(dspy.Module):
    """One rewrite per call; `reasoning` adds a step-by-step field before the answer."""

    def __init__(self, reasoning: bool = False) -> None:
        super().__init__()
        self.rewrite = dspy.ChainOfThought(RewriteKernel) if reasoning else dspy.Predict(RewriteKernel)

    def forward(self, **fields) -> dspy.Prediction:
        return self.rewrite(**fields)
