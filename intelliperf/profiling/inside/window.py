"""A launch window: the profiling passes look at a few chosen launches of each top kernel, then
the program stops.

The ncu and region-timer passes only need a handful of launches of the kernels they profile,
but a real program launches them thousands of times (the matmul tutorial: 2,583), and every
launch under a profiler is slow. Loaded by the bootstrap when $INTELLIPERF_WINDOW is set, the
window counts the launches of the named kernels (autotuning's benchmark launches do not count),
marks the chosen ones with an NVTX range (ncu profiles only inside it; autotuned kernels run
the config the recorded run chose, without benchmarking), and once every named
kernel has had `skip + count` launches it waits for the device, runs the program's exit
handlers (Proton writes its trace there) and ends the process with exit code 0, leaving a
marker file that says so. A kernel the program never launches leaves the program running to
its end, as without the window.

Two passes may run side by side (api: ncu and region timers): each program takes its GPU turn
(`take_gpu_turn`, an exclusive lock on the file $INTELLIPERF_GPU_TURN names) once torch or Triton is
imported, before either can start GPU work, and gives it back when the window closes (or at exit):
their start-up, Proton's trace writing and ncu's report run beside the other's GPU work, and no
kernel of one runs beside a kernel the other measures. With "turn": "launch" (the optimize loop's
region-timer run beside a candidate's validation) the turn is taken at the program's first Triton
launch instead, its kernel compiled: the start-up, the program's work before it and the compilation
run beside the holder's; a `PARKED` file says when it waits.

Only the standard library here (torch is imported lazily, only for the device wait and NVTX).
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import time
import weakref

from ... import env

ENV = env.WINDOW  # JSON: {"kernels": {name: skip}, "count": C, "nvtx": name or null, "dir": path,
#                                    "configs": {name: autotune config the recorded run chose}}
NVTX_RANGE = "intelliperf"  # ncu --nvtx --nvtx-include intelliperf/
MARKER = "stopped-{pid}.json"
PARKED = "parked-{pid}"  # written when a program waits for its turn at its first launch ("turn": "launch")
_TURN: dict = {}  # "fd": the held lock, "waited_s": how long taking it took


def settings(
    skips: dict[str, int],
    count: int,
    out_dir: str,
    nvtx: bool = False,
    configs: dict[str, dict] | None = None,
    turn_at_launch: bool = False,
) -> dict[str, str]:
    """The environment that opens a window in the program's processes: after `skips[name]` launches
    of each kernel (warm-up), `count` more are looked at, then the program stops. `configs`
    (tuned_configs): autotuned kernels run the config the recorded run chose, without benchmarking.
    `turn_at_launch`: with $INTELLIPERF_GPU_TURN, the turn is taken at the first launch, not at import."""
    return {
        ENV: json.dumps(
            {
                "kernels": skips,
                "count": count,
                "dir": str(out_dir),
                "nvtx": NVTX_RANGE if nvtx else None,
                "configs": configs or {},
                "turn": "launch" if turn_at_launch else "import",
            }
        )
    }


def parked(out_dir: str | os.PathLike) -> bool:
    """Whether a program of the window in `out_dir` waits for its turn at its first launch (or had it)."""
    from pathlib import Path

    return any(Path(out_dir).glob(PARKED.format(pid="*")))


def stopped(out_dir: str | os.PathLike) -> list[dict]:
    """The markers of the processes the window stopped (empty when the program ran to its end)."""
    from pathlib import Path

    return [json.loads(p.read_text()) for p in sorted(Path(out_dir).glob(MARKER.format(pid="*")))]


def notes(out_dir: str | os.PathLike, what: str) -> list[str]:
    """For the report: whether the pass stopped the program early, and after which launches (and
    what its bootstrap could not do there)."""
    from pathlib import Path

    out = []
    for marker in stopped(out_dir):
        seen = ", ".join(f"{name} {n}" for name, n in sorted(marker["launches"].items()))
        warm = max(marker["skip"].values(), default=0)
        waited = marker.get("gpu_wait_s")
        out.append(
            f"{what}: the program (process {marker['pid']}) was stopped once the top kernels had the launches "
            f"this pass looks at ({seen}: {marker['count']} of each"
            + (f" after {warm} warm-up" if warm else "")
            + ", autotuning's benchmark launches not counted; its exit handlers took "
            f"{marker.get('exit_handlers_s', 0):g} s"
            + (f"; it waited {waited:g} s for its GPU turn" if waited is not None else "")
            + "); --full-run lets it run to its end"
        )
        out += [f"{what}: {problem}" for problem in marker["problems"]]
    out += [f"{what}: {p.read_text().strip()}" for p in sorted(Path(out_dir).glob("error-*.txt"))]
    return out


class Window:
    def __init__(self, config: dict) -> None:
        self.skip = {name: int(n) for name, n in config["kernels"].items()}
        self.count = int(config["count"])
        self.dir = config["dir"]
        self.nvtx = config.get("nvtx")
        self.configs = config.get("configs") or {}
        self.turn_at_launch = config.get("turn") == "launch"
        self.seen = dict.fromkeys(self.skip, 0)
        self.open_range = False
        self.problems: list[str] = []

    def selected(self, name: str) -> bool:
        """Whether the next launch of `name` is one the pass looks at."""
        n = self.seen.get(name)
        return n is not None and self.skip[name] <= n < self.skip[name] + self.count and not autotuning()

    def before(self, name: str) -> None:
        if self.turn_at_launch:  # the first launch, its kernel compiled: no GPU work of ours before the turn
            self.turn_at_launch = False
            self._park()
        if self.nvtx and self.selected(name):
            self.open_range = self._nvtx("range_push", self.nvtx)

    def after(self, name: str) -> None:
        if name not in self.seen or autotuning():
            return
        if self.open_range:
            self.open_range = not self._nvtx("range_pop")
        self.seen[name] += 1
        if all(n >= self.skip[k] + self.count for k, n in self.seen.items()):
            self.stop()

    def _park(self) -> None:
        try:
            open(os.path.join(self.dir, PARKED.format(pid=os.getpid())), "w").close()
        except OSError as exc:
            self.problems.append(f"could not say it waits for its GPU turn: {exc}")
        take_gpu_turn()

    def _nvtx(self, what: str, *args) -> bool:
        try:
            import torch

            getattr(torch.cuda.nvtx, what)(*args)
            return True
        except Exception as exc:  # ncu then profiles nothing; the parent says why from the marker
            self.problems.append(f"NVTX {what} failed: {type(exc).__name__}: {exc}")
            self.nvtx = None
            return False

    def stop(self) -> None:
        """Every kernel has its launches: finish the device work, run the exit handlers, exit 0."""
        torch = sys.modules.get("torch")
        try:
            if torch is not None and torch.cuda.is_initialized():
                torch.cuda.synchronize()
        except Exception as exc:
            self.problems.append(f"device wait failed: {type(exc).__name__}: {exc}")
        give_back_gpu_turn()  # the exit handlers (Proton's trace) use no GPU: the other pass may start
        begin = time.perf_counter()
        atexit._run_exitfuncs()  # Proton's finalize (the trace), anything the program registered
        marker = {
            "pid": os.getpid(),
            "launches": dict(self.seen),
            "skip": self.skip,
            "count": self.count,
            "exit_handlers_s": round(time.perf_counter() - begin, 2),
            "problems": self.problems,
        }
        if "waited_s" in _TURN:
            marker["gpu_wait_s"] = _TURN["waited_s"]
        try:
            with open(os.path.join(self.dir, MARKER.format(pid=os.getpid())), "w") as f:
                json.dump(marker, f)
        except OSError:
            pass
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        _exit(0)


def take_gpu_turn(_module=None) -> None:
    """Wait for the GPU turn of $INTELLIPERF_GPU_TURN, if set, and hold it: the bootstrap calls this once
    torch or Triton is imported (their imports use no GPU), so a Python that never imports them (ncu
    runs its own, which loads the bootstrap too) never takes it. Only one process takes it: the variable
    is removed, so a Python the program starts cannot wait on its own parent."""
    path = os.environ.pop(env.GPU_TURN, None)
    if not path:
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    begin = time.perf_counter()
    os.lockf(fd, os.F_LOCK, 0)  # a POSIX lock: released when the process closes the file or ends
    _TURN.update(fd=fd, waited_s=round(time.perf_counter() - begin, 2))


def give_back_gpu_turn() -> None:
    fd = _TURN.pop("fd", None)
    if fd is not None:
        os.close(fd)


def _exit(code: int) -> None:
    """The C library's exit: its handlers (the CUDA driver's, a profiler's injected library) run, the
    interpreter's teardown does not (it could launch more work)."""
    try:
        import ctypes

        ctypes.CDLL(None).exit(code)
    finally:
        os._exit(code)


TUNING = [0]  # > 0 while triton.autotune benchmarks a config (Autotuner._bench runs)


def autotuning() -> bool:
    """True inside triton.autotune's benchmarking of configs: those launches are not the program's."""
    return TUNING[0] > 0


def track_tuning(autotuner_module) -> None:
    """Count Autotuner._bench calls in progress (the recorder and the window both ask)."""
    cls = autotuner_module.Autotuner
    original = cls._bench
    if hasattr(original, "__intelliperf_tuning__"):
        return

    def _bench(self, *args, **kwargs):
        TUNING[0] += 1
        try:
            return original(self, *args, **kwargs)
        finally:
            TUNING[0] -= 1

    _bench.__intelliperf_tuning__ = True  # type: ignore[attr-defined]  # a mark on the wrapper: installed once
    cls._bench = _bench


def compile_together(autotuner_module, problems: list[str] | None = None) -> None:
    """Before triton.autotune times its configs, compile them all at once on a thread pool (Triton's
    AsyncCompileMode, where Triton has it: 3.6 and 3.9 do): one after another, the compiles were most
    of a 20-config sweep's seconds on the H100 (3.6-4.5 s; 1.5-1.6 s together, benchmarks/sweep_cost.py).
    Only when the host compiles them changes: each config is then timed and launched as Triton does;
    one that fails to compile here fails again where Triton reports it, and `problems` says so. Not
    under the interpreter, nor where the autotuner keeps its results on disk (`cache_results`): a hit
    there needs only the chosen config compiled."""
    cls = autotuner_module.Autotuner
    original = cls.prune_configs
    if hasattr(original, "__intelliperf_together__"):
        return

    def prune_configs(self, *args, **kwargs):
        configs = original(self, *args, **kwargs)
        launch = args[0] if args and isinstance(args[0], dict) else kwargs.get("kwargs", {})
        if len(configs) > 1 and not getattr(self, "cache_results", False):
            failed = _compile_all(self, configs, launch)
            if failed and problems is not None and failed not in problems:
                problems.append(failed)
        return configs

    prune_configs.__intelliperf_together__ = True  # type: ignore[attr-defined]  # installed once
    prune_configs.__intelliperf_original__ = original  # type: ignore[attr-defined]  # what uninstall puts back
    cls.prune_configs = prune_configs


def _compile_all(tuner, configs: list, launch: dict) -> str | None:
    """Compile `configs` together; what went wrong, if anything did."""
    try:
        from concurrent.futures import ThreadPoolExecutor

        from triton import knobs
        from triton.runtime._async_compile import AsyncCompileMode, active_mode
    except ImportError:  # an older Triton: compiled one by one, as it always was
        return None
    workers = min(len(configs), os.cpu_count() or 1)
    if workers < 2 or knobs.runtime.interpret or active_mode.get() is not None or not tuner.nargs:
        return None
    args = list(tuner.nargs.values())
    launch = {k: v for k, v in launch.items() if k not in ("grid", "warmup")}  # the launch's own, not the kernel's
    try:
        with ThreadPoolExecutor(workers) as pool, AsyncCompileMode(pool):
            for config in configs:
                tuner.fn.warmup(*args, grid=(1,), **launch, **config.all_kwargs())
    except Exception as exc:  # noqa: BLE001  # the autotuner compiles what failed here again and reports it
        return f"autotuning: compiling its configs together failed ({type(exc).__name__}: {exc}); Triton compiled them"
    return None


def untimed_autotune(autotuner_module, run_each: bool = False, rotate: bool = False) -> None:
    """Under the interpreter an autotuner has no device timer to pick a config with (Triton raises
    "0 active drivers"): every config then measures the same, so its first config runs. Used by
    the bootstrap in the program's processes and by the replay workers. With `run_each` (a replay
    under compute-sanitizer) each config still runs once, so whichever config a run picks was
    checked: timing them, hundreds of instrumented launches each, took 84 s on the H100. With
    `rotate` (the interpreter's replays) the config picked is the next one at every `next_config()`,
    so the trials run every config, as a GPU's autotuner may pick any of them."""

    def do_bench(kernel_call, quantiles):
        if run_each:
            kernel_call()
        return [1.0, 1.0, 1.0]

    autotuner_module.Autotuner.do_bench = property(lambda self: do_bench)
    if rotate:
        bench = autotuner_module.Autotuner._bench

        def turn_bench(self, *args, config, **meta):
            _TUNERS.add(self)
            if run_each:
                bench(self, *args, config=config, **meta)
            chosen = self.configs[_CONFIG_TURN[0] % len(self.configs)] if self.configs else None
            return [1.0, 1.0, 1.0] if config is chosen else [2.0, 2.0, 2.0]

        autotuner_module.Autotuner._bench = turn_bench


_CONFIG_TURN = [0]
_TUNERS: weakref.WeakSet = weakref.WeakSet()


def next_config() -> None:
    """The next trial runs every autotuned kernel with its next config (`untimed_autotune(rotate=True)`)."""
    _CONFIG_TURN[0] += 1
    for tuner in list(_TUNERS):
        getattr(tuner, "cache", {}).clear()


def tuned_configs(profiles) -> dict[str, dict]:
    """For each autotuned kernel among `profiles` (KernelProfile), the config the program ran with:
    the signature with the most launches outside autotuning's benchmark."""
    configs = {}
    for p in profiles:
        if not any(s.tuning_launches for s in p.signatures):
            continue
        chosen = max(p.signatures, key=lambda s: s.launches - s.tuning_launches)
        configs[p.name] = {
            "num_warps": chosen.num_warps,
            "num_stages": chosen.num_stages,
            "kwargs": {a.name: a.value for a in chosen.args if a.kind == "constexpr"},
        }
    return configs


def _matches(config, want: dict) -> bool:
    if want.get("num_warps") not in (None, config.num_warps) or want.get("num_stages") not in (None, config.num_stages):
        return False
    return all(want["kwargs"].get(k, v) == v for k, v in config.kwargs.items())


def pin_configs(autotuner_module, configs: dict[str, dict]) -> None:
    """Autotuned kernels keep the config the program chose in the recorded run: a profiler pass
    then benchmarks no config (under Proton every benchmark launch would be traced)."""
    cls = autotuner_module.Autotuner
    prune, bench = cls.prune_configs, cls._bench

    def pinned(self) -> dict | None:
        return configs.get(getattr(getattr(self, "base_fn", None), "__name__", ""))

    def prune_configs(self, kwargs):
        pruned = prune(self, kwargs)
        want = pinned(self)
        kept = [c for c in pruned if _matches(c, want)] if want else []
        return kept[:1] or pruned

    def _bench(self, *args, **kwargs):  # Triton <= 3.6 benchmarks even a single config: not this one
        return [0.0, 0.0, 0.0] if pinned(self) else bench(self, *args, **kwargs)

    cls.prune_configs, cls._bench = prune_configs, _bench


_WINDOW: Window | None = None


def _window() -> Window:
    global _WINDOW
    if _WINDOW is None:
        _WINDOW = Window(json.loads(os.environ[ENV]))
    return _WINDOW


def launch_info(metadata) -> dict:
    """The plain fields of what Triton hands a launch hook (name, stream, function, ...). It is a
    LazyDict: its .get() would also run any user launch_metadata function, which we do not need."""
    if metadata is None:
        return {}
    return getattr(metadata, "data", metadata)


def _name(metadata) -> str:
    info = launch_info(metadata)
    return str(info.get("name", "")) if isinstance(info, dict) else ""


def install_jit(jit_module) -> None:
    """Compiled kernels: Triton's launch hooks see every launch (also Inductor's), before and after."""
    from triton import knobs

    window = _window()
    knobs.runtime.launch_enter_hook.add(lambda metadata: window.before(_name(metadata)))
    knobs.runtime.launch_exit_hook.add(lambda metadata: window.after(_name(metadata)))


def install_autotuner(autotuner_module) -> None:
    track_tuning(autotuner_module)
    pin_configs(autotuner_module, _window().configs)


def install_compiler(compiler_module) -> None:
    """Nothing to patch: the launch hooks see Inductor's launches too."""


def install_interpreter(interpreter_module) -> None:
    """Interpreted kernels have no launch hooks: wrap InterpretedFunction.run."""
    cls = interpreter_module.InterpretedFunction
    if hasattr(cls.run, "__intelliperf_window__"):
        return
    original, window = cls.run, _window()

    def run(fn, *args, **kwargs):
        name = fn.fn.__name__ if hasattr(fn, "fn") else getattr(fn, "__name__", "")
        if kwargs.get("warmup"):
            return original(fn, *args, **kwargs)
        window.before(name)
        result = original(fn, *args, **kwargs)
        window.after(name)
        return result

    run.__intelliperf_window__ = True  # type: ignore[attr-defined]  # a mark on the wrapper: installed once
    cls.run = run
