"""Programs not written for intelliperf: launches anywhere, black-formatted calls, autotuned
kernels, contention between programs, and the public-kernel corpus (benchmarks/corpus/)."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from intelliperf.profiling.trace import sample_program_ids
from intelliperf.rewriters.search import decorated_names, pin, widen_autotune
from intelliperf.rewriters.source import ScopeError, check_scope, launch_unit, splice
from intelliperf.validators.gate.policy import PolicyError, check_statement

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
import corpus_run  # noqa: E402


def _interpreted(tmp_path: Path, source: str) -> subprocess.CompletedProcess:
    """`source` run as a script in Triton's interpreter."""
    script = tmp_path / "script.py"
    script.write_text(source)
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TRITON_INTERPRET": "1"},
    )


def _optimized_on_cpu(project: Path, program: str, out: Path) -> dict:
    """`optimize -f atomicContention` with one recipe attempt on the CPU: the report's optimization."""
    command = [
        sys.executable,
        "-m",
        "intelliperf",
        "optimize",
        "-f",
        "atomicContention",
        "--device",
        "cpu",
        "--rewriter",
        "recipes",
        "--max-attempts",
        "1",
        "--out-dir",
        str(out),
        "--",
        sys.executable,
        program,
    ]
    done = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads((out / "report.json").read_text())["optimization"]


MODULE_LEVEL = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def count(src_ptr, out_ptr, numel, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        b = tl.load(src_ptr + offs, mask=offs < numel, other=0)
        tl.atomic_add(out_ptr + b, 1, mask=offs < numel)


    if __name__ == "__main__":
        for _ in range(3):
            count[(triton.cdiv(numel, 1024),)](
                src,
                out,
                numel,
                BLOCK=1024,
            )
        print("done")  # a comment that must survive
    """)


def test_a_module_level_black_formatted_launch_is_a_unit_the_search_can_pin(tmp_path):
    file = tmp_path / "prog.py"
    file.write_text(MODULE_LEVEL)
    unit = launch_unit(file, "count", 18, tmp_path)  # a line inside the call
    assert unit is not None and unit.is_statement and unit.line == 14
    new = pin(unit.source, "count", "BLOCK", 512, ["src_ptr", "out_ptr", "numel", "BLOCK"])
    assert "triton.cdiv(numel, 512)" in new and "BLOCK=512," in new  # the grid follows the literal
    changed = splice(MODULE_LEVEL, unit.qualname, new)
    ast.parse(changed)
    assert "# a comment that must survive" in changed and changed.count("\n") == MODULE_LEVEL.count("\n")
    check_scope(MODULE_LEVEL, changed, {unit.qualname}, kernel="count", launches="count")
    sneaky = changed.replace('print("done")', 'print("patched")')
    with pytest.raises(ScopeError, match="only the kernel"):
        check_scope(MODULE_LEVEL, sneaky, {unit.qualname}, kernel="count", launches="count")


def test_a_new_keyword_after_a_trailing_comma_stays_valid_python():
    stmt = "k[grid](\n    x,\n    y,\n)\n"
    out = pin(stmt, "k", "num_warps", 8)
    assert ast.parse(out) and "y, num_warps=8," in out


def test_positional_constexprs_and_kwargs_are_pinned_where_they_are():
    launcher = "def go(x, n):\n    k[(n // 256,)](x, n, 256)\n"
    assert "k[(n // 128,)](x, n, 128)" in pin(launcher, "k", "BLOCK", 128, ["x_ptr", "n", "BLOCK"])
    launcher = "def go(x, n, cfg):\n    k[(n,)](x, n, **cfg)\n"
    assert "**{**cfg, 'num_warps': 8}" in pin(launcher, "k", "num_warps", 8, ["x_ptr", "n"])


def test_a_launch_statement_may_not_read_the_environment():
    with pytest.raises(PolicyError, match="environ"):
        check_statement("k[g](x)\n", "k[g](x, n=int(os.environ['N']))\n")
    check_statement("k[g](x, BLOCK=1024)\n", "k[g](x, BLOCK=512, num_warps=8)\n")


def test_autotuned_names_are_left_to_the_autotuner_and_its_configs_can_be_widened():
    kernel = textwrap.dedent("""\
        @triton.autotune(configs=[triton.Config({"BLOCK_M": 64}, num_warps=4, num_stages=3)], key=["M"])
        @triton.heuristics({"EVEN": lambda a: a["M"] % 64 == 0})
        @triton.jit
        def k(x, M, BLOCK_M: tl.constexpr, EVEN: tl.constexpr):
            pass
        """)
    assert decorated_names(kernel) == {
        "num_warps": "autotune",
        "num_stages": "autotune",
        "BLOCK_M": "autotune",
        "EVEN": "heuristics",
    }
    wider = widen_autotune(kernel)
    assert "num_warps=4, num_stages=4" in wider and "num_warps=8, num_stages=3" in wider and ast.parse(wider)


def test_program_samples_mix_a_contiguous_run_with_random_picks():
    ids = [p[0] for p in sample_program_ids((512, 1, 1), 32)]
    assert ids[:16] == list(range(16)) and 511 in ids and len(ids) == 32
    assert len({i % 256 for i in ids}) < len(ids)  # rows that share `row % 256` are both sampled sometimes...
    strided = sorted({i % 16 for i in ids[16:]})
    assert len(strided) > 4  # ...and the random picks do not all land on one residue


@pytest.mark.parametrize("program", [p.name for p in corpus_run.programs()])
def test_corpus_programs_record_source_license_and_labels(program):
    path = corpus_run.CORPUS / program
    info = corpus_run.provenance(path)
    assert info.get("source") and info.get("license"), f"{program} must name its source and license"
    assert set(corpus_run.labels(path)) == set(corpus_run.FORMULAS)


def test_the_corpus_diagnosis_on_cpu_misses_no_labelled_bottleneck():
    """Every corpus program through `diagnose -f diagnoseOnly` in the interpreter (~80 s)."""
    rows = []
    for program in corpus_run.programs():
        row = {"program": program.name, "labels": corpus_run.labels(program)}
        row.update(corpus_run.diagnose(program, "cpu", timeout=300))
        rows.append(row)
    errors = [(r["program"], r["error"]) for r in rows if "error" in r]
    assert not errors, errors
    table = corpus_run.score(rows)
    missed = [(r["program"], f) for r in rows for f in corpus_run.FORMULAS if r["labels"][f] and not r["flagged"][f]]
    assert not missed, missed
    for formula, t in table.items():
        assert t["right"] / len(rows) >= 0.95, (
            formula,
            t,
            [(r["program"], r["why"].get(formula)) for r in rows if r["flagged"][formula] != r["labels"][formula]],
        )


AUTOTUNED = textwrap.dedent("""\
    import torch
    import triton
    import triton.language as tl

    from intelliperf.validators.workers.replay_calls import launch_recorded


    @triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
    @triton.jit
    def double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, 2 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


    x, y = torch.arange(256, dtype=torch.float32), torch.zeros(256)
    recorded = {"grid": [4, 1, 1], "options": {}, "args": [
        {"name": "x_ptr", "kind": "tensor"}, {"name": "y_ptr", "kind": "tensor"},
        {"name": "n", "kind": "scalar", "value": 256}, {"name": "BLOCK", "kind": "scalar", "value": 64}]}
    try:
        double[(4,)](x, y, 256, BLOCK=64)
    except ValueError as exc:
        print("the autotuner refuses its own config:", exc)
    out = launch_recorded(double, recorded, {"x_ptr": x, "y_ptr": y}, ["y_ptr"])
    assert torch.equal(out["arg:y_ptr"], 2 * x), out
    print("replayed")
    """)


def test_a_recorded_launch_of_an_autotuned_kernel_replays_with_its_config(tmp_path):
    """The recorded launch holds the config the autotuner chose; given again, @triton.autotune
    refuses it ("Conflicting meta-parameters"), so the replay goes through the jit function."""
    done = _interpreted(tmp_path, AUTOTUNED)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Conflicting meta-parameters" in done.stdout and "replayed" in done.stdout


def test_optimize_rewrites_a_module_level_bincount_and_validates_it(tmp_path):
    """The bincount corpus program launches at module level, black-formatted, with the bin count
    only in the histogram buffer's length: the recipe privatises it and the candidate is validated."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(corpus_run.CORPUS / "vllm_bincount.py", project)
    before = (project / "vllm_bincount.py").read_text()
    opt = _optimized_on_cpu(project, "vllm_bincount.py", tmp_path / "out")
    assert opt["status"] == "won", opt["attempts"]
    winner = opt["attempts"][0]
    assert winner["title"] == "privatize-histogram" and "tl.histogram" in winner["diff"]
    assert any("the launch statement at line" in note and "<module>" in note for note in opt["notes"]), opt["notes"]
    assert (project / "vllm_bincount.py").read_text() == before  # the user's file is untouched


FLOAT_MAX = textwrap.dedent("""\
    import torch
    import triton
    import triton.language as tl

    from intelliperf.profiling.trace import trace_launch


    @triton.jit
    def amax(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.atomic_max(out_ptr + tl.zeros_like(offs), tl.abs(x), mask=offs < n)


    @triton.jit
    def locked(x_ptr, lock_ptr, n, GROUP: tl.constexpr):
        tl.atomic_add(lock_ptr + tl.program_id(0) % GROUP, 1.0)


    x = torch.randn(4096)
    r = trace_launch(amax.fn, dict(x_ptr=x, out_ptr=torch.zeros(1), n=4096, BLOCK=256), (16, 1, 1), 32, 60)
    (site,) = [s for s in r["sites"] if s["is_atomic"]]
    print("amax", site["op"], site["calls"], site["lanes"], site["lanes_per_address_max"])
    r = trace_launch(locked.fn, dict(x_ptr=x, lock_ptr=torch.zeros(8), n=4096, GROUP=8), (1024, 1, 1), 32, 60)
    (site,) = [s for s in r["sites"] if s["is_atomic"]]
    print("locked", round(site["other_programs_per_address"]), site["lanes_per_program"])
    """)


def test_the_trace_counts_a_float_atomic_max_once_and_sees_programs_share_a_lock(tmp_path):
    """Triton lowers a float atomic_max to two atomics on one line; the trace counts one call of
    BLOCK lanes (not "284 of 261 lanes"). 1024 programs on 8 locks: about 127 others per lock,
    although no sampled program shares a lock with its sampled neighbours by stride."""
    done = _interpreted(tmp_path, FLOAT_MAX)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "amax atomic_max 16 4096 256" in done.stdout
    others = int(done.stdout.split("locked ")[1].split()[0])
    assert 100 <= others <= 160 and "locked" in done.stdout


ONE_WORD = textwrap.dedent("""\
    import functools
    import operator

    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def fold_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.atomic_OP(out_ptr + tl.zeros_like(offs), x, mask=mask)


    def fold(x):
        out = torch.full((1,), START, dtype=torch.int32)
        fold_kernel[(triton.cdiv(x.numel(), 512),)](x, out, x.numel(), BLOCK=512)
        return out


    x = VALUES
    for _ in range(2):
        got = fold(x)
    want = functools.reduce(FOLD, x.tolist(), START)
    assert got.item() == want, (got.item(), want)
    """)


@pytest.mark.parametrize(
    "op, start, values, fold, reduced",
    [
        # an integer max: masked lanes padded with the type's lowest value
        (
            "max",
            "-(2**31)",
            "torch.randint(-1000, 1000, (20000,), dtype=torch.int32)",
            "max",
            "tl.max(tl.where(mask, x, -2147483648))",
        ),
        # bits ORed (ANDed) into one word: tl.reduce_or, an and as ~reduce_or(~x), masked lanes padded with 0
        (
            "or",
            "0",
            "1 << torch.randint(0, 31, (20000,), dtype=torch.int32)",
            "operator.or_",
            "tl.reduce_or(tl.where(mask, x, tl.zeros_like(x)), None)",
        ),
        (
            "and",
            "-1",
            "(1 << torch.randint(0, 31, (20000,), dtype=torch.int32)) ^ -1",
            "operator.and_",
            "~tl.reduce_or(tl.where(mask, ~x, tl.zeros_like(~x)), None)",
        ),
    ],
)
def test_reduce_then_atomic_folds_one_word_with_the_right_padding(tmp_path, op, start, values, fold, reduced):
    """Every lane folds its value into one int32 word; the recipe reduces in the program with the
    operation's own reduction and identity, then issues one atomic per program."""
    source = ONE_WORD.replace("OP", op).replace("START", start).replace("VALUES", values).replace("FOLD", fold)
    (tmp_path / "fold.py").write_text(source)
    opt = _optimized_on_cpu(tmp_path, "fold.py", tmp_path / "out")
    assert opt["status"] == "won", opt["attempts"]
    assert f"tl.atomic_{op}(out_ptr, {reduced})" in opt["attempts"][0]["diff"]


def test_the_static_view_compiles_a_helper_from_a_module_outside_sys_modules(tmp_path):
    """Kernel and helper modules loaded with importlib.util.spec_from_file_location are in no
    sys.modules entry; under the interpreter their helpers are InterpretedFunctions, which the
    compiler refused ("Unsupported function referenced") until the kernel's globals were swapped too."""
    (tmp_path / "helpers.py").write_text(
        textwrap.dedent("""\
        import triton
        import triton.language as tl  # noqa: F401  (the interpreter wants it visible)


        @triton.jit
        def scale(x, s):
            return x * s
        """)
    )
    (tmp_path / "kern.py").write_text(
        textwrap.dedent("""\
        import importlib.util

        import triton
        import triton.language as tl

        _spec = importlib.util.spec_from_file_location("hidden_helpers", __file__.replace("kern.py", "helpers.py"))
        helpers = importlib.util.module_from_spec(_spec)
        _spec.loader.exec_module(helpers)


        @triton.jit
        def copy_scaled(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n)
            tl.store(y_ptr + offs, helpers.scale(x, 1.0), mask=offs < n)
        """)
    )
    (tmp_path / "prog.py").write_text(
        textwrap.dedent("""\
        import importlib.util

        import torch

        spec = importlib.util.spec_from_file_location("hidden_kern", __file__.replace("prog.py", "kern.py"))
        kern = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(kern)
        x = torch.randn(4096)
        y = torch.empty_like(x)
        kern.copy_scaled[(4,)](x, y, 4096, BLOCK=1024)
        assert torch.equal(x, y)
        """)
    )
    out = tmp_path / "report.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "intelliperf",
            "diagnose",
            "-f",
            "bankConflict",
            "--device",
            "cpu",
            "-o",
            str(out),
            "--",
            sys.executable,
            "prog.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert not [n for n in report["notes"] if "static view" in n and "not available" in n], report["notes"]
    assert any(ev["backend"] == "static" and ev["facts"] for ev in report["diagnoses"][0]["evidence"])
