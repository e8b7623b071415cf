"""Which pointer arguments a kernel writes, read from its compiled TTIR.

A value written through `tt.store`, `tt.atomic_rmw`, `tt.atomic_cas` or a descriptor store
reaches memory through a pointer; walking that pointer's definitions back to the function's
arguments says which arguments are outputs. The walk follows every operand except the result
of a load (a loaded index selects an address, it is not the pointer's provenance), so
`out_ptr + tl.load(idx_ptr + i)` makes `out_ptr` an output and `idx_ptr` an input. Loops are
followed through `scf.for` iter_args and `scf.yield`. Read-only arguments are not outputs.

In a compiled-mode process the kernel's own TTIR is used (`CompiledKernel.asm["ttir"]`); under
the interpreter the kernel is compiled for sm_90 on the CPU just for this analysis
(`intelliperf.profiling.static.compile_here`).

Imports only triton and torch, lazily: this runs inside the user's program.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_WRITES = (
    "tt.store",
    "tt.atomic_rmw",
    "tt.atomic_cas",
    "tt.descriptor_store",
    "tt.descriptor_reduce",
    "tt.descriptor_scatter",
)
_REDUCING = ("tt.reduce", "tt.scan", "tt.dot", "tt.dot_scaled")
_FLOAT = re.compile(r"\b(?:f16|bf16|f32|f64)\b")
_POINTER = re.compile(r"!tt\.ptr<[^>]*>")
_READS = ("tt.load", "tt.descriptor_load", "tt.descriptor_gather", "tt.atomic_rmw", "tt.atomic_cas")
_VALUE = re.compile(r"%[\w.$-]+")
_ARG = re.compile(r"(%[\w.$-]+)\s*:\s*([^,()]*(?:<[^>]*>)?[^,()]*?)\s*(?:\{[^}]*\}\s*)?loc\((?:\"([^\"]+)\")?")


@dataclass
class Access:
    """Per argument name: written, read, written by a float atomic add (an accumulation), by any
    atomic, and by a plain store (a read-modify-write of those from several programs is a race)."""

    written: set[str] = field(default_factory=set)
    read: set[str] = field(default_factory=set)
    accumulated: set[str] = field(default_factory=set)
    atomic: set[str] = field(default_factory=set)
    stored: set[str] = field(default_factory=set)
    indexes: set[str] = field(default_factory=set)  # their loaded values become addresses (bins, gather indices)
    # stored values a reduction made (tl.sum, tl.cumsum, tl.dot, a float carried through a loop): the
    # order of their sums follows the tiling, so a retuned kernel may round them differently
    reduced: set[str] = field(default_factory=set)
    # a lock's state (atomic_cas / atomic_xchg): replays start it released (fresh values would be
    # a lock already held, and the kernel would spin forever)
    locks: set[str] = field(default_factory=set)
    method: str = "ttir"


def _signature(ttir: str) -> tuple[str, list[tuple[str, str, str]]]:
    """The `tt.func public` line and its arguments as (ssa name, type, python name)."""
    for line in ttir.splitlines():
        if "tt.func public" in line:
            params = line[line.index("(") + 1 : line.rindex(") attributes") if ") attributes" in line else None]
            args = [(m.group(1), m.group(2).strip(), m.group(3) or m.group(1)[1:]) for m in _ARG.finditer(params)]
            return line, args
    raise ValueError("no public tt.func in this TTIR")


def _operands(text: str) -> list[str]:
    """SSA values an op uses: everything before its type signature and location."""
    text = text.split(" loc(", 1)[0]
    head = text.split(" : ", 1)[0]
    return _VALUE.findall(head)


def analyse_ttir(ttir: str, python_names: list[str] | None = None) -> Access:
    """Written / read / accumulated argument names of the kernel in `ttir`.

    `python_names`, the kernel's non-constexpr parameters in order, names arguments when the
    TTIR does not carry names (older Triton prints %arg0, %arg1, ...)."""
    flow = _Flow(_memory_arguments(ttir, python_names))
    for raw in ttir.splitlines():
        flow.add(raw.strip())
    return flow.access()


def _memory_arguments(ttir: str, python_names: list[str] | None) -> dict[str, str]:
    """SSA name -> Python name of the pointer and descriptor arguments (only memory can be an output;
    offsets built from integer arguments are not)."""
    _, args = _signature(ttir)
    if python_names and all(py.startswith("arg") and py[3:].isdigit() for _, _, py in args):
        args = [(ssa, ty, python_names[i]) for i, (ssa, ty, _) in enumerate(args) if i < len(python_names)]
    return {ssa: py for ssa, ty, py in args if "tt.ptr" in ty or "tensordesc" in ty}


@dataclass
class _Flow:
    """Which values each TTIR value derives from, read line by line, and the kernel's memory ops."""

    names: dict[str, str]
    deps: dict[str, list[str]] = field(default_factory=dict)
    loaded: dict[str, str] = field(default_factory=dict)  # a loaded value -> the pointer it was loaded from
    # (op, pointer value, stored value of a plain or descriptor store else None, full line)
    stores: list[tuple[str, str, str | None, str]] = field(default_factory=list)
    reductions: set[str] = field(default_factory=set)  # values a reduction made
    loads: list[str] = field(default_factory=list)
    regions: list[list[str]] = field(default_factory=list)  # results of the enclosing scf regions

    def add(self, line: str) -> None:
        if line.startswith("}"):
            if self.regions:
                self.regions.pop()
            return
        results, rhs = [], line
        if " = " in line and line.startswith("%"):
            lhs, rhs = line.split(" = ", 1)
            results = [r.split(":")[0] for r in _VALUE.findall(lhs)]
        op = rhs.split(" ", 1)[0]
        used = _operands(rhs[len(op) :])
        if op == "scf.yield" and self.regions:
            for r in self.regions[-1]:
                self.deps.setdefault(r, []).extend(used)
        for r in results:
            self.deps.setdefault(r, []).extend(used)
            if op in ("tt.load", "tt.descriptor_load", "tt.descriptor_gather") and used:
                self.loaded[r] = used[0]
        self._carried(rhs, results)
        if op.split("(", 1)[0].strip('"') in _REDUCING:  # (the generic form: "tt.reduce"(%x) <{axis...}>)
            self.reductions.update(results)
        if rhs.rstrip().endswith("{"):
            self.regions.append(results)
        if op in _WRITES and used:
            value = None  # (the first operand is the address)
            if op in ("tt.store", "tt.descriptor_store") and len(used) > 1:
                value = used[1] if op == "tt.store" else used[-1]
            self.stores.append((op, used[0], value, rhs))
        if op in _READS and used:
            self.loads.append(used[0])

    def _carried(self, rhs: str, results: list[str]) -> None:
        """A loop's iter_args derive from their initial values and from what the loop yields."""
        if "iter_args(" not in rhs:
            return
        carried = rhs.split("iter_args(", 1)[1]
        types = _POINTER.sub("", carried.split("->", 1)[1]) if "->" in carried else ""
        if _FLOAT.search(types):  # a float accumulator: summed in the loop's order
            self.reductions.update(results)
        for inner, init in re.findall(r"(%[\w.$-]+) = (%[\w.$-]+)", carried):
            self.deps.setdefault(inner, []).append(init)
            for r in results:
                self.deps.setdefault(inner, []).append(r)

    def sources(self, value: str, via_loads: bool = False) -> set[str]:
        """Arguments this value's pointer derives from; with `via_loads`, those whose loaded
        values reach it instead (the walk stops at a load either way)."""
        seen, todo, found = set(), [value], set()
        while todo:
            v = todo.pop()
            if v in seen:
                continue
            seen.add(v)
            if v in self.names and not via_loads:
                found.add(self.names[v])
            if v in self.loaded:
                found |= self.sources(self.loaded[v]) if via_loads else set()
                continue
            todo.extend(self.deps.get(v, ()))
        return found

    def made_by_reduction(self, value: str) -> bool:
        """Whether `value` derives from a reduction's result (a loaded value ends the walk: it is memory's)."""
        seen, todo = set(), [value]
        while todo:
            v = todo.pop()
            if v in seen or v in self.loaded:
                continue
            if v in self.reductions:
                return True
            seen.add(v)
            todo.extend(self.deps.get(v, ()))
        return False

    def access(self) -> Access:
        access = Access()
        for _, pointer, value, _ in self.stores:
            if value is not None and self.made_by_reduction(value):
                access.reduced |= self.sources(pointer)
        for pointer in [p for _, p, _, _ in self.stores] + self.loads:
            access.indexes |= self.sources(pointer, via_loads=True)
        for op, pointer, _, text in self.stores:
            hit = self.sources(pointer)
            access.written |= hit
            if op in ("tt.atomic_rmw", "tt.atomic_cas"):
                access.atomic |= hit
            elif op == "tt.store":
                access.stored |= hit
            if op == "tt.atomic_rmw" and re.search(r"tt\.atomic_rmw\s+fadd", text):
                access.accumulated |= hit
            if op == "tt.atomic_cas" or (op == "tt.atomic_rmw" and re.search(r"tt\.atomic_rmw\s+exch", text)):
                access.locks |= hit
        for pointer in self.loads:
            access.read |= self.sources(pointer)
        return access


# --- getting a kernel's TTIR inside the user's process ---------------------------------------


def ttir_of(compiled) -> str | None:
    asm = getattr(compiled, "asm", None)
    try:
        return asm["ttir"] if asm is not None else None
    except (KeyError, TypeError):
        return None


def interpreted_ttir(py_fn, bound: dict) -> str:
    """Compile `py_fn` for sm_90 on the CPU and return its TTIR, also from inside a process that
    runs the interpreter (see `intelliperf.profiling.static.compile_here`)."""
    from intelliperf.profiling.static import compile_here

    return compile_here(py_fn, bound, "cuda:90").asm["ttir"]
