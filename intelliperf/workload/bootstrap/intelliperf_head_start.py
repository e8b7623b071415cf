"""A program's Python started ahead of its run (intelliperf.workload.head_start, the parent's side).

Started in the program's sandbox with the program's environment less the run's INTELLIPERF_*
variables (the sitecustomize in this folder has run: seeds set, no recorder yet), it imports torch
and Triton, which is most of a Python program's start-up, then waits for its run on stdin: the
path of a JSON file with the run's argv (`python script.py ARGS`), working folder and whole
environment. It then becomes that run: the environment replaced, stdin from /dev/null, the
script's folder first on sys.path, the bootstrap's per-run parts (seeds again, the recorder),
and the script run as a fresh __main__. Its exit status is the script's. Before the script starts, a
failure exits with FAILED, which tells the parent to run the program the usual way instead.
End of input without a run: nothing to do.

Imports only the standard library before the run (torch and Triton are the point).
"""

import json
import os
import sys

FAILED = 87  # the run never started: the parent runs the program in a fresh Python instead


def _become(go: dict) -> str:
    """This process as `python script.py ARGS` would have started it; the script's absolute path."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # the run line came through stdin; the program reads nothing from us
    os.close(null)
    env = dict(go["env"])
    if "PWD" in os.environ:  # set by what started us (bwrap --chdir) for our folder: it would have been the run's
        env.setdefault("PWD", go["cwd"])
    os.environ.clear()
    os.environ.update(env)
    os.chdir(go["cwd"])
    sys.argv = list(go["argv"][1:])
    sys.path[0] = os.path.dirname(os.path.realpath(sys.argv[0]))  # what Python puts first for a script
    return os.path.abspath(sys.argv[0])


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


def main() -> None:
    import torch  # noqa: F401  (the start-up this process takes off the program's run)
    import triton  # noqa: F401

    line = sys.stdin.readline().strip()
    if not line:
        sys.exit(0)
    try:
        with open(line) as f:
            script = _become(json.load(f))
        import sitecustomize  # this folder's: the variables of the run are set now

        sitecustomize.per_run()
    except Exception as exc:  # noqa: BLE001  (anything before the script: the parent runs it afresh)
        print(f"intelliperf: the program's Python started ahead could not take its run: {exc}", file=sys.stderr)
        sys.exit(FAILED)
    _run_as_main(script)


if __name__ == "__main__":
    main()
