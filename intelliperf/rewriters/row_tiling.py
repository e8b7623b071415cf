"""registerPressure recipe `tile-row-loop`: walk an oversized row block in chunks instead of holding it.

The textbook case is a row kernel that holds a whole row in registers: `cols = tl.arange(0,
BLOCK_SIZE)` with BLOCK_SIZE = next_power_of_2(n_cols), loads of the row, row reductions
(`tl.sum`, `tl.max`, `tl.min`) of elementwise expressions, and stores of an elementwise function
of the loaded values and the reduced scalars. With rows of 16K-64K elements every row-wide value
takes dozens of registers in each thread and the kernel spills. The recipe keeps the same lanes
but visits them CHUNK at a time with `tl.range` loops:

* one loop per dependency level of the reductions (loop k accumulates the reductions that use
  only reductions of earlier loops, e.g. the mean, then the variance around it), each into a
  [CHUNK] float accumulator reduced once after its loop;
* the scalar statements after the loop that makes their reductions available;
* a last loop that reloads each chunk and computes and stores the outputs.

Every statement that a loop needs is copied into it with the block's `tl.arange(0, BLOCK)`
replaced by `chunk_start + tl.arange(0, CHUNK)`. The loops cover the block's BLOCK lanes as
the original did, so each lane computes the same values under the same masks (the `other=`
values of masked lanes included) and only the order of the additions changes. CHUNK is
`min(BLOCK, <literal>)` in the kernel, so a launch with a smaller block still runs one chunk of
its own size. The launcher is unchanged.

It applies to straight-line kernels (assignments, `tl.store`) over one-dimensional blocks that
use elementwise operations and full-row `tl.sum/max/min` of floating-point data. It declines, in
one sentence: loops (a persistent grid's loop over rows carries values from row to row that stay a
whole row wide, and a kernel that already loops over chunks is done), `if`, 2-D blocks, other
reductions, scans or shape changes, calls it cannot look into, integer data, a kernel without a row
reduction (a smaller block and more programs fix that one), a store that a reduction reads back,
a name reassigned between uses the loops would separate, and a block small enough to stay in
registers.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..syntax import indent_of, last_line
from .base import RewriteRequest
from .kernel_syntax import tl_name
from .source import lines_of, node_span
from .tiling import ELEMENTWISE

# Register-file arithmetic. An SM has 65536 32-bit registers and a thread at most 255 of them.
# A row value of B 32-bit elements spread over a program's 32 * num_warps threads takes
# B / (32 * num_warps) registers in each thread, and a row kernel keeps about four such values live
# (the input, a weight, a temporary, the output). Up to 32 registers a value (4 x 32 = 128, half
# the 255 limit, the rest for addresses, masks and the compiler's own temporaries) the row stays
# in registers: 4096 elements at 4 warps; above that it spills. A chunk takes 8 registers a value
# (1024 elements at 4 warps): inside the loops each value also has a 64-bit pointer (two registers
# an element) and the next chunk's loads in flight, and a layer norm compiled for sm_90 at 4 warps
# takes 96 registers with 1024-lane chunks but the whole 255 with 2048-lane ones.
REGISTERS_PER_ROW_VALUE_THAT_FIT = 32
REGISTERS_PER_CHUNK_VALUE = 8
THREADS_PER_WARP = 32
DEFAULT_NUM_WARPS = 4  # Triton's default when the launch does not set it

REDUCTIONS = {"sum", "max", "min"}
ACCUMULATE = {  # reduction -> (accumulator's initial value, update of `acc` by `value`)
    "sum": ("tl.zeros([{chunk}], dtype={dtype})", "{acc} += {value}"),
    "max": ('tl.full([{chunk}], float("-inf"), dtype={dtype})', "{acc} = tl.maximum({acc}, {value})"),
    "min": ('tl.full([{chunk}], float("inf"), dtype={dtype})', "{acc} = tl.minimum({acc}, {value})"),
}
TL_CALLS = ELEMENTWISE | REDUCTIONS | {"num_programs", "cast", "log1p", "expm1"}
PLAIN_CALLS = {"float", "int", "min", "max", "abs"}  # Python builtins a kernel uses on scalars
MATH_NAMESPACES = ("tl.math", "tl.extra.cuda.libdevice", "libdevice", "triton.language.math")


class NotRowTiled(Exception):
    """The kernel is not of the shape the recipe rewrites (the message says why)."""


@dataclass
class _Reduction:
    call: ast.Call
    op: str  # sum, max, min
    argument: ast.expr
    statement: int  # index of the statement it is in
    level: int  # 1 + the highest level of the reductions its argument uses
    inline: bool  # in a scalar statement, not inside another reduction: reduced in place
    accumulator: str = ""
    name: str = ""  # the scalar it becomes (hoisted reductions only)


@dataclass
class _Statement:
    node: ast.stmt
    index: int
    targets: list[str]
    reads: dict[str, int | None]  # name -> the statement that last assigned it (None: a parameter or global)
    block: bool  # depends on the row's lanes
    level: int  # the highest level of the reductions it uses
    store: bool
    live: set[str] = field(default_factory=set)  # names read outside its reductions


def tile_row_loop(request: RewriteRequest) -> tuple[str, str | None]:
    """The kernel with its row walked in chunks (see the module docstring); the launcher is unchanged."""
    return _RowKernel(request).rewrite(), None


class _RowKernel:
    def __init__(self, request: RewriteRequest) -> None:
        self.request = request
        self.source = request.kernel.source
        fn = ast.parse(self.source).body[0]
        if not isinstance(fn, ast.FunctionDef):
            raise NotRowTiled(f"{request.kernel.name} is not a plain function")
        self.fn = fn
        self.parameters = {a.arg for a in fn.args.args}
        self.taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | self.parameters
        self.reductions: dict[int, _Reduction] = {}
        self.statements: list[_Statement] = []

    def where(self, node: ast.AST) -> str:
        return f"line {self.request.kernel.line + getattr(node, 'lineno', 1) - 1}"

    # --- the shape of the kernel

    def rewrite(self) -> str:
        body = self._straight_line_body()
        self.block_size, self.block_length = self._block()
        self._check_calls()
        for index, stmt in enumerate(body):
            self.statements.append(self._analyse(stmt, index))
        if not self.reductions:
            raise NotRowTiled(
                "the kernel reduces nothing over the row, so nothing needs the whole row at once: "
                f"a smaller {self.block_size} with more programs fixes it without a loop"
            )
        self.accumulator_dtype = self._accumulator_dtype()
        self.chunk = self._chunk()
        self._check_stores_before_loads()
        return self._emit(body)

    def _straight_line_body(self) -> list[ast.stmt]:
        body = list(self.fn.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring stays in the header
        for stmt in body:
            if isinstance(stmt, (ast.For, ast.While)):
                raise NotRowTiled(
                    f"{self.where(stmt)} is a loop (`{ast.unparse(stmt).splitlines()[0]}`): the recipe rewrites "
                    "straight-line kernels that hold one row per program, not a persistent grid's loop over rows "
                    "(whose values carried from row to row stay a whole row wide) nor a kernel that already loops "
                    "over chunks"
                )
            if isinstance(stmt, ast.If):
                raise NotRowTiled(f"{self.where(stmt)} is an `if`, and the recipe rewrites straight-line kernels only")
            if not (_assigned_name(stmt) or _is_store(stmt)):
                raise NotRowTiled(
                    f"{self.where(stmt)} (`{ast.unparse(stmt).splitlines()[0]}`) is not `name = expression` or "
                    "a tl.store, and the recipe rewrites straight-line kernels only"
                )
        if not body:
            raise NotRowTiled("the kernel has no statements to rewrite")
        return body

    def _block(self) -> tuple[str, int]:
        """The block-size expression of the kernel's `tl.arange(0, BLOCK)` and its recorded value."""
        for node in ast.walk(self.fn):
            if isinstance(node, ast.Subscript):
                raise NotRowTiled(
                    f"the kernel indexes a block as 2-D or by position (`{ast.unparse(node)}`), and the recipe "
                    "chunks one-dimensional rows only"
                )
        aranges = [c for c in _calls(self.fn) if tl_name(c) == "arange"]
        if not aranges:
            raise NotRowTiled("the kernel has no `tl.arange` block, so there is no row to walk in chunks")
        sizes = sorted({ast.unparse(c.args[1]) if len(c.args) == 2 else "" for c in aranges})
        if len(sizes) > 1:
            raise NotRowTiled(
                f"the kernel has blocks of different lengths ({', '.join(f'`{s}`' for s in sizes)}), so its "
                "lanes are not one row"
            )
        first = aranges[0]
        if len(first.args) != 2 or first.keywords or ast.unparse(first.args[0]) != "0":
            raise NotRowTiled(f"the block `{ast.unparse(first)}` does not start at 0")
        size = first.args[1]
        value = size.value if isinstance(size, ast.Constant) else self.request.constexprs().get(ast.unparse(size))
        if not isinstance(value, int) or isinstance(value, bool):
            raise NotRowTiled(f"the recorded launch does not say how long the block `{ast.unparse(first)}` is")
        return ast.unparse(size), value

    def _check_calls(self) -> None:
        for call in _calls(self.fn):
            name, func = tl_name(call), ast.unparse(call.func)
            allowed = (
                name in TL_CALLS
                or func in PLAIN_CALLS
                or func.rsplit(".", 1)[0] in MATH_NAMESPACES
                or (isinstance(call.func, ast.Attribute) and call.func.attr == "to" and name is None)
            )
            if not allowed:
                raise NotRowTiled(
                    f"`{func}` ({self.where(call)}) is not an elementwise operation or a full-row "
                    "tl.sum/max/min the recipe can split into chunks"
                )

    # --- what each statement depends on

    def _analyse(self, stmt: ast.stmt, index: int) -> _Statement:
        defined = self._definitions_before(index)
        value, target = _value_of(stmt), _assigned_name(stmt)
        augmented = isinstance(stmt, ast.AugAssign)
        read = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} | ({target} if augmented else set())
        reads = {name: defined.get(name) for name in read if name}
        outer: list[_Reduction] = []
        block, level = self._info(value, reads, index, outer)
        if augmented:
            earlier = self._named(target, reads)
            block, level = block or earlier[0], max(level, earlier[1])
        for reduction in outer:  # a scalar statement reduces in place; a row statement reads a hoisted scalar
            reduction.inline = not block
        statement = _Statement(stmt, index, [target] if target else [], reads, block, level, _is_store(stmt))
        statement.live = _names_outside(value, self.reductions) | ({target} if augmented and target else set())
        # a row statement runs once per chunk: a name it assigns that lives outside the loops (a
        # parameter, a scalar) would carry one chunk's value into the next
        was_block = self.statements[defined[target]].block if target in defined else False
        if target and (target in defined or target in self.parameters) and was_block != block:
            kinds = ("a block of the row", "a scalar") if not block else ("a scalar", "a block of the row")
            raise NotRowTiled(
                f"`{target}` holds {kinds[0]} and then {kinds[1]} ({self.where(stmt)}), which the chunk "
                "loops cannot keep apart"
            )
        return statement

    def _definitions_before(self, index: int) -> dict[str, int]:
        defined: dict[str, int] = {}
        for stmt in self.statements[:index]:
            for name in stmt.targets:
                defined[name] = stmt.index
        return defined

    def _named(self, name: str | None, reads: dict[str, int | None]) -> tuple[bool, int]:
        where = reads.get(name) if name else None
        if where is None:
            return False, 0
        stmt = self.statements[where]
        return stmt.block, stmt.level

    def _info(
        self, expr: ast.expr, reads: dict[str, int | None], index: int, outer: list[_Reduction] | None
    ) -> tuple[bool, int]:
        """(depends on the row's lanes, highest reduction level it uses), recording its reductions;
        `outer` collects those not inside another reduction."""
        if isinstance(expr, ast.Call) and tl_name(expr) in REDUCTIONS:
            reduction = self._reduction(expr, reads, index)
            if outer is not None:
                outer.append(reduction)
            return False, reduction.level
        if isinstance(expr, ast.Call) and tl_name(expr) == "arange":
            return True, 0
        if isinstance(expr, ast.Name):
            return self._named(expr.id, reads)
        block, level = False, 0
        for child in ast.iter_child_nodes(expr):
            if isinstance(child, ast.expr):
                b, lv = self._info(child, reads, index, outer)
                block, level = block or b, max(level, lv)
            elif isinstance(child, ast.keyword):
                b, lv = self._info(child.value, reads, index, outer)
                block, level = block or b, max(level, lv)
        return block, level

    def _reduction(self, call: ast.Call, reads: dict[str, int | None], index: int) -> _Reduction:
        op = tl_name(call) or ""
        axis = call.args[1:2] or [k.value for k in call.keywords if k.arg == "axis"]
        extra = [k.arg for k in call.keywords if k.arg != "axis"]
        if not call.args or len(call.args) > 2 or extra:
            raise NotRowTiled(
                f"`{ast.unparse(call)}` ({self.where(call)}) has arguments the recipe does not carry over "
                f"({', '.join(f'`{e}`' for e in extra) or 'the argument list'})"
            )
        if axis and ast.unparse(axis[0]) not in ("0", "None"):
            raise NotRowTiled(f"`{ast.unparse(call)}` ({self.where(call)}) does not reduce over the row's axis 0")
        argument = call.args[0]
        block, level = self._info(argument, reads, index, None)
        if not block:
            raise NotRowTiled(
                f"`{ast.unparse(call)}` ({self.where(call)}) reduces a value that does not depend on the row's lanes"
            )
        found = _Reduction(call, op, argument, index, level + 1, inline=False)
        self.reductions[id(call)] = found
        return found

    # --- what the rewrite may assume

    def _accumulator_dtype(self) -> str:
        """float32, or float64 when a row is loaded from float64 data; integer rows are declined."""
        dtypes = self._loaded_dtypes()
        for name, dtype in dtypes.items():
            if not any(kind in dtype for kind in ("float", "bfloat")):
                raise NotRowTiled(
                    f"the row is loaded from `{name}`, whose recorded dtype is {dtype}, and the recipe accumulates its "
                    "reductions in floating point"
                )
        return "tl.float64" if "float64" in dtypes.values() else "tl.float32"

    def _loaded_dtypes(self) -> dict[str, str]:
        """The recorded dtypes of the tensor arguments that the block's loads read."""
        signature = self.request.profile.signatures[0].args if self.request.profile.signatures else []
        tensors = {a.name: a.dtype for a in signature if a.kind == "tensor" and a.dtype}
        found: dict[str, str] = {}
        for stmt in self.statements:
            for call in _calls(stmt.node):
                if tl_name(call) == "load" and call.args and self._on_lanes(call.args[0], stmt):
                    for name in self._parameters_behind(call.args[0], stmt):
                        if name in tensors:
                            found[name] = tensors[name]
        return found

    def _on_lanes(self, expr: ast.expr, stmt: _Statement) -> bool:
        """Whether `expr`, read in `stmt`, depends on the row's lanes (a load of it reads the row)."""
        return any(
            (isinstance(n, ast.Call) and tl_name(n) == "arange")
            or (isinstance(n, ast.Name) and self._named(n.id, stmt.reads)[0])
            for n in ast.walk(expr)
        )

    def _parameters_behind(self, expr: ast.expr, stmt: _Statement) -> set[str]:
        """The parameters and globals `expr` is computed from, through the kernel's assignments."""
        found: set[str] = set()
        seen: set[tuple[str, int]] = set()
        todo = [(n.id, stmt) for n in ast.walk(expr) if isinstance(n, ast.Name)]
        while todo:
            name, user = todo.pop()
            if (name, user.index) in seen:
                continue
            seen.add((name, user.index))
            where = user.reads.get(name)
            if where is None:
                found.add(name)
            else:
                todo += [(n, self.statements[where]) for n in self.statements[where].reads]
        return found

    def _chunk(self) -> int:
        num_warps = self._num_warps()
        words = 2 if self.accumulator_dtype == "tl.float64" else 1  # a float64 takes two 32-bit registers
        threads = THREADS_PER_WARP * num_warps
        per_value = self.block_length * words / threads
        if per_value <= REGISTERS_PER_ROW_VALUE_THAT_FIT:
            raise NotRowTiled(
                f"the block is {self.block_length} elements ({per_value:g} registers a thread per row value at "
                f"{num_warps} warps), small enough to stay in registers"
            )
        chunk = 1 << ((REGISTERS_PER_CHUNK_VALUE * threads // words).bit_length() - 1)  # a power of two
        return min(chunk, self.block_length // 2)

    def _num_warps(self) -> int:
        signatures = self.request.profile.signatures
        return (signatures[0].num_warps if signatures else None) or DEFAULT_NUM_WARPS

    def _check_stores_before_loads(self) -> None:
        """The reduction loops run before any row store: a load they need must not follow one."""
        stores = [s for s in self.statements if s.store and s.block]
        if not stores:
            return
        for r in self.reductions.values():
            stmt = self.statements[r.statement]
            readers = [(self.statements[i].node, i) for i in self._needed([(r.argument, stmt)])]
            for node, index in [*readers, (r.argument, r.statement)]:
                if index > stores[0].index and any(tl_name(c) == "load" for c in _calls(node)):
                    raise NotRowTiled(
                        f"{self.where(node)} loads, for a row reduction, after the row store at "
                        f"{self.where(stores[0].node)}, and the chunked reductions would run before every store"
                    )

    # --- the loops

    def _levels(self) -> list[int]:
        return sorted({r.level for r in self.reductions.values()})

    def _roots(self, level: int) -> list[tuple[ast.expr, _Statement]]:
        return [(r.argument, self.statements[r.statement]) for r in self.reductions.values() if r.level == level]

    def _needed(self, roots: list[tuple[ast.expr, _Statement]]) -> set[int]:
        """The row statements (by index) that computing `roots` needs inside a chunk loop."""
        needed: set[int] = set()
        todo = [(name, stmt) for expr, stmt in roots for name in _names_outside(expr, self.reductions)]
        while todo:
            name, user = todo.pop()
            where = user.reads.get(name)
            if where is None or where in needed or not self.statements[where].block:
                continue
            needed.add(where)
            source = self.statements[where]
            todo += [(n, source) for n in source.live]
        return needed

    def _emit(self, body: list[ast.stmt]) -> str:
        self._name_reductions()
        self.indent = indent_of(lines_of(self.source)[body[0].lineno - 1])
        self.emitted_comments: set[int] = set()
        self.current: dict[str, int] = {}  # name -> the statement that assigned it last, outside the loops
        out = self._header(body)
        scalars = sorted((s for s in self.statements if not s.block), key=lambda s: (s.level, s.index))
        out += self._scalars([s for s in scalars if s.level == 0])
        out += self._chunk_definition()
        for level in self._levels():
            out += self._reduction_loop(level)
            out += self._scalars([s for s in scalars if s.level == level])
        stores = [s for s in self.statements if s.store and s.block]
        if stores:
            loop = sorted(self._needed([(_value_of(s.node), s) for s in stores]) | {s.index for s in stores})
            out += ["", *self._loop_header(), *self._in_loop(loop)]
        return "\n".join(out) + "\n"

    def _name_reductions(self) -> None:
        """Accumulator names (one for reductions of the same value) and the hoisted scalars' names."""
        accumulators: dict[tuple, str] = {}
        hoisted: dict[tuple, str] = {}
        for r in sorted(self.reductions.values(), key=lambda r: (r.statement, r.call.lineno, r.call.col_offset)):
            stmt = self.statements[r.statement]
            target = _assigned_name(stmt.node)
            whole = r.inline and target and _value_of(stmt.node) is r.call
            key = (r.op, ast.dump(r.argument), frozenset((n, stmt.reads.get(n)) for n in _names_in(r.argument)))
            if key not in accumulators:
                accumulators[key] = self._fresh(f"{target if whole else f'row_{r.op}'}_acc")
            r.accumulator = accumulators[key]
            if not r.inline and key not in hoisted:
                hoisted[key] = self._fresh(f"row_{r.op}")
            r.name = hoisted.get(key, "") if not r.inline else ""

    def _fresh(self, base: str) -> str:
        name, n = base, 1
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        return name

    def _header(self, body: list[ast.stmt]) -> list[str]:
        lines = lines_of(self.source)
        docstring = self.fn.body[0] if self.fn.body[0] is not body[0] else None
        self.header_end = last_line(docstring) if docstring else body[0].lineno - 1
        return lines[: self.header_end]

    def _chunk_definition(self) -> list[str]:
        self.chunk_name, self.start_name = self._fresh("CHUNK"), self._fresh("chunk_start")
        size = self.block_size
        value = f"min({size}, {self.chunk})" if not size.isdigit() else str(self.chunk)
        return [
            "",
            f"{self.indent}# intelliperf recipe tile-row-loop: the {size}-lane row in chunks of {self.chunk} lanes,",
            f"{self.indent}# one loop per level of dependent row reductions and a last one for the stores",
            f"{self.indent}{self.chunk_name}: tl.constexpr = {value}",
        ]

    def _loop_header(self) -> list[str]:
        return [f"{self.indent}for {self.start_name} in tl.range(0, {self.block_size}, {self.chunk_name}):"]

    def _reduction_loop(self, level: int) -> list[str]:
        reductions = [r for r in self.reductions.values() if r.level == level]
        accumulated = list({r.accumulator: r for r in reversed(reductions)}.values())[::-1]  # the first of each
        inner = self.indent + "    "
        out = [""]
        for r in accumulated:
            init = ACCUMULATE[r.op][0].format(chunk=self.chunk_name, dtype=self.accumulator_dtype)
            out.append(f"{self.indent}{r.accumulator} = {init}")
        out += self._loop_header()
        out += self._in_loop(sorted(self._needed(self._roots(level))))
        for r in accumulated:
            self._check_reads(_names_outside(r.argument, self.reductions), self.statements[r.statement])
            value = self._render(r.argument, inner)
            value = f"({value})" if "\n" in value else value
            out.append(inner + ACCUMULATE[r.op][1].format(acc=r.accumulator, value=value))
        finals = {r.name: self._reduced(r) for r in reductions if not r.inline}
        out += [f"{self.indent}{name} = {value}" for name, value in finals.items()]
        return out

    def _reduced(self, r: _Reduction) -> str:
        return f"tl.{r.op}({r.accumulator}, axis=0)"

    def _in_loop(self, indices: list[int]) -> list[str]:
        out: list[str] = []
        for index in indices:
            stmt = self.statements[index]
            self._check_reads(stmt.live, stmt)
            out += self._statement(stmt, self.indent + "    ")
        return out

    def _scalars(self, statements: list[_Statement]) -> list[str]:
        out: list[str] = []
        for stmt in statements:
            self._check_reads(stmt.live, stmt)
            out += self._statement(stmt, self.indent)
            for name in stmt.targets:
                self.current[name] = stmt.index
        return out

    def _check_reads(self, names: set[str], stmt: _Statement) -> None:
        """Each name the statement reads from outside the loop must still hold the value it read."""
        for name in names:
            where = stmt.reads.get(name)
            outside = where is None or not self.statements[where].block
            if outside and self.current.get(name) != where:
                last = self.current.get(name)
                moved = self.statements[last].node if last is not None else stmt.node
                raise NotRowTiled(
                    f"`{name}` is reassigned ({self.where(moved)}) between uses that the chunk loops would "
                    f"separate, so {self.where(stmt.node)} would read the other value"
                )

    def _statement(self, stmt: _Statement, indent: str) -> list[str]:
        comments = []
        if stmt.index not in self.emitted_comments:
            self.emitted_comments.add(stmt.index)
            comments = [indent + line.strip() for line in self._comments_above(stmt)]
        return comments + [indent + self._render(stmt.node, indent)]

    def _comments_above(self, stmt: _Statement) -> list[str]:
        lines = lines_of(self.source)
        start = last_line(self.statements[stmt.index - 1].node) if stmt.index else self.header_end
        return [line for line in lines[start : stmt.node.lineno - 1] if line.strip().startswith("#")]

    def _render(self, node: ast.stmt | ast.expr, indent: str) -> str:
        """The node's text with the block's lanes replaced by the chunk's, each reduction by its
        result, and continuation lines moved to `indent`."""
        replacements: dict[int, str] = {}
        for call in _calls(node):
            if tl_name(call) == "arange":
                lanes = f"{self.start_name} + tl.arange(0, {self.chunk_name})"
                whole = isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is call
                replacements[id(call)] = lanes if whole else f"({lanes})"
            elif id(call) in self.reductions:
                r = self.reductions[id(call)]
                replacements[id(call)] = self._reduced(r) if r.inline else r.name
        start, stop = node_span(self.source, node)
        text = self.source[start:stop]
        for child in sorted(_topmost(node, replacements), key=lambda n: node_span(self.source, n), reverse=True):
            a, b = node_span(self.source, child)
            text = text[: a - start] + replacements[id(child)] + text[b - start :]
        shift = " " * (len(indent) - len(self.indent))
        first, *rest = lines_of(text)
        return "\n".join([first, *(shift + line if line.strip() else line for line in rest)])


# --- small syntax helpers


def _calls(node: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call)]


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _is_store(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and tl_name(stmt.value) == "store"


def _assigned_name(stmt: ast.stmt) -> str | None:
    """The one name a `name = ...`, `name: T = ...` or `name op= ...` assigns, else None."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and isinstance(stmt.target, ast.Name) and stmt.value:
        return stmt.target.id
    return None


def _value_of(stmt: ast.stmt) -> ast.expr:
    value = getattr(stmt, "value", None)
    assert isinstance(value, ast.expr)
    return value


def _topmost(node: ast.AST, replacements: dict[int, str]) -> list[ast.Call]:
    """The calls under `node` (itself included) to replace, none inside another."""
    if isinstance(node, ast.Call) and id(node) in replacements:
        return [node]
    return [found for child in ast.iter_child_nodes(node) for found in _topmost(child, replacements)]


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _names_outside(node: ast.AST, reductions: dict[int, _Reduction]) -> set[str]:
    """The names `node` reads outside the reductions in it (each becomes a scalar of its own)."""
    if id(node) in reductions:
        return set()
    if isinstance(node, ast.Name):
        return {node.id}
    return {name for child in ast.iter_child_nodes(node) for name in _names_outside(child, reductions)}
