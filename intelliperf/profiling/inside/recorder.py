"""The launch recorder: runs inside the user's program and records every Triton kernel launch.

It wraps `JITFunction.run` (and the interpreter's `InterpretedFunction.run`), which sees the
kernel, its arguments and grid, and adds itself to Triton's launch hooks
(`knobs.runtime.launch_enter_hook` / `launch_exit_hook`, HookChain `.add`), which fire right
around the driver launch: CUDA events recorded there time the kernel alone, never the
compilation or Python overhead before it. Under the interpreter there is no device, so a
launch's time is the wall time of its interpretation, and is labelled so.

Launches are aggregated in memory per kernel and per distinct signature (grid, warps, stages,
argument kinds/shapes/dtypes/strides, scalar values), which keeps the per-launch cost to a few
microseconds and the output small for kernels launched millions of times. At exit each process
writes one JSON file into $INTELLIPERF_RECORD_DIR.

Imports only the standard library up front; torch, triton and numpy when first needed.
"""

from __future__ import annotations

import atexit
import os
import random
import re
import sys
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from ... import env
from ...files import write_json
from . import graphs
from .launch_tallies import MAX_SIGNATURES, KernelTally, SignatureTally, arg_dict, arg_key, plain
from .window import TUNING, compile_together, launch_info, track_tuning


class OutputCapture(Protocol):
    """What a validation run's capture (validators/inside/capture.py) offers the recorder. The bootstrap
    attaches it (`attach_capture`), so the recorder does not import the validators."""

    notes: list[str]
    dispatches: int

    def wants(self, name: str) -> bool: ...

    def after_dispatch(self, py_fn, arg_names: list[str], bound: dict, compiled, grid, options: dict) -> None: ...

    def flush(self) -> None: ...


_MAKE_CAPTURE: list[Callable[[], OutputCapture | None]] = []  # set by attach_capture in validation runs


def attach_capture(make: Callable[[], OutputCapture | None]) -> None:
    """Validation runs: the recorder made in this process hands each dispatch to `make()`'s capture."""
    _MAKE_CAPTURE[:] = [make]


ENV_DIR, ENV_TRACE, ENV_SAMPLE = env.RECORD_DIR, env.TRACE, env.SAMPLE_PROGRAMS
ENV_TRACE_LAUNCHES, ENV_TRACE_BUDGET = env.TRACE_LAUNCHES, env.TRACE_BUDGET
ENV_STATIC, ENV_SASS = env.STATIC_TARGETS, env.SASS_LINES
ENV_TRACE_LATER = env.TRACE_LATER
TRACE_LATER_BYTES = 2 << 30  # above this, a launch's inputs are traced in the program, not saved for later

ENV_TIME_FRACTION = env.TIME_FRACTION
TIME_ALL_FIRST = 64  # launches of each kernel that are always timed
_RESOLVE_BATCH = 256  # pending event pairs before completed ones are read back
_MAX_PENDING = 16384  # beyond this, wait for the oldest events rather than grow without bound


class _FnInfo:
    """What never changes between launches of one @triton.jit function."""

    def __init__(self, jit_fn, entry: Callable[[str, str, int], KernelTally]) -> None:
        import inspect

        py_fn = jit_fn.fn
        code = py_fn.__code__
        self.py_fn = py_fn
        self.name = py_fn.__name__
        self.file = code.co_filename
        try:  # the `def` line, not the decorator's
            lines, first = inspect.getsourcelines(py_fn)
            self.line = first + next((i for i, text in enumerate(lines) if text.lstrip().startswith("def ")), 0)
        except (OSError, TypeError):
            self.line = code.co_firstlineno
        params = inspect.signature(py_fn).parameters
        self.arg_names = list(params)
        self.arg_set = set(params)
        self.defaults = {k: p.default for k, p in params.items() if p.default is not inspect.Parameter.empty}
        self.params = [(k, is_constexpr(p.annotation)) for k, p in params.items()]
        self.kernel = entry(self.name, self.file, self.line)  # the recorder's entry it counts towards
        self.traced = False
        self.captured = False


def is_constexpr(annotation) -> bool:
    if isinstance(annotation, str):
        return annotation.split(".")[-1] == "constexpr"
    return getattr(annotation, "__name__", "") == "constexpr"


class Recorder:
    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir
        self.kernels: dict[tuple, KernelTally] = {}
        self.fn_info: dict[Any, _FnInfo] = {}  # JITFunction -> _FnInfo (keeps it alive: no id reuse)
        self.mode = "compiled"
        self.current: SignatureTally | None = None
        self.current_kernel: KernelTally | None = None
        self.pending: deque = deque()
        self.event_pool: list = []
        self.enter_event: Any = None
        self.launches = 0
        self.busy = False  # True while the recorder itself runs a kernel (the trace)
        trace = os.environ.get(ENV_TRACE)
        self.trace_pattern = re.compile(trace) if trace else None
        self.trace_launches = int(os.environ.get(ENV_TRACE_LAUNCHES, "1"))
        self.sample = int(os.environ.get(ENV_SAMPLE, "32"))
        self.trace_budget = float(os.environ.get(ENV_TRACE_BUDGET, "60"))
        self.later_dir = os.environ.get(ENV_TRACE_LATER)  # traces deferred to trace_worker go here
        self.deferred = 0  # launches saved for a later trace, all kernels: their files' numbers
        self.static_targets = tuple(t for t in os.environ.get(ENV_STATIC, "").split(",") if t)
        self.sass = os.environ.get(ENV_SASS) == "1"
        self.exit_registered = False
        self.events: Any = None  # clock.DriverEvents or TorchEvents, made at the first compiled launch
        self.timing_failed = False
        self.time_this = True
        self.hook_kernel: KernelTally | None = None
        self.sources: dict = {}  # CUfunction handle -> JITFunction, from CompiledKernel.launch_metadata
        self.time_fraction = float(os.environ.get(ENV_TIME_FRACTION, "0.0625"))
        self.rng = random.Random(0)  # a fixed seed: the same run samples the same launches
        self.problems: list[str] = []  # what went wrong inside the recorder, for the report
        self.tensor_type: type | None = None
        self.capture: OutputCapture | None = None  # when a validation run asks for one
        self.pending_capture: tuple | None = None
        if os.environ.get(env.CAPTURE_KERNEL):
            if _MAKE_CAPTURE:
                self.capture = _MAKE_CAPTURE[0]()
            else:  # the validator finds the capture missing and rejects the run: say why here
                self.problems.append("a validation run without the output capture attached")

    # --- launches --------------------------------------------------------------------------

    def begin(self, jit_fn, args, kwargs, grid, interpreted: bool):
        """Describe one launch and return the kernel and signature entries it counts towards.

        This runs on every launch, before Triton's own launch path: keep it to a few µs.
        """
        info = self.fn_info.get(jit_fn) or self._first_launch(jit_fn, interpreted)
        bound = dict(zip(info.arg_names, args, strict=False))
        options: dict[str, Any] = {}
        for k, v in kwargs.items():
            (bound if k in info.arg_set else options)[k] = v
        if len(bound) < len(info.arg_names):
            for k, v in info.defaults.items():
                bound.setdefault(k, v)
        g = tuple(grid(bound) if callable(grid) else grid)
        grid = (int(g[0]), int(g[1]) if len(g) > 1 else 1, int(g[2]) if len(g) > 2 else 1)
        tensor = self.tensor_type
        arg_keys = tuple([arg_key(bound.get(n), c, tensor) for n, c in info.params])
        key = (grid, options.get("num_warps"), options.get("num_stages"), arg_keys)
        kernel = info.kernel
        sig = kernel.signatures.get(key)
        if sig is None and len(kernel.signatures) < MAX_SIGNATURES:
            args_json = [arg_dict(n, k) for n, k in zip(info.arg_names, arg_keys, strict=False)]
            sig = kernel.signatures[key] = SignatureTally(grid, key[1], key[2], args_json)
        elif sig is None:
            kernel.dropped += 1
        kernel.launches += 1
        self.launches += 1
        graphs.launched()
        if sig is not None:
            sig.launches += 1
            sig.tuning += TUNING[0] > 0
        if info.traced:
            self.maybe_trace(kernel, info, bound, grid)
            if self.static_targets and kernel.static is None:
                self.static_view(kernel, info, bound, options)
        if self.capture is not None and info.captured and not TUNING[0]:
            # autotuning's benchmark launches are not the program's dispatches: each config runs into
            # the same outputs (restored or not), and a candidate may tune a different list of configs
            self.pending_capture = (info, bound, grid, options)
        return kernel, sig

    def _register_exit(self) -> None:
        if not self.exit_registered:
            # Registered at the first launch, so it runs before torch's own exit handlers.
            atexit.register(self.flush)
            self.exit_registered = True

    def _first_launch(self, jit_fn, interpreted: bool) -> _FnInfo:
        self._register_exit()
        if self.tensor_type is None:
            import torch

            self.tensor_type = torch.Tensor
        if interpreted:
            self.mode = "interpreter"
            if self.capture is not None or self.static_targets:
                from ..static import remember_language

                remember_language()  # before any kernel runs: the interpreter leaves patches behind
        info = self.fn_info[jit_fn] = _FnInfo(jit_fn, self._kernel_entry)
        info.traced = bool(self.trace_pattern is not None and self.trace_pattern.search(info.name))
        info.captured = self.capture is not None and self.capture.wants(info.name)
        return info

    def maybe_trace(self, kernel: KernelTally, info: _FnInfo, bound: dict, grid) -> None:
        done = (kernel.traced or {}).get("launches_traced", 0) + kernel.deferred
        if done >= self.trace_launches or self.sample < 1:  # sample 0: the static view only, no address trace
            return
        if self.later_dir and self.trace_later(self.later_dir, kernel, info, bound, grid):
            return
        from ..trace import merge_traces, trace_launch

        self.busy = True
        try:
            result = trace_launch(info.py_fn, bound, grid, self.sample, self.trace_budget)  # never raises
        finally:
            self.busy = False
        kernel.traced = merge_traces(kernel.traced, result)

    def trace_later(self, folder: str, kernel: KernelTally, info: _FnInfo, bound: dict, grid) -> bool:
        """Save the launch's inputs (host copies) into `folder` for a trace after the run, in its own Python
        (trace_worker), where the kernel can be found again by its qualified name; False: trace it here, now."""
        qualname = getattr(info.py_fn, "__qualname__", "")
        if "<" in qualname or not kernel.file or not os.path.isfile(kernel.file):
            return False
        try:
            import torch

            from ..trace import host_copies

            copies, buffers = host_copies(bound)
            if sum(end - start for _, start, end in buffers) > TRACE_LATER_BYTES:
                return False
            inputs = os.path.join(folder, f"trace-{os.getpid()}-{self.deferred}.pt")
            torch.save({"bound": copies, "grid": list(grid)}, inputs)
            job = {"name": kernel.name, "file": kernel.file, "line": kernel.line, "qualname": qualname}
            job |= {"module": getattr(info.py_fn, "__module__", None), "sys_path": list(sys.path)}
            job |= {"inputs": inputs, "sample": self.sample, "budget_s": self.trace_budget}
            write_json(inputs[: -len(".pt")] + ".json", job)
        except Exception as exc:  # inputs torch cannot save: traced here instead
            self.problems.append(f"trace of {kernel.name} not deferred: {type(exc).__name__}: {exc}")
            return False
        kernel.deferred += 1
        self.deferred += 1
        return True

    def static_view(self, kernel: KernelTally, info: _FnInfo, bound: dict, options: dict) -> None:
        """The kernel compiled for each static target, read line by line (once per kernel)."""
        from ..static import static_launch

        self.busy = True
        try:
            kernel.static = static_launch(info.py_fn, bound, options, self.static_targets)  # never raises
        finally:
            self.busy = False

    def wrap(self, original, interpreted: bool):
        recorder = self

        def run(jit_fn, *args, grid, warmup, **kwargs):
            if warmup or recorder.busy:
                return original(jit_fn, *args, grid=grid, warmup=warmup, **kwargs)
            try:
                kernel, sig = recorder.begin(jit_fn, args, kwargs, grid, interpreted)
            except Exception as exc:  # an argument we cannot describe must not stop the program
                recorder.problems.append(f"launch not recorded: {type(exc).__name__}: {exc}")
                return original(jit_fn, *args, grid=grid, warmup=warmup, **kwargs)
            if interpreted:
                start = time.perf_counter()
                result = original(jit_fn, *args, grid=grid, warmup=warmup, **kwargs)
                recorder.add_time(kernel, sig, time.perf_counter() - start)
                recorder.after_dispatch(result)
                return result
            recorder.current, recorder.current_kernel = sig, kernel
            recorder.time_this = recorder.should_time(kernel) and not graphs.capturing()
            try:
                compiled = original(jit_fn, *args, grid=grid, warmup=warmup, **kwargs)
            finally:
                recorder.current, recorder.current_kernel = None, None
            if sig is not None and sig.num_warps is None and compiled is not None:
                sig.num_warps = getattr(compiled.metadata, "num_warps", None)
                sig.num_stages = getattr(compiled.metadata, "num_stages", None)
            if recorder.sass and kernel.sass_lines is None and recorder.fn_info[jit_fn].traced:
                recorder.keep_sass_lines(kernel, compiled)
            recorder.after_dispatch(compiled)
            return compiled

        run.__intelliperf_original__ = original  # type: ignore[attr-defined]  # what uninstall puts back
        return run

    def keep_sass_lines(self, kernel: KernelTally, compiled) -> None:
        """The binary that ran, offset by offset to kernel lines (once per kernel)."""
        from ..static import sass_lines

        try:
            kernel.sass_lines = sass_lines(compiled.asm["cubin"])
        except Exception as exc:  # no cubin (AMD), no nvdisasm: the counters stay per kernel
            kernel.sass_lines = []
            self.problems.append(f"no SASS line table for {kernel.name}: {type(exc).__name__}: {exc}")

    def after_dispatch(self, compiled) -> None:
        """A validation run: hand the target kernel's dispatch to the capture."""
        capture = self.capture
        if self.pending_capture is None or capture is None:
            return
        info, bound, grid, options = self.pending_capture
        self.pending_capture = None
        self.busy = True
        try:
            capture.after_dispatch(
                info.py_fn, info.arg_names, bound, compiled, grid, {k: plain(v) for k, v in options.items()}
            )
        except Exception as exc:  # the program goes on; the validator reads the note
            capture.notes.append(f"capture failed at dispatch {capture.dispatches - 1}: {type(exc).__name__}: {exc}")
        finally:
            self.busy = False

    def should_time(self, kernel: KernelTally) -> bool:
        """Every launch is counted; the first ones of each kernel and then a random sample are
        timed, so that a kernel launched millions of times is not slowed by its own clock."""
        return kernel.launches <= TIME_ALL_FIRST or self.rng.random() < self.time_fraction

    @staticmethod
    def add_time(kernel: KernelTally, sig: SignatureTally | None, seconds: float) -> None:
        kernel.timed += 1
        kernel.timed_s += seconds
        if sig is not None:
            sig.timed += 1
            sig.timed_s += seconds

    # --- device time -------------------------------------------------------------------------

    def _event(self):
        if self.event_pool:
            return self.event_pool.pop()
        if self.events is None:
            from .clock import device_events

            self.events = device_events()
        return self.events.new()

    def on_enter(self, metadata) -> None:
        if self.busy:
            return
        if self.current_kernel is None:  # launched without JITFunction.run: Inductor, AOT, CompiledKernel
            self.hook_kernel = self._hook_only_kernel(metadata)
            self.time_this = self.should_time(self.hook_kernel) and not graphs.capturing()
        if self.timing_failed or not self.time_this:
            return
        try:
            event = self._event()
            self.events.record(event, launch_info(metadata).get("stream"))
            self.enter_event = event
        except Exception as exc:  # never break the user's program: lose the timing, say why
            self._timing_failure(exc)

    def on_exit(self, metadata) -> None:
        if self.busy or self.timing_failed or self.enter_event is None:
            return
        try:
            end = self._event()
            self.events.record(end, launch_info(metadata).get("stream"))
            kernel, sig = self.current_kernel or self.hook_kernel, self.current
            self.pending.append((kernel, sig, self.enter_event, end))
            self.enter_event = None
            if len(self.pending) >= _RESOLVE_BATCH:
                self.resolve(wait=len(self.pending) >= _MAX_PENDING)
        except Exception as exc:
            self._timing_failure(exc)

    def _timing_failure(self, exc: Exception) -> None:
        self.timing_failed = True
        self.pending.clear()
        self.problems.append(f"device timing stopped: {type(exc).__name__}: {exc}")

    def _kernel_entry(self, name: str, file: str | None, line: int | None) -> KernelTally:
        key = (name, file, line)
        kernel = self.kernels.get(key)
        if kernel is None:
            kernel = self.kernels[key] = KernelTally(name, file, line)
        return kernel

    def _hook_only_kernel(self, metadata) -> KernelTally:
        """The kernel of a launch seen only by the hooks: known by its source where the compiled
        kernel told us (install_compiler), else by name. Its arguments are not described."""
        self._register_exit()
        info = launch_info(metadata)
        jit_fn = self.sources.get(info.get("function"))
        if jit_fn is not None:
            kernel = (self.fn_info.get(jit_fn) or self._first_launch(jit_fn, interpreted=False)).kernel
        else:
            kernel = self._kernel_entry(str(info.get("name", "<unknown>")), None, None)
        kernel.launches += 1
        self.launches += 1
        return kernel

    def resolve(self, wait: bool) -> None:
        """Read back finished event pairs; with wait, block until the oldest half is done."""
        must_wait = len(self.pending) // 2 if wait else 0
        while self.pending:
            kernel, sig, start, end = self.pending[0]
            if must_wait > 0:
                self.events.wait(end)
                must_wait -= 1
            elif not self.events.done(end):
                break
            self.pending.popleft()
            self.add_time(kernel, sig, self.events.elapsed_s(start, end))
            self.event_pool += (start, end)

    # --- output ------------------------------------------------------------------------------

    def time_source(self) -> str:
        return "wall time (interpreter)" if self.mode == "interpreter" else "device time (CUDA events)"

    def flush(self) -> None:
        if self.capture is not None:
            self.capture.flush()
        if self.pending:
            self.events.wait(self.pending[-1][3])
            self.resolve(wait=False)
        import triton

        versions = {"python": sys.version.split()[0], "triton": triton.__version__}
        device = "cpu (Triton interpreter)"
        torch = sys.modules.get("torch")
        if torch is not None:
            versions["torch"] = torch.__version__
            if self.mode == "compiled" and torch.cuda.is_available():
                device = torch.cuda.get_device_name()
        record = {
            "pid": os.getpid(),
            "argv": sys.argv,
            "mode": self.mode,
            "time_source": self.time_source(),
            "device": device,
            "versions": versions,
            "launches": self.launches,
            "problems": self.problems[:20],
            "kernels": [k.as_dict() for k in self.kernels.values()],
            "graphs": graphs.tally([k.file for k in self.kernels.values() if k.file]),
        }
        write_json(os.path.join(self.out_dir, f"record-{os.getpid()}.json"), record)


_RECORDER: Recorder | None = None


def recorder() -> Recorder | None:
    return _RECORDER


def install_jit(jit_module) -> None:
    """Patch triton.runtime.jit once it is imported (compiled kernels + launch hooks)."""
    rec = _ensure()
    cls = jit_module.JITFunction
    if not hasattr(cls.run, "__intelliperf_original__"):
        cls.run = rec.wrap(cls.run, interpreted=False)
    from triton import knobs

    for chain, hook in ((knobs.runtime.launch_enter_hook, rec.on_enter), (knobs.runtime.launch_exit_hook, rec.on_exit)):
        if not hasattr(chain, "add"):
            raise RuntimeError("intelliperf needs triton>=3.4 (knobs.runtime launch hooks as a HookChain)")
        chain.add(hook)


def install_compiler(compiler_module) -> None:
    """Patch triton.compiler.compiler: remember which JITFunction each compiled kernel came from,
    so that launches that bypass JITFunction.run (torch.compile's Inductor launches compiled
    kernels itself) are still attributed to their source file and line."""
    rec = _ensure()
    cls = compiler_module.CompiledKernel
    original = getattr(cls, "launch_metadata", None)
    if original is None or hasattr(original, "__intelliperf_original__"):
        return

    def launch_metadata(kernel, grid, stream, *args):
        result = original(kernel, grid, stream, *args)
        function = kernel.function
        if function not in rec.sources:
            rec.sources[function] = getattr(getattr(kernel, "src", None), "fn", None)
        return result

    launch_metadata.__intelliperf_original__ = original  # type: ignore[attr-defined]  # what uninstall puts back
    cls.launch_metadata = launch_metadata


def install_autotuner(autotuner_module) -> None:
    """Patch triton.runtime.autotuner: count the launches its benchmarking makes, per signature; compile
    its configs together before it times them (not in the region-timer pass, whose compiles Proton
    instruments)."""
    rec = _ensure()
    track_tuning(autotuner_module)
    if not os.environ.get(env.REGIONS):
        compile_together(autotuner_module, rec.problems)


def install_interpreter(interpreter_module) -> None:
    """Patch triton.runtime.interpreter once it is imported (TRITON_INTERPRET=1 kernels)."""
    rec = _ensure()
    cls = interpreter_module.InterpretedFunction
    if not hasattr(cls.run, "__intelliperf_original__"):
        cls.run = rec.wrap(cls.run, interpreted=True)


def _ensure() -> Recorder:
    global _RECORDER
    if _RECORDER is None:
        _RECORDER = Recorder(os.environ[ENV_DIR])
    return _RECORDER
