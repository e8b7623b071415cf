"""`llm`: a DSPy program over any OpenAI-compatible endpoint (the optional extra `intelliperf[llm]`).

The model sees what a performance engineer would want: the kernel and its launcher (not the
whole file), the pinpointed lines with what the evidence says about them, the launch
configuration, the hardware, the formula's problem statement and known techniques, and every
earlier attempt with the concrete reason it failed. It answers with the kernel (and the
launcher if it must change) and a short rationale.

Connection: `--model` (a LiteLLM model string; a bare name means an OpenAI-compatible
`openai/<name>`), `--api-base`, and the key from INTELLIPERF_API_KEY, OPENAI_API_KEY or the
variable named by `--api-key-env`. Answers are cached on disk by a hash of the request, so a
rerun does not pay twice, and appended to a transcript that `--rewriter replay` plays back.
Rate limits, timeouts and server errors are retried with backoff; a missing key, a refused
key or an unreachable endpoint is a ModelError that says what to set.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from urllib.parse import urlparse

from pydantic import Field

from intelliperf.errors import ModelError, UsageError

from ..redact import scrub
from .base import Candidate, Rewriter, RewriteRequest
from .transcript import Transcript, candidate_from_answer

KEY_VARIABLES = ("INTELLIPERF_API_KEY", "OPENAI_API_KEY")
DEFAULT_CACHE = Path(os.environ.get("INTELLIPERF_CACHE_DIR", Path.home() / ".cache" / "intelliperf")) / "llm"

INSTRUCTIONS = """You are a GPU performance engineer. Rewrite the Triton kernel so that the bottleneck described
below goes away, while every output buffer gets the same values for every input (up to floating-point
reordering). Return the complete @triton.jit function with the same name and parameters. Change the
launcher only if the kernel's launch must change (grid, block sizes, num_warps); otherwise leave that
field empty. Do not add helper functions, imports or global state, do not cache results between calls,
do not skip work for some inputs, and do not launch on another stream. Learn from the earlier attempts:
each one says why it was rejected."""


def _signature():
    import dspy

    class RewriteKernel(dspy.Signature):
        problem: str = dspy.InputField(desc="the bottleneck, its metric and the pinpointed source lines")
        kernel_source: str = dspy.InputField(desc="the @triton.jit kernel to rewrite")
        launcher_source: str = dspy.InputField(desc="the Python function that launches it")
        launch: str = dspy.InputField(desc="the recorded launch: grid, constexprs, num_warps, argument shapes")
        hardware: str = dspy.InputField()
        techniques: str = dspy.InputField(desc="fixes known to work for this bottleneck")
        history: str = dspy.InputField(desc="earlier attempts and why each was rejected")
        kernel: str = dspy.OutputField(desc="the complete rewritten @triton.jit function, in a python code block")
        launcher: str = dspy.OutputField(desc="the complete rewritten launcher, or empty when it is unchanged")
        rationale: str = dspy.OutputField(desc="one short paragraph: what changed and why it is faster")

    return RewriteKernel.with_instructions(INSTRUCTIONS)


def prompt_fields(request: RewriteRequest) -> dict[str, str]:
    """The request as the text fields of the DSPy signature."""
    f = request.finding
    problem = [request.problem, f.explanation]
    if f.metric:
        problem.append(f"Metric to improve: {f.metric.name} = {f.metric.value:g} {f.metric.unit} "
                       f"({f.metric.better} is better{', modelled on CPU' if f.modelled else ''}).")
    for src in f.lines:
        problem.append(f"{Path(src.file).name}:{src.line}: `{src.code}` -- {src.detail}")
    sig = request.profile.signatures[0] if request.profile.signatures else None
    launch = "unknown"
    if sig:
        args = ", ".join(f"{a.name}={a.value!r}" if a.kind in ("constexpr", "scalar") else
                         f"{a.name}: {a.dtype}{a.shape}" for a in sig.args)
        launch = f"grid={sig.grid}, num_warps={sig.num_warps}, num_stages={sig.num_stages}; {args}"
    history = []
    for past in request.history:
        history.append(f"Attempt {past.number} ({past.rewriter}: {past.title}): {past.outcome}."
                       + (f"\n{past.reasons}" if past.reasons else ""))
    last = next((p for p in reversed(request.history) if p.diff), None)
    if last is not None:
        history.append(f"The change tried in attempt {last.number}:\n```diff\n{last.diff}```")
    return {
        "problem": "\n".join(problem),
        "kernel_source": f"# {request.kernel.relpath}:{request.kernel.line}\n{request.kernel.source}",
        "launcher_source": (f"# {request.launcher.relpath}:{request.launcher.line}\n{request.launcher.source}"
                            if request.launcher else "(not available: the kernel is launched from a nested function)"),
        "launch": launch,
        "hardware": request.hardware.describe(),
        "techniques": "\n".join(f"- {t}" for t in request.techniques) or "(none listed)",
        "history": "\n\n".join(history) or "(first attempt)",
    }


class LLMRewriter(Rewriter):
    name = "llm"
    needs_model = True

    class Options(Rewriter.Options):
        model: str = Field(description="LiteLLM model string; a bare name means openai/<name>")
        api_base: str | None = None
        api_key_env: str | None = Field(None, description="variable holding the key; default INTELLIPERF_API_KEY, "
                                                           "then OPENAI_API_KEY")
        temperature: float | None = Field(None, description="default: the model's, 0.8 for best-of-N")
        max_tokens: int = 8000
        timeout_s: float = 180.0
        retries: int = Field(4, ge=0, description="retries of rate limits, timeouts and server errors")
        backoff_s: float = Field(2.0, description="first retry delay; doubles each retry")
        cache_dir: Path | None = DEFAULT_CACHE
        transcript: Path | None = None

    def __init__(self, options: Options) -> None:
        super().__init__(options)
        self.key = self._key()
        self.transcript = Transcript(model=options.model)
        self._program = None
        self._lm = None

    def _key(self) -> str:
        names = (self.options.api_key_env,) if self.options.api_key_env else KEY_VARIABLES
        for name in names:
            if os.environ.get(name):
                return os.environ[name]
        host = urlparse(self.options.api_base or "").hostname or ""
        if host in ("localhost", "127.0.0.1", "::1"):
            return "not-needed"  # local servers (vLLM, Ollama) usually take any key
        raise ModelError(f"no API key for the model {self.options.model!r}: {' / '.join(names)} is not set",
                         hint=f"Set it (export {names[0]}=...), or name your variable with --api-key-env NAME. "
                              "Local servers need only --api-base.")

    def _setup(self):
        if self._program is not None:
            return
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch at import
        try:
            import dspy
        except ImportError:
            raise UsageError("the llm rewriter needs the optional LLM stack (dspy, openai)",
                             hint="pip install 'intelliperf[llm]', or use --rewriter recipes / search.") from None
        model = self.options.model if "/" in self.options.model else f"openai/{self.options.model}"
        # LiteLLM's route goes through the official openai client for OpenAI-compatible endpoints.
        self._lm = dspy.LM(model, api_base=self.options.api_base, api_key=self.key, cache=False, num_retries=0,
                           engine="litellm", timeout=self.options.timeout_s, max_tokens=self.options.max_tokens)
        self._program = dspy.Predict(_signature())

    def rewrite(self, request: RewriteRequest) -> Candidate:
        return self.rewrite_many(request, 1)[0]

    def rewrite_many(self, request: RewriteRequest, n: int) -> list[Candidate]:
        fields = {k: scrub(v) for k, v in prompt_fields(request).items()}  # nothing secret leaves in a prompt
        temperature = self.options.temperature if self.options.temperature is not None else (0.8 if n > 1 else None)
        out = []
        for index in range(n):
            answer, tokens = self._answer(fields, index, temperature)
            self.transcript.kernel = request.kernel.name
            self.transcript.answers.append(answer)
            if self.options.transcript:
                self.transcript.save(self.options.transcript)
            out.append(candidate_from_answer(self.name, request, answer, tokens))
        return out

    def _answer(self, fields: dict, index: int, temperature: float | None) -> tuple[dict, int]:
        key = hashlib.sha256(json.dumps([self.options.model, self.options.api_base, INSTRUCTIONS, fields, index,
                                         temperature], sort_keys=True).encode()).hexdigest()
        cached = self.options.cache_dir / f"{key}.json" if self.options.cache_dir else None
        if cached is not None and cached.exists():
            try:
                return json.loads(cached.read_text()), 0
            except (OSError, ValueError):  # unreadable or torn (written by an older version): ask again
                pass
        answer, tokens = self._ask(fields, temperature)
        if cached is not None:
            from ..profiling.recorder import write_atomic

            cached.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(str(cached), json.dumps(answer))  # whole or not at all, also when interrupted
        return answer, tokens

    def _ask(self, fields: dict, temperature: float | None) -> tuple[dict, int]:
        from dspy.utils.exceptions import AdapterParseError, LMAuthError, LMError, is_retryable_lm_error

        self._setup()
        import dspy

        config = {"temperature": temperature} if temperature is not None else {}
        delay = self.options.backoff_s
        for attempt in range(self.options.retries + 1):
            try:
                with dspy.context(lm=self._lm):
                    prediction = self._program(**fields, config=config)
                usage = (self._lm.history[-1].get("usage") or {}) if self._lm.history else {}
                return ({k: str(getattr(prediction, k, "") or "") for k in ("kernel", "launcher", "rationale")},
                        int(usage.get("total_tokens") or 0))
            except AdapterParseError as exc:
                # A reply in neither the chat nor the JSON format: a failed answer, told to the next prompt.
                return {"kernel": "", "launcher": "", "rationale": "",
                        "error": f"the reply did not have the requested fields: {str(exc)[:300]}"}, 0
            except LMAuthError as exc:
                raise ModelError(f"the model endpoint refused the API key: {_first_line(exc)}",
                                 hint="Check the key's variable (--api-key-env) and --api-base.") from None
            except LMError as exc:
                if not is_retryable_lm_error(exc) or attempt == self.options.retries:
                    where = self.options.api_base or "the provider's default endpoint"
                    raise ModelError(f"the model at {where} failed after {attempt + 1} tries: {_first_line(exc)}",
                                     hint="Check --api-base and --model, and that the server is up.") from None
                time.sleep(max(delay, getattr(exc, "retry_after", None) or 0))
                delay *= 2
        raise AssertionError("unreachable")


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
