"""Programs not written for intelliperf: launches anywhere, black-formatted calls, autotuned
kernels, contention between programs, and the public-kernel corpus (benchmarks/corpus/)."""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

import pytest

from intelliperf.profiling.trace import sample_program_ids
from intelliperf.rewriters.search import decorated_names, pin, widen_autotune
from intelliperf.rewriters.source import ScopeError, check_scope, launch_unit, splice
from intelliperf.validators.policy import PolicyError, check_statement

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import corpus_run  # noqa: E402

MODULE_LEVEL = textwrap.dedent('''\
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
    ''')


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
    kernel = textwrap.dedent('''\
        @triton.autotune(configs=[triton.Config({"BLOCK_M": 64}, num_warps=4, num_stages=3)], key=["M"])
        @triton.heuristics({"EVEN": lambda a: a["M"] % 64 == 0})
        @triton.jit
        def k(x, M, BLOCK_M: tl.constexpr, EVEN: tl.constexpr):
            pass
        ''')
    assert decorated_names(kernel) == {"num_warps": "autotune", "num_stages": "autotune", "BLOCK_M": "autotune",
                                       "EVEN": "heuristics"}
    wider = widen_autotune(kernel)
    assert "_ip_c.num_stages + 1" in wider and ast.parse(wider)


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
        assert t["right"] / len(rows) >= 0.95, (formula, t, [(r["program"], r["why"].get(formula)) for r in rows
                                                               if r["flagged"][formula] != r["labels"][formula]])
