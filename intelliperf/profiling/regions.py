"""Regions of a Triton kernel, and its source with Proton region timers around them.

The regions come from the kernel's syntax, so the user touches nothing: the whole body
("kernel"), the statements before the main loop ("prologue"), the main loop ("loop"), and
inside it runs of consecutive statements by what they do: global loads ("load"), `tl.dot`
("dot"), other arithmetic ("math"), stores and atomics ("store"); after the loop the
"epilogue". The main loop is the outermost loop that contains a `tl.dot`, or else the one with
the most loads. Statements without a call (pointer increments) stay outside every region: a
timer around them would cost more than they do.

Timers are `pl.enter_scope(name)` / `pl.exit_scope(name)` statements (Triton's
`triton.profiler.language`), inserted at the statement's indentation. They are no-ops unless
a Proton session with the instrumentation backend is active, so the instrumented file runs like
the original otherwise. Source-level scopes were chosen over `proton.record` ops in TTGIR:
they are placed before Triton's pipeliner runs, so a region's name means the same statements
on every Triton version, and what the pipeliner did to them is visible (and checked, see
`timeline.check`) instead of hidden in a TTGIR edit that each Triton release can break.

A kernel that already calls `pl.enter_scope` / `pl.scope` keeps its own regions.
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from ..syntax import last_line

PL = "_intelliperf_pl"  # the alias the instrumented file imports triton.profiler.language as
MEMORY_KINDS = ("load", "store")
COMPUTE_KINDS = ("dot", "math")
_LOADS = {"load", "_experimental_descriptor_load", "load_tensor_descriptor"}
_STORES = {
    "store",
    "atomic_add",
    "atomic_max",
    "atomic_min",
    "atomic_cas",
    "atomic_xchg",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "_experimental_descriptor_store",
    "store_tensor_descriptor",
}
_INDEXING = {"arange", "program_id", "num_programs", "cdiv", "multiple_of", "max_contiguous", "min", "max"}
_USER_SCOPES = {"enter_scope", "exit_scope", "scope", "record"}


@dataclass
class Region:
    """A timed part of the kernel: its scope name, what it does, and where it is."""

    name: str  # the Proton scope name, e.g. "load@29"
    kind: str  # kernel, prologue, loop, load, dot, math, store, epilogue, or user
    first_line: int  # in the kernel's file
    last_line: int
    in_loop: bool = False  # runs once per iteration of the main loop

    @property
    def side(self) -> str:
        """memory, compute or other: the two sides whose overlap the analysis measures."""
        if self.kind in MEMORY_KINDS:
            return "memory"
        if self.kind in COMPUTE_KINDS:
            return "compute"
        return "other"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Instrumented:
    """A kernel file with region timers: the new text, the regions, and what was left out."""

    text: str
    regions: list[Region]
    loop_line: int | None  # the main loop, in the file
    notes: list[str]
    user_scopes: bool = False  # the kernel had its own scopes; nothing was inserted
    via: tuple[str, int] | None = None  # (helper, line of its call in the kernel): the loop is in that helper
    via_end: int | None = None  # the call's last line (compilers put inlined code at either end of a call)


def user_kind(name: str) -> str:
    """A kind for a region the user named: by the words in its name."""
    low = name.lower()
    if re.search(r"load|copy|tma|fetch|mem|read", low):
        return "load"
    if re.search(r"store|write", low):
        return "store"
    if re.search(r"dot|mma|gemm|matmul", low):
        return "dot"
    if re.search(r"softmax|math|compute|exp|reduce", low):
        return "math"
    return "user"


def instrument(text: str, kernel: str, kernel_line: int | None = None, inner: bool = True) -> Instrumented:
    """The file `text` with timers around the regions of the @triton.jit function `kernel`
    (the one defined at `kernel_line` when given); `inner=False` leaves the loop body alone
    (kernel, prologue, loop, epilogue only: the cheapest timing). Raises ValueError when the
    kernel is not there."""
    tree = ast.parse(text)
    fn = _find_kernel(tree, kernel, kernel_line)
    if _has_user_scopes(fn):
        return Instrumented(
            text, [], None, [f"{kernel} names its own Proton scopes; they are used as they are"], user_scopes=True
        )
    body = [s for s in fn.body if not _is_docstring(s)]
    notes: list[str] = []
    regions: list[tuple[Region, ast.stmt, ast.stmt]] = []  # region, first statement, last statement
    has_return = any(isinstance(n, ast.Return) for n in ast.walk(fn))
    if has_return:
        notes.append(
            "the kernel returns early, so no whole-kernel region (its end would not be recorded on every path)"
        )
    elif body:
        regions.append((Region("kernel", "kernel", body[0].lineno, last_line(body[-1])), body[0], body[-1]))
    loop = _main_loop(fn)
    if loop is None:
        notes.append("no loop: the regions are the kernel's own statements")
        regions += _runs(body, in_loop=False)
    else:
        block = _block_of(fn, loop)
        at = block.index(loop)
        before = [s for s in block[:at] if not _is_docstring(s)]
        if before and not has_return:
            regions.append(
                (Region("prologue", "prologue", before[0].lineno, last_line(before[-1])), before[0], before[-1])
            )
        regions.append((Region("loop", "loop", loop.lineno, last_line(loop)), loop, loop))
        inside = _runs(loop.body, in_loop=True) if inner else []
        if (
            inner
            and not any(r.kind in MEMORY_KINDS for r, _, _ in inside)
            or not any(r.kind in COMPUTE_KINDS for r, _, _ in inside)
        ):
            notes.append(
                "the main loop does not separate memory from compute statements (e.g. a load nested "
                "inside a dot), so its overlap cannot be measured; split them into separate statements"
            )
        regions += inside
        after = block[at + 1 :]
        if after and not has_return:
            regions.append((Region("epilogue", "epilogue", after[0].lineno, last_line(after[-1])), after[0], after[-1]))
    if len(regions) > 120:  # Proton takes at most 256 scope ids per kernel
        raise ValueError(f"{kernel} would need {len(regions)} regions; Proton takes at most 128")
    return Instrumented(
        _insert(text, tree, fn, regions), [r for r, _, _ in regions], loop.lineno if loop is not None else None, notes
    )


def layout_of(file: str | None, kernel: str, kernel_line: int | None = None) -> Instrumented | None:
    """The kernel's regions as its file shows them; None when the file or the kernel cannot be read."""
    if not file or not Path(file).is_file():
        return None
    return layout_in(Path(file).read_text(), kernel, kernel_line)


def layout_in(text: str, kernel: str, kernel_line: int | None = None) -> Instrumented | None:
    """The kernel's regions in a file's text (its main loop may be in a same-file helper)."""
    try:
        layout = instrument(text, kernel, kernel_line)
        if layout.loop_line is None and not layout.user_scopes:
            return _helper_loop(text, kernel, kernel_line) or layout
        return layout
    except (ValueError, SyntaxError):
        return None


def untimed(layout: Instrumented | None, kernel: str) -> str | None:
    """Why region timers could not tell anything about overlap in this kernel (None: they can): its
    loads are worth timing only in a loop that also has tensor-core work to overlap them with."""
    if layout is None or layout.loop_line is None:
        return f"{kernel} has no loop with loads to pipeline"
    if not any(r.kind == "dot" and r.in_loop for r in layout.regions):
        return (
            f"{kernel}: the loop at line {layout.loop_line} has no dot, so there is no tensor-core work for its "
            "loads to overlap with (a memory-bound loop is the memoryAccess formula's concern)"
        )
    return None


def _helper_loop(text: str, kernel: str, kernel_line: int | None) -> Instrumented | None:
    """The layout of a @triton.jit helper of the same file that holds the kernel's main loop (the
    flash-attention layout: the K/V loop in `_attn_fwd_inner`), with the call's line."""
    tree = ast.parse(text)
    fn = _find_kernel(tree, kernel, kernel_line)
    helpers = {
        n.name: n
        for n in tree.body
        if isinstance(n, ast.FunctionDef)
        and n.name != kernel
        and any("jit" in ast.unparse(d) for d in n.decorator_list)
    }
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    for call in calls:
        helper = helpers.get(call.func.id) if isinstance(call.func, ast.Name) else None
        if helper is not None and _main_loop(helper) is not None:
            layout = instrument(text, helper.name, helper.lineno)
            layout.via, layout.via_end = (helper.name, call.lineno), last_line(call)
            layout.notes.append(
                f"the main loop is in the @triton.jit helper {helper.name}, called at line {call.lineno}"
            )
            return layout
    return None


def _find_kernel(tree: ast.Module, kernel: str, line: int | None) -> ast.FunctionDef:
    named = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == kernel]
    found = [n for n in named if line is None or n.lineno - len(n.decorator_list) <= line <= last_line(n)] or named
    if not found:
        raise ValueError(f"no function {kernel} in the kernel's file" + (f" at line {line}" if line else ""))
    return found[0]


def _has_user_scopes(fn: ast.FunctionDef) -> bool:
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in _USER_SCOPES
        and ast.unparse(n.func.value).split(".")[-1] in ("pl", "language", "proton")
        for n in ast.walk(fn)
    )


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _calls(node: ast.AST) -> set[str]:
    """The names of the functions called in a statement (the attribute's name: tl.load -> load)."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            out.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ""))
    return out


def _kind(stmt: ast.stmt) -> str | None:
    """What a statement in a loop does; None for bookkeeping (no call but indexing)."""
    calls = _calls(stmt)
    if "dot" in calls or "dot_scaled" in calls:
        return "dot"
    if calls & _LOADS:
        return "load"
    if calls & _STORES:
        return "store"
    if calls - _INDEXING:
        return "math"
    return None


def _loops(node: ast.AST, inside: bool = False):
    """The outermost for/while loops under `node` (not those nested in another loop)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.For, ast.While)):
            yield child
        elif not isinstance(child, (ast.FunctionDef, ast.Lambda)):
            yield from _loops(child)


def _main_loop(fn: ast.FunctionDef) -> ast.For | ast.While | None:
    loops = list(_loops(fn))
    with_dot = [lp for lp in loops if "dot" in _calls(lp)]
    if with_dot:
        return with_dot[0]
    by_loads = sorted(
        loops, key=lambda lp: -sum(1 for n in ast.walk(lp) if isinstance(n, ast.Call) and _calls(n) & _LOADS)
    )
    return by_loads[0] if by_loads and _calls(by_loads[0]) & _LOADS else None


def _block_of(fn: ast.FunctionDef, stmt: ast.stmt) -> list[ast.stmt]:
    """The statement list that holds `stmt` directly."""
    for node in ast.walk(fn):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and stmt in block:
                return block
    raise ValueError("statement not found")  # cannot happen for a loop found in fn


def _runs(block: list[ast.stmt], in_loop: bool) -> list[tuple[Region, ast.stmt, ast.stmt]]:
    """Runs of consecutive statements of one kind; bookkeeping statements end a run."""
    out: list[tuple[Region, ast.stmt, ast.stmt]] = []
    run: list[ast.stmt] = []
    run_kind = ""
    for stmt in [*block, None]:
        kind = _kind(stmt) if stmt is not None and not _is_docstring(stmt) else None
        if run and kind != run_kind:
            first, last = run[0], run[-1]
            out.append(
                (Region(f"{run_kind}@{first.lineno}", run_kind, first.lineno, last_line(last), in_loop), first, last)
            )
            run = []
        if stmt is not None and kind is not None:
            run.append(stmt)
            run_kind = kind
    return out


def _insert(text: str, tree: ast.Module, fn: ast.FunctionDef, regions) -> str:
    """The file with enter/exit statements around each region and the alias imported."""
    lines = text.splitlines()
    before: dict[int, list[str]] = {}  # 0-based line index -> statements to put before it
    after: dict[int, list[str]] = {}
    for region, first, last in regions:
        indent = " " * first.col_offset
        before.setdefault(first.lineno - 1, []).append(f'{indent}{PL}.enter_scope("{region.name}")')
        after.setdefault(last_line(last) - 1, []).insert(0, f'{indent}{PL}.exit_scope("{region.name}")')
    out = []
    import_at = _import_line(tree)
    for i, row in enumerate(lines):
        if i == import_at:
            out.append(f"import triton.profiler.language as {PL}  # intelliperf: region timers")
        out += before.get(i, [])
        out.append(row)
        out += after.get(i, [])
    if import_at >= len(lines):
        out.append(f"import triton.profiler.language as {PL}  # intelliperf: region timers")
    return "\n".join(out) + "\n"


def _import_line(tree: ast.Module) -> int:
    """Where the import can go: after the module docstring and `from __future__` imports."""
    at = 0
    for stmt in tree.body:
        if (
            _is_docstring(stmt)
            and stmt is tree.body[0]
            or (isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__")
        ):
            at = last_line(stmt)
        else:
            break
    return at
