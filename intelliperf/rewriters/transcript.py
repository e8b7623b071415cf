"""Model answers as data: parse one into a Candidate, save them, and `replay` them.

An answer is a dict with `kernel`, `launcher`, `beside` (the code beside them: more kernels,
helpers, constants) and `rationale` (text, as a model writes it: fenced or not, the function alone
or the whole file). The `llm` rewriter appends every answer
to a transcript; the `replay` rewriter hands a transcript's answers back, one per attempt,
through the same parser. That is how a CI run is made reproducible and how the tests drive
the loop without a model.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from intelliperf.errors import UsageError
from intelliperf.files import write_atomic
from intelliperf.redact import scrub

from .base import Candidate, Rewriter, RewriteRequest
from .source import NotPython, ScopeError, extract_function, module_items, strip_fences

TRANSCRIPT_VERSION = 1


class Transcript(BaseModel):
    version: int = TRANSCRIPT_VERSION
    model: str = ""
    kernel: str = ""
    answers: list[dict] = Field(default_factory=list, description="one per candidate: kernel, launcher, rationale")

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(str(path), scrub(self.model_dump_json(indent=2) + "\n"))

    @classmethod
    def load(cls, path: Path) -> Transcript:
        try:
            return cls.model_validate_json(Path(path).read_text())
        except OSError as exc:
            raise UsageError(
                f"cannot read the transcript {path}: {exc.strerror}",
                hint="--transcript takes a JSON file saved by an earlier `--rewriter llm` run.",
            ) from None
        except ValidationError as exc:
            raise UsageError(
                f"{path} is not an intelliperf transcript: {exc.errors()[0]['msg']}",
                hint='Expected {"version": 1, "answers": [{"kernel": "...", "launcher": "", "rationale": "..."}]}.',
            ) from None


def candidate_from_answer(rewriter: str, request: RewriteRequest, answer: dict, tokens: int = 0) -> Candidate:
    """A Candidate from a model's answer; `invalid` says what is wrong with it (for the next prompt)."""
    rationale = str(answer.get("rationale") or "").strip()
    title = rationale.splitlines()[0][:100] if rationale else "model rewrite"
    base = dict(rewriter=rewriter, title=title, rationale=rationale, tokens=tokens, answer=answer)
    if answer.get("error"):
        return Candidate(**base, invalid=str(answer["error"]), invalid_kind="format")
    kernel_text = str(answer.get("kernel") or "")
    launcher_text = str(answer.get("launcher") or "")
    beside_text = str(answer.get("beside") or "")
    names = {request.kernel.name} | ({request.launcher.name} if request.launcher else set())
    try:
        kernel, _ = extract_function(kernel_text, request.kernel.name)
        launcher = None
        texts = [kernel_text]
        if request.launcher is not None:
            # The launcher may come in its own field or in the same code as the kernel (a whole file).
            for text in (launcher_text, kernel_text):
                if strip_fences(text).strip():
                    launcher, _ = extract_function(text, request.launcher.name)
                    texts.append(text)
                    if launcher is not None:
                        break
        texts += [beside_text] if strip_fences(beside_text).strip() else []
        module = beside_code(texts, names, Path(request.kernel.file).read_text())
    except ScopeError as exc:
        return Candidate(**base, invalid=str(exc), invalid_kind="syntax" if isinstance(exc, NotPython) else "scope")
    if kernel is None:
        return Candidate(
            **base,
            invalid=f"the answer does not define the kernel `{request.kernel.name}` "
            "(answer with the complete @triton.jit function, same name)",
        )
    if launcher is not None and request.launcher is not None and _same(launcher, request.launcher.source):
        launcher = None
    if _same(kernel, request.kernel.source) and launcher is None and module is None:
        return Candidate(**base, invalid="the answer is the unchanged kernel", invalid_kind="unchanged")
    return Candidate(
        **base, kernel=None if _same(kernel, request.kernel.source) else kernel, launcher=launcher, module=module
    )


def beside_code(texts: list[str], names: set[str], original: str) -> str | None:
    """The answer's top-level code beside the kernel and launcher that the file does not already have
    (more kernels and helpers, constants), as one text; a whole file in the answer brings only what
    differs. A class the file does not have is refused here (candidate code defines none)."""
    tree = ast.parse(original)
    before = {n.name: ast.dump(n) for n in tree.body if isinstance(n, ast.ClassDef)}
    had = {ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))}
    imports: dict[str, None] = {}  # top-level imports the file lacks (the apply step holds them to the policy)
    items: dict[str, str] = {}
    old = {name: ast.dump(ast.parse(text)) for name, text in module_items(original).items()}
    for text in texts:
        code = textwrap.dedent(strip_fences(text))
        for node in ast.parse(code).body:
            if isinstance(node, ast.ClassDef) and before.get(node.name) != ast.dump(node):
                raise ScopeError(f"the answer defines the class {node.name}; candidate code may not define classes")
            if isinstance(node, (ast.Import, ast.ImportFrom)) and ast.unparse(node) not in had:
                imports[ast.unparse(node)] = None
        for name, source in module_items(code).items():
            if name not in names and old.get(name) != ast.dump(ast.parse(source)):
                items[name] = source
    parts = (["\n".join(imports)] if imports else []) + [s.strip("\n") for s in items.values()]
    return "\n\n".join(parts) + "\n" if parts else None


def _same(a: str, b: str) -> bool:
    return a.strip() == b.strip()


class ReplayRewriter(Rewriter["ReplayRewriter.Options"]):
    """Hands back the answers of a saved transcript, one per candidate, in order."""

    name = "replay"
    summary = "the answers of a saved transcript of an llm run, in order (CI, tests)"

    class Options(Rewriter.Options):
        transcript: Path

    def __init__(self, options: Options) -> None:
        super().__init__(options)
        self.transcript = Transcript.load(options.transcript)
        self.next = 0

    def rewrite_many(self, request: RewriteRequest, n: int) -> list[Candidate]:
        """The next `n` answers (a best-of-N round), or a decline when none is left."""
        return [self.rewrite(request) for _ in range(min(n, max(len(self.transcript.answers) - self.next, 1)))]

    def rewrite(self, request: RewriteRequest) -> Candidate:
        if self.next >= len(self.transcript.answers):
            return Candidate.decline(
                self.name,
                f"the transcript {self.options.transcript} has no more answers "
                f"({len(self.transcript.answers)} replayed)",
            )
        answer = self.transcript.answers[self.next]
        self.next += 1
        return candidate_from_answer(self.name, request, answer)
