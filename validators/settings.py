"""What a validation is told: the program, the sandbox's and the checks' settings, and the names the
steps share.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

from intelliperf.errors import IntelliPerfError
from intelliperf.redact import looks_secret
from intelliperf.workload import sandbox as sandboxing

from .compare import Tolerances
from .verdict import ProblemKind

DEFAULT_THRESHOLD = 0.03  # faster means the speedup interval's low end clears 1 + this

# Problems that already say what is wrong: no replay after them.
GUARDS: tuple[ProblemKind, ...] = ("not-launched", "dispatch-count", "side-stream", "missing-output", "race")


NAMED_BY_REPLAY: tuple[ProblemKind, ...] = ("unwritten", "stale-result", "aliased-output")


WORKER = [sys.executable, "-m", "intelliperf.validators.workers.replay"]


class SandboxSettings(BaseModel):
    """What the sandbox lets through (--no-sandbox, --sandbox-read, --sandbox-env, --sandbox-network)."""

    enabled: bool = Field(True, description="False only when the user opts out; the report and PR body say so")
    read: list[Path] = Field([], description="hidden folders (in $HOME, say) the program needs to read")
    env: list[str] = Field([], description="variables to pass although their value looks like a credential")
    network: bool = Field(False, description="let program runs reach the network")

    def build(self, hide: tuple[Path, ...], secrets: list[str]) -> sandboxing.Sandbox:
        """The checked sandbox; raises SandboxUnavailableError (with the fix) when it cannot run here."""
        from intelliperf.errors import SandboxUnavailableError, UsageError

        secret = [name for name in self.env if looks_secret(name)]
        if secret:
            raise UsageError(
                f"--sandbox-env {secret[0]}: a variable whose name looks secret is never handed to candidate code",
                hint="Give the program what it needs under another name, or read it "
                "from a file passed with --sandbox-read.",
            )
        try:
            return sandboxing.make(
                enabled=self.enabled,
                hide=hide,
                readable=tuple(self.read),
                network=self.network,
                extra_env=tuple(self.env),
                deny_env=tuple(secrets),
            )
        except sandboxing.SandboxError as exc:
            raise SandboxUnavailableError(str(exc)) from None


class ValidationSettings(BaseModel):
    tolerances: Tolerances = Tolerances()
    trials: int = Field(3, ge=1, description="fresh-input replays at the recorded shapes")
    seed: int = Field(0, description="seed of every program run and of the first replay trial (trial t: seed + t)")
    reference_runs: int = Field(
        2, ge=1, description="runs of the unchanged program; two show whether it is deterministic when seeded"
    )
    timeout_s: float | None = Field(
        None,
        gt=0,
        description="per candidate run and replay; default: 4x the reference's "
        "own (run, replay) + 30 s, times the machine's load",
    )
    patience: float = Field(
        1.0, gt=0, description="multiplies the default limits (a retry after a timeout on a busy machine doubles it)"
    )
    threshold: float = Field(DEFAULT_THRESHOLD, description="faster means the interval's low end > 1 + threshold")
    timing: bool = Field(True, description="time reference and candidate when a GPU is present")
    sanitizer: bool | None = Field(
        None,
        description="compute-sanitizer (memcheck, racecheck) on the candidate's replay, beside it; "
        "default: when the kernels run compiled",
    )
    racecheck_ctas: int | None = Field(
        None,
        ge=0,
        description="CTAs of each launch racecheck instruments, for kernels with no inline assembly or atomics "
        "(a shared-memory race is one CTA's; Triton's own accesses are the same code in every CTA); "
        "default: one per SM of the device; 0: every CTA",
    )
    head_start: bool | None = Field(
        None,
        description="start each candidate's Pythons (program, replay, sanitizer and timing workers; torch and "
        "Triton imported) before it exists (`start_head_starts`); the program's only where it allows "
        "(`python script.py` "
        "importing torch first); default: where the machine has 4 cores or more (on fewer their start-up slows "
        "the run it overlaps about as much as it saves)",
    )
    profiled_launch_s: float | None = Field(
        None,
        description="the kernel's mean device time per launch as the program's profile measured it: a reference "
        "whose timed calls take less than half of it is timed on another workload (its data decides the work), "
        "and no speedup is reported",
    )
    allow_host_compute: bool = Field(
        False,
        description="accept a candidate whose launcher returns the right outputs with its Triton kernels made "
        "no-ops (the work done by torch outside the kernels); said in the verdict's notes",
    )
    screen: bool = Field(
        False,
        description="a screen (the search's sweep, never a fix): only the program run and its outputs compared; "
        "what it finds is validated in full as a candidate of its own",
    )
    timing_budget_s: float = 20.0
    secrets: list[str] = Field([], description="extra environment variables never handed to any program run")
    sandbox: SandboxSettings = SandboxSettings()
    capture_limits: tuple[int, int, int] = Field((64, 16, 64), description="dispatches kept: first, last, sample")


@dataclass
class Program:
    """A program to run: the project it lives in, the command, and where (default: the root)."""

    root: Path
    command: list[str]
    cwd: Path | None = None
    env: dict[str, str] = field(default_factory=dict)  # set in every process run for it (e.g. its GPU)

    def workdir(self) -> Path:
        return Path(self.cwd or self.root)


class GroundTruthError(IntelliPerfError):
    """The reference's captures or replay outputs changed after they were taken: the sandbox did not
    hold, and no verdict of this run can be trusted (exit 1, please report it)."""


# The ground truth's outputs the parent keeps in memory, read while the first candidate's program runs.
TRUTH_KEPT_BYTES = 2 << 30
