"""Capture the buffers a kernel writes, after each of its dispatches, inside the user's program.

The launch recorder calls `Capture.after_dispatch` right after every launch of the target
kernel returns. The buffers written are the kernel's output arguments (`outputs.py`: its TTIR)
plus any argument the caller names (the reference's outputs, when this is a candidate run).
They are copied to host on the launch's stream, so the copy sees the kernel's result, and saved
with `torch.save` as `dispatch-<pid>-<index>.pt`. Which dispatches are kept: the first
`first`, the last `last` (a rolling window in host memory) and every `stride`-th one in between,
the stride doubling whenever more than `sample` would be kept, so a kernel launched millions of
times costs bounded disk and two runs with the same dispatch count keep the same indices.

`capture-<pid>.json` describes the run: dispatch count, kept indices, output arguments, the
stream of each dispatch, each kept dispatch's launch (grid, options, argument shapes), and the
launcher (the Python function that called `kernel[grid](...)`) with its arguments, for the
replay harness. Imports only the standard library, torch and triton.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
import time
from collections import deque
from types import FrameType
from typing import TYPE_CHECKING

from intelliperf import env
from intelliperf.files import write_json
from intelliperf.profiling.inside.recorder import is_constexpr
from intelliperf.profiling.inside.untouched import original, replaced_in_process

IMPORTED_AT = time.time()

if TYPE_CHECKING:
    from .outputs import Access

ENV_KERNEL = env.CAPTURE_KERNEL
ENV_DIR = env.CAPTURE_DIR
ENV_ARGS = env.CAPTURE_ARGS
ENV_LIMITS = env.CAPTURE_LIMITS
ENV_EXPECTED = env.CAPTURE_EXPECTED
DEFAULT_LIMITS = (64, 16, 64)
PROGRAM_INPUT_BYTES = 1 << 30  # the launcher's tensor arguments kept as the program's own trial, at most
ENTRY_WATCH_CALLS = 1_000_000  # Python calls the launcher's next call is waited for (`at_entry`)


def describe_value(value, stats: bool) -> dict:
    """A JSON description of one argument, enough to draw a fresh one like it."""
    import torch

    if isinstance(value, torch.Tensor):
        row: dict[str, object] = {
            "kind": "tensor",
            "dtype": str(value.dtype).replace("torch.", ""),
            "shape": list(value.shape),
            "strides": list(value.stride()),
            "device": str(value.device),
        }
        if value.is_floating_point() and value.numel():  # (a NaN an atomic may ignore: compare.py's nan-handling)
            row["nan"] = bool(value.isnan().any())
        if stats and value.numel():
            lo, hi = value.detach().reshape(-1).aminmax() if value.dtype != torch.bool else (value.min(), value.max())
            row["min"], row["max"] = float(lo), float(hi)
            integer = not (value.is_floating_point() or value.is_complex() or value.dtype == torch.bool)
            if integer and value.dim() and value.shape[-1] > 1:
                # sorted ids (segments, CSR offsets, cumulative lengths): fresh draws keep the order,
                # which a fix may rely on as the program does
                row["sorted"] = bool((value[..., 1:] >= value[..., :-1]).all())
        return row
    base = getattr(value, "base", None)  # a host-side TensorDescriptor: its tensor is the buffer
    if base is not None and isinstance(base, torch.Tensor):
        return {"kind": "descriptor", "base": describe_value(base, stats), "block_shape": list(value.block_shape)}
    if isinstance(value, (bool, int, float, str)) or value is None:
        return {"kind": "scalar", "value": value}
    if isinstance(value, torch.dtype):
        return {"kind": "dtype", "value": str(value).replace("torch.", "")}
    return {"kind": "other", "type_name": type(value).__name__}


def host_copy(tensor):
    """A host copy of `tensor` through torch's own detach and to, as snapshotted before the program ran."""
    import torch

    detach = original("torch.Tensor", "detach", torch.Tensor.detach)
    return original("torch.Tensor", "to", torch.Tensor.to)(detach(tensor), "cpu", copy=True)


def _storage_key(value):
    import torch

    if isinstance(value, torch.Tensor):
        return (value.device.type, value.untyped_storage().data_ptr())
    return None


def describe_args(names: list[str], values: list, stats: bool) -> list[dict]:
    """Describe arguments in order; one that shares storage with an earlier one says so."""
    rows: list[dict] = []
    seen: dict[tuple, str] = {}
    for name, value in zip(names, values, strict=False):
        row = {"name": name, **describe_value(value, stats)}
        key = _storage_key(value)
        if key is not None and key in seen:
            row["alias_of"] = seen[key]
        elif key is not None:
            seen[key] = name
        rows.append(row)
    return rows


def _launcher_frame(skip_dirs: tuple[str, ...]) -> FrameType | None:
    """The frame of the Python function that called `kernel[grid](...)`: up from the caller of the function
    that asks, past Triton's and intelliperf's own frames."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(skip_dirs):
        frame = frame.f_back
    return frame


def at_entry(launcher: dict, code, kept: dict | None = None) -> None:
    """Describe the arguments of the next call of `code` (the launcher) as it begins, into `launcher`
    (and their values, as host copies, into `kept`): a profile hook on this thread until that call, never
    over a profiler already there."""
    if sys.getprofile() is not None:
        return

    seen = [0]

    def hook(frame, event, arg):
        if event != "call":
            return
        seen[0] += 1
        if seen[0] > ENTRY_WATCH_CALLS:  # a launcher called once: stop costing the program a call per call
            sys.setprofile(None)
        elif frame.f_code is code:
            sys.setprofile(None)
            values: dict = {}
            entry = _describe_launcher(frame, values if kept is not None else None)
            if [a["name"] for a in entry["args"]] == [a["name"] for a in launcher["args"]]:
                launcher["args"], launcher["at_entry"] = entry["args"], True
                if kept is not None:
                    kept.clear()
                    kept.update(values)

    sys.setprofile(hook)


def _describe_launcher(frame: FrameType, kept: dict | None = None) -> dict:
    """The launcher and its arguments as they are now, each with how a call passes it (`pass`: positional,
    keyword for keyword-only parameters, and the contents of `*args`/`**kwargs` as positional / keyword
    entries), so a replay calls it as the program did. The `ctx` of a `torch.autograd.Function.forward` is
    left out: the replay calls `apply`, which makes one. A launcher may rebind a parameter before the
    launch (`reduction = MODES[reduction]`): `at_entry` then describes its next call as it begins.
    `kept`: filled with host copies of the tensor arguments (the program's own data, a replay's trial),
    unless they exceed PROGRAM_INPUT_BYTES."""
    code = frame.f_code
    info = inspect.getargvalues(frame)
    names = list(info.args)
    values = [info.locals[n] for n in names]
    passes = ["positional"] * code.co_argcount + ["keyword"] * code.co_kwonlyargcount
    star = info.locals.get(info.varargs) if info.varargs else ()
    starstar = info.locals.get(info.keywords) if info.keywords else {}
    if not isinstance(star, tuple) or not isinstance(starstar, dict):  # rebound before the launch
        star, starstar = (), {}
        varargs = True
    else:
        varargs = False
    for i, value in enumerate(star):
        names.append(f"{info.varargs}[{i}]")
        values.append(value)
        passes.append("positional")
    for key, value in starstar.items():
        names.append(f"{info.keywords}.{key}")
        values.append(value)
        passes.append(f"keyword:{key}")
    autograd = code.co_name == "forward" and names and _is_autograd_ctx(values[0])
    if autograd:
        names, values, passes = names[1:], values[1:], passes[1:]
    args = describe_args(names, values, stats=True)
    for desc, how in zip(args, passes, strict=True):
        desc["pass"] = how
    if kept is not None:
        tensors = {n: v for n, v in zip(names, values, strict=True) if _buffer(v) is v and v is not None}
        if sum(t.numel() * t.element_size() for t in tensors.values()) <= PROGRAM_INPUT_BYTES:
            kept.update({n: host_copy(t) for n, t in tensors.items()})
    return {
        "file": os.path.abspath(code.co_filename),
        "function": code.co_name,
        "qualname": getattr(code, "co_qualname", code.co_name),
        "line": code.co_firstlineno,
        "call_line": frame.f_lineno,
        "varargs": varargs,
        "autograd": bool(autograd),
        "args": args,
    }


def _is_autograd_ctx(value) -> bool:
    """The `ctx` torch passes a custom autograd Function's forward (FunctionCtx, or a BackwardCFunction)."""
    import torch

    return isinstance(value, torch.autograd.function.FunctionCtx)


def _stream_label(value, labels: dict) -> str:
    import torch

    if value.device.type != "cuda":
        return "host"
    current = torch.cuda.current_stream(value.device)
    if current == torch.cuda.default_stream(value.device):
        return "default"
    return labels.setdefault(current.cuda_stream, f"side-{len(labels) + 1}")


class Capture:
    def __init__(
        self, pattern: str, out_dir: str, extra_args: list[str], limits=DEFAULT_LIMITS, expected: int | None = None
    ) -> None:
        self.pattern = re.compile(pattern)
        self.out_dir = out_dir
        self.extra = [a for a in extra_args if a]
        self.first, self.last, self.sample = limits
        self.dispatches = 0
        self.stride = 1
        self.expected = expected  # the dispatch count, when known (a candidate run: the reference's)
        self.sampled: list[int] = []
        self.kept: dict[int, dict] = {}  # index -> launch description, saved to disk
        self.window: deque = deque(maxlen=self.last)  # (index, launch, host buffers) beyond `first`
        self.outputs: dict[tuple, Access] = {}  # specialisation -> the pointers it reads and writes
        self.kernel: dict | None = None
        self.launcher: dict | None = None
        self.streams: list[str] = []
        self.notes: list[str] = []
        self.stream_labels: dict = {}
        self.program_inputs: dict = {}  # the launcher's tensor arguments at the call described (host copies)
        self.replaced: set[str] = set()  # what the program replaced of the namespaces the capture reads through
        # wall clock (benchmarks): this module imported (the bootstrap's start of the run), the capture made at
        # the first launch, the first dispatch done, flushed
        self.at = {"imported": IMPORTED_AT, "capture": time.time()}
        import triton

        import intelliperf

        # Frames in these are Triton's or ours; the first other frame is the kernel's launcher.
        self.skip_dirs = (
            os.path.dirname(triton.__file__),
            os.path.dirname(intelliperf.__file__),
            os.path.dirname(__file__),
        )
        os.makedirs(out_dir, exist_ok=True)

    def wants(self, name: str) -> bool:
        return self.pattern.fullmatch(name) is not None

    # --- per dispatch ------------------------------------------------------------------------

    def after_dispatch(self, py_fn, arg_names: list[str], bound: dict, compiled, grid, options: dict) -> None:
        self.at.setdefault("first_dispatch", time.time())
        index = self.dispatches
        self.dispatches += 1
        if self.kernel is None:
            self.kernel = {
                "name": py_fn.__name__,
                "file": os.path.abspath(py_fn.__code__.co_filename),
                "line": py_fn.__code__.co_firstlineno,
                "params": arg_names,
                # what a replay's unseen shapes keep (replay.compiled_sizes)
                "constexprs": [n for n, p in inspect.signature(py_fn).parameters.items() if is_constexpr(p.annotation)],
            }
            frame = _launcher_frame(self.skip_dirs)
            if frame is not None:
                kept = self.program_inputs if self.expected is None else None  # (the reference's run only)
                self.launcher = launcher = _describe_launcher(frame, kept)
                if frame.f_code.co_name != "<module>":
                    at_entry(launcher, frame.f_code, kept)
        access = self._access(py_fn, arg_names, bound, compiled)
        names = [n for n in arg_names if n in access.written or n in self.extra]
        buffers = {n: _buffer(bound.get(n)) for n in names}
        label = next((_stream_label(b, self.stream_labels) for b in buffers.values() if b is not None), "host")
        self.streams.append(label)
        why = self._selected(index)
        if why is None:
            return
        launch = {
            "index": index,
            "grid": list(grid),
            "options": options,
            "stream": label,
            "args": describe_args(arg_names, [bound.get(n) for n in arg_names], stats=index == 0),
        }
        host = {n: host_copy(b) for n, b in buffers.items() if b is not None}
        if why == "window":
            self.window.append((index, launch, host))
            return
        self._save(index, launch, host)
        if why == "sample":
            self.sampled.append(index)
            if len(self.sampled) > self.sample:
                self._thin()

    def _selected(self, index: int) -> str | None:
        """Why dispatch `index` is kept (first / sample / last / window), or None."""
        if index < self.first:
            return "first"
        if (index - self.first) % self.stride == 0:
            return "sample"
        if self.expected is not None:
            return "last" if index >= self.expected - self.last else None
        return "window" if self.last else None

    def _thin(self) -> None:
        """Too many samples kept: double the stride and drop those off the new stride."""
        self.stride *= 2
        keep = []
        for index in self.sampled:
            if (index - self.first) % self.stride == 0:
                keep.append(index)
            elif self.expected is None or index < self.expected - self.last:
                os.remove(self._path(index))
                del self.kept[index]
        self.sampled = keep

    def _path(self, index: int) -> str:
        return os.path.join(self.out_dir, f"dispatch-{os.getpid()}-{index:09d}.pt")

    def _save(self, index: int, launch: dict, host: dict) -> None:
        import torch

        original("torch", "save", torch.save)(host, self._path(index))
        self.kept[index] = launch
        self.replaced |= set(replaced_in_process())

    def _access(self, py_fn, arg_names, bound, compiled):
        from .outputs import Access, analyse_ttir, interpreted_ttir, ttir_of

        # A constexpr's value compiles another kernel (a FINAL=True launch reads what a FINAL=False one wrote):
        # each is read, up to CONSTEXPR_VARIANTS of them (under the interpreter each is a compile for sm_90).
        typed = tuple((n, type(bound.get(n)).__name__, None) for n in arg_names)
        constexprs = set((self.kernel or {}).get("constexprs", ()))
        key = tuple(
            (n, kind, bound.get(n) if n in constexprs and _plain_value(bound.get(n)) else None) for n, kind, _ in typed
        )
        access = self.outputs.get(key)
        if access is None and len(self.outputs) >= CONSTEXPR_VARIANTS:
            access = next((a for k, a in self.outputs.items() if [x[:2] for x in k] == [x[:2] for x in typed]), None)
        if access is not None:
            return access
        try:
            ttir = ttir_of(compiled) or interpreted_ttir(py_fn, bound)
            access = analyse_ttir(ttir, [n for n in arg_names if not isinstance(bound.get(n), (type(None),))])
        except Exception as exc:  # never lose the run: every tensor argument is then captured
            access = Access(written={n for n in arg_names if _buffer(bound.get(n)) is not None}, method="all tensors")
            self.notes.append(
                f"could not read the kernel's TTIR ({type(exc).__name__}: {exc}); "
                "captured every tensor argument instead"
            )
        self.outputs[key] = access
        return access

    # --- end of the run ----------------------------------------------------------------------

    def flush(self) -> None:
        self.at["flush"] = time.time()
        for index, launch, host in self.window:
            if index not in self.kept:
                self._save(index, launch, host)
        inputs = None
        if self.program_inputs and self.launcher is not None:
            inputs = os.path.join(self.out_dir, f"launcher-inputs-{os.getpid()}.pt")
            import torch

            original("torch", "save", torch.save)(self.program_inputs, inputs)
        from .outputs import merge_counts

        accesses = list(self.outputs.values())

        def union(field: str) -> list[str]:
            return sorted(set().union(*(getattr(a, field) for a in accesses)))

        manifest = {
            "pid": os.getpid(),
            "kernel": self.kernel,
            "launcher": self.launcher,
            "launcher_inputs": inputs,
            "dispatches": self.dispatches,
            "kept": sorted(self.kept),
            "launches": [self.kept[i] for i in sorted(self.kept)],
            "streams": self.streams[:100_000],
            "limits": [self.first, self.last, self.sample],
            "written": union("written"),
            "accumulated": union("accumulated"),
            "reduced": union("reduced"),
            "read": union("read"),
            "atomic": union("atomic"),
            "stored": union("stored"),
            "indexes": union("indexes"),
            "locks": union("locks"),
            "scattered": union("scattered"),
            "shared": union("shared"),
            "rmw": union("rmw"),
            "cross": union("cross"),
            "depths": merge_counts([a.depths for a in accesses]),
            "adds": merge_counts([a.adds for a in accesses]),
            "method": accesses[0].method if accesses else None,
            "extra": self.extra,
            "notes": self.notes,
            "replaced": sorted(self.replaced | set(replaced_in_process())),
            "gpu_memory": _gpu_memory(),
            "at": self.at,
        }
        write_json(os.path.join(self.out_dir, f"capture-{os.getpid()}.json"), manifest)


def _gpu_memory() -> dict | None:
    """The most GPU memory torch's allocator held for this program, and the device's size: how much room
    the workers started beside a candidate's run may take. None where no CUDA device was used."""
    import torch

    if not torch.cuda.is_initialized():
        return None
    return {"peak_reserved": torch.cuda.max_memory_reserved(), "total": torch.cuda.mem_get_info()[1]}


CONSTEXPR_VARIANTS = 16  # compiled variants of the kernel whose TTIR is read; later ones reuse one of those


def _plain_value(value) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _buffer(value):
    import torch

    if isinstance(value, torch.Tensor):
        return value
    base = getattr(value, "base", None)
    return base if isinstance(base, torch.Tensor) else None


def from_env() -> Capture | None:
    pattern = os.environ.get(ENV_KERNEL)
    if not pattern:
        return None
    limits = tuple(int(x) for x in os.environ.get(ENV_LIMITS, "").split(",") if x) or DEFAULT_LIMITS
    expected = os.environ.get(ENV_EXPECTED)
    return Capture(
        pattern,
        os.environ[ENV_DIR],
        os.environ.get(ENV_ARGS, "").split(","),
        limits,
        int(expected) if expected else None,
    )
