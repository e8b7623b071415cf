"""The data that crosses a boundary: recorder → orchestrator → formulas → reports.

Plain pydantic models, so the JSON report, its published schema and the Python API are one
thing. The models say nothing about which backend produced an evidence item: an interpreter
trace, a compiled-IR scan or a hardware counter all end up as `Evidence`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = "1.4"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- what a validation returns: a verdict with reasons a person and a rewriter can act on -------


# The one list of problem kinds: the report's schema, the rewriters' feedback (`render_problems`), the eval's
# failure classes and the validators' groups of kinds are all typed with it (and a test holds the schema to it).
# A candidate the loop cannot apply: no requested fields, not Python, more than the kernel, no change.
CandidateKind = Literal["format", "syntax", "scope", "unchanged"]
ProblemKind = Literal[
    "crash",
    "timeout",
    "not-launched",
    "dispatch-count",
    "side-stream",
    "shape",
    "dtype",
    "missing-output",
    "mismatch",
    "nan",
    "nan-handling",
    "inf",
    "all-zero",
    "unwritten",
    "precision",
    "stale-result",
    "replay-failed",
    "slower",
    "not-faster",
    "implausible-speed",
    "capture",
    "unverified",
    "race",
    "aliased-output",
    "policy",
    "sanitizer",
    # found by the optimize loop, around the validators' verdict
    CandidateKind,
    "metric",
    "sweep",
    "interrupted",
]


def render_problems(problems: list[Problem]) -> str:
    """Problems as the lines a person and a rewriter read: `- [kind] message`."""
    return "\n".join(f"- [{p.kind}] {p.message}" for p in problems)


class Difference(BaseModel):
    index: list[int]
    reference: float
    candidate: float


class Problem(BaseModel):
    """One reason the candidate is rejected."""

    kind: ProblemKind
    message: str
    dispatch: int | None = None
    buffer: str | None = None
    elements: int | None = Field(None, description="elements that differ")
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    examples: list[Difference] = []


class Speedup(BaseModel):
    """Reference time / candidate time, with a bootstrap interval over interleaved pairs."""

    estimate: float
    low: float
    high: float
    confidence: float = 0.95
    reference_ms: float
    candidate_ms: float
    pairs: int
    method: str


class Verdict(BaseModel):
    correct: bool
    faster: bool | None = Field(None, description="None: speed was not measured (no GPU, or not correct)")
    accepted: bool = False
    speedup: Speedup | None = None
    problems: list[Problem] = []
    checks: list[str] = Field([], description="what was compared, for the report and the PR body")
    notes: list[str] = []
    seconds: dict[str, float] = {}

    def reasons(self) -> str:
        """The problems as text for the next rewrite attempt."""
        return render_problems(self.problems)


# --- what the recorder saw -------------------------------------------------------------------


class ArgInfo(_Model):
    """One argument of a launch, as the kernel received it."""

    name: str
    kind: Literal["tensor", "scalar", "constexpr", "none", "other"]
    dtype: str | None = None
    shape: list[int] | None = None
    strides: list[int] | None = None
    device: str | None = None
    value: Any = Field(default=None, description="scalars and constexprs only")
    type_name: str | None = Field(default=None, description="Python type, for kind=other")


class LaunchSignature(_Model):
    """A distinct way a kernel was launched, with the launches that used it."""

    grid: list[int]
    num_warps: int | None = None
    num_stages: int | None = None
    args: list[ArgInfo]
    launches: int
    tuning_launches: int = Field(0, description="of them, launches by triton.autotune's benchmarking of configs")
    total_time_s: float


class KernelProfile(_Model):
    """One Triton kernel of the program, aggregated over all its launches."""

    id: str = Field(description="name@file:line: unique even when two kernels share a name")
    name: str
    file: str | None = Field(description="file of the @triton.jit function")
    line: int | None = Field(description="line of its `def`")
    launches: int
    timed_launches: int = Field(description="launches whose time was measured; totals are scaled from them")
    total_time_s: float
    mean_time_s: float
    share: float = Field(description="fraction of the time of all recorded kernels")
    signatures: list[LaunchSignature] = Field(description="distinct launch signatures, most used first")
    signatures_dropped: int = Field(0, description="distinct signatures beyond the recorder's cap")


# --- evidence ---------------------------------------------------------------------------------


class AccessSite(_Model):
    """One memory-op call site of a kernel (a tl.load / tl.store / tl.atomic_* line)."""

    file: str
    line: int
    op: str = Field(description="load, store, atomic_add, atomic_cas, ...")
    is_atomic: bool
    buffer: str | None = Field(None, description="the pointer argument the addresses fall in")
    elem_bytes: int
    calls: int = Field(description="executions of this site by the sampled programs")
    lanes: int = Field(description="active (unmasked) lanes over those calls")
    lanes_issued: int | None = Field(None, description="lanes of the blocks those calls issued, masked off or not")
    bytes_requested: int
    sectors: int = Field(description="32-byte sectors touched, counted per 32-lane group (a warp's request)")
    sector_efficiency: float = Field(description="bytes_requested / (32 * sectors); 1.0 is fully coalesced")
    lane_stride_elems: int | None = Field(
        None, description="most common distance, in elements, between consecutive lanes' addresses (1: contiguous)"
    )
    lane_stride_share: float | None = Field(None, description="share of lane pairs at that distance")
    # atomics only
    lanes_per_address_max: int | None = Field(
        None, description="serialisation depth: most lanes of one call that hit one address"
    )
    lanes_per_address_mean: float | None = None
    ops_per_address_max: int | None = Field(
        None, description="atomic ops per distinct address over all sampled programs"
    )
    ops_per_address_mean: float | None = None
    distinct_addresses: int | None = None
    other_programs_per_address: float | None = Field(
        None,
        description="estimated programs of the whole grid, besides an op's own, that update the address it "
        "updates (contention between programs)",
    )
    lanes_per_program: float | None = Field(None, description="active atomic lanes per sampled program")
    updates_per_address: float | None = Field(
        None,
        description="estimated atomic updates (lanes) landing on the most-updated address in one launch, over the "
        "whole grid: what serialises there, whatever the block size",
    )

    def lanes_per_call(self) -> float:
        return self.lanes / max(self.calls, 1)

    def one_address_per_call(self) -> bool:
        """An atomic whose active lanes in a call all update one address (mean within 10 % of them)."""
        return (self.lanes_per_address_mean or 0) >= 0.9 * self.lanes_per_call()


class WaveBuffer(_Model):
    """One loaded buffer in the first wave of a grid (interpreter trace, first call of each load line)."""

    buffer: str
    lines_per_program: float = Field(description="128-byte lines one program's first loads touch")
    lines: int = Field(description="distinct lines the wave's programs touch together")
    panels: float = Field(description="lines / lines_per_program: how many programs' worth of distinct data")
    reuse: float = Field(description="programs of the whole grid that load each line, on average (from its size)")
    loop_calls: float = Field(1.0, description="calls of the buffer's load per program: its loop's iterations")


class WaveStore(_Model):
    """One stored buffer in the first wave of a grid: how full the 32-byte sectors it writes are."""

    buffer: str
    bytes_per_program: float = Field(description="distinct bytes one program's first stores write")
    sector_fill: float = Field(description="bytes the wave writes / bytes of the 32-byte sectors it writes into")
    buffer_bytes: int


class WaveFootprint(_Model):
    """What the programs a GPU runs at once load and store together: the L2 reuse their order gives."""

    programs: int = Field(description="programs of the wave traced, in launch order from the first")
    programs_total: int
    buffers: list[WaveBuffer] = Field(default_factory=list)
    stores: list[WaveStore] = Field(default_factory=list)


class StaticFact(_Model):
    """Instructions of one kind at one kernel line, in the kernel compiled for one target."""

    target: str = Field(description="cuda:90, hip:gfx942, ...")
    file: str
    line: int
    kind: Literal[
        "load",
        "store",
        "atomic",
        "shared_load",
        "shared_store",
        "async_copy",
        "tma",
        "mma",
        "local_load",
        "local_store",
    ]
    instruction: str = Field(description="e.g. ld.global.v4.b32, global_atomic_add_f32")
    width_bits: int | None = Field(None, description="bits per lane per instruction")
    count: int = Field(description="instructions of this kind at this line, per thread")


class LineCounters(_Model):
    """Hardware counters of the instructions at one kernel line (ncu's per-SASS-instruction view)."""

    file: str
    line: int
    instructions: list[str] = Field(default_factory=list, description="SASS opcodes at the line, e.g. STS, LDS")
    counters: dict[str, float] = Field(default_factory=dict)


class RegionStat(_Model):
    """One timed region of a kernel (Proton instrumentation), over the warps of one launch."""

    name: str = Field(description="the scope name, e.g. load@36 (its first line)")
    kind: str = Field(description="kernel, prologue, loop, load, dot, math, store, epilogue or user")
    side: Literal["memory", "compute", "other"]
    first_line: int | None = None
    last_line: int | None = None
    executions: int | None = Field(None, description="over all warps; None from Proton's per-scope totals")
    cycles_per_warp: float = Field(description="SM cycles a warp spends in it per launch")
    cycles_per_execution: float | None = None
    share_of_kernel: float | None = None
    share_of_loop: float | None = None


class Regions(_Model):
    """What the region timers measured in one launch of a kernel (the last one traced)."""

    kernel: str
    launches: int = 0
    ctas: int = 0
    warps_per_cta: int = Field(0, description="warps recorded per CTA")
    recorded_warps: list[int] = Field(
        default_factory=list,
        description="the warps recorded in each CTA when Proton sampled the first of each warp group; empty: all",
    )
    source: Literal["trace", "totals"] = Field(
        "trace",
        description="trace: Proton's trace, every event (per-iteration figures, overlap, critical path, the "
        "timeline); totals: its per-scope totals (its tree), for grids whose trace would cost more than the "
        "verdict needs: shares and cycles per warp only",
    )
    kernel_cycles_per_warp: float | None = None
    loop_line: int | None = None
    loop_cycles_per_warp: float | None = None
    loop_iterations: float | None = Field(None, description="per warp, from the loop regions' executions")
    iteration_cycles: float | None = None
    exposed_memory_share: float | None = Field(
        None,
        description="of the main loop's time, the share warps spend in memory statements (loads waiting "
        "for their data): what pipelining hides",
    )
    compute_share: float | None = None
    unattributed_share: float | None = Field(
        None, description="loop time outside every region (waits the compiler placed between statements)"
    )
    overlap: float | None = Field(
        None,
        description="per CTA, time some recorded warp is in a memory region while "
        "another is in a compute region over the time either is",
    )
    overlap_per_cta: dict[int, float] = Field(default_factory=dict, description="first 64 CTAs")
    critical_path: list[dict] = Field(default_factory=list)
    warp_group_wait_cycles: dict[str, float] | None = None
    regions: list[RegionStat] = Field(default_factory=list)
    overhead: float | None = Field(None, description="instrumented / plain kernel time - 1, when measured")
    problems: list[str] = Field(default_factory=list, description="why the figures cannot be trusted")
    files: dict[str, str] = Field(default_factory=dict, description="timeline (Perfetto JSON), png, proton trace")


class Evidence(_Model):
    """What one backend measured or modelled about one kernel."""

    backend: str = Field(description="e.g. interpreter-trace, ncu, static")
    modelled: bool = Field(description="True when the numbers are a model (CPU), not hardware counters")
    kernel: str
    launches_traced: int = 0
    programs_total: int = 0
    programs_sampled: int = 0
    sites: list[AccessSite] = Field(default_factory=list)
    facts: list[StaticFact] = Field(default_factory=list, description="the static view's, per target and line")
    metrics: dict[str, float] = Field(default_factory=dict, description="whole-kernel counters (ncu, rocprofv3)")
    lines: list[LineCounters] = Field(default_factory=list, description="counters per kernel line (ncu)")
    regions: Regions | None = Field(None, description="region timers (proton)")
    wave: WaveFootprint | None = Field(None, description="the first wave's loads (interpreter trace)")
    resources: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="the static view's per target: registers per thread, spilled bytes, occupancy",
    )
    notes: list[str] = Field(default_factory=list)


# --- findings ---------------------------------------------------------------------------------


class Metric(_Model):
    name: str
    value: float
    unit: str = ""
    better: Literal["lower", "higher"]


class SourceLine(_Model):
    """A pinpointed line of the kernel's Python source, with a few lines around it."""

    file: str
    line: int
    code: str
    detail: str = Field("", description="what the evidence says about this line")
    context: list[tuple[int, str]] = Field(default_factory=list)


class Finding(_Model):
    formula: str
    present: bool
    severity: Literal["none", "low", "medium", "high"]
    metric: Metric | None = None
    lines: list[SourceLine] = Field(default_factory=list)
    explanation: str
    evidence_backend: str | None = None
    modelled: bool = False


class KernelDiagnosis(_Model):
    kernel: str
    rank: int
    findings: list[Finding]
    evidence: list[Evidence]
    launch_bound: str | None = Field(
        None,
        description="set where a launch does less work than launching it costs (a few microseconds on a GPU): "
        "what was measured or estimated; idle lanes and locality are not worth fixing there",
    )


# --- optimization ---------------------------------------------------------------------------------


class Measure(_Model):
    """The formula's metric and the kernel's recorded time in one run."""

    metric: float | None = None
    metric_name: str | None = Field(None, description="which metric: before and after compare only the same one")
    metric_modelled: bool = False
    metric_source: Literal["profile", "candidate-process"] = Field(
        "profile",
        description="where the metric was taken: the profiled program, or a candidate's own run, whose code ran "
        "in the process that measured it (a verdict never rests on it: it rests on the replays and the timing)",
    )
    kernel_time_s: float | None = Field(None, description="mean per launch, as the recorder measured it")
    time_source: str = ""
    bottleneck_absent: bool = Field(
        False,
        description="the formula looked at this run's evidence and found no such bottleneck at all (a fix that "
        "removed what the metric counts, e.g. every atomic, leaves no metric to compare)",
    )
    metric_unit: str = ""
    present: bool | None = Field(
        None,
        description="the formula's verdict on this run's own evidence, as `diagnose` reaches it: the bottleneck "
        "is there (True), is not (False), or the formula had no evidence (None)",
    )
    severity: Literal["none", "low", "medium", "high"] | None = None


class Attempt(_Model):
    number: int
    rewriter: str
    title: str
    rationale: str = ""
    status: Literal["accepted", "rejected", "invalid", "timed-out", "interrupted"] = Field(
        description="invalid: failed the checks before any run (syntax, scope, not the same kernel); timed-out: a "
        "run of it outlasted its limit (also after one retry on a busy machine), so it was not judged; "
        "interrupted: the user stopped the run (Ctrl-C) while it was being validated"
    )
    problems: list[Problem] = Field(
        default_factory=list, description="why it was rejected: the verdict's problems and the loop's, typed"
    )
    reasons: str = Field("", description="the problems as text: what the next rewrite is told")
    files: list[str] = Field(default_factory=list, description="project files the candidate changes")
    diff: str = ""
    verdict: Verdict | None = None
    before: Measure | None = None
    after: Measure | None = None
    metric_improved: bool | None = None
    chosen: dict | None = Field(
        None,
        description="for a sweep (search): the launch config its autotuner chose in "
        "the candidate's run (num_warps, num_stages), tried next pinned",
    )
    tokens: int = 0
    seconds: dict[str, float] = Field(
        default_factory=dict,
        description="rewrite, candidate_run, compare (in intelliperf's process), replay, sanitizer (beside the "
        "replay), timing, metric; total: the attempt's wall time after the rewrite",
    )
    device: str | None = Field(
        None, description="with --devices: the GPU its runs were pinned to (CUDA_VISIBLE_DEVICES)"
    )

    def set_problems(self, problems: list[Problem]) -> None:
        """The attempt's problems, and its reasons rendered from them (one text, one list)."""
        self.problems = problems
        self.reasons = render_problems(problems)

    def wall_s(self) -> float:
        """Its seconds, rewrite to decision: `total` plus the rewrite (stages overlap, so their sum is more);
        a report from before `total` was recorded: the sum."""
        if "total" in self.seconds:
            return self.seconds["total"] + self.seconds.get("rewrite", 0.0)
        return sum(self.seconds.values())


OptimizationStatus = Literal["running", "won", "no-win", "interrupted", "failed"]


class Optimization(_Model):
    kernel: str
    formula: str = Field("", description="the formula whose bottleneck it addressed (with --formula auto, the top one)")
    rewriters: list[str]
    status: OptimizationStatus
    budget: dict[str, float | int | None] = Field(description="max_attempts, time_budget_s, max_tokens")
    devices: list[str] = Field(
        default_factory=list,
        description="GPUs a round's candidates were validated on in parallel (--devices); empty: the caller's own",
    )
    sandbox: str | None = Field(
        None, description="how candidate code was confined; 'off (--no-sandbox) ...' when the user opted out"
    )
    hardware: dict = Field(default_factory=dict)
    baseline: Measure
    attempts: list[Attempt] = Field(default_factory=list)
    winner: int | None = Field(None, description="number of the accepted attempt")
    bottleneck_removed: bool | None = Field(
        None,
        description="the formula, asked again of the winner's own run, finds no such bottleneck (False: still "
        "present, whatever its metric did; None: not re-diagnosed)",
    )
    speedup: Speedup | None = None
    patch: str | None = Field(None, description="path of the unified diff of the winner")
    files: dict[str, str] = Field(default_factory=dict, description="changed project file -> rewritten copy")
    applied: bool = Field(False, description="the winner was applied to the user's tree (--in-place)")
    tokens: int = 0
    notes: list[str] = Field(default_factory=list)
    error: str | None = None

    def winning_attempt(self) -> Attempt:
        """The accepted attempt (delivery runs only for a validated win)."""
        if self.winner is None:
            raise ValueError(f"the optimization of {self.kernel} has no validated win")
        return self.attempts[self.winner - 1]


# --- the report ---------------------------------------------------------------------------------


class Delivery(_Model):
    """Where the validated winner went besides the patch file (--branch, --create-pr)."""

    branch: str
    base: str = Field(description="the commit or branch the fix was committed on top of")
    commit: str
    remote: str | None = Field(None, description="remote the branch was pushed to (--create-pr)")
    pr_number: int | None = None
    pr_url: str | None = None
    pr_action: Literal["created", "updated"] | None = None
    notes: list[str] = Field(default_factory=list)


class RunInfo(_Model):
    command: list[str]
    cwd: str
    mode: Literal["interpreter", "compiled"]
    device: str
    time_source: str = Field(description="what the kernel times are, e.g. 'device time (CUDA events)'")
    duration_s: float
    processes: int = Field(description="Python processes of the command that the recorder ran in")
    launches: int
    versions: dict[str, str]


class Report(_Model):
    schema_version: str = SCHEMA_VERSION
    tool: str = "intelliperf"
    tool_version: str
    created: str
    formula: str = Field(
        description="the formula asked; with optimize --formula auto, the one whose bottleneck was chosen (the "
        "diagnoses keep every formula's findings)"
    )
    run: RunInfo
    kernels: list[KernelProfile] = Field(description="all recorded kernels, ranked by total time")
    top: list[str] = Field(description="kernels diagnosed (after --kernel and --top-n)")
    diagnoses: list[KernelDiagnosis]
    selected: str | None = Field(
        description="first kernel, in rank order, where the formula found its bottleneck (with optimize --formula "
        "auto: the kernel of the bottleneck that weighs most)"
    )
    stages: dict[str, float] = Field(default_factory=dict, description="seconds per stage")
    notes: list[str] = Field(default_factory=list)
    optimization: Optimization | None = Field(None, description="`intelliperf optimize` only")
    delivery: Delivery | None = Field(None, description="the winner's branch and pull request, when asked for")

    def diagnosis(self, kernel: str) -> KernelDiagnosis:
        return next(d for d in self.diagnoses if d.kernel == kernel)

    def won(self) -> Optimization:
        """The optimization a patch, branch or pull request is made from (only for a validated win)."""
        if self.optimization is None or self.optimization.winner is None:
            raise ValueError("this report has no validated win")
        return self.optimization
