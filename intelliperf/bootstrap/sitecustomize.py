"""Loaded by every Python process of the user's command (this folder is put on PYTHONPATH).

It only installs an import watcher: the recorder is patched into Triton when Triton's JIT,
interpreter or compiler module is first imported, so processes that never use Triton pay nothing.
With INTELLIPERF_SEED (validation runs), Python's, NumPy's and torch's generators are seeded as
they are imported, so every run of the program draws the same "random" inputs. Under the
interpreter, autotuned kernels run their first config (there is no device timer). With
INTELLIPERF_WINDOW (the ncu and region-timer passes), the program stops once the top kernels
have had the launches the pass needs (profiling/inside/window.py); with INTELLIPERF_GPU_TURN it waits, once
torch or Triton is imported, for its turn on the GPU, which a pass beside it may hold. Triton 3.9's notice that
TRITON_DEFAULT_FP_FUSION is unset is not repeated in every run (the numerics stay Triton's
default). Any sitecustomize the environment already had still runs afterwards. A program's Python
started ahead of its run (intelliperf_head_start.py) runs `per_run` again once its run's
INTELLIPERF_* variables are set.
"""

import importlib.machinery
import importlib.util
import os
import sys

_WATCHED = {  # module: the function of profiling.inside.recorder (or .window) that patches it
    "triton.runtime.jit": "install_jit",
    "triton.runtime.interpreter": "install_interpreter",
    "triton.compiler.compiler": "install_compiler",
    "triton.runtime.autotuner": "install_autotuner",
}


def _note_error(out_dir, exc):
    try:
        with open(os.path.join(out_dir, f"error-{os.getpid()}.txt"), "a") as f:
            f.write(f"{type(exc).__name__}: {exc}\n")
    except OSError:
        pass


def _profiling(part):
    """intelliperf.profiling.inside.<part>, from INTELLIPERF_HOME when the program's Python is not the one
    intelliperf is installed in."""
    try:
        import intelliperf.profiling  # noqa: F401
    except ImportError:
        sys.path.append(os.environ["INTELLIPERF_HOME"])
    return importlib.import_module(f"intelliperf.profiling.inside.{part}")


def _patch(name, module, out_dir, part="recorder", function=None):
    try:
        patcher = _profiling(part)
        if part == "recorder" and os.environ.get("INTELLIPERF_CAPTURE"):  # a validation run
            from intelliperf.validators.inside.capture import from_env

            patcher.attach_capture(from_env)
        getattr(patcher, function or _WATCHED[name])(module)
    except Exception as exc:  # never break the user's program; the parent reports it
        _note_error(out_dir, exc)


class _Watcher:
    """Calls each of hooks[name] (module) right after `name` is first imported. One watcher serves
    every part of this bootstrap: two would each find the module through the other, forever."""

    def __init__(self):
        self.hooks = {}

    def find_spec(self, name, path=None, target=None):
        hooks = self.hooks.get(name)
        if not hooks:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                break
        else:
            return None
        exec_module = spec.loader.exec_module

        def exec_and_patch(module):
            exec_module(module)
            for hook in hooks:
                hook(module)

        spec.loader.exec_module = exec_and_patch
        return spec


_WATCHER = _Watcher()


def _watch(hooks):
    """Run hooks[name](module) when `name` is imported, or now if it already is (an earlier part of this
    bootstrap, Proton's session, may have imported Triton already)."""
    if _WATCHER not in sys.meta_path:
        sys.meta_path.insert(0, _WATCHER)
    for name, hook in hooks.items():
        _WATCHER.hooks.setdefault(name, []).append(hook)
        if name in sys.modules:
            hook(sys.modules[name])


def _chain_next_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    ours = sys.modules.pop("sitecustomize", None)
    try:
        path = [p for p in sys.path if os.path.abspath(p or ".") != here]
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
    finally:
        if ours is not None:
            sys.modules["sitecustomize"] = ours


def _start_region_timers():
    """The region-timer pass: a Proton instrumentation session for the whole program. Scopes in
    plain @triton.jit code count only after enable_semantic("triton"); the trace (or with
    INTELLIPERF_REGIONS_DATA=tree its per-scope totals) is written at exit."""
    prefix = os.environ.get("INTELLIPERF_REGIONS")
    if not prefix:
        return
    try:
        import atexit

        import triton.profiler as proton
        import triton.profiler.language as pl

        pl.enable_semantic("triton")
        proton.start(
            prefix,
            backend="instrumentation",
            data=os.environ.get("INTELLIPERF_REGIONS_DATA") or "trace",
            mode=os.environ.get("INTELLIPERF_REGIONS_MODE") or None,
        )
        atexit.register(proton.finalize)
    except Exception as exc:  # the parent finds no trace and reports this
        _note_error(os.path.dirname(prefix), exc)


def _untimed_autotune():
    """Under the interpreter autotuned kernels run their first config (profiling.inside.window.untimed_autotune)
    and jit helpers patch triton.language once a launch (profiling.inside.helper_calls)."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        return

    def untimed(module):
        out_dir = os.environ.get("INTELLIPERF_RECORD_DIR") or os.environ.get("TMPDIR") or "/tmp"
        _patch("triton.runtime.autotuner", module, out_dir, part="window", function="untimed_autotune")

    def helpers_patch_once(module):
        out_dir = os.environ.get("INTELLIPERF_RECORD_DIR") or os.environ.get("TMPDIR") or "/tmp"
        _patch("triton.runtime.interpreter", module, out_dir, part="helper_calls", function="patch_once_per_launch")

    _watch({"triton.runtime.autotuner": untimed, "triton.runtime.interpreter": helpers_patch_once})


def _install():
    out_dir = os.environ.get("INTELLIPERF_RECORD_DIR")
    if not out_dir or not os.path.isdir(out_dir):
        return
    try:
        open(os.path.join(out_dir, f"started-{os.getpid()}"), "w").close()
    except OSError:
        return
    _watch({name: (lambda module, name=name: _patch(name, module, out_dir)) for name in _WATCHED})
    # CUDA graphs made, captured and replayed (profiling/inside/graphs.py): what the recorder cannot time
    _watch({"torch.cuda.graphs": lambda module: _patch("torch.cuda.graphs", module, out_dir, "graphs", "install")})


def _window_config() -> dict:
    """The profiling pass's window ($INTELLIPERF_WINDOW), or {}."""
    try:
        import json

        config = json.loads(os.environ.get("INTELLIPERF_WINDOW") or "{}")
    except ValueError:
        return {}
    return config if isinstance(config, dict) else {}


def _window_dir():
    """The folder of the profiling pass's window, or None."""
    return _window_config().get("dir")


def _open_window():
    """A profiling pass (ncu, region timers): count the top kernels' launches, stop after the chosen ones."""
    out_dir = _window_dir()
    if not out_dir:
        return
    _watch({name: (lambda module, name=name: _patch(name, module, out_dir, "window")) for name in _WATCHED})


def _take_gpu_turn():
    """Two profiling passes side by side: once torch or Triton is imported, wait until the other pass is
    done with the GPU (profiling/inside/window.py)."""
    out_dir = _window_dir()
    if not os.environ.get("INTELLIPERF_GPU_TURN") or not out_dir or _window_config().get("turn") == "launch":
        return  # (at its first launch, the window takes it)

    def take(module):
        try:
            _profiling("window").take_gpu_turn(module)
        except Exception as exc:  # the passes then share the GPU as two programs would; the parent says so
            _note_error(out_dir, exc)

    _watch({"torch": take, "triton": take})


def _watch_namespaces():
    """A validation run: what the capture reads results through is snapshotted as torch, Triton and numpy
    are imported, so whatever the program's code replaces of them later is named (profiling.inside.untouched)."""
    if not os.environ.get("INTELLIPERF_CAPTURE"):
        return

    def snapshot(module):
        try:
            _profiling("untouched").watch_imported()
        except Exception as exc:  # never break the user's program; the capture then says no watch ran
            _note_error(os.environ["INTELLIPERF_CAPTURE_DIR"], exc)

    _watch({"torch": snapshot, "triton": snapshot, "numpy": snapshot})


def _seed_generators():
    seed = os.environ.get("INTELLIPERF_SEED")
    if not seed:
        return
    import random

    random.seed(int(seed))

    def seeder(module):
        try:
            (module.random.seed if module.__name__ == "numpy" else module.manual_seed)(int(seed))
        except Exception:  # a stripped-down build: the comparison of two reference runs will tell
            pass

    _watch({"numpy": seeder, "torch": seeder})


def _quiet_fp_fusion_notice():
    import warnings

    warnings.filterwarnings("ignore", message="TRITON_DEFAULT_FP_FUSION is unset", category=UserWarning)


def per_run():
    """The parts set by INTELLIPERF_* variables, which may differ from run to run: a Python started ahead
    of its run (intelliperf_head_start.py) calls this again once it has the run's environment."""
    _seed_generators()
    _watch_namespaces()
    _open_window()
    _start_region_timers()
    _install()
    _take_gpu_turn()


_quiet_fp_fusion_notice()
_untimed_autotune()
per_run()
_chain_next_sitecustomize()
