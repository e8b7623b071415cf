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

import math
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
_SUMMING = ("arith.addf", "arith.subf", "arith.mulf")  # a combine function whose rounding depends on the order
_FLOAT = re.compile(r"\b(?:f16|bf16|f32|f64)\b")
_POINTER = re.compile(r"!tt\.ptr<[^>]*>")
_READS = ("tt.load", "tt.descriptor_load", "tt.descriptor_gather", "tt.atomic_rmw", "tt.atomic_cas")
_PLAIN_LOADS = ("tt.load", "tt.descriptor_load", "tt.descriptor_gather")
_LOOPS = ("scf.for", "scf.while")
_VALUE = re.compile(r"%[\w.$-]+")
_ARG = re.compile(r"(%[\w.$-]+)\s*:\s*([^,()]*(?:<[^>]*>)?[^,()]*?)\s*(?:\{[^}]*\}\s*)?loc\((?:\"([^\"]+)\")?")
_TENSOR = re.compile(r"tensor<((?:\d+x)*)[^>]*>")
_SCALAR_TYPE = re.compile(r"^\(?\s*(?:!tt\.ptr<[^>]*>|(?:[if]\d+|bf16)\b)")
_FOR = re.compile(r"scf\.for\s+(%[\w.$-]+)\s*=\s*(%[\w.$-]+)\s+to\s+(%[\w.$-]+)\s+step\s+(%[\w.$-]+)")
UNBOUNDED = 0  # a count the TTIR cannot bound (a float carried through a loop, an atomic inside one)


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
    # per reduced argument, how many terms one stored element sums, as far as the TTIR says (the widths of
    # the order-dependent reductions it went through, multiplied along a chain: a tile's row sums summed
    # again); UNBOUNDED where a float carried through a loop took part (its trip count is the launch's)
    depths: dict[str, int] = field(default_factory=dict)
    # per accumulated argument, the float atomic adds one program makes into it (the lanes of its atomic
    # ops); UNBOUNDED where one sits in a loop
    adds: dict[str, int] = field(default_factory=dict)
    # accumulated arguments whose atomic's address comes from loaded values (a histogram): which element
    # gets how many of the adds is the data's
    scattered: set[str] = field(default_factory=set)
    # accumulated arguments an atomic adds into at addresses that do not depend on the program id: every
    # program adds into the same elements (a total, a column sum's row)
    shared: set[str] = field(default_factory=set)
    # a plain store of a value read from the same argument (a load, or an atomic used as a read), with
    # nothing ordering the programs (no lock, no flag an atomic decides): two programs on one element lose
    # one update on a GPU
    rmw: set[str] = field(default_factory=set)
    # a plain load at addresses that do not depend on the program id, of an argument this kernel also stores
    # program by program, with nothing ordering the programs: a program reads another's results, which the
    # interpreter (programs one after another) always has ready and a GPU may not
    cross: set[str] = field(default_factory=set)
    method: str = "ttir"


def merge_counts(counts: list[dict[str, int]]) -> dict[str, int]:
    """Per-argument counts of several compiled variants of a kernel: the largest, UNBOUNDED above all."""
    merged: dict[str, int] = {}
    for one in counts:
        for name, n in one.items():
            old = merged.get(name)
            merged[name] = n if old is None else UNBOUNDED if UNBOUNDED in (old, n) else max(old, n)
    return merged


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


def _first_shape(types: str) -> list[int] | None:
    """The shape of the first type in `types`: a tensor's dimensions, [] for a scalar, None if unknown."""
    types = types.strip()
    m = _TENSOR.match(types.lstrip("("))
    if m:
        return [int(d) for d in m.group(1).split("x") if d]
    return [] if _SCALAR_TYPE.match(types) else None


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
class _Region:
    """An op with a region open at this line: its results, and what the region says about its op."""

    op: str
    results: list[str]
    condition: list[str] = field(default_factory=list)  # an scf.if's condition
    axis: int = 0  # a tt.reduce / tt.scan's
    summing: bool = False  # its combine function adds or multiplies floats
    waits: list[str] = field(default_factory=list)  # an scf.while's condition


@dataclass
class _Memory:
    """One memory op: which, its pointer, its stored value (plain and descriptor stores), its full text,
    whether something orders the programs around it (a condition an atomic decides), and whether it sits
    in a loop or under a condition on the program id."""

    op: str
    pointer: str
    value: str | None
    text: str
    ordered: bool
    looped: bool
    guards: list[str]  # the conditions of the scf.if regions around it
    offsets: list[str] = field(default_factory=list)  # a descriptor op's coordinates: its address with the pointer


@dataclass
class _Flow:
    """Which values each TTIR value derives from, read line by line, and the kernel's memory ops."""

    names: dict[str, str]
    deps: dict[str, list[str]] = field(default_factory=dict)
    loaded: dict[str, str] = field(default_factory=dict)  # a loaded value -> the pointer it was loaded from
    stores: list[_Memory] = field(default_factory=list)  # stores and atomics
    reductions: set[str] = field(default_factory=set)  # values of a float carried through a loop
    widths: dict[str, int] = field(default_factory=dict)  # a reduce / scan / dot result -> terms it sums
    loads: list[_Memory] = field(default_factory=list)  # every read, atomics included
    regions: list[_Region] = field(default_factory=list)  # the enclosing ops with regions
    atomics: set[str] = field(default_factory=set)  # results of atomic ops (values another program may decide)
    pids: set[str] = field(default_factory=set)  # tt.get_program_id results
    fenced: bool = False  # past a loop that waited on an atomic (a lock taken, a flag seen)

    def add(self, line: str) -> None:
        if line.startswith("}"):
            self._close(line)
            return
        results, rhs = [], line
        if " = " in line and line.startswith("%"):
            lhs, rhs = line.split(" = ", 1)
            results = [r.split(":")[0] for r in _VALUE.findall(lhs)]
        op = rhs.split(" ", 1)[0]
        if op.startswith("scf.condition"):  # a while's test: whether it waits on an atomic
            if self.regions and self.regions[-1].op == "scf.while":
                self.regions[-1].waits += _VALUE.findall(rhs.split(" loc(", 1)[0])
            return
        # (the generic form names its operands inside the op's token: "tt.reduce"(%x) <{axis = 0 : i32}> ({)
        used = _operands(rhs[len(op) :]) if not op.startswith('"') else _VALUE.findall(rhs.split(")", 1)[0])
        base = op.split("(", 1)[0].strip('"')
        if op == "scf.yield" and self.regions:
            for r in self.regions[-1].results:
                self.deps.setdefault(r, []).extend(used)
        for r in results:
            self.deps.setdefault(r, []).extend(used)
            if op in _PLAIN_LOADS and used:
                self.loaded[r] = used[0]
        self._values(base, rhs, results)
        if rhs.rstrip().endswith("{"):
            axis = re.search(r"axis = (\d+)", rhs)
            condition = used[:1] if base == "scf.if" else []
            self.regions.append(_Region(base, results, condition=condition, axis=int(axis.group(1)) if axis else 0))
        if op in _WRITES and used:
            value = None  # (the first operand is the address)
            if op in ("tt.store", "tt.descriptor_store", "tt.atomic_rmw") and len(used) > 1:
                value = used[-1] if op == "tt.descriptor_store" else used[1]
            self.stores.append(self._memory(op, used[0], value, rhs))
            if op.startswith("tt.descriptor_"):
                self.stores[-1].offsets = used[1:-1]
        if op in _READS and used:
            self.loads.append(self._memory(op, used[0], None, rhs))
            if op.startswith("tt.descriptor_"):
                self.loads[-1].offsets = used[1:]

    def _values(self, op: str, rhs: str, results: list[str]) -> None:
        """What an op's results are beyond their operands: program ids, atomics' answers, a loop's induction
        variable (it follows its bounds) and carried values, a dot's K, a reduction region's combine."""
        if op in _SUMMING and self.regions and self.regions[-1].op in ("tt.reduce", "tt.scan"):
            self.regions[-1].summing = True
        if op == "tt.get_program_id":
            self.pids.update(results)
        if op in ("tt.atomic_rmw", "tt.atomic_cas"):
            self.atomics.update(results)
        loop = _FOR.search(rhs)
        if loop:
            self.deps.setdefault(loop.group(1), []).extend(loop.group(2, 3, 4))
        self._carried(rhs, results)
        if op in ("tt.dot", "tt.dot_scaled"):
            shape = _first_shape(rhs.split(" loc(", 1)[0].split(" : ", 1)[-1]) if op == "tt.dot" else None
            for r in results:
                self.widths[r] = shape[-1] if shape else UNBOUNDED

    def _memory(self, op: str, pointer: str, value: str | None, text: str) -> _Memory:
        guards = [c for region in self.regions if region.op == "scf.if" for c in region.condition]
        return _Memory(
            op,
            pointer,
            value,
            text,
            ordered=self.fenced or any(self.derives(c, self.atomics) for c in guards),
            looped=any(region.op in _LOOPS for region in self.regions),
            guards=guards,
        )

    def _close(self, line: str) -> None:
        """The end of a region: a reduction's type says its width; `} else {` and `} do {` go on with it."""
        if not self.regions:
            return
        region = self.regions[-1]
        if region.op in ("tt.reduce", "tt.scan") and " : " in line:
            shape = _first_shape(line.split(" loc(", 1)[0].split(" : ", 1)[1])
            width = shape[region.axis] if shape and region.axis < len(shape) else UNBOUNDED
            for r in region.results:
                self.widths[r] = width if region.summing else 1  # max, min, argmax: no order to round in
        if line.rstrip().endswith("{"):
            return
        self.regions.pop()
        if region.op == "scf.while" and any(self.derives(w, self.atomics) for w in region.waits):
            self.fenced = True  # a spin on a lock or a flag: what follows waits for other programs

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

    def derives(self, value: str, targets: set[str]) -> bool:
        """Whether `value` derives from any of `targets`, loaded values' addresses included (an index loaded at
        the program's own offset depends on the program id)."""
        seen, todo = set(), [value]
        while todo:
            v = todo.pop()
            if v in seen:
                continue
            if v in targets:
                return True
            seen.add(v)
            todo.extend(self.deps.get(v, ()))
            if v in self.loaded:
                todo.append(self.loaded[v])
        return False

    def depth(self, value: str) -> int:
        """Terms one element of `value` sums in an order the tiling decides: the widths of the summing
        reductions it went through, multiplied along a chain (a loaded value ends the walk: it is memory's);
        1 for an element-wise result, UNBOUNDED for a float carried through a loop."""
        memo: dict[str, int] = {}

        def walk(v: str, path: set[str]) -> int:
            if v in memo:
                return memo[v]
            if v in path or v in self.loaded:
                return 1
            if v in self.reductions:
                return UNBOUNDED
            path.add(v)
            inner = [walk(d, path) for d in self.deps.get(v, ())]
            path.discard(v)
            below = UNBOUNDED if UNBOUNDED in inner else max(inner, default=1)
            width = self.widths.get(v, 1)
            memo[v] = UNBOUNDED if UNBOUNDED in (below, width) else width * below
            return memo[v]

        return walk(value, set())

    def made_by_reduction(self, value: str) -> bool:
        """Whether `value` derives from a reduction whose order can change its rounding."""
        return self.depth(value) != 1

    def _per_program(self, op: _Memory) -> bool:
        """Whether a memory op's addresses, or its running at all, depend on the program id."""
        return self._addressed_per_program(op) or any(self.derives(g, self.pids) for g in op.guards)

    def _addressed_per_program(self, op: _Memory) -> bool:
        return any(self.derives(v, self.pids) for v in [op.pointer, *op.offsets])

    def access(self) -> Access:
        access = Access()
        for store in self.stores:
            # (an atomic add of a reduced value, split-K's partial products, counts as the reduction's too)
            if store.value is not None and (store.op != "tt.atomic_rmw" or _is_fadd(store)):
                depth = self.depth(store.value)
                if depth != 1:
                    for name in self.sources(store.pointer):
                        access.reduced.add(name)
                        access.depths = merge_counts([access.depths, {name: depth}])
        for pointer in [s.pointer for s in self.stores] + [r.pointer for r in self.loads]:
            access.indexes |= self.sources(pointer, via_loads=True)
        for store in self.stores:
            op, text = store.op, store.text
            hit = self.sources(store.pointer)
            access.written |= hit
            if op in ("tt.atomic_rmw", "tt.atomic_cas"):
                access.atomic |= hit
            elif op == "tt.store":
                access.stored |= hit
            if _is_fadd(store):
                self._accumulation(access, store, hit)
            if op == "tt.atomic_cas" or (op == "tt.atomic_rmw" and re.search(r"tt\.atomic_rmw\s+exch", text)):
                access.locks |= hit
        for read in self.loads:
            access.read |= self.sources(read.pointer)
        self._races(access)
        return access

    def _accumulation(self, access: Access, store: _Memory, hit: set[str]) -> None:
        """A float atomic add into `hit`: how many adds a program makes, and where they land."""
        access.accumulated |= hit
        lanes = _lanes(store.text)
        per_program = UNBOUNDED if store.looped or lanes is None else lanes
        for name in hit:  # (several atomic ops into one buffer: their lanes add up)
            old = access.adds.get(name)
            access.adds[name] = UNBOUNDED if UNBOUNDED in (old, per_program) else (old or 0) + per_program
        if self.sources(store.pointer, via_loads=True):
            access.scattered |= hit
        elif not self.derives(store.pointer, self.pids):
            access.shared |= hit

    def _races(self, access: Access) -> None:
        """`rmw` and `cross`: plain stores and loads between programs that nothing orders."""
        plain = [s for s in self.stores if s.op in ("tt.store", "tt.descriptor_store")]
        for store in plain:
            if store.ordered or store.value is None:
                continue
            mine = self.sources(store.pointer)
            # the stored value read from the same buffer: loaded from it, or an atomic on it used as a read
            came_from = self.sources(store.value, via_loads=True) | self.sources(store.value)
            access.rmw |= mine & came_from
        per_program = {name for s in plain if self._per_program(s) for name in self.sources(s.pointer)}
        for read in self.loads:
            if read.op in _PLAIN_LOADS and not read.ordered and not self._addressed_per_program(read):
                access.cross |= self.sources(read.pointer) & per_program


def _is_fadd(store: _Memory) -> bool:
    return store.op == "tt.atomic_rmw" and re.search(r"tt\.atomic_rmw\s+fadd", store.text) is not None


def _lanes(text: str) -> int | None:
    """Elements one atomic op updates per program, from its type: (tensor<64x!tt.ptr<f32>>, ...) is 64."""
    shape = _first_shape(text.split(" loc(", 1)[0].rsplit(" : ", 1)[-1])
    return None if shape is None else math.prod(shape)


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
