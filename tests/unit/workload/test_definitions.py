"""What a replay imports of a kernel's file: its definitions, not the script's work (workload/definitions.py)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO

from intelliperf.validators.workers.replay import load_module
from intelliperf.workload.definitions import definitions_only

SCRIPT = textwrap.dedent(
    '''
    """A script: its kernel, a launcher, the settings they read, and the work it does when run."""
    import argparse
    import os
    import sys

    import torch
    import triton
    import triton.language as tl

    try:
        import numpy as np  # an optional dependency the launcher reads: kept, whichever branch binds it
    except ImportError:
        np = None
    if torch.cuda.is_available():  # binds what the launcher reads: kept
        DEVICE = "cuda"
    else:
        DEVICE = "cpu"
    os.environ.setdefault("SCRIPT_FLAG", "1")  # configuration: kept
    torch.backends.cuda.matmul.allow_tf32 = False  # configuration: kept
    SCALE = 2.0  # read by the kernel's launcher: kept
    CONFIGS = []
    for block in (64, 128):  # builds what the decorator reads: kept
        CONFIGS.append(triton.Config({"BLOCK": block}))
    REGISTRY = {}
    WIDTH = 4  # read by a class's body, which runs when the class is defined: kept


    class Settings:
        width = WIDTH


    @triton.autotune(configs=CONFIGS, key=["n"])
    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * factor, mask=offs < n)


    REGISTRY["scale"] = scale_kernel  # changes a name nothing kept reads: dropped


    def launch(x):
        assert np is not None and DEVICE in ("cuda", "cpu")
        out = torch.empty_like(x)
        scale_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, out, x.numel(), SCALE)
        return out


    def main():  # defined, but nothing the replay needs calls it: what it reads is not run
        x = torch.randn(args.n)
        for _ in range(3):
            out = launch(x)
        torch.testing.assert_close(out, x * SCALE)
        print("ran", file=sys.stderr)


    parser = argparse.ArgumentParser()
    parser.add_argument("n", type=int)
    args = parser.parse_args()  # the replay worker's argv is not the program's: dropped
    main()
    '''
)


def _kept_lines(source: str, needs=("scale_kernel", "launch")) -> list[str]:
    lines = source.splitlines()
    return [lines[stmt.lineno - 1].strip() for stmt in definitions_only(source, "s.py", needs).body]


def test_the_definitions_and_what_they_read_are_kept_and_the_work_is_not():
    kept = _kept_lines(SCRIPT)
    assert "SCALE = 2.0  # read by the kernel's launcher: kept" in kept
    assert "for block in (64, 128):  # builds what the decorator reads: kept" in kept
    assert 'os.environ.setdefault("SCRIPT_FLAG", "1")  # configuration: kept' in kept
    assert "torch.backends.cuda.matmul.allow_tf32 = False  # configuration: kept" in kept
    assert "def launch(x):" in kept and "CONFIGS = []" in kept
    assert "try:" in kept and "if torch.cuda.is_available():  # binds what the launcher reads: kept" in kept
    assert "def main():  # defined, but nothing the replay needs calls it: what it reads is not run" in kept
    for work in ("parser = argparse.ArgumentParser()", "args = parser.parse_args()", "main()"):
        assert work not in kept
    assert not any(line.startswith(("REGISTRY[", "parser.")) for line in kept), kept
    assert "REGISTRY = {}" not in kept
    assert "WIDTH = 4  # read by a class's body, which runs when the class is defined: kept" in kept
    # a name the replay looks up is kept with what binds it, though no definition reads it
    assert "REGISTRY = {}" in _kept_lines(SCRIPT, needs=("scale_kernel", "REGISTRY"))
    # what the launcher reads is kept only where the replay looks the launcher up
    assert "SCALE = 2.0  # read by the kernel's launcher: kept" not in _kept_lines(SCRIPT, needs=("scale_kernel",))


@pytest.mark.slow
def test_a_script_is_imported_for_its_kernel_without_running_its_work(tmp_path):
    """load_module in a fresh process with a replay worker's argv: the script's argument parsing would
    exit, its launches would run; imported for its definitions, neither happens, and the kernel, its
    autotune configs (built by a loop) and the launcher's settings are all there and run."""
    (tmp_path / "script.py").write_text(SCRIPT)
    probe = textwrap.dedent(
        f"""
        import sys
        import torch
        from triton.runtime import autotuner
        from intelliperf.profiling.inside.window import untimed_autotune
        untimed_autotune(autotuner)  # as a replay worker does under the interpreter
        sys.argv = ["replay", "serve", "run"]
        from intelliperf.validators.workers.replay import load_module
        module = load_module({str(tmp_path / "script.py")!r}, "_side", needs=("scale_kernel", "launch"))
        assert not hasattr(module, "args") and hasattr(module, "main"), "the script's work ran"
        assert [c.kwargs["BLOCK"] for c in module.scale_kernel.configs] == [64, 128]
        x = torch.arange(300, dtype=torch.float32)
        assert torch.equal(module.launch(x), x * 2.0)
        print("definitions only")
        """
    )
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "definitions only" in done.stdout and "ran" not in done.stderr


def test_where_the_definitions_alone_do_not_import_the_whole_file_does(tmp_path, monkeypatch):
    """A name bound in a way the slice cannot see (`globals()[...]`): the whole file is imported instead."""
    (tmp_path / "odd.py").write_text("globals()['made'] = 41\nRAN = True\n")
    module = load_module(str(tmp_path / "odd.py"), "_odd_side", needs=("made",))
    assert module.made == 41 and module.RAN
    monkeypatch.delitem(sys.modules, "_odd_side")


@pytest.mark.parametrize(
    "path",
    sorted((REPO / "benchmarks" / "corpus").glob("*.py")) + sorted((REPO / "examples").rglob("*.py")),
    ids=lambda p: p.name,
)
def test_every_bundled_program_keeps_its_kernels_and_launchers(path):
    """Programs nobody here wrote (the corpus) and the examples: every definition is kept, the slice
    compiles, and nothing at module level that launches a kernel (`name[grid](...)`) survives."""
    source = path.read_text()
    module = definitions_only(source, str(path))
    compile(module, str(path), "exec")
    defined = {s.name for s in ast.parse(source).body if isinstance(s, (ast.FunctionDef, ast.ClassDef))}
    assert defined <= {s.name for s in module.body if isinstance(s, (ast.FunctionDef, ast.ClassDef))}
    for stmt in module.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        launches = [n for n in ast.walk(stmt) if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript)]
        assert not launches, f"{path.name}:{stmt.lineno} launches at import"
