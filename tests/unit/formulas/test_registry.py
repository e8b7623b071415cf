"""Formulas on positive and negative examples, the registry and the plug-in paths."""

import sys
import textwrap

import pytest
from conftest import EXAMPLES, SMALL, doc_block, py

import intelliperf
from intelliperf.errors import FormulaLoadError, UnknownFormulaError, UsageError
from intelliperf.formulas import Registry, default_registry


def _finding(report, kernel, formula="atomicContention"):
    return next(f for f in report.diagnosis(kernel).findings if f.formula == formula)


def _line_of(path, needle):
    return next(i for i, text in enumerate(path.read_text().splitlines(), start=1) if needle in text)


@pytest.mark.slow
def test_contended_sum_is_flagged_at_its_atomic_line(sum_report):
    assert sum_report.selected == "contended_sum_kernel"
    finding = _finding(sum_report, "contended_sum_kernel")
    assert finding.present and finding.severity == "high" and finding.modelled
    assert finding.metric.name == "atomic_updates_per_address" and finding.metric.value == 65536  # every element
    assert "1024 lanes of one atomic_add call" in finding.explanation
    [line] = finding.lines
    assert line.file == str(EXAMPLES / "contended_sum.py")
    assert line.line == _line_of(EXAMPLES / "contended_sum.py", "tl.atomic_add(")
    assert line.code.startswith("tl.atomic_add(out_ptr + zeros, x")
    assert "1024 of 1024 lanes" in line.detail
    assert any(n == line.line for n, _ in line.context)


@pytest.mark.slow
def test_contended_histogram_is_flagged():
    report = intelliperf.diagnose(
        py(EXAMPLES / "contended_histogram.py", *SMALL), formula="atomicContention", device="cpu"
    )
    finding = _finding(report, "contended_histogram_kernel")
    assert finding.present
    # 65,536 uniform values over 16 bins: about 4,096 updates of each bin in a launch
    assert 3500 <= finding.metric.value <= 4700
    assert "lanes of one atomic_add call" in finding.explanation
    assert finding.lines[0].line == _line_of(EXAMPLES / "contended_histogram.py", "tl.atomic_add(")


@pytest.mark.slow
@pytest.mark.parametrize(
    "example, kernel",
    [("reduced_sum.py", "reduced_sum_kernel"), ("privatized_histogram.py", "privatized_histogram_kernel")],
)
def test_clean_kernels_are_not_flagged(example, kernel):
    report = intelliperf.diagnose(py(EXAMPLES / example, *SMALL), formula="atomicContention", device="cpu")
    finding = _finding(report, kernel)
    assert not finding.present and finding.severity == "none"
    assert finding.metric.value == 64  # one update of each cell per program, 64 programs
    assert report.selected is None


@pytest.mark.slow
def test_kernel_without_atomics_is_not_flagged(multi_report):
    registry = default_registry()
    add = next(k for k in multi_report.kernels if k.name == "add_kernel")
    finding = registry.create("atomicContention").diagnose(add, multi_report.diagnosis("add_kernel").evidence)
    assert not finding.present and "no atomic" in finding.explanation


def test_formula_without_evidence_says_so(multi_report):
    finding = default_registry().create("atomicContention").diagnose(multi_report.kernels[0], [])
    assert not finding.present and "no interpreter-trace evidence" in finding.explanation


def test_threshold_option(sum_report):
    registry = default_registry()
    kernel = sum_report.kernels[0]
    evidence = sum_report.diagnosis(kernel.name).evidence
    assert not registry.create("atomicContention", min_depth=2048).diagnose(kernel, evidence).present
    with pytest.raises(UsageError, match="min_depth"):
        registry.create("atomicContention", min_depth="many")
    with pytest.raises(UsageError, match="Options it takes: min_depth"):
        registry.create("atomicContention", depth=3)


def test_diagnose_only_reports_every_registered_formula(multi_report):
    assert multi_report.formula == "diagnoseOnly"
    names = set(default_registry().names()) - {"diagnoseOnly"}
    for diagnosis in multi_report.diagnoses:
        assert {f.formula for f in diagnosis.findings} == names
    assert multi_report.top == [k.name for k in multi_report.kernels]  # all three, in rank order
    assert multi_report.top[0] == "heavy_kernel" and len(multi_report.top) == 3


def test_unknown_formula_lists_the_registered_ones():
    with pytest.raises(UnknownFormulaError) as info:
        default_registry().get("atomicContentoin")
    assert "atomicContention" in str(info.value) and "diagnoseOnly" in str(info.value)
    assert "did you mean 'atomicContention'?" in str(info.value)
    with pytest.raises(UnknownFormulaError, match="did you mean 'memoryAccess'"):
        default_registry().get("memoryaccess")


# The formula shown in docs/formulas.md is the one tested here.
USER_FORMULA = doc_block("docs/formulas.md", "formula-example")


def test_user_formula_from_a_file(tmp_path, multi_report):
    path = tmp_path / "my_formula.py"
    path.write_text(USER_FORMULA)
    registry = default_registry([path])
    assert "lowSectorEfficiency" in registry.names()
    assert registry.source("lowSectorEfficiency") == f"file {path}"
    kernel = multi_report.kernels[0]
    finding = registry.create("lowSectorEfficiency").diagnose(kernel, multi_report.diagnosis(kernel.name).evidence)
    assert finding.formula == "lowSectorEfficiency"
    assert not finding.present and finding.metric.value == 1.0  # contiguous loads and stores


def test_user_formula_through_an_entry_point(tmp_path, monkeypatch):
    # A real distribution on sys.path, found through importlib.metadata like an installed plug-in.
    (tmp_path / "myplugin.py").write_text(USER_FORMULA)
    dist = tmp_path / "myplugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: myplugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[intelliperf.formulas]\nlowSectorEfficiency = myplugin:LowSectorEfficiency\nbroken = myplugin:Missing\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = default_registry()
    assert "lowSectorEfficiency" in registry.names()
    assert "atomicContention" in registry.names()  # built-ins come through the same group
    assert "broken" in registry.broken and "broken" not in registry.names()
    with pytest.raises(FormulaLoadError, match="failed to load"):
        registry.get("broken")


@pytest.mark.parametrize(
    "source, message",
    [
        ("import does_not_exist\n", "ModuleNotFoundError"),
        ("def oops(:\n", "SyntaxError"),
        ("x = 1\n", "defines no subclass"),
        ("from intelliperf import Formula\nclass F(Formula):\n    name = 'f'\n", "does not implement diagnose"),
        (
            "from intelliperf import Formula\nclass F(Formula):\n    name = 'bad name'\n"
            "    def diagnose(self, k, e): ...\n",
            "identifier-like",
        ),
    ],
)
def test_bad_formula_files_are_rejected_with_the_reason(tmp_path, source, message):
    path = tmp_path / "f.py"
    path.write_text(source)
    with pytest.raises(FormulaLoadError, match=message):
        Registry().load_file(path)


def test_formula_name_clash_is_refused(tmp_path):
    path = tmp_path / "clash.py"
    path.write_text(
        textwrap.dedent("""
        from intelliperf import Formula
        class Clash(Formula):
            name = "atomicContention"
            def diagnose(self, kernel, evidence): ...
    """)
    )
    with pytest.raises(FormulaLoadError, match="already taken"):
        default_registry([path])


def test_missing_formula_file(tmp_path):
    with pytest.raises(FormulaLoadError, match="not found"):
        Registry().load_file(tmp_path / "nope.py")


def test_public_api_all_is_complete_and_sorted():
    assert intelliperf.__all__ == sorted(intelliperf.__all__)
    for name in intelliperf.__all__:
        assert getattr(intelliperf, name) is not None
    assert "intelliperf" in sys.modules


@pytest.mark.slow
def test_per_row_adds_by_every_program_are_contention_between_programs():
    """Liger's layer-norm backward: every program adds its row's dW and dB into the same cells
    (flagged, and said so); the maintainers' fix, per-program partials summed on the host, is clean."""
    fixes = EXAMPLES.parents[1] / "benchmarks" / "fixes"
    args = ["--rows", "64", "--cols", "256"]
    before = intelliperf.diagnose(
        py(fixes / "liger_layer_norm_backward_before.py", *args), formula="atomicContention", device="cpu"
    )
    finding = _finding(before, "_layer_norm_backward_kernel")
    assert finding.present and "serialise between programs (every program adds into the same cells)" in (
        finding.explanation
    )
    assert {line.code.split("(")[0] for line in finding.lines} == {"tl.atomic_add"}
    after = intelliperf.diagnose(
        py(fixes / "liger_layer_norm_backward_after.py", *args), formula="atomicContention", device="cpu"
    )
    assert not _finding(after, "_layer_norm_backward_kernel").present
