"""Install layout and the light GPU side."""

import subprocess
import sys

from conftest import REPO


def _python(code: str, cwd) -> str:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=True).stdout


def test_formulas_and_validators_install_only_under_intelliperf(tmp_path):
    # Run outside the checkout, so the repository's folders are not on sys.path.
    out = _python(
        "import importlib.util as u, intelliperf.formulas as f, intelliperf.validators as v;"
        "print(u.find_spec('formulas'), u.find_spec('validators'), f.Formula.__name__)",
        tmp_path,
    )
    assert out.split() == ["None", "None", "Formula"]


def test_recorder_side_imports_no_cli_or_llm_stack(tmp_path):
    out = _python(
        "import sys, intelliperf.profiling.inside.recorder, intelliperf.profiling.trace;"
        "print(sorted(m for m in ('rich', 'typer', 'dspy', 'openai', 'litellm', 'intelliperf.api')"
        " if m in sys.modules))",
        tmp_path,
    )
    assert out.strip() == "[]"


def test_python_dash_m_entry_point(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "intelliperf", "--help"], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode == 0 and "diagnose" in result.stdout


def test_validators_and_offline_optimize_import_no_llm_stack(tmp_path):
    # The GPU side (validators, the loop, offline rewriters) must run where dspy/openai are absent.
    out = _python(
        "import sys, intelliperf.validators, intelliperf.optimization.loop, intelliperf.rewriters;"
        "from intelliperf.rewriters import make_rewriters; make_rewriters('auto');"
        "print(sorted(m for m in ('dspy', 'openai', 'litellm') if m in sys.modules))",
        tmp_path,
    )
    assert out.strip() == "[]"


def test_the_top_level_folders_refuse_to_be_a_second_copy():
    """formulas/ and validators/ install as intelliperf.formulas / intelliperf.validators; imported
    from the repository root under their folder names they would define second, different classes."""
    for name in ("formulas", "validators"):
        done = subprocess.run([sys.executable, "-c", f"import {name}"], cwd=REPO, capture_output=True, text=True)
        assert done.returncode == 1 and f"this folder is the package intelliperf.{name}" in done.stderr
    ok = subprocess.run(
        [sys.executable, "-c", "import intelliperf.formulas, intelliperf.validators"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr
