"""Rewriters on real diagnoses of the examples: recipes, search, answer parsing, scope checks,
and the llm rewriter through DSPy and the openai client against a loopback server."""

from __future__ import annotations

import ast
import socket
import sys
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES, REPO, SMALL, py

from intelliperf.errors import ModelError, UsageError
from intelliperf.rewriters import HardwareFacts, PastAttempt, RewriteRequest
from intelliperf.rewriters.llm import LLMRewriter
from intelliperf.rewriters.recipes import RecipeRewriter
from intelliperf.rewriters.search import SearchRewriter
from intelliperf.rewriters.search_edits import pin
from intelliperf.rewriters.source import ScopeError, check_scope, code_unit, extract_function, splice
from intelliperf.rewriters.transcript import candidate_from_answer
from intelliperf.testing.openai_server import Reply, ScriptedServer


def _request(report, launcher: str) -> RewriteRequest:
    diagnosis = report.diagnoses[0]
    profile = report.kernels[0]
    finding = diagnosis.findings[0]
    file = Path(profile.file)
    return RewriteRequest(
        kernel=code_unit(file, profile.name, REPO),
        launcher=code_unit(file, launcher, REPO),
        profile=profile,
        finding=finding,
        formula="atomicContention",
        recipes="atomicContention",
        problem="lanes serialise",
        techniques=["reduce first"],
        metric="atomic_updates_per_address",
        hardware=HardwareFacts(device="test"),
        sites=diagnosis.evidence[0].sites if diagnosis.evidence else [],
    )


@pytest.fixture(scope="module")
def sum_request(sum_report) -> RewriteRequest:
    return _request(sum_report, "contended_sum")


@pytest.fixture(scope="module")
def histogram_request() -> RewriteRequest:
    import intelliperf

    report = intelliperf.diagnose(
        py(EXAMPLES / "contended_histogram.py", *SMALL), formula="atomicContention", device="cpu"
    )
    return _request(report, "contended_histogram")


def _applied(request: RewriteRequest, kernel: str | None = None, launcher: str | None = None) -> str:
    text = Path(request.kernel.file).read_text()
    if kernel:
        text = splice(text, request.kernel.qualname, kernel)
    if launcher:
        text = splice(text, request.launcher.qualname, launcher)
    check_scope(
        Path(request.kernel.file).read_text(),
        text,
        {request.kernel.name, request.launcher.name},
        kernel=request.kernel.name,
    )
    return text


def test_reduce_then_atomic_on_the_contended_sum(sum_request):
    cand = RecipeRewriter().rewrite(sum_request)
    assert cand.declined is None and cand.title == "reduce-then-atomic"
    assert "tl.atomic_add(out_ptr, tl.sum(tl.where(mask, x, tl.zeros_like(x))))" in cand.kernel
    assert "out_ptr + zeros" not in cand.kernel
    text = _applied(sum_request, kernel=cand.kernel)
    # Only the atomic line changed: everything before the kernel and after it is byte for byte the same.
    original = Path(sum_request.kernel.file).read_text()
    assert text.split("@triton.jit")[0] == original.split("@triton.jit")[0]
    assert text.split("def contended_sum(")[1] == original.split("def contended_sum(")[1]


def test_histogram_recipe_after_reduce_then_atomic_declines(histogram_request):
    cand = RecipeRewriter().rewrite(histogram_request)
    assert cand.title == "privatize-histogram", cand.declined
    assert "tl.histogram(_ip_bins, 2 * NUM_BINS)" in cand.kernel
    assert "mask=_ip_slots < NUM_BINS" in cand.kernel
    _applied(histogram_request, kernel=cand.kernel)
    # Already tried -> the rewriter says why nothing else applies, line by line.
    tried = histogram_request.model_copy(
        update={"history": [PastAttempt(number=1, rewriter="recipes", title="privatize-histogram", outcome="rejected")]}
    )
    again = RecipeRewriter().rewrite(tried)
    assert again.declined and "hit several addresses" in again.declined and "already tried" in again.declined


def test_recipes_decline_on_a_line_without_contention(sum_request):
    clean = sum_request.model_copy(
        update={
            "sites": [
                s.model_copy(update={"lanes_per_address_max": 1, "lanes_per_address_mean": 1.0})
                for s in sum_request.sites
            ]
        }
    )
    cand = RecipeRewriter().rewrite(clean)
    assert cand.declined and "no two lanes" in cand.declined


def test_search_pins_one_knob_per_candidate(sum_request):
    first = SearchRewriter().rewrite(sum_request)
    assert first.title == "BLOCK=2048 (was 1024)" and first.kernel is None
    assert "    block = 2048  # intelliperf search: pinned BLOCK\n" in first.launcher
    _applied(sum_request, launcher=first.launcher)
    history = [
        PastAttempt(number=i + 1, rewriter="search", title=t, outcome="rejected")
        for i, t in enumerate(
            ["BLOCK=2048 (was 1024)", "BLOCK=512 (was 1024)", "BLOCK=4096 (was 1024)", "BLOCK=256 (was 1024)"]
        )
    ]
    warps = SearchRewriter().rewrite(sum_request.model_copy(update={"history": history}))
    assert warps.title.startswith("num_warps=")
    call = [
        n for n in ast.walk(ast.parse(warps.launcher)) if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript)
    ][0]
    assert {k.arg for k in call.keywords} >= {"BLOCK", "num_warps"}


def test_pin_replaces_a_literal():
    launcher = "def run(x):\n    k[(1,)](x, BLOCK=128, num_warps=4)\n"
    assert "BLOCK=256" in pin(launcher, "k", "BLOCK", 256)
    assert "num_warps=8)" in pin(launcher, "k", "num_warps", 8)
    with pytest.raises(ValueError, match="expression"):
        pin("def run(x, b):\n    k[(1,)](x, BLOCK=b * 2)\n", "k", "BLOCK", 64)


def test_scope_check_rejects_edits_outside_kernel_and_launcher(sum_request):
    original = Path(sum_request.kernel.file).read_text()
    allowed = {"contended_sum_kernel", "contended_sum"}
    with pytest.raises(ScopeError, match="main"):
        check_scope(original, original.replace("got = contended_sum(x)", "got = x.sum()"), allowed)
    with pytest.raises(ScopeError, match="import"):
        check_scope(original, "import os\n" + original, allowed)
    with pytest.raises(ScopeError, match="triton.jit"):
        check_scope(original, original.replace("@triton.jit\n", ""), allowed, kernel="contended_sum_kernel")
    with pytest.raises(ScopeError, match="not valid Python"):
        check_scope(original, original + "\ndef (:\n", allowed)


def test_answers_are_parsed_robustly(sum_request):
    kernel = sum_request.kernel.source.replace("out_ptr + zeros, x", "out_ptr, tl.sum(x)")
    whole_file = Path(sum_request.kernel.file).read_text().replace("out_ptr + zeros, x", "out_ptr, tl.sum(x)")
    cases = {
        "fenced": {"kernel": f"Here it is:\n```python\n{kernel}```\nDone.", "rationale": "sum first"},
        "unclosed fence": {"kernel": f"```python\n{kernel}", "rationale": "sum first"},
        "whole file": {"kernel": whole_file, "launcher": "", "rationale": "sum first"},
    }
    for label, answer in cases.items():
        cand = candidate_from_answer("llm", sum_request, answer)
        assert cand.invalid is None, label
        assert "tl.sum(x)" in cand.kernel and cand.launcher is None, label

    bad = {
        "not valid Python: invalid syntax at line 2": {"kernel": "@triton.jit\ndef contended_sum_kernel(x:\n"},
        "does not define the kernel `contended_sum_kernel`": {"kernel": "def other():\n    pass\n"},
        "defines the class Cache": {"kernel": kernel + "\nclass Cache:\n    pass\n"},
        "unchanged kernel": {"kernel": sum_request.kernel.source},
        "did not have the requested fields": {"error": "the reply did not have the requested fields: ..."},
    }
    for expected, answer in bad.items():
        cand = candidate_from_answer("llm", sum_request, answer)
        assert cand.invalid and expected.split(":")[0] in cand.invalid, (expected, cand.invalid)


def test_an_answer_may_bring_helpers_kernels_and_constants_beside_the_kernel(sum_request):
    kernel = sum_request.kernel.source.replace("out_ptr + zeros, x", "out_ptr, partial(x)")
    helper = "@triton.jit\ndef partial(x):\n    return tl.sum(x, axis=0)\n\nSCALE = 2\n"
    for answer in ({"kernel": kernel, "beside": helper}, {"kernel": helper + "\n" + kernel}):
        cand = candidate_from_answer("llm", sum_request, answer)
        assert cand.invalid is None, cand.invalid
        assert "def partial(x)" in cand.module and "SCALE = 2" in cand.module
    whole = Path(sum_request.kernel.file).read_text()  # a whole file brings only what differs from the file
    cand = candidate_from_answer(
        "llm", sum_request, {"kernel": whole.replace("out_ptr + zeros, x", "out_ptr, tl.sum(x)")}
    )
    assert cand.invalid is None and cand.module is None


SPLIT_PROGRAM = """import torch
import triton
import triton.language as tl

BLOCK_ROWS = 4


@triton.jit
def row_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr + row, tl.sum(tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)))


def launch(x):
    out = torch.zeros(x.shape[0])
    row_sum[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


def main():
    x = torch.rand(8, 100)
    print(launch(x).sum())


if __name__ == "__main__":
    x = torch.rand(8, 100)
    out = torch.zeros(8)
    row_sum[(8,)](x, out, 100, BLOCK=128)
    main()
"""


def test_a_candidate_may_add_kernels_helpers_and_constants_and_change_what_its_kernel_uses(tmp_path):
    from intelliperf.optimization.apply import apply_candidate
    from intelliperf.rewriters import Candidate
    from intelliperf.validators.gate.policy import PolicyError

    file = tmp_path / "prog.py"
    file.write_text(SPLIT_PROGRAM)
    kernel, launcher = code_unit(file, "row_sum", tmp_path), code_unit(file, "launch", tmp_path)
    store = kernel.source.replace("tl.atomic_add(out_ptr + row, tl.sum(", "tl.store(out_ptr + row, total(")
    beside = "TILE = 64\n\n@triton.jit\ndef total(x):\n    return tl.sum(x, axis=0)\n\nBLOCK_ROWS = 8\n"
    cand = Candidate(rewriter="replay", title="t", kernel=store, module=beside)
    text = apply_candidate({"prog.py": SPLIT_PROGRAM}, kernel, launcher, cand)["prog.py"]
    ast.parse(text)
    assert text.index("def total") < text.index("def row_sum") and "BLOCK_ROWS = 8" in text
    assert text.count("BLOCK_ROWS =") == 1 and text.index("TILE = 64") < text.index("def row_sum")
    assert text.split("def launch")[1] == SPLIT_PROGRAM.split("def launch")[1]  # the rest byte for byte

    refused = {
        "main": "def main():\n    print('patched')\n",  # the program's own function
        "launch": "def launch(x):\n    return x.sum(1)\n",  # the launcher belongs in its own field
    }
    for name, code in refused.items():
        with pytest.raises(ScopeError, match=name):
            apply_candidate({"prog.py": SPLIT_PROGRAM}, kernel, launcher, cand.model_copy(update={"module": code}))
    # a new helper named like a builtin the program calls (int) changes the program outside the kernel
    for shadow in ("def int(x):\n    return 0\n", "print = 3\n"):
        with pytest.raises(PolicyError, match="shadows the builtin"):
            apply_candidate({"prog.py": SPLIT_PROGRAM}, kernel, launcher, cand.model_copy(update={"module": shadow}))


def test_code_beside_the_kernel_is_functions_and_constants_and_names_imported_elsewhere_are_refused(tmp_path):
    from intelliperf.optimization.apply import apply_candidate
    from intelliperf.rewriters import Candidate
    from intelliperf.validators.gate.policy import PolicyError

    program = SPLIT_PROGRAM.replace("import torch\n", "import torch\nfrom os import environ\n")
    file = tmp_path / "prog.py"
    file.write_text(program)
    kernel, launcher = code_unit(file, "row_sum", tmp_path), code_unit(file, "launch", tmp_path)
    cand = Candidate(rewriter="replay", title="t")
    with pytest.raises((ScopeError, PolicyError)):  # runs at import: not a function or a constant
        apply_candidate({"prog.py": program}, kernel, launcher, cand.model_copy(update={"module": "print('hi')\n"}))
    peeking = launcher.source.replace(
        "    return out", "    if 'CI' in environ:\n        return out * 0\n    return out"
    )
    with pytest.raises(PolicyError, match="environ"):
        apply_candidate({"prog.py": program}, kernel, launcher, cand.model_copy(update={"launcher": peeking}))


def test_a_module_level_launch_may_become_a_block(tmp_path):
    from intelliperf.optimization.apply import apply_candidate
    from intelliperf.rewriters import Candidate
    from intelliperf.rewriters.source import launch_unit

    file = tmp_path / "prog.py"
    file.write_text(SPLIT_PROGRAM)
    kernel = code_unit(file, "row_sum", tmp_path)
    line = SPLIT_PROGRAM.splitlines().index("    row_sum[(8,)](x, out, 100, BLOCK=128)") + 1
    statement = launch_unit(file, "row_sum", line, tmp_path)
    block = (
        "block = triton.next_power_of_2(100)\n"
        "for start in range(0, 8, 4):\n"
        "    row_sum[(4,)](x[start:], out[start:], 100, BLOCK=block)\n"
    )
    cand = Candidate(rewriter="replay", title="t", launcher=block)
    text = apply_candidate({"prog.py": SPLIT_PROGRAM}, kernel, statement, cand)["prog.py"]
    assert "    for start in range(0, 8, 4):\n        row_sum[(4,)]" in text and "    main()\n" in text
    for bad, match in (
        ("import os\n" + block, "not a definition or an import"),
        ("def f():\n    pass\n", "definition"),
    ):
        with pytest.raises(ScopeError, match=match):
            apply_candidate({"prog.py": SPLIT_PROGRAM}, kernel, statement, cand.model_copy(update={"launcher": bad}))
    sneaky = block + "main = launch\n"  # rebinds the program's own function after the launch
    with pytest.raises(ScopeError, match="rebinds main"):
        apply_candidate({"prog.py": SPLIT_PROGRAM}, kernel, statement, cand.model_copy(update={"launcher": sneaky}))


def test_extract_function_reports_the_line_of_a_syntax_error():
    with pytest.raises(ScopeError, match=r"was never closed at line 2 of the answer: `x = \(`"):
        extract_function("```python\ndef f():\n    x = (\n```", "f")


GOOD = (
    "[[ ## kernel ## ]]\n```python\n{kernel}```\n\n[[ ## launcher ## ]]\n\n\n[[ ## beside ## ]]\n\n\n"
    "[[ ## rationale ## ]]\nReduce first.\n\n[[ ## completed ## ]]"
)


def _llm(server: ScriptedServer, tmp_path: Path, **options) -> LLMRewriter:
    settings = dict(
        model="scripted-model",
        api_base=server.url,
        api_key_env="TEST_LLM_API_KEY",
        backoff_s=0.05,
        timeout_s=2.0,
        cache_dir=tmp_path / "cache",
        transcript=tmp_path / "transcript.json",
    )
    return LLMRewriter(LLMRewriter.Options(**(settings | options)))


def test_llm_retries_rate_limits_and_timeouts_and_caches(sum_request, tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_LLM_API_KEY", "sk-test-secret")
    kernel = sum_request.kernel.source.replace("out_ptr + zeros, x", "out_ptr, tl.sum(x)")
    replies = [
        Reply(status=429, headers={"Retry-After": "0"}),
        Reply(delay_s=3, content="late"),
        Reply(content=GOOD.format(kernel=kernel)),
    ]
    with ScriptedServer(replies) as server:
        cand = _llm(server, tmp_path).rewrite(sum_request)
        assert cand.invalid is None and "tl.sum(x)" in cand.kernel and cand.tokens == 150
        assert len(server.requests) == 3  # 429, timeout, success
        assert server.headers[0]["Authorization"] == "Bearer sk-test-secret"
        prompt = server.prompts()[0]
        assert "contended_sum.py:21" in prompt and "tl.atomic_add(out_ptr + zeros" in prompt
        assert "65536 atomic updates per address per launch" in prompt  # the metric, with its unit
        assert "[[ ## history ## ]]\n[]" in prompt  # typed: an empty list
        # The same request again, from a new rewriter (a new process would do the same): DSPy's disk
        # cache answers, nothing is sent and no token is counted.
        again = _llm(server, tmp_path).rewrite(sum_request)
        assert again.kernel == cand.kernel and again.tokens == 0 and len(server.requests) == 3
        assert any((tmp_path / "cache").iterdir())
    saved = (tmp_path / "transcript.json").read_text()
    assert "tl.sum(x)" in saved and "sk-test-secret" not in saved


def test_llm_best_of_n_asks_n_times_with_temperature(sum_request, tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_LLM_API_KEY", "k")
    answers = [
        GOOD.format(kernel=sum_request.kernel.source.replace("out_ptr + zeros, x", f"out_ptr, tl.sum(x) * {i}"))
        for i in (1, 2)
    ]
    with ScriptedServer([Reply(content=a) for a in answers]) as server:
        cands = _llm(server, tmp_path).rewrite_many(sum_request, 2)
        assert [c.invalid for c in cands] == [None, None] and len(server.requests) == 2
        assert all(r.get("temperature") == 0.8 for r in server.requests)
        # Each candidate is its own DSPy rollout: asked again, both come from the cache, in order.
        again = _llm(server, tmp_path).rewrite_many(sum_request, 2)
        assert [c.kernel for c in again] == [c.kernel for c in cands] and len(server.requests) == 2


def test_llm_configuration_errors_say_what_to_set(sum_request, tmp_path, monkeypatch):
    for name in ("INTELLIPERF_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ModelError, match="INTELLIPERF_API_KEY / OPENAI_API_KEY is not set"):
        LLMRewriter(LLMRewriter.Options(model="gpt-4o"))
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rewriter = LLMRewriter(
        LLMRewriter.Options(
            model="m", api_base=f"http://127.0.0.1:{port}/v1", retries=1, backoff_s=0.05, cache_dir=None
        )
    )
    begin = time.perf_counter()
    with pytest.raises(ModelError, match=f"127.0.0.1:{port}.*failed after 2 tries"):
        rewriter.rewrite(sum_request)
    assert time.perf_counter() - begin < 30
    monkeypatch.setenv("TEST_LLM_API_KEY", "wrong")
    with ScriptedServer([Reply(status=401, content="invalid api key")]) as server:
        with pytest.raises(ModelError, match="refused the API key"):
            _llm(server, tmp_path, cache_dir=None).rewrite(sum_request)


def test_search_pipelines_kernel_loops(sum_request):
    from intelliperf.rewriters.search_edits import pin_loop

    kernel = (
        "@triton.jit\ndef k(x_ptr, n, BLOCK: tl.constexpr):\n    acc = 0.0\n"
        "    for i in range(0, n, BLOCK):\n        acc += tl.sum(tl.load(x_ptr + i + tl.arange(0, BLOCK)))\n"
        "    for j in tl.range(0, n, BLOCK, num_stages=1):\n        acc += 1.0\n"
    )
    assert "for i in tl.range(0, n, BLOCK, num_stages=3):" in pin_loop(kernel, 4, 3)
    assert "for j in tl.range(0, n, BLOCK, num_stages=2):" in pin_loop(kernel, 6, 2)
    looped = sum_request.model_copy(
        update={"kernel": sum_request.kernel.model_copy(update={"source": kernel}), "launcher": None}
    )
    cand = SearchRewriter().rewrite(looped)
    assert cand.title.startswith("loop at line") and "num_stages=2 (was default)" in cand.title
    assert "tl.range(0, n, BLOCK, num_stages=2)" in cand.kernel


def test_search_sweeps_warps_and_stages_jointly_then_pins_the_autotuners_choice(sum_request):
    from intelliperf.formulas.overlap import Overlap
    from intelliperf.rewriters.search_sweep import sweep_kernel, sweep_title, unpinned

    # (as the loop asks for the overlap formula's bottleneck: it wants the sweep first)
    overlap = sum_request.model_copy(
        update={"formula": "overlap", "sweep_first": Overlap.sweep_first, "launch": {"written": ["out_ptr"]}}
    )
    sweep = SearchRewriter().rewrite(overlap)
    # The contended sum has no loop: num_stages would compile the same code four times over.
    assert sweep.sweep and sweep.title == sweep_title(False) and "(5 configs; no loop to pipeline)" in sweep.title
    decorator = ast.parse(sweep.kernel).body[0].decorator_list[0]
    assert ast.unparse(decorator.func) == "triton.autotune"
    tuned = {k.arg: ast.unparse(k.value) for k in decorator.keywords}
    assert "num_stages" not in tuned["configs"] and "for w in (1, 2, 4, 8, 16)" in tuned["configs"]
    assert tuned["restore_value"] == "['out_ptr']"  # an accumulating kernel does not add up the benchmark runs
    assert "warmup=5, rep=25" in tuned["do_bench"]  # a screen's short benchmark per config
    _applied(sum_request, kernel=sweep.kernel, launcher=sweep.launcher)
    looped = "@triton.jit\ndef k(x_ptr, n, BLOCK: tl.constexpr):\n    for i in range(0, n, BLOCK):\n        pass\n"
    assert "for s in (1, 2, 3, 4)" in sweep_kernel(looped, [])
    # The launch's own num_warps/num_stages would collide with the configs' in Triton's autotuner.
    launcher = (
        "def run(x, cfg):\n    k[(1,)](\n        x,\n        BLOCK=128,\n        num_warps=4,\n"
        "        num_stages=1,\n    )\n"
    )  # black's layout
    call = next(
        n
        for n in ast.walk(ast.parse(unpinned(launcher, "k")))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript)
    )
    assert [k.arg for k in call.keywords] == ["BLOCK", None, None]
    starred = unpinned("def run(x, cfg):\n    k[(1,)](x, **cfg)\n", "k")
    namespace = {"cfg": {"BLOCK": 1, "num_warps": 4}}
    assert eval(ast.unparse(ast.parse(starred).body[0].body[0].value.keywords[0].value), namespace) == {"BLOCK": 1}
    # Its choice comes back in the history: the next candidate pins warps and stages together.
    history = [
        PastAttempt(
            number=1,
            rewriter="search",
            title=sweep_title(True),
            outcome="rejected",
            chosen={"num_warps": 8, "num_stages": 2, "kwargs": {}},
        )
    ]
    pinned = SearchRewriter().rewrite(overlap.model_copy(update={"history": history}))
    assert not pinned.sweep and pinned.title.startswith("num_warps=8 (was ") and "num_stages=2" in pinned.title
    call = next(
        n for n in ast.walk(ast.parse(pinned.launcher)) if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript)
    )
    assert {k.arg: ast.unparse(k.value) for k in call.keywords if k.arg.startswith("num_")} == {
        "num_warps": "8",
        "num_stages": "2",
    }
    # A sweep over warps alone chose no pipelining depth: only its warps are pinned.
    history[0].title = sweep_title(False)
    pinned = SearchRewriter().rewrite(overlap.model_copy(update={"history": history}))
    assert pinned.title.startswith("num_warps=8 (was ") and "num_stages" not in pinned.title
    # No sweep under the interpreter (no device timer to tune with), and for contention only after
    # every single knob move: warps and stages do not change how many lanes share an address.
    cpu = overlap.model_copy(update={"hardware": HardwareFacts(device="no GPU (Triton interpreter on the CPU)")})
    assert not SearchRewriter().rewrite(cpu).sweep
    assert not SearchRewriter().rewrite(sum_request).sweep
    with pytest.raises(ValueError, match="not decorated with @triton.jit"):
        sweep_kernel("@jit\ndef k(x):\n    pass\n", [])


def test_a_sweep_leaves_out_warps_whose_threads_cannot_hold_the_tile():
    """A 128x128 float32 accumulator is 16,384 registers a program: on one warp 512 a thread, on two 256,
    over the 255 a thread may hold (all of it spills; ptxas took 23 s and 4.7 s on those configs against
    1-2 s on four warps). The sweep tries 4, 8 and 16 warps there, and says what it left out; a small
    tile, or one whose shape the launch does not give, keeps every value."""
    from intelliperf.rewriters.search_sweep import sweep_kernel, sweep_title, sweep_warps

    gemm = (
        "@triton.jit\ndef g(a_ptr, c_ptr, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):\n"
        "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n"
        "    for k in range(0, K, 64):\n        acc += 1.0\n"
    )
    assert sweep_warps(gemm, {"BLOCK_M": 128, "BLOCK_N": 128}) == (4, 8, 16)
    assert sweep_warps(gemm, {"BLOCK_M": 64, "BLOCK_N": 64}) == (1, 2, 4, 8, 16)  # 4,096: 128 a thread on one
    assert sweep_warps(gemm, {"BLOCK_M": 256, "BLOCK_N": 256}) == (16,)  # 65,536: 128 a thread on 16 warps
    assert sweep_warps(gemm, {}) == (1, 2, 4, 8, 16)  # shape unknown: nothing left out
    assert "for w in (4, 8, 16) for s in (1, 2, 3, 4)" in sweep_kernel(gemm, ["c_ptr"], (4, 8, 16))
    title = sweep_title(True, (4, 8, 16))
    assert title.startswith("sweep: num_warps x num_stages (12 configs; num_warps 1, 2 left out")


def test_a_sweep_is_never_the_fix_even_when_correct_and_faster():
    from intelliperf.models import Attempt, Measure, Metric
    from intelliperf.optimization.verdict import decide
    from intelliperf.validators.verdict import Speedup, Verdict

    metric = Metric(name="m", value=10, unit="u", better="lower")
    finding = type("F", (), {"metric": metric})()
    session = type("S", (), {"formula": type("Fo", (), {"metric": "m"})(), "finding": finding})()
    speedup = Speedup(estimate=1.5, low=1.4, high=1.6, pairs=40, reference_ms=1.5, candidate_ms=1.0, method="test")
    fast = Verdict(correct=True, faster=True, accepted=True, speedup=speedup)
    for chosen, said in (
        ({"num_warps": 8, "num_stages": 3, "kwargs": {}}, "chose num_warps=8, num_stages=3"),
        ({}, "could not be read"),
    ):
        attempt = Attempt(
            number=1,
            rewriter="search",
            title="sweep",
            status="invalid",
            verdict=fast,
            before=Measure(metric=10),
            after=Measure(metric=10),  # as good as not measured: a screen's metric is not judged
            chosen=chosen,
        )
        decide(session, attempt)
        assert attempt.status == "rejected" and said in attempt.reasons
        assert "[metric]" not in attempt.reasons  # a screen's metric is not judged: its choice's will be
    plain = Attempt(
        number=2,
        rewriter="search",
        title="num_warps=8",
        status="invalid",
        verdict=fast,
        before=Measure(metric=10),
        after=Measure(metric=5),
    )
    decide(session, plain)
    assert plain.status == "accepted"  # the same verdict without a sweep wins


def test_a_metric_that_did_not_improve_is_named_never_none():
    """A retuning whose metric did not move, under a formula and measures that carry no metric name (a
    custom formula's `metric` left unset): the reason names the formula's metric, not "None"."""
    from intelliperf.models import Attempt, Measure, Metric
    from intelliperf.optimization.verdict import decide
    from intelliperf.validators.verdict import Verdict

    finding = type("F", (), {"metric": Metric(name="m", value=10, unit="u", better="lower")})()
    for formula_metric, named in ((None, "the formula's metric"), ("sector_efficiency", "sector_efficiency")):
        session = type("S", (), {"formula": type("Fo", (), {"metric": formula_metric})(), "finding": finding})()
        attempt = Attempt(
            number=1,
            rewriter="search",
            title="BLOCK=256",
            status="invalid",
            verdict=Verdict(correct=True),  # correct, not timed (CPU)
            before=Measure(metric=10),
            after=Measure(metric=10),
        )
        decide(session, attempt)
        assert attempt.status == "rejected"
        assert f"correct, but {named} did not improve: 10 -> 10" in attempt.reasons and "None" not in attempt.reasons


def test_a_correct_faster_fix_wins_when_the_metric_did_not_move_but_one_that_removes_the_bottleneck_ranks_first():
    from intelliperf.models import Attempt, Measure, Metric
    from intelliperf.optimization.verdict import decide, rank
    from intelliperf.validators.verdict import Speedup, Verdict

    metric = Metric(name="sector_efficiency", value=0.25, unit="", better="higher")
    finding = type("F", (), {"metric": metric})()
    session = type("S", (), {"formula": type("Fo", (), {"metric": "sector_efficiency"})(), "finding": finding})()

    def attempt(number, after, estimate, faster=True):
        speedup = Speedup(
            estimate=estimate, low=estimate - 0.05, high=estimate + 0.05, pairs=40, reference_ms=1.0,
            candidate_ms=1 / estimate, method="test",
        )  # fmt: skip
        verdict = (
            Verdict(correct=True, faster=True, accepted=True, speedup=speedup)
            if faster
            else Verdict(correct=True)  # the CPU: no time
        )
        a = Attempt(number=number, rewriter="replay", title="t", status="invalid", verdict=verdict,
                    before=Measure(metric=0.25), after=Measure(metric=after))  # fmt: skip
        decide(session, a)
        return a

    unmoved = attempt(1, after=0.25, estimate=1.5)
    assert unmoved.status == "accepted" and unmoved.metric_improved is False
    assert "did not improve" in unmoved.reasons  # said, not held against it
    worse = attempt(2, after=0.2, estimate=1.3)  # the proxy moved the wrong way while the time fell
    assert worse.status == "accepted"
    removes = attempt(3, after=1.0, estimate=1.1)
    assert max([unmoved, worse, removes], key=lambda a: rank(a, finding)) is removes
    on_cpu = attempt(4, after=0.25, estimate=1.5, faster=False)  # no time: the metric is the only evidence
    assert on_cpu.status == "rejected"


def test_contention_moves_the_split_first(sum_request):
    from intelliperf.models import ArgInfo
    from intelliperf.rewriters.search_knobs import knobs

    kernel = (
        "@triton.jit\ndef k(x_ptr, out_ptr, K, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, "
        "SPLIT_K: tl.constexpr):\n    pass\n"
    )
    args = [ArgInfo(name=n, kind="constexpr", value=v) for n, v in (("BLOCK_N", 16), ("BLOCK_K", 256), ("SPLIT_K", 64))]
    signature = sum_request.profile.signatures[0].model_copy(update={"args": args, "num_warps": 4, "num_stages": 3})
    request = sum_request.model_copy(
        update={
            "kernel": sum_request.kernel.model_copy(update={"source": kernel}),
            "profile": sum_request.profile.model_copy(update={"signatures": [signature]}),
        }
    )
    found, _ = knobs(request)
    assert found[0].name == "SPLIT_K" and found[0].values()[:2] == [32, 16]  # fewer programs per output first
    assert knobs(request.model_copy(update={"formula": "overlap"}))[0][0].name != "SPLIT_K"


def test_a_tuned_program_is_loaded_and_its_demonstrations_reach_the_prompt(sum_request, tmp_path, monkeypatch):
    """A KernelRewriter compiled with a DSPy optimizer (LabeledFewShot: no model needed) and saved
    is what `--program FILE` loads; DSPy's DummyLM answers through it offline."""
    import dspy
    from dspy.utils.dummies import DummyLM

    from intelliperf.rewriters.llm import prompt_fields
    from intelliperf.rewriters.program import KernelRewriter

    fields = prompt_fields(sum_request)
    kernel = sum_request.kernel.source.replace("out_ptr + zeros, x", "out_ptr, tl.sum(x)")
    demo = dspy.Example(
        **{**fields, "problem": "DEMO-PROBLEM-7731"}, kernel=kernel, launcher="", beside="", rationale="DEMO-RATIONALE"
    ).with_inputs(*fields)
    tuned = dspy.LabeledFewShot(k=1).compile(KernelRewriter(), trainset=[demo])
    path = tmp_path / "rewriter.json"
    tuned.save(str(path))

    loaded = KernelRewriter()
    loaded.load(str(path))
    assert loaded.rewrite.demos[0]["rationale"] == "DEMO-RATIONALE"
    with dspy.context(lm=DummyLM([{"kernel": kernel, "launcher": "", "beside": "", "rationale": "offline"}])):
        assert "tl.sum(x)" in loaded(**fields).kernel

    monkeypatch.setenv("TEST_LLM_API_KEY", "k")
    with ScriptedServer([Reply(content=GOOD.format(kernel=kernel))]) as server:
        cand = _llm(server, tmp_path, program=path, cache_dir=None).rewrite(sum_request)
        assert "tl.sum(x)" in cand.kernel and "DEMO-PROBLEM-7731" in server.prompts()[0]
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with ScriptedServer([]) as server, pytest.raises(UsageError, match="cannot load the DSPy program"):
        _llm(server, tmp_path, program=broken, cache_dir=None).rewrite(sum_request)


PLUGIN = """
from intelliperf.rewriters import Candidate, Rewriter

OLD = "tl.atomic_add(out_ptr + zeros, x, mask=mask)"


class SumFirst(Rewriter):
    name = "sumfirst"

    def rewrite(self, request):
        if OLD not in request.kernel.source:
            return Candidate.decline(self.name, "not the contended sum")
        return Candidate(rewriter=self.name, title="sum the block first",
                         kernel=request.kernel.source.replace(OLD, "tl.atomic_add(out_ptr, tl.sum(x))"))


class Misnamed(SumFirst):
    name = "other"


class Recipes(SumFirst):
    name = "recipes"
"""


def test_a_rewriter_plug_in_is_chosen_by_name_and_runs_through_the_loop(tmp_path, monkeypatch):
    """A real distribution on sys.path registering rewriters under `intelliperf.rewriters`, found
    through importlib.metadata like an installed plug-in; broken ones are named, not fatal."""
    import intelliperf
    from intelliperf.rewriters import make_rewriters, rewriter_registry

    (tmp_path / "myrewriter.py").write_text(PLUGIN)
    dist = tmp_path / "myrewriter-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: myrewriter\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[intelliperf.rewriters]\nsumfirst = myrewriter:SumFirst\n"
        "missing = myrewriter:Missing\nmisnamed = myrewriter:Misnamed\n"
        "recipes = myrewriter:Recipes\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = rewriter_registry()
    broken = registry.broken
    assert [n for n in registry.names() if not registry.built_in(n)] == ["sumfirst"]
    assert registry.names() == ["llm", "recipes", "replay", "search", "sumfirst"]  # the built-ins, by entry point too
    assert "AttributeError" in broken["missing"] and "the class's name is 'other'" in broken["misnamed"]
    assert "already taken by built-in" in broken["recipes"]  # ours load first: no plug-in shadows one
    with pytest.raises(UsageError, match="the rewriter plug-in 'missing' failed to load"):
        make_rewriters("missing")
    with pytest.raises(UsageError, match="one of auto, llm, recipes, replay, search, sumfirst"):
        make_rewriters("nope")
    monkeypatch.chdir(EXAMPLES)
    report = intelliperf.optimize(
        [sys.executable, "contended_sum.py", *SMALL], rewriter="sumfirst", device="cpu", out_dir=tmp_path / "out"
    )
    opt = report.optimization
    assert opt.rewriters == ["sumfirst"] and opt.winner == 1
    assert opt.attempts[0].rewriter == "sumfirst" and opt.attempts[0].after.metric == 64  # one update a program
