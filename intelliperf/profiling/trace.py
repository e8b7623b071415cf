"""Interpreter address trace: which addresses each tl.load / tl.store / tl.atomic_* line touches.

The trace runs a *sample* of a launch's programs through Triton's interpreter on host copies of
the arguments, so the user's tensors are never touched and a launch with a huge grid costs the
same as a small one. For each call site (file:line of the kernel) it models what a GPU would
see: bytes requested, 32-byte sectors touched per 32-lane group (one warp request; a block's
lanes run along its contiguous axis, as Triton's coalescing pass lays them out), and for
atomics how many lanes hit the same address at once (the serialisation depth). Each site also
counts the lanes it issued, masked or not (what the block's shape costs in registers and issue
slots whether the data fills it or not).

For a grid of several waves, a second pass runs the first wave's programs (the ones a GPU runs at
once) up to the second call of any memory line, and keeps, per loaded buffer, the 128-byte lines
each program's first call touched: how much of what the wave loads it shares (`wave_footprint`);
per stored buffer, the bytes written and the 32-byte sectors they fall in: whether the programs
that run together fill the sectors they write, or leave them for programs that run much later.

Imports only numpy, torch and triton: this runs inside the user's program.
"""

from __future__ import annotations

import ast
import inspect
import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import numpy as np

SECTOR_BYTES = 32
WARP_LANES = 32
LINE_BYTES = 128  # an L2 cache line
WAVE_PROGRAMS = 132  # the programs a GPU runs at once, modelled as one per SM of an H100 (and an H200)
_INACTIVE = np.iinfo(np.uint64).max


class TraceAborted(Exception):
    """Raised inside the traced kernel when the trace runs past its time budget."""


def sample_program_ids(grid: tuple[int, int, int], limit: int) -> list[tuple[int, int, int]]:
    """At most `limit` program ids (x fastest): a contiguous run from the first program (the
    neighbours that run at the same time on a GPU), the last one, and the rest drawn at random
    (seeded) from the others. Evenly spaced picks alone can alias with the index structure, e.g.
    land every sample on a different lock of `row % GROUP`; random ones cannot."""
    gx, gy, gz = grid
    total = gx * gy * gz
    if total <= limit:
        linear = list(range(total))
    else:
        run = max(limit // 2, 1)
        rest = np.random.default_rng(0).choice(np.arange(run, total - 1), size=max(limit - run - 1, 0), replace=False)
        linear = sorted({*range(run), total - 1, *rest.tolist()})
    return [(i % gx, (i // gx) % gy, i // (gx * gy)) for i in linear]


@dataclass
class _Site:
    file: str
    line: int
    op: str
    is_atomic: bool
    elem_bytes: int
    buffer: str | None
    calls: int = 0
    lanes: int = 0
    lanes_issued: int = 0
    sectors: int = 0
    depth_max: int = 0
    depth_mean_sum: float = 0.0
    last_depth: float = 0.0
    addresses: list = field(default_factory=list)
    programs: dict = field(default_factory=dict)  # sampled program -> the distinct addresses it updated
    strides: dict = field(default_factory=dict)  # bytes between consecutive active lanes -> count

    def other_programs_per_address(self, total: int, sampled: int) -> float:
        """Estimated programs of the whole grid, besides an op's own, that update the address it updates; the
        larger of: hot spots (pairs of sampled programs sharing an address, per op, scaled from the sample to
        the grid by (total - 1) / (sampled - 1)) and density (the grid's updates spread over the span of
        addresses the sample touched: `row % GROUP` locks, which no two sampled programs may share)."""
        if len(self.programs) < 2 or sampled < 2:
            return 0.0
        per_program = list(self.programs.values())
        hit = np.concatenate(per_program)
        _, k = np.unique(hit, return_counts=True)
        pairs = float((k * (k - 1)).sum() / k.sum()) * (total - 1) / (sampled - 1)
        span = (int(hit.max()) - int(hit.min())) // self.elem_bytes + 1
        density = np.mean([a.size for a in per_program]) * total / span - 1
        return max(pairs, float(density), 0.0)

    def updates_per_address(self, total: int, sampled: int) -> float:
        """Estimated atomic updates landing on the most-updated address in the launch: per address, the
        sampled lanes per sampled program that hit it times the grid's programs that do (scaled as above)."""
        at, lanes = np.unique(np.concatenate(self.addresses or [np.zeros(0, np.uint64)]), return_counts=True)
        by_programs, programs = np.unique(np.concatenate([*self.programs.values(), at[:0]]), return_counts=True)
        k = programs[np.searchsorted(by_programs, at)]
        scale = (total - 1) / (sampled - 1) if sampled >= 2 else 1.0
        return float((lanes / k * (1 + (k - 1) * scale)).max(initial=0.0))

    def as_dict(self, total: int = 1, sampled: int = 1) -> dict:
        requested = self.lanes * self.elem_bytes
        row = {
            "file": self.file,
            "line": self.line,
            "op": self.op,
            "is_atomic": self.is_atomic,
            "buffer": self.buffer,
            "elem_bytes": self.elem_bytes,
            "calls": self.calls,
            "lanes": self.lanes,
            "lanes_issued": self.lanes_issued,
            "bytes_requested": requested,
            "sectors": self.sectors,
            # repeated addresses (a gather) request bytes that one sector serves: at most 100 %
            "sector_efficiency": min(1.0, requested / (SECTOR_BYTES * self.sectors)) if self.sectors else 1.0,
        }
        if self.strides:
            stride = max(self.strides, key=lambda s: self.strides[s])
            row["lane_stride_elems"] = stride // self.elem_bytes if stride % self.elem_bytes == 0 else None
            row["lane_stride_share"] = self.strides[stride] / sum(self.strides.values())
        if self.is_atomic:
            addrs = np.concatenate(self.addresses) if self.addresses else np.zeros(0, np.uint64)
            _, per_address = np.unique(addrs, return_counts=True)
            row.update(
                lanes_per_address_max=self.depth_max,
                lanes_per_address_mean=self.depth_mean_sum / self.calls if self.calls else 0.0,
                ops_per_address_max=int(per_address.max()) if per_address.size else 0,
                ops_per_address_mean=float(per_address.mean()) if per_address.size else 0.0,
                distinct_addresses=int(per_address.size),
                other_programs_per_address=round(self.other_programs_per_address(total, sampled), 2),
                updates_per_address=round(self.updates_per_address(total, sampled), 2),
                lanes_per_program=self.lanes / max(len(self.programs), 1),
            )
        return row


def _elem_bytes(ptrs) -> int:
    """Bytes of one element a tensor of pointers points to."""
    return max(ptrs.get_element_ty().primitive_bitwidth // 8, 1)


def count_sectors(addresses: np.ndarray, active: np.ndarray) -> int:
    """32-byte sectors touched, counted separately for each group of 32 consecutive lanes."""
    sectors = np.where(active, addresses // SECTOR_BYTES, _INACTIVE)
    pad = (-sectors.size) % WARP_LANES
    rows = np.sort(np.pad(sectors, (0, pad), constant_values=_INACTIVE).reshape(-1, WARP_LANES), axis=1)
    new = np.ones(rows.shape, dtype=bool)
    new[:, 1:] = rows[:, 1:] != rows[:, :-1]
    return int((new & (rows != _INACTIVE)).sum())


class _Tracer:
    """Collects per-site statistics while the sampled programs run."""

    def __init__(self, buffers: list[tuple[str, int, int]], budget_s: float) -> None:
        self.buffers = buffers
        self.sites: dict[tuple[str, int, str], _Site] = {}
        self.deadline = time.monotonic() + budget_s
        self.program = 0  # index of the sampled program running now
        self._atomic: tuple | None = None  # (site, file, line, program, op) of the last record if an atomic
        self._skip_dirs = (os.path.dirname(np.__file__), _triton_dir(), os.path.dirname(__file__))

    def caller_line(self) -> tuple[str, int]:
        frame: FrameType | None = sys._getframe(2)
        while frame is not None:
            filename = frame.f_code.co_filename
            if not filename.startswith(self._skip_dirs):
                return filename, frame.f_lineno
            frame = frame.f_back
        return "<unknown>", 0

    def buffer_of(self, address: int) -> str | None:
        found = self.buffer_at(address)
        return found[0] if found else None

    def buffer_at(self, address: int) -> tuple[str, int] | None:
        """The pointer argument an address falls in, and where that buffer starts."""
        for name, start, end in self.buffers:
            if start <= address < end:
                return name, start
        return None

    def record(self, op: str, is_atomic: bool, ptrs, mask) -> None:
        if time.monotonic() > self.deadline:
            raise TraceAborted()
        elem_bytes = _elem_bytes(ptrs)
        grid = np.asarray(ptrs.data, dtype=np.uint64)
        active = (
            np.ones(grid.shape, dtype=bool)
            if mask is None
            else np.broadcast_to(np.asarray(mask.data, dtype=bool), grid.shape)
        )
        if grid.ndim > 1:
            axis = lane_axis(grid, elem_bytes)
            grid, active = np.moveaxis(grid, axis, -1), np.moveaxis(active, axis, -1)
        addresses = np.ascontiguousarray(grid).reshape(-1)
        active = np.ascontiguousarray(active).reshape(-1)
        file, line = self.caller_line()
        hit = addresses[active]
        # Triton lowers a float atomic_max/min to two atomics of different kinds on the same line (a
        # signed max for the non-negative lanes, an unsigned min for the others): one call, not two.
        last = self._atomic
        continued = bool(is_atomic and last and last[1:4] == (file, line, self.program) and last[4] != op)
        site = last[0] if continued and last else self.sites.get((file, line, op))
        if site is None:
            buffer = self.buffer_of(int(hit[0])) if hit.size else None
            site = self.sites[(file, line, op)] = _Site(file, line, op, is_atomic, elem_bytes, buffer)
        continued = continued and bool(site.addresses)
        self._atomic = (site, file, line, self.program, op) if is_atomic else None
        site.lanes += int(hit.size)
        site.lanes_issued += 0 if continued else int(active.size)
        site.sectors += count_sectors(addresses, active)
        if hit.size > 1:
            _count_strides(site.strides, hit)
        if not continued:
            site.calls += 1
        if is_atomic and hit.size:
            if continued:
                hit = np.concatenate([site.addresses.pop(), hit])
                site.depth_mean_sum -= site.last_depth
            _, counts = np.unique(hit, return_counts=True)
            site.depth_max = max(site.depth_max, int(counts.max()))
            site.last_depth = float(counts.mean())
            site.depth_mean_sum += site.last_depth
            site.addresses.append(hit)
            site.programs[self.program] = np.union1d(site.programs.get(self.program, hit[:0]), hit)


class _ProgramDone(Exception):
    """Ends one program of the wave pass: a memory line came around a second time (a loop)."""


class _FootprintTracer(_Tracer):
    """The wave pass: per loaded buffer, the cache lines each program's first call of each load
    line touches. A loop's later iterations walk on along the same operands, so the first
    iteration names the tiles a program works on; the program stops there."""

    def __init__(self, buffers: list[tuple[str, int, int]], budget_s: float) -> None:
        super().__init__(buffers, budget_s)
        self.seen: set[tuple[str, int, str]] = set()
        self.footprint: dict[str, dict[int, np.ndarray]] = {}  # buffer -> program -> lines
        self.written: dict[str, dict[int, np.ndarray]] = {}  # buffer -> program -> byte offsets written

    def start(self, program: int) -> None:
        self.program, self.seen = program, set()

    def record(self, op: str, is_atomic: bool, ptrs, mask) -> None:
        if time.monotonic() > self.deadline:
            raise TraceAborted()
        key = (*self.caller_line(), op)
        if key in self.seen:
            raise _ProgramDone()
        self.seen.add(key)
        if op not in ("load", "store") or is_atomic:
            return
        grid = np.asarray(ptrs.data, dtype=np.uint64)
        if mask is not None:
            grid = grid[np.broadcast_to(np.asarray(mask.data, dtype=bool), grid.shape)]
        addresses = grid.reshape(-1)
        found = self.buffer_at(int(addresses[0])) if addresses.size else None
        if found is None:
            return
        # offsets from the buffer's start: a GPU allocation is aligned to lines, a host copy may not be
        buffer, start = found
        offsets = addresses - np.uint64(start)
        if op == "store":
            elem_bytes = _elem_bytes(ptrs)
            first_bytes = np.unique(offsets)
            written = (first_bytes[:, None] + np.arange(elem_bytes, dtype=np.uint64)).reshape(-1)
            per_program = self.written.setdefault(buffer, {})
            per_program[self.program] = np.union1d(per_program.get(self.program, written[:0]), written)
            return
        lines = np.unique(offsets // LINE_BYTES)
        per_program = self.footprint.setdefault(buffer, {})
        per_program[self.program] = np.union1d(per_program.get(self.program, lines[:0]), lines)

    def summary(self, programs: int, total: int) -> dict:
        """Per buffer: lines a program loads, lines the wave loads (`panels`: how many programs'
        worth of distinct data that is) and, over the whole grid, how many programs load each
        line of the buffer on average (`reuse`, from its size)."""
        sizes = {name: (end - start) / LINE_BYTES for name, start, end in self.buffers}
        rows = []
        for buffer, per_program in self.footprint.items():
            each = float(np.mean([lines.size for lines in per_program.values()]))
            union = int(np.unique(np.concatenate(list(per_program.values()))).size)
            rows.append(
                {
                    "buffer": buffer,
                    "lines_per_program": round(each, 2),
                    "lines": union,
                    "panels": round(union / each, 2) if each else 0.0,
                    "reuse": round(total * each / max(sizes.get(buffer, 1.0), 1.0), 2),
                }
            )
        return {"programs": programs, "programs_total": total, "buffers": rows, "stores": self._stores(total)}

    def _stores(self, total: int) -> list[dict]:
        """Per stored buffer: the bytes a program writes, and how full the wave leaves the 32-byte
        sectors its programs write (bytes written over the bytes of the sectors touched)."""
        sizes = {name: end - start for name, start, end in self.buffers}
        rows = []
        for buffer, per_program in self.written.items():
            written = np.unique(np.concatenate(list(per_program.values())))
            sectors = np.unique(written // SECTOR_BYTES).size
            rows.append(
                {
                    "buffer": buffer,
                    "bytes_per_program": round(float(np.mean([b.size for b in per_program.values()])), 2),
                    "sector_fill": round(written.size / (sectors * SECTOR_BYTES), 4) if sectors else 1.0,
                    "buffer_bytes": int(sizes.get(buffer, 0)),
                }
            )
        return rows


def lane_axis(addresses: np.ndarray, elem_bytes: int) -> int:
    """The axis consecutive lanes run along: the one the addresses are contiguous on (the last on a
    tie), as Triton's coalescing pass orders a block's layout by the pointer's contiguity."""
    signed = addresses.astype(np.int64)
    share = [
        float(np.mean(np.diff(signed, axis=ax) == elem_bytes)) if addresses.shape[ax] > 1 else -1.0
        for ax in range(addresses.ndim)
    ]
    best = max(share)
    return max(ax for ax, s in enumerate(share) if s == best)


def _count_strides(counts: dict, hit: np.ndarray, keep: int = 8) -> None:
    """Tally the byte distances between consecutive active lanes (the few most common per call)."""
    deltas, seen = np.unique(np.diff(hit.astype(np.int64)), return_counts=True)
    for i in np.argsort(seen)[-keep:]:
        counts[int(deltas[i])] = counts.get(int(deltas[i]), 0) + int(seen[i])


def _triton_dir() -> str:
    import triton

    return os.path.dirname(triton.__file__)


def _atomic_name(rmw_op) -> str:
    # ATOMIC_OP.FADD -> atomic_add: the F/U prefixes only say which type the hardware op takes.
    name = str(rmw_op).rsplit(".", 1)[-1].lower()
    for prefix in ("f", "u"):
        if name.startswith(prefix) and name[1:] in {"add", "max", "min"}:
            name = name[1:]
    return f"atomic_{name}"


class _BuilderTap:
    """Wraps the interpreter builder's memory ops for the duration of one trace."""

    def __init__(self, builder, tracer: _Tracer) -> None:
        self.builder = builder
        self.tracer = tracer
        self.originals: dict[str, object] = {}

    def __enter__(self):
        b, t = self.builder, self.tracer
        load, store = b.create_masked_load, b.create_masked_store
        rmw, cas = b.create_atomic_rmw, b.create_atomic_cas

        def masked_load(ptrs, mask, *rest):
            t.record("load", False, ptrs, mask)
            return load(ptrs, mask, *rest)

        def masked_store(ptrs, value, mask, *rest):
            t.record("store", False, ptrs, mask)
            return store(ptrs, value, mask, *rest)

        def atomic_rmw(rmw_op, ptr, val, mask, *rest):
            t.record(_atomic_name(rmw_op), True, ptr, mask)
            return rmw(rmw_op, ptr, val, mask, *rest)

        def atomic_cas(ptr, *rest):
            t.record("atomic_cas", True, ptr, None)
            return cas(ptr, *rest)

        for name, fn in (
            ("create_masked_load", masked_load),
            ("create_masked_store", masked_store),
            ("create_atomic_rmw", atomic_rmw),
            ("create_atomic_cas", atomic_cas),
        ):
            self.originals[name] = b.__dict__.get(name)
            setattr(b, name, fn)
        return self

    def __exit__(self, *exc) -> None:
        for name, original in self.originals.items():
            if original is None:
                delattr(self.builder, name)
            else:
                setattr(self.builder, name, original)


@contextmanager
def interpreter_semantics(py_fn):
    """Make triton.language behave as under TRITON_INTERPRET=1, then put everything back.

    In a compiled-mode process the library's own @triton.jit helpers (tl.zeros, tl.sum, ...) and
    the user's helper functions are JITFunctions, which refuse to be called outside a kernel;
    during the trace they run through the interpreter instead. Nothing may stay patched: the
    compiler uses the same triton.language module right after.
    """
    from triton import knobs
    from triton.language import core as tl_core
    from triton.runtime import interpreter as ti
    from triton.runtime.jit import JITFunction

    scopes, patched = [], set()

    def patch_globals_of(fn) -> None:
        # Each module's own view of triton.language (tl, core, ...) must be the interpreter's.
        if id(fn.__globals__) not in patched:
            patched.add(id(fn.__globals__))
            scopes.append(ti._patch_lang(fn))
            # Triton <= 3.6 makes scalars 1-element arrays and int()s them, which NumPy >= 2.4
            # refuses ("only 0-dimensional arrays ..."), e.g. in `range(tl.cdiv(K, BLOCK_K))`.
            # The interpreter's scopes put the original back on exit.
            tl_core.tensor.__index__ = _scalar_index

    def call_interpreted(jit_fn, *args, **kwargs):
        patch_globals_of(jit_fn.fn)
        return ti.InterpretedFunction(jit_fn.fn).rewrite()(*args, **kwargs)

    saved_call = JITFunction.__call__
    with knobs.runtime.scope():
        knobs.runtime.interpret = True
        JITFunction.__call__ = call_interpreted
        try:
            patch_globals_of(py_fn)
            yield
        finally:
            JITFunction.__call__ = saved_call
            for scope in reversed(scopes):
                if scope is not None:
                    scope.restore()


def _scalar_index(tensor) -> int:
    return int(tensor.handle.data.item())  # .item() takes a 1-element array of any rank, refuses more


def host_copies(bound: dict) -> tuple[dict, list[tuple[str, int, int]]]:
    """Copy every tensor argument to host memory (shared storages stay shared), so the trace
    can never write into the user's tensors. Returns the copies and each buffer's byte range."""
    import torch

    storages: dict[int, torch.UntypedStorage] = {}
    copies, buffers = {}, []
    for name, value in bound.items():
        if not isinstance(value, torch.Tensor):
            copies[name] = value
            continue
        storage = value.untyped_storage()
        key = storage.data_ptr()
        if key not in storages:
            storages[key] = storage.cpu() if value.device.type != "cpu" else storage.clone()
        copy = value.new_empty(0, device="cpu")
        copy.set_(storages[key], value.storage_offset(), value.size(), value.stride())
        copies[name] = copy
        base = storages[key].data_ptr()
        buffers.append((name, base, base + storages[key].nbytes()))
    return copies, buffers


def trace_launch(
    py_fn, bound: dict, grid: tuple[int, int, int], sample: int, budget_s: float, wave: int = WAVE_PROGRAMS
) -> dict:
    """Run up to `sample` programs of one launch in the interpreter and return site statistics.

    `py_fn` is the kernel's plain Python function; `bound` maps every kernel parameter to its
    value. Never raises: a kernel the interpreter cannot run gives a result with a note.
    """
    from triton.runtime import interpreter as ti

    programs = sample_program_ids(grid, sample)
    result: dict[str, Any] = {
        "programs_total": grid[0] * grid[1] * grid[2],
        "programs_sampled": 0,
        "sites": [],
        "notes": [],
    }
    builder = ti.interpreter_builder
    saved_dim, saved_idx = getattr(builder, "grid_dim", None), getattr(builder, "grid_idx", None)
    tracer = None
    try:
        copies, buffers = host_copies(bound)
        tracer = _Tracer(buffers, budget_s)
        interpreted = ti.InterpretedFunction(py_fn)
        kernel = interpreted.rewrite()
        constexprs = set(ti.GridExecutor(kernel, interpreted.arg_names, grid).constexprs)
        args = {
            k: v if k in constexprs else ti._implicit_cvt(v) for k, v in inspect.getcallargs(py_fn, **copies).items()
        }
        builder.set_grid_dim(*grid)
        if result["programs_total"] >= 2 * wave > 2:  # first: one loop iteration per program, however long the loop
            result["wave"] = _wave_pass(py_fn, kernel, args, grid, wave, buffers, budget_s / 2, result["notes"])
            tracer.deadline = time.monotonic() + budget_s
        with interpreter_semantics(py_fn), _BuilderTap(builder, tracer):
            for index, pid in enumerate(programs):
                builder.set_grid_idx(*pid)
                tracer.program = index
                kernel(**args)
                result["programs_sampled"] += 1
    except TraceAborted:
        done = result["programs_sampled"]
        result["notes"].append(f"trace stopped at its {budget_s:g} s budget after {done} programs")
    except Exception as exc:  # arguments it cannot copy, kernels it cannot run: the run itself goes on
        result["notes"].append(f"interpreter trace failed: {exc!r:.300}")
    finally:
        if saved_dim is not None:
            builder.grid_dim = saved_dim
        if saved_idx is not None:
            builder.grid_idx = saved_idx
    if tracer is not None and result.get("wave"):  # also when the budget stopped the sampled trace
        _whole_loop_reuse(result["wave"], tracer, result["programs_sampled"])
    if tracer is not None:
        result["sites"] = [
            site.as_dict(result["programs_total"], result["programs_sampled"]) for site in tracer.sites.values()
        ]
    return result


def _whole_loop_reuse(wave: dict, tracer: _Tracer, sampled: int) -> None:
    """The wave pass saw one iteration of each program's loop; over the whole loop a program reads
    that many times more of each buffer (its load line's calls per sampled program), so each line
    of the buffer is read by that many times more programs than one iteration's tile suggests."""
    for row in wave["buffers"]:
        calls = [s.calls for s in tracer.sites.values() if s.buffer == row["buffer"] and s.op == "load"]
        if calls:  # a program the budget stopped counts as one: the estimate errs low
            row["loop_calls"] = round(max(1.0, max(calls) / (sampled + 1 if sampled < 2 else sampled)), 2)
            row["reuse"] = round(row["reuse"] * row["loop_calls"], 2)


def _first_iterations(py_fn, kernel):
    """The kernel with each `for` loop cut after its first iteration, so a program of the wave pass
    reaches the stores after its loops; the kernel as it is where this Triton's interpreter has no
    rewriter to extend (the pass then stops at a loop's second iteration, before those stores)."""
    from triton.runtime import interpreter as ti

    class Cut(ast.NodeTransformer):
        def visit_For(self, node: ast.For) -> ast.For:
            self.generic_visit(node)
            node.body.append(ast.copy_location(ast.Break(), node.body[-1]))
            return node

    class FirstIterations(ti.FunctionRewriter):
        def _transform_ast(self, src):
            return ast.fix_missing_locations(Cut().visit(super()._transform_ast(src)))

    try:
        return FirstIterations(py_fn).rewrite_ast()
    except Exception:  # another interpreter's internals: the kernel as it is
        return kernel


def _wave_pass(py_fn, kernel, args, grid, wave, buffers, budget_s, notes: list) -> dict | None:
    """The first `wave` programs of the grid, each through the first iteration of its loops."""
    from triton.runtime.interpreter import interpreter_builder as builder  # (its grid set by trace_launch)

    gx, gy, _ = grid
    kernel, tracer = _first_iterations(py_fn, kernel), _FootprintTracer(buffers, budget_s)
    done = 0
    try:
        with interpreter_semantics(py_fn), _BuilderTap(builder, tracer):
            for i in range(wave):
                builder.set_grid_idx(i % gx, (i // gx) % gy, i // (gx * gy))
                tracer.start(i)
                try:
                    kernel(**args)
                except _ProgramDone:
                    pass
                done += 1
    except TraceAborted:
        notes.append(f"wave pass stopped at its {budget_s:g} s budget after {done} programs")
    except Exception as exc:  # the sampled trace still runs
        notes.append(f"wave pass failed after {done} programs: {exc!r:.300}")
        return None
    total = grid[0] * grid[1] * grid[2]
    return tracer.summary(done, total) if done >= 2 else None


def merge_traces(merged: dict | None, result: dict) -> dict:
    """One launch's `trace_launch` result added to a kernel's trace so far (None: the first)."""
    merged = merged or {"launches_traced": 0, "programs_total": 0, "programs_sampled": 0, "sites": [], "notes": []}
    merged["launches_traced"] += 1
    merged["programs_total"] += result["programs_total"]
    merged["programs_sampled"] += result["programs_sampled"]
    merged["sites"].extend(result["sites"])
    merged["notes"].extend(result["notes"])
    if result.get("wave") and not merged.get("wave"):
        merged["wave"] = result["wave"]
    return merged
