"""A Python started ahead of its run (intelliperf.workload.head_start is the parent's side).

Started in the sandbox its run will have, with the run's environment less the run's own
INTELLIPERF_* variables (for a program, the sitecustomize in this folder has run: seeds set, no
recorder yet), it imports torch and Triton, which is most of a Python process's start-up, then
waits for its run on stdin: the path of a JSON file with the run's argv, working folder and whole
environment. It then becomes that run, as Python would have started it:

* `python script.py ARGS` (a program): stdin from /dev/null, the script's folder first on sys.path,
  the bootstrap's per-run parts (seeds again, the recorder), the script run as a fresh __main__;
* `python -m intelliperf.MODULE ARGS` (a replay worker): the module run as __main__, stdin kept
  (the worker reads its job from it).

Its exit status is the run's. Before the run starts, a failure exits with FAILED, and the parent
runs it in a fresh Python instead. End of input without a run: nothing to do.

Imports only the standard library before the run (torch and Triton are the point).
"""

import json
import os
import sys

FAILED = 87  # the run never started: the parent runs it in a fresh Python instead


def _become(go: dict) -> list[str]:
    """This process given the run's environment, folder and arguments (after the interpreter's own). What
    set variables after the parent gave us ours stays: the tool we run under (compute-sanitizer's injection
    variables, read when CUDA starts), bwrap (PWD, which becomes the run's folder) and torch's import."""
    given = go["given"]
    env = go["env"] | {k: v for k, v in os.environ.items() if given.get(k) != v}
    if "PWD" in env and "PWD" not in go["env"]:
        env["PWD"] = go["cwd"]
    os.environ.clear()
    os.environ.update(env)
    os.chdir(go["cwd"])
    return list(go["argv"][1:])


def _as_script(args: list[str]) -> str:
    """`python script.py ARGS`: what Python sets up for a script; its absolute path."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # the run line came through stdin; the program reads nothing from us
    os.close(null)
    sys.argv = args
    sys.path[0] = os.path.dirname(os.path.realpath(args[0]))  # what Python puts first for a script
    per_run = getattr(sys.modules.get("sitecustomize"), "per_run", None)  # this folder's, on the run's PYTHONPATH
    if per_run is not None:
        per_run()  # the run's variables are set now
    return os.path.abspath(args[0])


def _run_as_main(path: str) -> None:
    """The script as Python runs one: a fresh __main__ (its __file__ absolute), a traceback of the script's
    frames only, exit status 1 after an uncaught exception."""
    import builtins
    import importlib.machinery
    import types

    main = types.ModuleType("__main__")
    main.__dict__.update(
        __file__=path,
        __cached__=None,
        __builtins__=builtins,
        __loader__=importlib.machinery.SourceFileLoader("__main__", path),
    )
    sys.modules["__main__"] = main
    try:
        with open(path, "rb") as f:
            exec(compile(f.read(), path, "exec"), main.__dict__)
    except Exception as exc:  # noqa: BLE001  (SystemExit and KeyboardInterrupt end the run as they would)
        ours = exc.__traceback__  # this frame first; a syntax error has no frame of the script's
        exc = exc.with_traceback(ours.tb_next if ours else None)  # Python prints the exception's own
        sys.excepthook(type(exc), exc, exc.__traceback__)
        sys.exit(1)


def _say_started() -> None:
    """One byte on the pipe the parent gave: its start-up is over, so it takes no CPU until its run comes (the
    parent waits for that before a timing). The variable goes: the run's environment is its own."""
    fd = os.environ.pop("INTELLIPERF_HEAD_START_READY", None)
    if fd is None:
        return
    try:
        os.write(int(fd), b"1")
        os.close(int(fd))
    except (OSError, ValueError):  # the parent gave up on it: the run still comes
        pass


def main() -> None:
    import torch  # (the start-up this process takes off its run)
    import triton  # noqa: F401

    if os.environ.get("INTELLIPERF_CUDA_AHEAD") == "1":  # a worker, with room beside the run (start_head_starts)
        try:  # the context itself: torch.cuda.init alone makes none (0.6 s more under racecheck at the run)
            torch.cuda.init()
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001  (no device: the run finds out as a fresh one would)
            pass
    _say_started()

    line = sys.stdin.readline().strip()
    if not line:
        sys.exit(0)
    try:
        with open(line) as f:
            args = _become(json.load(f))
        module = args[1] if args[0] == "-m" else None
        if module:
            sys.argv = [module, *args[2:]]  # runpy puts the module's file first
            sys.path[0] = os.getcwd()  # as `python -m` has it
        else:
            script = _as_script(args)
    except Exception as exc:  # noqa: BLE001  (anything before the run: the parent starts it afresh)
        print(f"intelliperf: the Python started ahead could not take its run: {exc}", file=sys.stderr)
        sys.exit(FAILED)
    if module:
        import runpy

        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        _run_as_main(script)


if __name__ == "__main__":
    main()
