"""`llm`: a DSPy program over any OpenAI-compatible endpoint (the optional extra `intelliperf[llm]`).

The model sees what a performance engineer would want: the kernel and its launcher (not the
whole file), the pinpointed lines with what the evidence says about them, the launch
configuration, the hardware, the formula's problem statement and known techniques, and every
earlier attempt with the concrete reason it failed. It answers with the kernel (and the
launcher if it must change) and a short rationale.

Connection: `--model` (a LiteLLM model string; a bare name means an OpenAI-compatible
`openai/<name>`), `--api-base`, and the key from INTELLIPERF_API_KEY, OPENAI_API_KEY or the
variable named by `--api-key-env`. The program is intelliperf.rewriters.program.KernelRewriter
(a DSPy Module), or a tuned copy of it loaded from `--program FILE`.

Answers go through DSPy's own cache (disk, under the cache folder; candidate i of a best-of-N
round is DSPy rollout i, so N answers are N entries and a rerun pays for none) and are appended
to a transcript that `--rewriter replay` plays back. Retries stay here rather than in DSPy's
LiteLLM retry: a rate limit's Retry-After is honoured, a refused key stops at once, and the
last error becomes a ModelError that says what to set; a missing key, a refused key or an
unreachable endpoint is a ModelError.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pydantic import Field

from intelliperf.errors import ModelError, UsageError

from .. import env
from ..models import Evidence
from ..redact import scrub
from .base import Candidate, Rewriter, RewriteRequest
from .transcript import Transcript, candidate_from_answer

KEY_VARIABLES = (env.API_KEY, "OPENAI_API_KEY")
DEFAULT_CACHE = env.cache_root() / "llm"


def prompt_fields(request: RewriteRequest) -> dict:
    """The request and the diagnosis's evidence as the typed fields of program.RewriteKernel."""
    f = request.finding
    problem = [request.problem, f.explanation]
    if f.metric:
        problem.append(
            f"Metric to improve: {f.metric.name} = {f.metric.value:g} {f.metric.unit} "
            f"({f.metric.better} is better{', modelled on CPU' if f.modelled else ''})."
        )
    sig = request.profile.signatures[0] if request.profile.signatures else None
    launch = "unknown"
    if sig:
        args = ", ".join(
            f"{a.name}={a.value!r}" if a.kind in ("constexpr", "scalar") else f"{a.name}: {a.dtype}{a.shape}"
            for a in sig.args
        )
        launch = f"grid={sig.grid}, num_warps={sig.num_warps}, num_stages={sig.num_stages}; {args}"
    last = next((p for p in reversed(request.history) if p.diff), None)
    evidence = request.evidence
    return {
        "problem": "\n".join(problem),
        "pinpointed_lines": [f"{Path(src.file).name}:{src.line}: `{src.code}` -- {src.detail}" for src in f.lines],
        "counters": _counters(evidence, {src.line for src in f.lines}),
        "regions": _regions(evidence),
        "static_facts": _facts(evidence, request.kernel.relpath),
        "kernel_source": f"# {request.kernel.relpath}:{request.kernel.line}\n{request.kernel.source}",
        "launcher_source": (
            f"# {request.launcher.relpath}:{request.launcher.line}\n{request.launcher.source}"
            if request.launcher
            else "(not available: the kernel is launched from a nested function)"
        ),
        "launch": launch,
        "hardware": request.hardware.describe(),
        "techniques": list(request.techniques),
        "history": [
            f"Attempt {past.number} ({past.rewriter}: {past.title}): {past.outcome}."
            + (f"\n{past.reasons}" if past.reasons else "")
            for past in request.history
        ],
        "last_change": f"attempt {last.number}:\n```diff\n{last.diff}```" if last else "",
    }


def _counters(evidence: list[Evidence], lines: set[int], most: int = 16) -> list[str]:
    out = []
    for ev in evidence:
        out += [f"{ev.backend}: {name} = {value:g}" for name, value in list(ev.metrics.items())[:most]]
        out += [
            f"{ev.backend} line {c.line} ({' '.join(c.instructions[:6])}): "
            + ", ".join(f"{k} = {v:g}" for k, v in list(c.counters.items())[:8])
            for c in ev.lines
            if c.line in lines
        ]
    return out


def _regions(evidence: list[Evidence]) -> str:
    r = next((ev.regions for ev in evidence if ev.regions is not None), None)
    if r is None:
        return ""
    shares = ", ".join(f"{x.name} {x.share_of_loop:.0%}" for x in r.regions if x.share_of_loop is not None)
    facts = [
        f"loop at line {r.loop_line}" if r.loop_line else "",
        f"{r.loop_iterations:g} iterations per warp" if r.loop_iterations else "",
        f"exposed memory {r.exposed_memory_share:.0%} of the loop" if r.exposed_memory_share is not None else "",
        f"memory/compute overlap {r.overlap:.0%}" if r.overlap is not None else "",
        f"share of the loop per region: {shares}" if shares else "",
    ]
    return "; ".join(x for x in facts if x)


def _facts(evidence: list[Evidence], kernel_file: str, most: int = 40) -> list[str]:
    # By file name: a compile that Triton's cache served names the folder it was first compiled in.
    facts = [fact for ev in evidence for fact in ev.facts if Path(fact.file).name == Path(kernel_file).name]
    usage = [
        f"{target}: " + ", ".join(f"{name.replace('_', ' ')} {value:g}" for name, value in found.items())
        for ev in evidence
        for target, found in ev.resources.items()
    ]
    wave = next((ev.wave for ev in evidence if ev.wave is not None), None)
    if wave is not None:
        usage += [
            f"first wave ({wave.programs} of {wave.programs_total} programs) loads of `{b.buffer}`: "
            f"{b.lines_per_program:g} lines of 128 B per program, {b.lines} distinct, each line read by "
            f"about {b.reuse:g} programs of the grid"
            for b in wave.buffers
        ]
        usage += [
            f"first wave stores to `{w.buffer}`: {w.bytes_per_program:g} bytes per program, filling "
            f"{w.sector_fill:.0%} of the 32-byte sectors they write into ({w.buffer_bytes:,} bytes in all)"
            for w in wave.stores
        ]
    return usage + [f"{x.target} line {x.line}: {x.count}x {x.kind} {x.instruction}" for x in facts[:most]]


class LLMRewriter(Rewriter["LLMRewriter.Options"]):
    name = "llm"
    summary = "a model through DSPy (any OpenAI-compatible endpoint), given the evidence and every past attempt"

    class Options(Rewriter.Options):
        model: str = Field(description="LiteLLM model string; a bare name means openai/<name>")
        api_base: str | None = None
        api_key_env: str | None = Field(
            None, description="variable holding the key; default INTELLIPERF_API_KEY, then OPENAI_API_KEY"
        )
        temperature: float | None = Field(None, description="default: the model's, 0.8 for best-of-N")
        max_tokens: int = 8000
        timeout_s: float = 180.0
        retries: int = Field(4, ge=0, description="retries of rate limits, timeouts and server errors")
        backoff_s: float = Field(2.0, description="first retry delay; doubles each retry")
        cache_dir: Path | None = Field(DEFAULT_CACHE, description="DSPy's disk cache of answers; None: no cache")
        transcript: Path | None = None
        reasoning: bool = Field(
            False, description="a step-by-step reasoning field before the answer (dspy.ChainOfThought)"
        )
        program: Path | None = Field(None, description="a saved (e.g. tuned) KernelRewriter to load")

    def __init__(self, options: Options) -> None:
        super().__init__(options)
        self.key = self._key()
        self.transcript = Transcript(model=options.model)
        self._program: Any = None  # dspy objects: the llm extra is imported on first use
        self._lm: Any = None

    def _key(self) -> str:
        names = (self.options.api_key_env,) if self.options.api_key_env else KEY_VARIABLES
        for name in names:
            if os.environ.get(name):
                return os.environ[name]
        host = urlparse(self.options.api_base or "").hostname or ""
        if host in ("localhost", "127.0.0.1", "::1"):
            return "not-needed"  # local servers (vLLM, Ollama) usually take any key
        raise ModelError(
            f"no API key for the model {self.options.model!r}: {' / '.join(names)} is not set",
            hint=f"Set it (export {names[0]}=...), or name your variable with --api-key-env NAME. "
            "Local servers need only --api-base.",
        )

    def _setup(self):
        if self._program is not None:
            return
        # No network fetch at import. Set for the import only: the programs intelliperf runs get the user's
        # environment, and a variable that appears mid-run would differ from the one their head starts saw.
        had = "LITELLM_LOCAL_MODEL_COST_MAP" in os.environ
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        try:
            import dspy
        except ImportError:
            raise UsageError(
                "the llm rewriter needs the optional LLM stack (dspy, openai)",
                hint="pip install 'intelliperf[llm]', or use --rewriter recipes / search.",
            ) from None
        finally:
            if not had:
                os.environ.pop("LITELLM_LOCAL_MODEL_COST_MAP", None)
        model = self.options.model if "/" in self.options.model else f"openai/{self.options.model}"
        if self.options.cache_dir is not None:
            dspy.configure_cache(
                enable_disk_cache=True, enable_memory_cache=True, disk_cache_dir=str(self.options.cache_dir)
            )
        # LiteLLM's route goes through the official openai client for OpenAI-compatible endpoints.
        self._lm = dspy.LM(
            model,
            api_base=self.options.api_base,
            api_key=self.key,
            cache=self.options.cache_dir is not None,
            num_retries=0,
            engine="litellm",
            timeout=self.options.timeout_s,
            max_tokens=self.options.max_tokens,
        )
        from .program import KernelRewriter

        self._program = KernelRewriter(reasoning=self.options.reasoning)
        if self.options.program is not None:
            try:
                self._program.load(str(self.options.program))
            except (OSError, ValueError, KeyError) as exc:
                raise UsageError(
                    f"cannot load the DSPy program {self.options.program}: {exc}",
                    hint="--program takes a file saved by KernelRewriter().save(PATH) (JSON), with "
                    "the same --reasoning setting.",
                ) from None

    def configured(self):
        """The DSPy language model and program this rewriter asks (`intelliperf tune` compiles the latter)."""
        self._setup()
        return self._lm, self._program

    def rewrite(self, request: RewriteRequest) -> Candidate:
        return self.rewrite_many(request, 1)[0]

    def rewrite_many(self, request: RewriteRequest, n: int) -> list[Candidate]:
        fields = scrubbed(prompt_fields(request))  # nothing secret leaves in a prompt
        temperature = self.options.temperature if self.options.temperature is not None else (0.8 if n > 1 else None)
        out = []
        for index in range(n):
            answer, tokens = self._ask(fields, temperature, rollout=index if n > 1 else None)
            self.transcript.kernel = request.kernel.name
            self.transcript.answers.append(answer)
            if self.options.transcript:
                self.transcript.save(self.options.transcript)
            out.append(candidate_from_answer(self.name, request, answer, tokens))
        return out

    def _ask(self, fields: dict, temperature: float | None, rollout: int | None) -> tuple[dict, int]:
        from dspy.utils.exceptions import AdapterParseError, LMAuthError, LMError, is_retryable_lm_error

        self._setup()
        import dspy

        config = {"temperature": temperature} if temperature is not None else {}
        if rollout is not None:
            config["rollout_id"] = rollout  # best-of-N: each candidate its own DSPy cache entry
        delay = self.options.backoff_s
        for attempt in range(self.options.retries + 1):
            try:
                with dspy.context(lm=self._lm):
                    prediction = self._program(**fields, config=config)
                usage = (self._lm.history[-1].get("usage") or {}) if self._lm.history else {}
                return (
                    {k: str(getattr(prediction, k, "") or "") for k in ("kernel", "launcher", "beside", "rationale")},
                    int(usage.get("total_tokens") or 0),
                )
            except AdapterParseError as exc:
                # A reply in neither the chat nor the JSON format: a failed answer, told to the next prompt.
                return {
                    "kernel": "",
                    "launcher": "",
                    "rationale": "",
                    "error": f"the reply did not have the requested fields: {str(exc)[:300]}",
                }, 0
            except LMAuthError as exc:
                raise ModelError(
                    f"the model endpoint refused the API key: {_first_line(exc)}",
                    hint="Check the key's variable (--api-key-env) and --api-base.",
                ) from None
            except LMError as exc:
                if not is_retryable_lm_error(exc) or attempt == self.options.retries:
                    where = self.options.api_base or "the provider's default endpoint"
                    raise ModelError(
                        f"the model at {where} failed after {attempt + 1} tries: {_first_line(exc)}",
                        hint="Check --api-base and --model, and that the server is up.",
                    ) from None
                time.sleep(max(delay, getattr(exc, "retry_after", None) or 0))
                delay *= 2
        raise AssertionError("unreachable")


def scrubbed(fields: dict) -> dict:
    return {k: [scrub(x) for x in v] if isinstance(v, list) else scrub(v) for k, v in fields.items()}


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
