"""A user's first hour: outputs checked before anything runs, special targets written as meant,
Ctrl-C answered with one line, a model endpoint checked before the profile. Real subprocesses,
real files, FIFOs and signals; the only fake is a closed loopback port."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES, PROGRAMS, REPO, SMALL, run_cli

from intelliperf.models import Report

SUM = [sys.executable, str(EXAMPLES / "contended_sum.py"), *SMALL]


def _marker_program(tmp_path: Path) -> Path:
    """A program that leaves `ran` behind: whether anything ran before a refusal."""
    program = tmp_path / "program.py"
    program.write_text(f"open({str(tmp_path / 'ran')!r}, 'w').write('yes')\n")
    return program


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- 2. every output location checked before the program runs ------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (["diagnose", "-o", "{file}/report.json"], "--output {file}/report.json cannot be created: {file} is a file"),
        (["diagnose", "--sarif", "{file}/deeper/x.sarif"], "--sarif {file}/deeper/x.sarif cannot be created"),
        (["diagnose", "--markdown", "/proc/intelliperf-test/r.md"], "--markdown /proc/intelliperf-test/r.md cannot be"),
        (["optimize", "--out-dir", "/proc/intelliperf-test"], "--out-dir /proc/intelliperf-test cannot be written"),
        (["optimize", "--save-transcript", "{file}/t.json"], "--save-transcript {file}/t.json cannot be created"),
        (["regions", "--out-dir", "{file}/regions"], "--out-dir {file}/regions cannot be created"),
        (["diagnose", "--profile-dir", "/proc/intelliperf-test"], "--profile-dir /proc/intelliperf-test cannot be"),
    ],
)
def test_an_unwritable_output_is_refused_before_anything_runs(tmp_path, args, message):
    """A parent that is a regular file, or a folder no one may create files in (/proc: not even
    root): exit 2, one line and a hint, before the program runs; it used to be a traceback (exit 1)
    after the run."""
    file = tmp_path / "report.json"
    file.write_text("mine")
    args = [a.format(file=file) for a in args]
    result = run_cli(*args, "--device", "cpu", "--", sys.executable, str(_marker_program(tmp_path)))
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert message.format(file=file) in " ".join(result.stderr.split())
    assert "Pick" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "ran").exists() and file.read_text() == "mine"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder: permission bits do not stop it")
def test_a_read_only_folder_is_refused_before_anything_runs(tmp_path):
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        result = run_cli("diagnose", "-o", str(folder / "r.json"), "--", sys.executable, str(_marker_program(tmp_path)))
    finally:
        folder.chmod(0o700)
    assert result.returncode == 2 and f"--output {folder / 'r.json'} cannot be written" in result.stderr
    assert not (tmp_path / "ran").exists() and "Traceback" not in result.stderr


# --- 3. special targets: stdout, a symbolic link, a FIFO ----------------------------------------


@pytest.mark.parametrize("target", [("-o", "-"), ("-o", "/dev/fd/1"), ("--format", "json")])
def test_a_report_to_stdout_is_all_that_stdout_carries(tmp_path, target):
    """`-o -` wrote a file named `-`; with stdout as the report, the table and the program's own
    output go to stderr, so `intelliperf diagnose -o - ... | jq` reads one JSON document, and so
    does `--format json`."""
    result = run_cli("diagnose", "-f", "atomicContention", *target, "--device", "cpu", "--", *SUM, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    report = Report.model_validate(json.loads(result.stdout))  # stdout is the report, whole
    assert report.selected == "contended_sum_kernel"
    assert "contended_sum on cpu" in result.stderr  # the program's own stdout, moved aside
    assert "Bottleneck" in result.stderr  # the table, moved aside
    assert list(tmp_path.iterdir()) == []  # no file named `-` (or anything else)


def test_markdown_to_stdout_and_two_reports_there_refused(tmp_path):
    result = run_cli("diagnose", "--markdown", "-", "--device", "cpu", "--", *SUM, cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.startswith("# intelliperf diagnosis"), result.stderr[-2000:]
    both = run_cli("diagnose", "-o", "-", "--sarif", "-", "--", sys.executable, str(_marker_program(tmp_path)))
    assert both.returncode == 2 and "--output and --sarif name stdout, which takes one report" in both.stderr
    json_too = run_cli(
        "diagnose", "--format", "json", "--markdown", "-", "--", sys.executable, str(_marker_program(tmp_path))
    )
    assert json_too.returncode == 2 and "--format json and --markdown both name stdout" in json_too.stderr
    assert not (tmp_path / "ran").exists()


def test_a_symbolic_link_is_written_through_and_survives(tmp_path):
    """The report used to be renamed over the link, which became a regular file."""
    real = tmp_path / "kept" / "report.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    sarif_real, sarif_link = tmp_path / "kept" / "findings.sarif", tmp_path / "findings.sarif"
    sarif_link.symlink_to(sarif_real)  # dangling: the file it names is created
    result = run_cli(
        "diagnose", "-f", "atomicContention", "-o", str(link), "--sarif", str(sarif_link), "--device", "cpu", "--", *SUM
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert link.is_symlink() and os.readlink(link) == str(real) and sarif_link.is_symlink()
    assert json.loads(real.read_text())["selected"] == "contended_sum_kernel"
    assert json.loads(sarif_real.read_text())["version"] == "2.1.0"
    assert sorted(p.name for p in real.parent.iterdir()) == ["findings.sarif", "report.json"]  # no .tmp left


def test_a_fifo_is_written_into_not_replaced(tmp_path):
    """A FIFO (a named pipe, a process substitution) used to be replaced by a regular file, and its
    reader never got a byte."""
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = run_cli("diagnose", "-f", "atomicContention", "-o", str(fifo), "--device", "cpu", "--", *SUM)
    reader.join(timeout=30)
    assert result.returncode == 0, result.stderr[-3000:]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still a FIFO
    assert got and json.loads(got[0])["selected"] == "contended_sum_kernel"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.fifo"]


# --- 4. Ctrl-C --------------------------------------------------------------------------------------


def _interrupt(args: list[str], *, after: str, started: Path | None = None, group: bool = False):
    """`intelliperf ARGS`, sent SIGINT once its stderr shows a line containing `after` (and the file
    `started` exists: the program is running); the finished process and the seconds it took to end.
    `group`: to its whole process group, as a terminal's Ctrl-C is (the program it runs gets it too)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "intelliperf", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=group,
    )
    assert process.stderr is not None
    seen = []
    for line in process.stderr:
        seen.append(line)
        if after in line:
            break
    deadline = time.monotonic() + 60
    while started is not None and not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if group:
        os.killpg(process.pid, signal.SIGINT)
    else:
        process.send_signal(signal.SIGINT)
    sent = time.monotonic()
    out, rest = process.communicate(timeout=120)
    return subprocess.CompletedProcess(args, process.returncode, out, "".join(seen) + rest), time.monotonic() - sent


def _sleeper(tmp_path: Path) -> Path:
    """A program that writes its pid, then waits: interrupted while it runs."""
    program = tmp_path / "sleeper.py"
    program.write_text(
        f"import os, time\nopen({str(tmp_path / 'pid')!r}, 'w').write(str(os.getpid()))\ntime.sleep(120)\n"
    )
    return program


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize("group", [False, True], ids=["to-intelliperf", "to-the-terminal-group"])
def test_ctrl_c_in_diagnose_says_one_line_and_exits_130(tmp_path, group):
    """It exited 130 without a word (typer's silent exit), or with a traceback; the program stops too.
    A terminal's Ctrl-C reaches the program as well: its own traceback is not shown either."""
    out = tmp_path / "report.json"
    done, took = _interrupt(
        ["diagnose", "-o", str(out), "--device", "cpu", "--", sys.executable, str(_sleeper(tmp_path))],
        after="profiling",
        started=tmp_path / "pid",
        group=group,
    )
    assert done.returncode == 130, done.stderr
    said = [line for line in done.stderr.splitlines() if "interrupted" in line]
    assert said == ["intelliperf: interrupted: no report was written"], done.stderr
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    assert not out.exists() and took < 30
    pid = int((tmp_path / "pid").read_text())
    assert _gone(pid), "the interrupted program survived"


def test_ctrl_c_early_in_optimize_does_not_point_to_a_missing_report(tmp_path):
    """It said `the attempts so far are in OUT/report.json`, a file that did not exist."""
    out_dir = tmp_path / "out"
    done, _ = _interrupt(
        ["optimize", "--out-dir", str(out_dir), "--device", "cpu", "--", sys.executable, str(_sleeper(tmp_path))],
        after="profiling",
        started=tmp_path / "pid",
    )
    assert done.returncode == 130, done.stderr
    assert "intelliperf: interrupted: no report was written" in done.stderr
    assert "report.json" not in done.stderr and not (out_dir / "report.json").exists()
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("group", [False, True], ids=["to-intelliperf", "to-the-terminal-group"])
def test_ctrl_c_during_the_attempts_names_the_report_it_wrote(tmp_path, group):
    out_dir = tmp_path / "out"
    done, _ = _interrupt(
        ["optimize", "--out-dir", str(out_dir), "--device", "cpu", "--", *SUM],
        after="capturing the reference",
        group=group,
    )
    assert done.returncode == 130, done.stderr[-3000:]
    (said,) = [line for line in done.stderr.splitlines() if "interrupted" in line]
    assert said == f"intelliperf: interrupted: the attempts so far are in {out_dir / 'report.json'}"
    report = Report.model_validate_json((out_dir / "report.json").read_text())
    assert report.optimization is not None and report.optimization.status == "interrupted"
    assert "Traceback" not in done.stderr


# --- 5. the model endpoint, checked before the profile ---------------------------------------------


def test_an_unreachable_model_endpoint_fails_in_seconds_before_the_profile(tmp_path):
    """It failed only after the profile and the reference capture, and after silent retries."""
    started = time.monotonic()
    result = run_cli(
        "optimize",
        "--rewriter",
        "llm",
        "--model",
        "openai/some-model",
        "--api-base",
        f"http://127.0.0.1:{_closed_port()}/v1",
        "--out-dir",
        str(tmp_path / "out"),
        "--",
        sys.executable,
        str(_marker_program(tmp_path)),
    )
    took = time.monotonic() - started
    assert result.returncode == 5, result.stderr  # errors.ModelError: the model endpoint
    assert "cannot reach the model endpoint http://127.0.0.1:" in result.stderr and "--api-base" in result.stderr
    assert "Traceback" not in result.stderr and "profiling" not in result.stderr
    assert not (tmp_path / "ran").exists() and not (tmp_path / "out").exists()
    assert took < 20, took


# --- the conventions of the tools users know ------------------------------------------------------


def test_dash_h_is_help_on_the_tool_and_on_every_command():
    for args in (["-h"], ["diagnose", "-h"], ["optimize", "-h"], ["eval", "-h"]):
        done = run_cli(*args)
        assert done.returncode == 0 and "Usage: intelliperf" in done.stdout, args


def test_shell_completion_is_printed_for_bash():
    done = run_cli("--show-completion", "bash")
    assert done.returncode == 0 and "_intelliperf_completion" in done.stdout and "complete " in done.stdout


def test_quiet_prints_no_progress_and_verbose_times_it(tmp_path):
    quiet = run_cli("-q", "diagnose", "--device", "cpu", "--output", str(tmp_path / "q.json"), "--", *SUM)
    assert quiet.returncode == 0 and "intelliperf:" not in quiet.stderr
    assert "contended_sum_kernel" in quiet.stdout  # results still come
    loud = run_cli("-v", "diagnose", "--device", "cpu", "--output", str(tmp_path / "v.json"), "--", *SUM)
    assert loud.returncode == 0 and "intelliperf: [" in loud.stderr and " s] " in loud.stderr
    both = run_cli("-v", "-q", "diagnose", "--", *SUM)
    assert both.returncode == 2 and "--verbose and --quiet contradict each other" in both.stderr


def test_diagnose_only_names_the_bottlenecks_found_not_itself():
    done = run_cli("diagnose", "-f", "diagnoseOnly", "--device", "cpu", "--", *SUM)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Bottlenecks found: atomicContention" in done.stdout and "diagnoseOnly bottleneck" not in done.stdout


def test_a_script_without_a_shebang_or_the_execute_bit_is_told_how_to_run(tmp_path):
    script = tmp_path / "job.py"
    script.write_text("print('hi')\n")
    not_executable = run_cli("diagnose", "--", str(script))
    assert not_executable.returncode == 2 and "the program is not executable" in not_executable.stderr
    assert f"-- python {script}" in not_executable.stderr
    script.chmod(0o755)
    no_shebang = run_cli("diagnose", "--", str(script))
    assert no_shebang.returncode == 2 and "has no #! line" in no_shebang.stderr
    assert "#!/usr/bin/env python3" in no_shebang.stderr and "check the spelling" not in no_shebang.stderr.lower()


def test_an_output_folder_intelliperf_creates_ignores_itself_in_git(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    done = run_cli("diagnose", "--device", "cpu", "-o", "reports/report.json", "--", *SUM, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "reports" / "report.json").is_file() and (tmp_path / "reports" / ".gitignore").is_file()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=tmp_path, capture_output=True, text=True)
    assert status.stdout == ""  # nothing for the user to commit by mistake
    mine = tmp_path / "mine"
    mine.mkdir()
    assert run_cli("diagnose", "--device", "cpu", "-o", "mine/r.json", "--", *SUM, cwd=tmp_path).returncode == 0
    assert not (mine / ".gitignore").exists()  # a folder the user made stays the user's


def test_regions_on_the_cpu_says_no_timeline_was_drawn(tmp_path):
    done = run_cli("regions", "--device", "cpu", "--out-dir", str(tmp_path / "r"), "--", *SUM)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "no timeline (region timers run on a GPU only)" in done.stderr and "timeline written" not in done.stderr
    assert "*" in (tmp_path / "r" / ".gitignore").read_text().splitlines()  # the folder it made ignores itself


def test_pyproject_sets_defaults_that_flags_override_and_a_wrong_key_is_named(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.intelliperf]\ndevice = "cpu"\n[tool.intelliperf.diagnose]\nformula = "memoryAccess"\ntop-n = 1\n'
    )
    configured = run_cli("diagnose", "--", *SUM, cwd=tmp_path)
    assert configured.returncode == 0, configured.stderr[-2000:]
    assert "No memoryAccess bottleneck" in configured.stdout  # the project's formula, on the CPU
    flagged = run_cli("diagnose", "-f", "atomicContention", "--", *SUM, cwd=tmp_path)
    assert "Bottleneck (atomicContention) found first in contended_sum_kernel" in flagged.stdout  # the flag wins
    (tmp_path / "pyproject.toml").write_text("[tool.intelliperf.optimize]\nmax-atempts = 3\n")
    typo = run_cli("optimize", "--", *SUM, cwd=tmp_path)
    assert typo.returncode == 2 and "`intelliperf optimize` takes no option `max_atempts`" in typo.stderr
    assert "[tool.intelliperf.optimize]" in typo.stderr and str(tmp_path / "pyproject.toml") in typo.stderr
    assert not (tmp_path / "intelliperf-out").exists()  # refused before anything ran
    # a value the option does not take is named with the file too (click's message named only the option)
    for table, line, said in (
        ("[tool.intelliperf.optimize]", 'max-attempts = "three"', "`max_attempts = 'three'`"),
        ("[tool.intelliperf]", 'device = "tpu"', "`device = 'tpu'`"),
    ):
        (tmp_path / "pyproject.toml").write_text(f"{table}\n{line}\n")
        wrong = run_cli("optimize", "--", *SUM, cwd=tmp_path)
        assert wrong.returncode == 2 and said in wrong.stderr and table in wrong.stderr, wrong.stderr
        assert str(tmp_path / "pyproject.toml") in " ".join(wrong.stderr.split()) and "Traceback" not in wrong.stderr
    assert not (tmp_path / "intelliperf-out").exists()


def test_the_action_leaves_unset_inputs_to_the_project_and_the_cli(monkeypatch):
    from intelliperf.cli.action import optimize_args

    monkeypatch.setenv("INPUT_COMMAND", "python train.py")
    for name in ("FORMULA", "TOP_N", "REWRITER", "MAX_ATTEMPTS", "DEVICE", "COUNTERS"):
        monkeypatch.setenv(f"INPUT_{name}", "")
    args = optimize_args()
    assert not {"--formula", "--top-n", "--rewriter", "--max-attempts", "--device", "--counters"} & set(args)
    monkeypatch.setenv("INPUT_FORMULA", "memoryLocality")
    assert optimize_args()[optimize_args().index("--formula") + 1] == "memoryLocality"


def test_every_command_has_two_examples_and_every_option_a_help_panel():
    from intelliperf.cli.help_format import EXAMPLES, click_command

    group = click_command()
    for name in ("diagnose", "optimize", "regions", "eval", "tune", "formulas", "rewriters"):
        done = run_cli(name, "-h")
        shown = [line.strip() for line in done.stdout.splitlines() if line.strip().startswith("intelliperf ")]
        assert shown == EXAMPLES[name] and len(shown) == 2, (name, done.stdout[-600:])
        ungrouped = [p.opts for p in group.commands[name].params if getattr(p, "rich_help_panel", None) == "Other"]
        assert not ungrouped, (name, ungrouped)


def test_a_programs_own_ctrl_c_traceback_is_not_echoed_but_other_tracebacks_are(tmp_path):
    """What the program prints reaches the user, except a traceback ending in KeyboardInterrupt (the
    program got the terminal's Ctrl-C; intelliperf says it was interrupted); the tail keeps all of it."""
    from intelliperf.workload.runner import Running

    program = tmp_path / "two.py"
    program.write_text(
        "import sys, traceback\n"
        "print('before', file=sys.stderr, flush=True)\n"
        "try:\n    raise KeyboardInterrupt\nexcept KeyboardInterrupt:\n    traceback.print_exc()\n"
        "sys.stderr.flush()\n"
        "raise ValueError('the real failure')\n"
    )
    sink = io.StringIO()
    result = Running([sys.executable, str(program)], cwd=str(tmp_path), env=dict(os.environ), echo=sink).wait(60)
    shown = sink.getvalue()
    assert result.returncode == 1 and shown.startswith("before\n")
    assert "KeyboardInterrupt" not in shown and shown.count("Traceback (most recent call last):") == 1
    assert shown.rstrip().endswith("ValueError: the real failure")
    assert "KeyboardInterrupt" in result.tail and result.tail[-1] == "ValueError: the real failure"


def _in_a_terminal(args: list[str], columns: int) -> str:
    """`intelliperf ARGS` in a pseudo-terminal `columns` wide, as a user's shell would run it."""
    import fcntl
    import pty
    import struct
    import termios

    pid, fd = pty.fork()
    if pid == 0:  # the child: its stdout is the terminal
        os.execvpe(sys.executable, [sys.executable, "-m", "intelliperf", *args], {**os.environ, "TERM": "xterm"})
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.waitpid(pid, 0)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode(errors="replace"))


def test_an_80_column_terminal_shows_the_names_a_user_must_type_whole():
    listed = _in_a_terminal(["formulas"], 80)
    for name in ("atomicContention", "memoryAccess", "bankConflict", "registerPressure", "laneUtilization"):
        assert name in listed, listed[-2000:]  # not cut to "laneUtiliz…" or wrapped over two lines
    rewriters = _in_a_terminal(["rewriters"], 80)
    for name in ("recipes", "search", "llm", "replay"):
        assert re.search(rf"\b{name}\b", rewriters), rewriters[-2000:]


def test_ctrl_c_in_regions_says_one_line_and_exits_130(tmp_path):
    done, took = _interrupt(
        ["regions", "--out-dir", str(tmp_path / "r"), "--device", "cpu", "--", sys.executable, str(_sleeper(tmp_path))],
        after="profiling",
        started=tmp_path / "pid",
        group=True,
    )
    assert done.returncode == 130, done.stderr
    assert [line for line in done.stderr.splitlines() if "interrupted" in line] == [
        "intelliperf: interrupted: no report was written"
    ], done.stderr
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr and took < 30
    assert _gone(int((tmp_path / "pid").read_text())), "the interrupted program survived"


# --- programs that never end ------------------------------------------------------------------------


def test_diagnose_timeout_diagnoses_what_a_never_ending_program_launched(tmp_path):
    """`while True: kernel[...]` under --timeout: the launches recorded until then are diagnosed and the
    report says the program was stopped (they were discarded, exit 3)."""
    started = time.monotonic()
    result = run_cli(
        "diagnose", "--timeout", "12", "--device", "cpu", "-f", "atomicContention", "-o", str(tmp_path / "r.json"),
        "--", sys.executable, str(PROGRAMS / "never_ends.py"),
    )  # fmt: skip
    took = time.monotonic() - started
    assert result.returncode == 0, result.stderr[-3000:]
    report = Report.model_validate_json((tmp_path / "r.json").read_text())
    assert report.run.launches >= 1 and report.selected == "forever_kernel"
    assert report.notes[0].startswith("the program was stopped at its time limit (12 s): the diagnosis is of the ")
    assert "stopped at its time limit" in " ".join(result.stdout.split())
    assert "Traceback" not in result.stderr and "KeyboardInterrupt" not in result.stderr
    assert took < 12 + 40, took  # the stop's grace and the diagnosis, not a run to the end


def test_optimize_time_budget_bounds_the_profiling_run(tmp_path):
    """--time-budget stops the profile too; the diagnosis is written, and no attempt starts on a run that
    a validation could not finish (exit 3, the report named)."""
    program = tmp_path / "never_ends.py"
    program.write_text((PROGRAMS / "never_ends.py").read_text())
    started = time.monotonic()
    result = run_cli(
        "optimize", "--time-budget", "10", "--device", "cpu", "-f", "atomicContention", "--out-dir", "out",
        "--", sys.executable, str(program),
        cwd=tmp_path,
    )  # fmt: skip
    took = time.monotonic() - started
    assert result.returncode == 3, result.stderr[-3000:]
    message = " ".join(result.stderr.split())
    assert "stopped at its time limit (10 s) before it ended: the diagnosis is in" in message
    assert f"{tmp_path / 'out' / 'report.json'}" in message and "Traceback" not in result.stderr
    report = Report.model_validate_json((tmp_path / "out" / "report.json").read_text())
    assert report.selected == "forever_kernel" and report.optimization is None
    assert any("no attempt" in n for n in report.notes)
    assert took < 10 + 40, took


# --- --in-place outside git, optimize --format json ------------------------------------------------


def test_in_place_outside_git_keeps_the_originals_and_format_json_is_the_report(tmp_path):
    """Outside a git repository --in-place overwrote the kernel's file with no way back; the original is
    now kept under the out-dir, said before the write. `--format json`: the report on stdout, as diagnose's."""
    program = tmp_path / "contended_sum.py"
    original = (EXAMPLES / "contended_sum.py").read_text()
    program.write_text(original)
    (tmp_path / "_harness.py").write_text((EXAMPLES / "_harness.py").read_text())
    result = run_cli(
        "optimize", "--in-place", "--format", "json", "--device", "cpu", "-f", "atomicContention",
        "--max-attempts", "1", "--", sys.executable, str(program), *SMALL,
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    report = Report.model_validate_json(result.stdout)  # stdout carries the report only
    kept = tmp_path / "intelliperf-out" / "originals" / "contended_sum.py"
    assert report.optimization is not None and report.optimization.applied
    assert kept.read_text() == original and program.read_text() != original
    said = " ".join(result.stderr.split())
    assert f"is not in a git repository: the originals of contended_sum.py are kept in {kept.parent}" in said
    assert said.index("the originals of") < said.index("applied to contended_sum.py")  # said before it wrote
    assert any(f"kept in {kept.parent}" in n for n in report.optimization.notes)
