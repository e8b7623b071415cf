"""Formulas from Python: `default_registry.register` with a class or an instance, and `formula=` taking
either, on real programs; the example in docs/formulas.md run as a user would run it."""

import subprocess
import sys

import pytest
from conftest import EXAMPLES, REPO, SMALL, doc_block, py

import intelliperf
from intelliperf import Formula
from intelliperf.errors import FormulaLoadError, UnknownFormulaError

EXAMPLE = doc_block("docs/formulas.md", "python-formula-example")


class Wide(Formula["Wide.Options"]):
    """Flags a launch whose grid has more programs than `min_programs`."""

    name = "wideGrid"
    evidence = ()
    metric = "programs"

    class Options(Formula.Options):
        min_programs: int = 1

    def diagnose(self, kernel, evidence):
        programs = kernel.signatures[0].grid[0]
        return self.finding(programs > self.options.min_programs, f"{programs} programs", severity="low")


@pytest.fixture(autouse=True)
def _forget():
    yield
    intelliperf.default_registry.unregister(Wide.name)


def test_register_takes_a_class_and_every_registry_built_after_has_it():
    assert intelliperf.default_registry.register(Wide) is Wide
    registry = intelliperf.default_registry()
    assert "wideGrid" in registry.names() and "wideGrid" in intelliperf.default_registry.registered()
    assert registry.source("wideGrid").endswith("Wide (registered from Python)")
    assert registry.create("wideGrid", min_programs=7).options.min_programs == 7
    intelliperf.default_registry.unregister("wideGrid")
    assert "wideGrid" not in intelliperf.default_registry().names()


def test_register_takes_an_instance_whose_options_are_kept():
    instance = Wide(min_programs=1000)
    assert intelliperf.default_registry.register(instance) is Wide
    assert intelliperf.default_registry().create("wideGrid") is instance


@pytest.mark.parametrize(
    "formula, message",
    [
        (int, "builtins.int .registered from Python. is not usable: .* is not a subclass of intelliperf.Formula"),
        (type("Clash", (Wide,), {"name": "atomicContention"}), "'atomicContention' .* already taken by built-in"),
        (type("Unnamed", (Wide,), {"name": "no name"}), "name must be an identifier-like string"),
    ],
)
def test_what_is_not_a_usable_formula_is_refused_where_it_is_registered(formula, message):
    with pytest.raises(FormulaLoadError, match=message):
        intelliperf.default_registry.register(formula)
    assert intelliperf.default_registry.registered() == []


@pytest.mark.slow
def test_formula_takes_a_class_or_an_instance_in_diagnose():
    """The contended sum launches 64 programs: flagged by the class's default, not by an instance that
    asks for more than 64; neither stays registered after the call."""
    program = py(EXAMPLES / "contended_sum.py", *SMALL)
    by_class = intelliperf.diagnose(program, formula=Wide, device="cpu")
    assert by_class.formula == "wideGrid" and by_class.diagnoses[0].findings[0].present
    by_instance = intelliperf.diagnose(program, formula=Wide(min_programs=64), device="cpu")
    assert not by_instance.diagnoses[0].findings[0].present
    with pytest.raises(UnknownFormulaError):
        intelliperf.default_registry().get("wideGrid")


@pytest.mark.slow
def test_the_documented_example_runs_as_a_script(tmp_path):
    script = tmp_path / "small_grid.py"
    script.write_text(EXAMPLE)
    result = subprocess.run([sys.executable, str(script)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines()[-1] == "True 64.0 15"  # 64 programs, the kernel's def on line 15
