"""A candidate's Python started ahead of its program run (workload.head_start): where a program allows
it, a run in it that the program cannot tell from a fresh `python script.py` (in the real sandbox), the
fall-backs to a fresh run, and validation through it, right and wrong candidates alike."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import PROGRAMS

from intelliperf.validators import (
    CandidateLayout,
    Program,
    ValidationSettings,
    capture_reference,
    copy_project,
    start_head_starts,
    validate,
)
from intelliperf.workload import sandbox as sandboxing
from intelliperf.workload.head_start import REFUSED, HeadStart, is_python, script_of, torch_comes_first
from intelliperf.workload.runner import TraceSettings, bootstrap_env, workload_env
from intelliperf.workload.workspace import Confinement, confined, confined_env

pytestmark = pytest.mark.slow  # every test here runs programs or validations (the fast tier skips them)

AXPY = PROGRAMS / "validation"
SETTING = "PYTORCH_CUDA_ALLOC_CONF"  # read by torch as it starts (its allocator), and let into the sandbox

# --- where a program allows it ----------------------------------------------------------------


@pytest.mark.parametrize(
    "source, allowed",
    [
        ('"""Doc."""\nimport os\nimport sys\nimport torch\nos.environ["X"] = "1"\n', True),
        ("from __future__ import annotations\nimport numpy as np\nfrom triton import language\n", True),
        ("import argparse, json\nimport torch.nn.functional as F\n", True),
        ('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n', False),  # changes how torch starts
        ("import sys\nsys.path.insert(0, 'lib')\nimport torch\n", False),
        ("import helpers\nimport torch\n", False),  # a local module may do anything first
        ("import helpers, torch\n", False),
        ("import sys, torch, triton\n", True),
        ("from . import helpers\nimport torch\n", False),
        ("try:\n    import torch\nexcept ImportError:\n    torch = None\n", False),
        ("import os\nimport sys\n", False),  # no torch: nothing to start ahead
        ("import torch(\n", False),
    ],
)
def test_only_a_script_that_imports_torch_first_may_start_ahead(source, allowed):
    assert torch_comes_first(source) is allowed


def test_only_python_running_a_script_may_start_ahead(tmp_path):
    (tmp_path / "run.py").write_text("import torch\n")
    (tmp_path / "run.sh").write_text("python run.py\n")
    python = sys.executable
    assert script_of([python, "run.py", "--n", "3"], tmp_path) == tmp_path / "run.py"
    assert script_of(["/usr/bin/python3.11", "run.py"], tmp_path) == tmp_path / "run.py"
    for command in ([python, "-u", "run.py"], [python, "-m", "run"], ["bash", "run.sh"], [python, "missing.py"]):
        assert script_of(command, tmp_path) is None, command
    assert is_python("python3") and is_python("/opt/venv/bin/python3.12") and not is_python("/usr/bin/bash")


# --- a run in it, as a fresh Python would have it -----------------------------------------------

PROBE = '''"""What a program can see of how it was started."""
import hashlib
import json
import os
import random
import sys

import numpy
import torch

import __main__

print(json.dumps({
    "argv": sys.argv,
    "path0": sys.path[0],
    "name": __name__,
    "file": __file__,
    "main": __main__.__dict__ is globals(),
    "cwd": os.getcwd(),
    "env": {k: v for k, v in os.environ.items() if not k.startswith("INTELLIPERF_")},
    "record_dir": os.environ.get("INTELLIPERF_RECORD_DIR"),
    "hash": hash("intelliperf"),
    "random": [random.random(), float(numpy.random.rand()), torch.rand(3).tolist()],
    "cuda": torch.rand(3, device="cuda").tolist() if torch.cuda.is_available() else None,
    "stdin": sys.stdin.read(),
    "hidden": os.path.exists(HIDDEN),
}, sort_keys=True))
open(os.path.join(sys.argv[2], "written.txt"), "w").write("from the run")
sys.exit(3)
'''


def _started_ahead(box, root: Path, work: Path, settings: ValidationSettings, **kwargs):
    """`start_head_starts` for the copy `root` and the validation folder `work` (`_layout`)."""
    layout = CandidateLayout(root, work, work.parent / "inputs", work.parent / "reference")
    return start_head_starts(box, sys.executable, layout, settings=settings, **kwargs)


def _program_ahead(box, root: Path, work: Path, *, interpret: bool = True, seed: int = 0, env: dict | None = None):
    """The program's Python of `start_head_starts` (its workers' and, on a GPU, its timing workers' are
    not needed here)."""
    ahead = _started_ahead(box, root, work, ValidationSettings(seed=seed), interpret=interpret, env=env or {})
    for worker in ahead.workers.values():
        worker.stop()
    for timer in ahead.timing.values():
        timer.side.stop()
    return ahead.program


def _layout(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A candidate's copy with the probe in a subfolder, and its validation folder (as `validate` lays them out)."""
    root, work = tmp_path / name / "project", tmp_path / name / "validation"
    return root, work


def _script(box, root: Path, work: Path, args: list, *, ahead=None, cwd=None, seed=0, interpret=True, extra=None):
    """`python ARGS` as `validate` runs a candidate's program: in the sandbox, in the copy `root`, capturing
    into `work/candidate`; in the started Python `ahead` where it fits."""
    cand = work / "candidate"
    cand.mkdir(parents=True, exist_ok=True)
    room = Confinement(cwd or root, work / "home", seed, writable=(root, cand))
    env = workload_env(cand, interpret, TraceSettings()) | (extra or {})
    return confined(box, [sys.executable, *args], room, env=env, timeout_s=120, ahead=ahead)


def _run(box, root: Path, work: Path, hidden: Path, ahead=None, interpret: bool = True):
    (root / "app").mkdir(parents=True, exist_ok=True)
    (root / "app" / "probe.py").write_text(PROBE.replace("HIDDEN", repr(str(hidden))))
    extra = {SETTING: "expandable_segments:True"}
    args = ["probe.py", "first arg", str(work / "candidate")]
    return _script(box, root, work, args, ahead=ahead, cwd=root / "app", seed=7, interpret=interpret, extra=extra)


def _seen(result, root: Path) -> dict:
    seen = json.loads(next(line for line in result.tail if line.startswith("{")))
    return json.loads(json.dumps(seen).replace(str(root.parent), "<attempt>"))


@pytest.mark.parametrize("interpret", [True, pytest.param(False, marks=pytest.mark.gpu)])
def test_a_run_in_a_head_start_is_a_fresh_runs_twin(tmp_path, interpret):
    hidden = tmp_path / "users_secret.txt"
    hidden.write_text("not for candidates")
    box = sandboxing.make(enabled=True, hide=(tmp_path,))
    fresh_root, fresh_work = _layout(tmp_path, "fresh")
    fresh = _run(box, fresh_root, fresh_work, hidden, interpret=interpret)
    root, work = _layout(tmp_path, "ahead")
    head = _program_ahead(box, root, work, interpret=interpret, seed=7, env={SETTING: "expandable_segments:True"})
    assert root.is_dir() and not any(root.iterdir())  # made empty, filled once the candidate exists
    warm = _run(box, root, work, hidden, ahead=head, interpret=interpret)
    assert (fresh.returncode, warm.returncode) == (3, 3)
    assert warm.ahead and not fresh.ahead
    a, b = _seen(fresh, fresh_root), _seen(warm, root)
    assert a == b, (a, b)
    assert a["argv"] == ["probe.py", "first arg", "<attempt>/validation/candidate"] and a["name"] == "__main__"
    assert (
        a["path0"].endswith("/app")
        and a["main"]
        and a["env"][SETTING] == "expandable_segments:True"
        and not a["hidden"]
    )
    assert b["record_dir"] == "<attempt>/validation/candidate" and b["stdin"] == ""
    assert (work / "candidate" / "written.txt").read_text() == "from the run"
    assert interpret or a["cuda"] is not None  # on the GPU: the same draws on the device too


def test_a_run_that_does_not_fit_its_head_start_runs_afresh(tmp_path):
    box = sandboxing.make(enabled=True, hide=(tmp_path,))
    hidden = tmp_path / "x"

    def ahead(name: str, **env):
        root, work = _layout(tmp_path, name)
        head = _program_ahead(box, root, work, seed=7, env=env)
        return root, work, head

    root, work, head = ahead(
        "other-env", **{SETTING: "expandable_segments:False"}
    )  # torch would have started with another environment
    assert not _run(box, root, work, hidden, ahead=head).ahead and head.running.proc.poll() is not None
    root, work, head = ahead("ended", **{SETTING: "expandable_segments:True"})
    head.stop()
    result = _run(box, root, work, hidden, ahead=head)
    assert result.returncode == 3 and not result.ahead
    root, work, head = ahead("other-box", **{SETTING: "expandable_segments:True"})
    other = sandboxing.make(enabled=True, hide=(tmp_path, Path.home()), extra_env=("HOSTNAME",))
    assert not _run(other, root, work, hidden, ahead=head).ahead
    root, work, head = ahead("env-first", **{SETTING: "expandable_segments:True"})
    (root / "first.py").write_text('import os\nos.environ["A"] = "1"\nimport torch\n')
    result = _script(box, root, work, ["first.py"], ahead=head, seed=7, extra={SETTING: "expandable_segments:True"})
    assert result.returncode == 0 and not result.ahead


def test_a_program_that_fakes_the_head_starts_refusal_is_run_afresh_and_judged_on_that(tmp_path):
    """The candidate that would fool the fall-back: it exits as the head start does when it cannot take a
    run. It gains a second, fresh run, whose result is the one returned (ahead=False), nothing else."""
    box = sandboxing.make(enabled=True, hide=(tmp_path,))
    root, work = _layout(tmp_path, "faker")
    head = _program_ahead(box, root, work)
    (root / "fake.py").write_text(
        "import sys\nimport torch\n"
        "runs = open(sys.argv[1], 'a'); runs.write('run\\n'); runs.close()\n"
        f"print({REFUSED!r}, file=sys.stderr)\nsys.exit(87)\n"
    )
    cand = work / "candidate"
    result = _script(box, root, work, ["fake.py", str(cand / "runs.txt")], ahead=head)
    assert result.returncode == 87 and not result.ahead
    assert (cand / "runs.txt").read_text() == "run\nrun\n"


# --- validation through it ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def axpy(tmp_path_factory):
    command = [sys.executable, "axpy.py", "4096"]
    work = tmp_path_factory.mktemp("reference")
    return capture_reference(Program(AXPY, command), "axpy_kernel", interpret=True, work_dir=work), command


@pytest.mark.parametrize(
    "edit, correct, inputs",
    [(None, True, "reference's"), ("alpha * x + y, mask=mask)", False, "reference's"), (None, True, "elsewhere")],
)
def test_candidates_validated_in_a_head_start_are_judged_as_in_a_fresh_run(axpy, edit, correct, inputs, tmp_path):
    """Right and wrong candidates alike; a worker started with other binds (here: another inputs folder) is
    not handed its run, which starts afresh."""
    reference, command = axpy
    where = tmp_path / "attempt"
    read = reference.inputs if inputs == "reference's" else tmp_path / "elsewhere"
    ahead = start_head_starts(
        reference.sandbox,
        command[0],
        CandidateLayout(where / "project", where / "validation", read, reference.program.root),
        interpret=True,
        settings=ValidationSettings(),
        env={},
    )
    assert set(ahead.workers) == {"replay"}  # no compute-sanitizer under the interpreter
    text = (AXPY / "axpy.py").read_text()
    if edit:
        text = text.replace(edit, "alpha * x + y + 1e-3, mask=mask)")
    copy = copy_project(AXPY, {"axpy.py": text}, where / "project")
    verdict = validate(reference, Program(copy, command), work_dir=where / "validation", ahead=ahead)
    (note,) = [n for n in verdict.notes if "started ahead of the candidate" in n]
    assert ("its program, replay worker" in note) is (inputs == "reference's") and "its program" in note
    assert verdict.correct is correct, verdict.reasons()
    if correct:
        assert any("4 of 4 dispatches" in c for c in verdict.checks)
        assert any(c.startswith("replay through the launcher") for c in verdict.checks), verdict.checks
    else:
        assert "mismatch" in {p.kind for p in verdict.problems}


def test_a_head_start_never_sees_the_recorder_before_its_run(tmp_path):
    """The bootstrap's recorder is installed only when the run comes, with the run's variables."""
    text = textwrap.dedent(
        """
        import sys
        import triton

        from intelliperf.profiling.inside import recorder
        print("recorder", recorder.recorder() is not None)
        """
    )
    box = sandboxing.make(enabled=True, hide=(tmp_path,))
    root, work = _layout(tmp_path, "recorder")
    head = _program_ahead(box, root, work)
    (root / "show.py").write_text(text)
    cand = work / "candidate"
    result = _script(box, root, work, ["show.py"], ahead=head)
    assert result.ahead and result.returncode == 0, result.tail
    assert "recorder True" in result.tail
    assert len(list(cand.glob("started-*"))) == 1  # the run's process, once


def test_a_script_that_fails_reads_as_it_would_in_a_fresh_run(tmp_path):
    """Its status and its traceback (the script's frames only) are a fresh run's: they are the reasons the
    rewriter is given."""
    box = sandboxing.make(enabled=True, hide=(tmp_path,))
    tails = []
    for name in ("fresh", "ahead"):
        root, work = _layout(tmp_path, name)
        head = None
        if name == "ahead":
            head = _program_ahead(box, root, work)
        root.mkdir(parents=True, exist_ok=True)
        (root / "fails.py").write_text("import torch\n\n\ndef check():\n    raise ValueError('boom')\n\n\ncheck()\n")
        result = _script(box, root, work, ["fails.py"], ahead=head)
        assert result.returncode == 1 and result.ahead is (head is not None)
        tails.append([line.replace(str(root), "<copy>") for line in result.tail])
    assert tails[0] == tails[1] and tails[0][-1] == "ValueError: boom"
    assert 'File "<copy>/fails.py", line 8, in <module>' in "\n".join(tails[0])


def test_what_the_tool_it_runs_under_sets_survives_the_hand_over(tmp_path):
    """compute-sanitizer starts a worker's Python with its injection variables set, which CUDA reads when it
    starts; a head start that replaced its whole environment at the hand-over dropped them, and on the H100
    the sanitizer then waited for its target forever. What was set after the parent gave the environment
    stays (here by `env`, standing in for the tool)."""
    box = sandboxing.make(enabled=True, hide=(tmp_path,))
    root, work = _layout(tmp_path, "wrapped")
    home = work / "home"
    env = confined_env(box, bootstrap_env(True), home, 0)
    wrap = ("env", "SET_BY_THE_TOOL=yes")
    head = HeadStart.start(box, sys.executable, env=env, writable=(root, home), go_file=home / "go.json", wrap=wrap)
    (root / "show.py").write_text("import os\nimport torch\nprint('tool:', os.environ.get('SET_BY_THE_TOOL'))\n")
    command = [*wrap, sys.executable, "show.py"]
    assert head.fits(box, command, root, env, (root, home), ()) is None
    result = head.hand_over(command, root, env).wait(120)
    assert result.returncode == 0 and result.ahead and "tool: yes" in result.tail, result.tail


def test_workers_started_ahead_make_their_cuda_context_only_where_asked(tmp_path):
    """`start_head_starts(cuda=True)` (the loop asks once the reference says its workers fit beside its run): each
    worker's Python, not the program's, makes its CUDA context as it starts; with the interpreter, or not asked,
    none does. On this CPU machine no context can be made: the Python still takes its run, as a fresh one
    would find that out at its run."""
    from intelliperf import env as names

    box = sandboxing.make(enabled=True, hide=(tmp_path,))
    for cuda, interpret, wanted in ((True, False, True), (False, False, False), (True, True, False)):
        root, work = _layout(tmp_path, f"{cuda}-{interpret}")
        settings = ValidationSettings(sanitizer=False, timing=False)
        ahead = _started_ahead(box, root, work, settings, interpret=interpret, env={}, cuda=cuda)
        try:
            assert set(ahead.workers) == {"replay"} and ahead.program is not None
            assert (ahead.workers["replay"].env.get(names.CUDA_AHEAD) == "1") is wanted
            assert names.CUDA_AHEAD not in ahead.program.env
        finally:
            ahead.stop()
    root, work = _layout(tmp_path, "context")
    home = work / "home"
    env = confined_env(box, bootstrap_env(False), home, 0) | {names.CUDA_AHEAD: "1"}
    head = HeadStart.start(box, sys.executable, env=env, writable=(root, home), go_file=home / "go.json")
    (root / "show.py").write_text("import torch\nprint('ran; cuda:', torch.cuda.is_available())\n")
    command = [sys.executable, "show.py"]
    assert head.fits(box, command, root, env, (root, home), ()) is None
    result = head.hand_over(command, root, env).wait(120)
    assert result.returncode == 0 and result.ahead and "ran; cuda: False" in result.tail, result.tail


def test_a_head_start_says_once_its_start_up_is_over(tmp_path):
    """The loop starts the next candidate's Pythons beside a validation on a GPU and its timing waits until
    their start-up is over (`HeadStart.started`): one byte on a pipe once torch and Triton are imported. The
    variable naming the pipe is not the run's; a Python that ended reads as started (nothing to wait for)."""
    from intelliperf import env as names

    box = sandboxing.make(enabled=True, hide=(tmp_path,))
    root, work = _layout(tmp_path, "ready")
    home = work / "home"
    env = confined_env(box, bootstrap_env(False), home, 0)
    head = HeadStart.start(box, sys.executable, env=env, writable=(root, home), go_file=home / "go.json")
    began = time.perf_counter()
    at_once = head.started()
    while not head.started():
        assert time.perf_counter() - began < 120, head.running.tail
        time.sleep(0.05)
    assert not at_once and head.running.proc.poll() is None  # importing torch takes seconds; then it waits
    shown = f"os.environ.get({names.HEAD_START_READY!r}), 'torch:', 'torch' in sys.modules"
    (root / "show.py").write_text(f"import os, sys\nprint('pipe:', {shown})\n")
    result = head.hand_over([sys.executable, "show.py"], root, env).wait(120)
    assert result.returncode == 0 and "pipe: None torch: True" in result.tail, result.tail
    handed = HeadStart.start(box, sys.executable, env=env, writable=(root, home), go_file=home / "go1.json")
    assert handed.hand_over([sys.executable, "show.py"], root, env).wait(120).returncode == 0
    assert handed.ready == -1  # handed over unasked, its end of the pipe is closed: a loop starts hundreds
    ended = HeadStart.start(box, sys.executable, env=env, writable=(root, home), go_file=home / "go2.json")
    ended.stop()
    assert ended.started() and ended.ready == -1
