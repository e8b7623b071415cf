"""The CLI through real subprocesses: the main job, the reports, and every user error."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, PROGRAMS, REPO, SMALL, run_cli

from intelliperf.delivery.report import SCHEMA_PATH, report_schema
from intelliperf.models import SCHEMA_VERSION, Report


@pytest.mark.slow
def test_diagnose_names_the_kernel_and_atomic_line(tmp_path):
    out, md = tmp_path / "report.json", tmp_path / "report.md"
    script = EXAMPLES / "contended_sum.py"
    sarif = tmp_path / "findings.sarif"
    result = run_cli(
        "diagnose",
        "--formula",
        "atomicContention",
        "--output",
        str(out),
        "--markdown",
        str(md),
        "--sarif",
        str(sarif),
        "--device",
        "cpu",
        "--",
        sys.executable,
        str(script),
        *SMALL,
    )
    assert result.returncode == 0, result.stderr
    assert "contended_sum_kernel" in result.stdout
    assert "tl.atomic_add(out_ptr + zeros, x, mask=mask)" in result.stdout
    assert "atomic_updates_per_address = 65536" in result.stdout
    assert "modelled on CPU" in result.stdout
    assert "contended_sum on cpu" in result.stdout  # the program's own output passes through

    data = json.loads(out.read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    report = Report.model_validate(data)
    assert report.selected == "contended_sum_kernel"
    line = report.diagnosis("contended_sum_kernel").findings[0].lines[0]
    assert f"{script}:{line.line}" in md.read_text()
    assert "| 1 | `contended_sum_kernel` |" in md.read_text()
    _check_sarif(json.loads(sarif.read_text()), line.line)


def _check_sarif(log: dict, atomic_line: int) -> None:
    """Valid SARIF 2.1.0 (the OASIS schema, tests/fixtures/sarif), with the finding at the atomic
    line, the path relative to the run's folder, as GitHub code scanning places it."""
    import jsonschema

    schema = json.loads((REPO / "tests" / "fixtures" / "sarif" / "sarif-schema-2.1.0.json").read_text())
    validator = jsonschema.Draft4Validator(schema)
    validator.validate(log)
    broken = json.loads(json.dumps(log))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):  # the schema is strict enough to refuse a bad level
        validator.validate(broken)
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "atomicContention" and result["level"] == "error"
    rule = log["runs"][0]["tool"]["driver"]["rules"][0]
    assert rule["id"] == "atomicContention" and "serialised" in rule["shortDescription"]["text"]
    assert "one after another" in rule["fullDescription"]["text"]  # what code scanning shows as the rule's text
    assert rule["help"]["text"].startswith("Known fixes:\n- reduce within the program first")
    place = result["locations"][0]["physicalLocation"]
    assert place["region"]["startLine"] == atomic_line
    assert place["artifactLocation"] == {"uri": "examples/atomic_contention/contended_sum.py", "uriBaseId": "SRCROOT"}


@pytest.mark.slow
def test_clean_kernel_exits_zero_with_no_finding():
    # Without TRITON_DEFAULT_FP_FUSION, Triton 3.9 warns in every process; neither intelliperf nor
    # the program it runs repeats that notice.
    env = {k: v for k, v in os.environ.items() if k != "TRITON_DEFAULT_FP_FUSION"}
    result = run_cli(
        "diagnose",
        "-f",
        "atomicContention",
        "--device",
        "cpu",
        "--",
        sys.executable,
        str(EXAMPLES / "reduced_sum.py"),
        *SMALL,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "No atomicContention bottleneck" in result.stdout
    assert "FP_FUSION" not in result.stderr + result.stdout


def test_published_schema_is_current():
    assert json.loads(SCHEMA_PATH.read_text()) == report_schema(), (
        "regenerate with: intelliperf schema > intelliperf/schema/report.schema.json"
    )


def test_the_problem_kinds_are_listed_once():
    """models.ProblemKind is the one list: the published schema's enum is it, in its order, and every group of
    kinds the validators, the loop and the eval keep is drawn from it."""
    from typing import get_args

    from intelliperf.evaluation.run import FAILURE_CLASSES
    from intelliperf.models import CandidateKind, ProblemKind
    from intelliperf.validators.correctness import VALUE_KINDS
    from intelliperf.validators.settings import GUARDS, NAMED_BY_REPLAY

    kinds = list(get_args(ProblemKind))
    published = json.loads(SCHEMA_PATH.read_text())["$defs"]["Problem"]["properties"]["kind"]["enum"]
    assert published == kinds and len(set(kinds)) == len(kinds)
    groups = [GUARDS, NAMED_BY_REPLAY, VALUE_KINDS, get_args(CandidateKind), *FAILURE_CLASSES.values()]
    assert all(set(group) <= set(kinds) for group in groups)


def test_schema_command_prints_the_schema():
    result = run_cli("schema")
    assert result.returncode == 0
    assert json.loads(result.stdout)["title"] == "Report"


@pytest.mark.slow
def test_formulas_command_lists_builtins():
    result = run_cli("formulas")
    assert result.returncode == 0
    assert "atomicContention" in result.stdout and "diagnoseOnly" in result.stdout
    for option in ("min_depth=4", "min_programs=4", "min_efficiency=0.5", "min_weight_once=1.0"):  # -O keys
        assert option in result.stdout
    listed = run_cli("formulas", "--format", "json")
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert listed.returncode == 0 and {"registerPressure", "laneUtilization", "memoryLocality"} <= set(rows)
    assert rows["laneUtilization"]["options"]["min_utilization"] == 0.6
    assert rows["memoryLocality"]["metric"] == "wave_footprint_ratio"


def test_help_is_fast_and_lists_commands():
    result = run_cli("--help")
    assert result.returncode == 0
    assert "diagnose" in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, code, message",
    [
        (["diagnose"], 2, "no command to run"),
        (["diagnose", "--", "no-such-program-xyz"], 2, "command not found: 'no-such-program-xyz'"),
        (["diagnose", "--", sys.executable, str(PROGRAMS / "fails.py")], 3, "could not open dataset.bin"),
        (["diagnose", "--", sys.executable, str(PROGRAMS / "no_triton.py")], 4, "launched no Triton kernel"),
        (["diagnose", "--", "true"], 4, "no Python process of it started the recorder"),
        (
            ["diagnose", "--kernel", "nomatch", "--", sys.executable, str(PROGRAMS / "many_launches.py"), "2"],
            4,
            "matches none of the launched kernels: tiny_kernel",
        ),
        (["diagnose", "--kernel", "(", "--", "true"], 2, "not a valid regular expression"),
        (
            ["diagnose", "-f", "atomicContentoin", "--", "true"],
            2,
            "registered formulas: atomicContention, bankConflict, diagnoseOnly",
        ),
        (["diagnose", "--formula-path", "missing.py", "--", "true"], 2, "formula file not found"),
        (["diagnose", "-O", "min_depth", "-f", "atomicContention", "--", "true"], 2, "expects KEY=VALUE"),
        (["diagnose", "--top-n", "0", "--", "true"], 2, "--top-n must be at least 1"),
        (["diagnose", "--device", "tpu", "--", "true"], 2, "'tpu' is not one of 'auto', 'cpu', 'gpu'"),
        (["optimize", "--counters", "perf", "--", "true"], 2, "'perf' is not one of 'auto', 'ncu', 'rocprofv3', 'off'"),
        (["optimize", "--racecheck-ctas", "-1", "--", "true"], 2, "--racecheck-ctas must be at least 0, got -1"),
        (["optimize", "--racecheck-ctas", "all", "--", "true"], 2, "Invalid value for '--racecheck-ctas'"),
        (["diagnose", "--region-data", "foo", "--", "true"], 2, "'foo' is not one of 'auto', 'trace', 'tree'"),
    ],
)
def test_user_errors_are_clear_and_without_traceback(args, code, message):
    result = run_cli(*args)
    assert result.returncode == code, (result.stdout, result.stderr)
    assert message in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_failing_command_shows_its_stderr_tail():
    result = run_cli("diagnose", "--", sys.executable, str(PROGRAMS / "fails.py"))
    assert "exited with status 1" in result.stderr
    assert "about to fail" in result.stderr


@pytest.mark.slow
def test_killed_command_names_the_signal(tmp_path):
    victim = tmp_path / "killed.py"
    victim.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    result = run_cli("diagnose", "--", sys.executable, str(victim))
    assert result.returncode == 3
    assert "was killed by signal SIGKILL (9)" in " ".join(result.stderr.split())


def test_formula_file_that_fails_to_import(tmp_path):
    bad = tmp_path / "bad_formula.py"
    bad.write_text("import numpy\nraise RuntimeError('boom')\n")
    result = run_cli("diagnose", "--formula-path", str(bad), "--", "true")
    assert result.returncode == 2
    assert "failed to import: RuntimeError: boom (line 2)" in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_timeout_stops_the_command(tmp_path):
    sleeper = tmp_path / "sleep.py"
    sleeper.write_text("import time\ntime.sleep(60)\n")
    result = run_cli("diagnose", "--timeout", "1", "--", sys.executable, str(sleeper))
    assert result.returncode == 3
    assert "ran longer than 1 s" in result.stderr


def test_bad_option_is_a_usage_error():
    result = run_cli("diagnose", "--top-n", "many", "--", "true")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


def test_version():
    from intelliperf import __version__

    for flag in ("--version", "-V"):
        result = run_cli(flag)
        assert result.returncode == 0 and result.stdout.strip() == f"intelliperf {__version__}"


def _fields(model, prefix: str = "") -> dict[str, tuple[str, object]]:
    """{option: (field, default)} of a settings model, its nested settings' fields included."""
    from pydantic import BaseModel

    from intelliperf.settings import option_of

    out = {}
    model.model_rebuild()  # (OptimizeSettings has its validation's type once it was first used)
    for name, field in model.model_fields.items():
        nested = field.annotation if isinstance(field.annotation, type) else None
        if nested is not None and issubclass(nested, BaseModel):
            out |= _fields(nested, f"{prefix}{name}.")
        else:
            out[option_of(prefix + name)] = (prefix + name, field.get_default(call_default_factory=True))
    return out


# Each command's settings models, and its options that set no field (their defaults are the command's own).
SETTINGS_OF = {
    "diagnose": ("DiagnoseSettings",),
    "regions": ("RegionsSettings",),
    "optimize": ("OptimizeSettings", "Publish"),
    "eval": ("OptimizeSettings",),
    "campaign": ("CampaignSettings",),
    "tune": ("OptimizeSettings", "TuneSettings"),
}
OWN_OPTIONS = {
    "diagnose": {"--format"},
    "regions": set(),
    "optimize": {"--format", "--api-base", "--api-key-env", "--program", "--reasoning", "--save-transcript",
                 "--branch"},
    "eval": {"--formula", "--rewriter", "--api-base", "--api-key-env", "--program", "--reasoning", "--out-dir",
             "--resume", "--max-attempts"},  # (per case, its own default)
    "campaign": {"--only", "--out-dir", "--resume"},
    "tune": {"--out", "--formula", "--api-base", "--api-key-env", "--program", "--reasoning", "--work-dir"},
}  # fmt: skip


def _empty(value) -> bool:
    return value is None or value == [] or value == {}


def test_every_option_has_its_settings_fields_default():
    """The settings models hold each option's default: every option of a command that sets a field (walked from
    the typer commands, nested validation and sandbox fields included) has that field's default, a flag that
    turns a field off its opposite; every other option is listed as the command's own."""
    import dataclasses

    from intelliperf import settings
    from intelliperf.cli.help_format import click_command
    from intelliperf.delivery.publish import Publish

    named = {"branch": "--branch-name", "labels": "--pr-label"}
    publish = {
        named.get(f.name) or "--" + f.name.replace("_", "-"): (f.name, getattr(Publish(), f.name))
        for f in dataclasses.fields(Publish)
    }
    checked = 0
    for name, command in click_command().commands.items():
        if name not in SETTINGS_OF:
            continue
        fields: dict = {}
        for model in SETTINGS_OF[name]:
            fields |= publish if model == "Publish" else _fields(getattr(settings, model))
        for param in command.params:
            option = max(param.opts, key=len)
            if param.param_type_name != "option" or option in ("--help", *OWN_OPTIONS[name]):
                continue
            assert option in fields, f"intelliperf {name} {option} sets no settings field: list it as the command's own"
            field, default = fields[option]
            given = getattr(param.default, "value", param.default)
            expected = not default if field in settings.OFF else default
            assert given == expected or _empty(given) and _empty(expected), (name, option, field, given, expected)
            checked += 1
    assert checked > 60


@pytest.mark.parametrize(
    "option, value, api, message",
    [
        ("max-attempts", "0", {"max_attempts": 0}, "--max-attempts must be at least 1, got 0"),
        ("candidate-timeout", "-1", {"validation": {"timeout_s": -1}}, "--candidate-timeout must be a positive number"),
    ],
)
def test_a_value_out_of_range_is_one_usage_error_from_the_api_the_cli_and_the_config_file(
    tmp_path, option, value, api, message
):
    """The field's constraint is the only check: the API, the command line and `[tool.intelliperf]` all meet it
    and say the same, before anything runs (`true` would start no recorder: a run would fail otherwise)."""
    from intelliperf.api import optimize
    from intelliperf.errors import UsageError

    with pytest.raises(UsageError) as said:
        optimize(["true"], out_dir=tmp_path / "api", **api)
    assert said.value.message.startswith(message) and said.value.exit_code == 2
    flag = run_cli("optimize", f"--{option}", value, "--out-dir", str(tmp_path / "cli"), "--", "true", cwd=tmp_path)
    (tmp_path / "pyproject.toml").write_text(f"[tool.intelliperf.optimize]\n{option} = {value}\n")
    config = run_cli("optimize", "--out-dir", str(tmp_path / "config"), "--", "true", cwd=tmp_path)
    for result in (flag, config):
        assert result.returncode == 2 and f"error: {said.value.message}" in " ".join(result.stderr.split())
        assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["optimize", "--time-budget", "-5"], "--time-budget must be a positive number of seconds, got -5"),
        (["optimize", "--candidates", "0"], "--candidates must be at least 1, got 0"),
        (["optimize", "--max-tokens", "0"], "--max-tokens must be at least 1, got 0"),
        (["optimize", "--out-dir", "{file}"], "is a file; it takes a folder"),
        (["optimize", "-o", "{folder}"], "is a folder; it takes a file name"),
        (["diagnose", "--markdown", "{folder}"], "--markdown {folder} is a folder"),
        (["diagnose", "--profile-dir", "{file}"], "--profile-dir {file} is a file"),
        (["regions", "--out-dir", "{file}"], "--out-dir {file} is a file"),
        (["optimize", "--sample-programs", "8", "--profile-dir", "{file}"], "--profile-dir {file} is a file"),
    ],
)
def test_bad_values_and_paths_are_refused_before_anything_runs(tmp_path, args, message):
    """Checked before the program runs (it would write `ran` into the folder) and before any
    report is written: exit 2, one clear line, no traceback, no stray NAME.tmp."""
    folder, file = tmp_path / "reports", tmp_path / "report.json"
    folder.mkdir()
    file.write_text("mine")
    args = [a.format(file=file, folder=folder) for a in args]
    program = tmp_path / "program.py"
    program.write_text(f"open({str(tmp_path / 'ran')!r}, 'w').write('yes')\n")
    result = run_cli(*args, "--", sys.executable, str(program))
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert message.format(file=file, folder=folder) in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr and not (tmp_path / "ran").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["program.py", "report.json", "reports"]
    assert file.read_text() == "mine" and not any(folder.iterdir())


def test_messages_in_a_log_are_whole_lines(tmp_path):
    """Piped stderr (CI logs) used to wrap mid-sentence at 80 columns."""
    file = tmp_path / ("a-rather-long-folder-name-" * 3) / "report.json"
    file.parent.mkdir()
    file.write_text("{}")
    result = run_cli("optimize", "--out-dir", str(file), "--", "python", "x.py")
    line = next(ln for ln in result.stderr.splitlines() if "--out-dir" in ln)
    assert len(line) > 120 and line.endswith("it takes a folder (created if missing)")


@pytest.mark.slow
def test_api_progress_goes_to_the_intelliperf_logger(caplog):
    import logging

    from conftest import py

    import intelliperf

    with caplog.at_level(logging.INFO, logger="intelliperf"):
        intelliperf.diagnose(py(EXAMPLES / "contended_sum.py", *SMALL), formula="atomicContention", device="cpu")
    stages = [r.getMessage() for r in caplog.records if r.name == "intelliperf"]
    assert "profiling: running the command with the launch recorder" in stages
    assert "diagnosing the top kernels" in stages


@pytest.mark.parametrize("command", ["diagnose", "optimize", "regions", "formulas"])
def test_help_names_what_each_option_takes(command):
    """Readable --help: metavars such as FILE, N, SECONDS, not typer's Python types (<str>,
    <int>, <bool>), and the program as `-- CMD [ARGS]...` in the usage line."""
    result = run_cli(command, "--help")
    assert result.returncode == 0
    assert not re.search(r"<(str|int|float|bool|path|list\[\w+\])>", result.stdout), result.stdout
    if command != "formulas":
        assert f"Usage: intelliperf {command} [OPTIONS] -- CMD [ARGS]..." in " ".join(result.stdout.split())
    if command == "optimize":
        assert re.search(r"--candidate-timeout\s+SECONDS", result.stdout)


def test_rewriters_command_lists_what_rewriter_takes():
    listed = run_cli("rewriters", "--format", "json")
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert listed.returncode == 0 and set(rows) >= {"llm", "recipes", "search", "replay"}
    assert all(row["summary"] and row["from"] == "built-in" for row in rows.values())
    assert "model" in rows["llm"]["options"] and rows["replay"]["options"] == ["transcript"]
    table = run_cli("rewriters")
    assert "auto: llm when a model is configured, otherwise recipes then search." in table.stdout


def test_no_color_means_no_escape_codes_at_all():
    """NO_COLOR (no-color.org) on a terminal: neither colours nor bold; without it the terminal gets both."""
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    styled = run_cli("formulas", env={**env, "FORCE_COLOR": "1"})
    assert styled.returncode == 0 and "\x1b[" in styled.stdout
    plain = run_cli("formulas", env={**env, "FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert plain.returncode == 0 and "\x1b[" not in plain.stdout + plain.stderr and "atomicContention" in plain.stdout


def test_the_global_flags_are_read_after_the_subcommand_too():
    """`-q`/`-v` go where a user types them (ruff and pytest take them after the subcommand); the program's own
    arguments after `--` keep theirs."""
    from intelliperf.cli.entry import global_flags_first

    assert run_cli("formulas", "-q").returncode == 0
    both = run_cli("diagnose", "-v", "--device", "cpu", "-q", "--", "true")
    assert both.returncode == 2 and "--verbose and --quiet contradict each other" in both.stderr
    assert global_flags_first(["optimize", "-q", "--", "python", "app.py", "-v"]) == [
        "-q", "optimize", "--", "python", "app.py", "-v",
    ]  # fmt: skip


def _complete(words: str, cwd=None) -> list[str]:
    """What bash completion offers for the last word of `words` (click's protocol: the words and the
    index of the one completed, in the environment of a call with _INTELLIPERF_COMPLETE set)."""
    env = {**os.environ, "_INTELLIPERF_COMPLETE": "complete_bash", "COMP_WORDS": words}
    env["COMP_CWORD"] = str(len(words.split()) - (0 if words.endswith(" ") else 1))
    script = Path(sys.executable).parent / "intelliperf"  # the installed command, as a shell calls it
    result = subprocess.run([str(script)], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_formula_completes_to_the_registered_formulas(tmp_path):
    from intelliperf.formulas import default_registry

    assert _complete("intelliperf diagnose --formula ") == sorted(default_registry().names())
    assert _complete("intelliperf optimize -f ") == sorted([*default_registry().names(), "auto"])
    assert _complete("intelliperf diagnose -f mem") == ["memoryAccess", "memoryLocality"]
    mine = tmp_path / "mine.py"
    mine.write_text(
        "from intelliperf import Formula\n"
        "class Mine(Formula):\n"
        "    name = 'memoryMine'\n"
        "    def diagnose(self, kernel, evidence): ...\n"
    )
    assert "memoryMine" in _complete(f"intelliperf diagnose --formula-path {mine} -f mem")
