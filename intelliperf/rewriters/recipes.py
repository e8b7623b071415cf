"""`recipes`: deterministic source transforms for the textbook case of each formula.

A recipe looks at one pinpointed line of the kernel and either returns the replacement
statements or says, in one sentence, why its pattern does not match. Recipes are keyed by the
formula they fix; a formula without recipes makes this rewriter decline (the search goes next).

atomicContention:
* reduce-then-atomic: every lane of an `atomic_add/max/min/xor/or/and` hits one address -> reduce
  the block in the program (`tl.sum/max/min/xor_sum/reduce_or`, an and as `~reduce_or(~x)`;
  masked lanes padded with the identity: 0, -inf/+inf for floats, the type's bounds for integers)
  and issue one scalar atomic.
* privatize-histogram: lanes increment a few bins -> count per program with `tl.histogram`
  and add each bin once (bins from a power-of-two constexpr, or from the histogram buffer's
  recorded length when the bin index is loaded data).
* sum-runs-then-atomic: lanes next to each other add into the same address (a scatter-add over
  sorted or repeated indices) -> a segmented scan sums each run of equal addresses in the
  program, and only each run's last lane issues the atomic (a @triton.jit combine helper is
  added beside the kernel).

* rows-per-program: one program per row, every program adding into the same cells (a norm
  backward's dW) -> each program walks several rows, sums in registers, adds once
  (`row_partials.py`; the launcher's grid shrinks).

memoryAccess:
* tile-program-axis: a program index added with stride 1 to a strided access -> each program
  takes a tile of that index, so the access becomes a block with a contiguous axis
  (`tiling.py`; it also shrinks the grid in the launcher).
* tile-strided-reduction: a loop walking a strided axis, one program per column, reducing or
  scanning along it -> each program takes a tile of columns, [BLOCK, TILE] loads along the
  contiguous axis (`strided_reduction.py`; the grid shrinks).

registerPressure:
* tile-row-loop: a whole row held in one oversized block and reduced -> loops over the row in
  chunks, one per dependency level of the reductions, then one that stores (`row_tiling.py`).

laneUtilization:
* pack-rows: a block at least twice the data, one program per row -> [ROWS, fitted block]
  programs, sized at run time from the extent (`lane_packing.py`).
* split-row-into-tiles: an elementwise row in one block the data fills poorly -> tiles of the
  row on a new grid axis (`lane_packing.py`).

memoryLocality:
* grouped-order: a 1-D grid walked row-major over 2-D tiles -> grouped order, GROUP_M = 8
  (`program_order.py`).
"""

from __future__ import annotations

import ast
import math
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from intelliperf.models import AccessSite
from intelliperf.syntax import indent_of, last_line

from . import lane_packing, program_order, row_partials, row_tiling, strided_reduction, tiling
from .base import Candidate, Rewriter, RewriteRequest
from .kernel_syntax import tl_name

_REDUCTION = {
    "atomic_add": ("tl.sum", None),
    "atomic_max": ("tl.max", 'float("-inf")'),
    "atomic_min": ("tl.min", 'float("inf")'),
    "atomic_xor": ("tl.xor_sum", None),
    "atomic_or": ("tl.reduce_or", None),
    "atomic_and": ("tl.reduce_or", None),
}  # and: ~or(~x)


def _int_identity(dtype: str, op: str) -> int | None:
    """The identity of an integer max/min (the type's lowest/highest value), None for other types."""
    found = re.fullmatch(r"(u?)int(8|16|32|64)", dtype)
    if found is None:
        return None
    bits, unsigned = int(found.group(2)), bool(found.group(1))
    low, high = (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    return low if op == "atomic_max" else high


class NotApplicable(Exception):
    """The recipe's pattern does not match this line (the message says why)."""


@dataclass
class _Site:
    """A pinpointed atomic statement of the kernel, parsed."""

    request: RewriteRequest
    tree: ast.FunctionDef
    stmt: ast.stmt
    call: ast.Call
    op: str
    pointer: ast.expr
    value: ast.expr
    mask: ast.expr | None
    evidence: AccessSite | None
    helper: str | None = None  # a @triton.jit function the rewritten statements call, added beside the kernel

    @property
    def where(self) -> str:
        return f"line {self.request.kernel.line + self.stmt.lineno - 1}"

    def params(self) -> dict[str, ast.arg]:
        return {a.arg: a for a in self.tree.args.args}

    def constexprs(self) -> set[str]:
        return {
            name
            for name, a in self.params().items()
            if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)
        }

    def assignment(self, name: str) -> ast.expr | None:
        """The expression last assigned to `name` before the atomic (straight-line code only)."""
        value = None
        for node in ast.walk(self.tree):
            if (
                isinstance(node, ast.Assign)
                and node.lineno < self.stmt.lineno
                and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
            ):
                value = node.value
        return value

    def buffer_dtype(self, name: str) -> str | None:
        for arg in self.request.profile.signatures[0].args if self.request.profile.signatures else []:
            if arg.name == name:
                return arg.dtype
        return None


def _counts(site: _Site) -> str:
    """The per-bin counts times what each lane adds (1 for a plain histogram)."""
    one = isinstance(site.value, ast.Constant) and site.value.value == 1
    return "_ip_counts" if one else f"_ip_counts * {ast.unparse(site.value)}"


def _parse_site(request: RewriteRequest, file_line: int) -> _Site:
    tree = ast.parse(request.kernel.source).body[0]
    if not isinstance(tree, ast.FunctionDef):
        raise NotApplicable(f"{request.kernel.name} is not a plain function")
    line = file_line - request.kernel.line + 1
    stmt = next(
        (
            s
            for s in ast.walk(tree)
            if isinstance(s, ast.stmt)
            and not isinstance(s, ast.FunctionDef)
            and s.lineno <= line <= last_line(s)
            and not hasattr(s, "body")
        ),
        None,
    )
    if stmt is None:
        raise NotApplicable(f"line {file_line} is not a statement of {request.kernel.name}")
    call = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in _REDUCTION):
        raise NotApplicable(f"line {file_line} is not a tl.atomic_add/max/min/xor/or/and call")
    op = call.func.attr
    if isinstance(stmt, ast.Assign):
        raise NotApplicable(
            f"line {file_line} uses the value the atomic returns, which a pre-reduced atomic would change"
        )
    args = dict(zip(("pointer", "val", "mask"), call.args, strict=False)) | {
        (k.arg or "**"): k.value for k in call.keywords
    }
    if set(args) - {"pointer", "val", "mask"}:
        raise NotApplicable(
            f"line {file_line} passes {', '.join(sorted(set(args) - {'pointer', 'val', 'mask'}))}, "
            "which the recipe does not carry over"
        )
    evidence = next((s for s in request.sites if s.line == file_line and s.is_atomic), None)
    return _Site(request, tree, stmt, call, op, args["pointer"], args["val"], args.get("mask"), evidence)


def _scalar_pointer(site: _Site) -> str:
    """The one address every lane updates, as a scalar pointer expression."""
    params = site.params()
    ptr = site.pointer
    if isinstance(ptr, ast.Name) and ptr.id in params:
        return ptr.id
    if isinstance(ptr, ast.BinOp) and isinstance(ptr.op, ast.Add):
        for base, offset in ((ptr.left, ptr.right), (ptr.right, ptr.left)):
            if isinstance(base, ast.Name) and base.id in params:
                if _is_zeros(site, offset):
                    return base.id
                if isinstance(offset, ast.Constant) and isinstance(offset.value, int):
                    return ast.unparse(ptr)
                if isinstance(offset, ast.Name) and offset.id in params and offset.id not in site.constexprs():
                    return ast.unparse(ptr)
    raise NotApplicable(
        f"{site.where}: cannot tell from the source that `{ast.unparse(ptr)}` is one address "
        "for every lane (expected PTR, PTR + <zeros>, PTR + <int> or PTR + <scalar argument>)"
    )


def _is_zeros(site: _Site, node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        node = site.assignment(node.id) or node
    if isinstance(node, ast.Call):
        fn = ast.unparse(node.func)
        if fn.endswith(("zeros", "zeros_like")):
            return True
        if fn.endswith("full") and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
            return node.args[1].value == 0
    return False


def reduce_then_atomic(request: RewriteRequest, file_line: int) -> tuple[_Site, list[str]]:
    site = _parse_site(request, file_line)
    ev = site.evidence
    if ev is not None and (ev.lanes_per_address_max or 0) < 2:
        raise NotApplicable(f"{site.where}: no two lanes of one call update the same address")
    if ev is not None and ev.lanes_per_address_mean is not None and not ev.one_address_per_call():
        raise NotApplicable(
            f"{site.where}: the lanes of one call hit several addresses (mean "
            f"{ev.lanes_per_address_mean:.0f} of {ev.lanes_per_call():.0f} lanes per address), not one"
        )
    pointer = _scalar_pointer(site)
    if isinstance(site.value, ast.Constant):
        raise NotApplicable(
            f"{site.where}: the value is a constant; a count of active lanes needs the privatize-histogram recipe"
        )
    reduce, identity = _REDUCTION[site.op]
    buffer = pointer.split("+")[0].strip()
    dtype = site.buffer_dtype(buffer) or ""
    if identity and not dtype.startswith(("float", "bfloat")):
        bound = _int_identity(dtype, site.op)
        if bound is None:
            raise NotApplicable(
                f"{site.where}: {site.op} into a `{dtype or '?'}` buffer has no identity value to "
                "pad masked-off lanes with"
            )
        identity = str(bound)
    # A plain name is used as is; an expression is bound once, as the original evaluated it once.
    value = ast.unparse(site.value)
    bind = [] if isinstance(site.value, ast.Name) else [f"_ip_val = {value}"]
    value = value if isinstance(site.value, ast.Name) else "_ip_val"
    if site.op in ("atomic_or", "atomic_and"):
        _reduce_or_exists(site)
    flip = "~" if site.op == "atomic_and" else ""  # and(x) = ~or(~x): Triton has a reduce_or only
    value = f"~{value}" if flip else value
    pad = identity or f"tl.zeros_like({value})"
    kept = f"tl.where({ast.unparse(site.mask)}, {value}, {pad})" if site.mask is not None else value
    reduced = f"{flip}{reduce}({kept}, None)" if reduce == "tl.reduce_or" else f"{reduce}({kept})"
    return site, bind + [
        f"# intelliperf recipe reduce-then-atomic: reduce in the program, then one {site.op} per program",
        f"tl.{site.op}({pointer}, {reduced})",
    ]


def _reduce_or_exists(site: _Site) -> None:
    """tl.reduce_or is recent in triton.language: decline where the installed Triton lacks it."""
    try:
        import triton.language as tl
    except ImportError:
        return
    if not hasattr(tl, "reduce_or"):
        raise NotApplicable(f"{site.where}: this Triton has no tl.reduce_or to reduce {site.op} with")


def privatize_histogram(request: RewriteRequest, file_line: int) -> tuple[_Site, list[str]]:
    site = _parse_site(request, file_line)
    if site.op != "atomic_add":
        raise NotApplicable(f"{site.where}: a histogram needs atomic_add, not {site.op}")
    if not (isinstance(site.value, ast.Constant) and isinstance(site.value.value, int)):
        raise NotApplicable(
            f"{site.where}: the value `{ast.unparse(site.value)}` is not an integer constant "
            "(tl.histogram counts lanes)"
        )
    ptr = site.pointer
    if not (
        isinstance(ptr, ast.BinOp)
        and isinstance(ptr.op, ast.Add)
        and isinstance(ptr.left, ast.Name)
        and ptr.left.id in site.params()
        and isinstance(ptr.right, ast.Name)
    ):
        raise NotApplicable(f"{site.where}: the address `{ast.unparse(ptr)}` is not PTR + <bin index>")
    base, index = ptr.left.id, ptr.right.id
    definition = site.assignment(index)
    used = {n.id for n in ast.walk(definition) if isinstance(n, ast.Name)} if definition is not None else set()
    bins = sorted(used & site.constexprs())
    value = request.constexprs().get(bins[0]) if len(bins) == 1 else None
    if not isinstance(value, int) or value < 1 or value & (value - 1):
        return site, _loaded_bins(site, base, index, bins)
    nbins = bins[0]
    in_range = f"({index} >= 0) & ({index} < {nbins})"
    keep = f"{ast.unparse(site.mask)} & {in_range}" if site.mask is not None else in_range
    counts = _counts(site)
    return site, [
        "# intelliperf recipe privatize-histogram: count in the program, then one atomic per bin;",
        "# masked-off and out-of-range lanes land in spare bins that are never written",
        f"_ip_bins = tl.where({keep}, {index}, {nbins})",
        f"_ip_counts = tl.histogram(_ip_bins, 2 * {nbins})",
        f"_ip_slots = tl.arange(0, 2 * {nbins})",
        f"tl.atomic_add({base} + _ip_slots, ({counts}).to({base}.dtype.element_ty), mask=_ip_slots < {nbins})",
    ]


MAX_BINS = 4096  # a privatised table per program beyond this costs more registers than it saves


def _loaded_bins(site: _Site, base: str, index: str, bins: list[str]) -> list[str]:
    """privatize-histogram when the bin index is data (a bincount: `b = tl.load(...)`) and the bin
    count is no power-of-two constexpr: the table covers the histogram buffer's recorded length
    (rounded up to a power of two), only bins some lane hit are added to (so no address the
    original did not touch), and lanes outside the table keep their own atomic."""
    length = next(
        (
            a.shape
            for a in (site.request.profile.signatures[0].args if site.request.profile.signatures else [])
            if a.name == base and a.shape
        ),
        None,
    )
    if not length:
        raise NotApplicable(
            f"{site.where}: cannot tell the number of bins (no power-of-two constexpr in `{index}`"
            f"{': ' + ', '.join(bins) if bins else ''}, and the length of `{base}` was not recorded)"
        )
    count = math.prod(length)
    table = 1 << max(count - 1, 1).bit_length()
    if table > MAX_BINS:
        raise NotApplicable(
            f"{site.where}: `{base}` has {count} bins; a per-program table of more than {MAX_BINS} is not worth it"
        )
    keep = f"({index} >= 0) & ({index} < {table})"
    masked = f"{ast.unparse(site.mask)} & " if site.mask is not None else ""
    counts = _counts(site)
    return [
        f"# intelliperf recipe privatize-histogram: count the loaded bins in the program ({count} bins recorded for "
        f"`{base}`), then one atomic per bin that some lane hit; other indices keep their own atomic",
        f"_ip_in = {masked}{keep}",
        f"_ip_counts = tl.histogram(tl.where(_ip_in, {index}, {table}), 2 * {table})",
        f"_ip_slots = tl.arange(0, 2 * {table})",
        f"tl.atomic_add({base} + _ip_slots, ({counts}).to({base}.dtype.element_ty), "
        f"mask=(_ip_slots < {table}) & (_ip_counts > 0))",
        f"tl.atomic_add({base} + {index}, {ast.unparse(site.value)}, "
        f"mask={masked}(({index} < 0) | ({index} >= {table})))",
    ]


RUN_SUM_HELPER = "_ip_segment_add"


def _run_sum_helper(jit: str) -> str:
    """The combine function of a segmented sum: (started, sum) pairs; a run that starts inside the
    right-hand range resets the sum, so each lane ends with the sum of its run up to itself."""
    return (
        f"@{jit}\n"
        f"def {RUN_SUM_HELPER}(started_a, sum_a, started_b, sum_b):\n"
        "    return started_a | started_b, tl.where(started_b != 0, sum_b, sum_a + sum_b)\n"
    )


def _block_extent(site: _Site) -> str:
    """The length of the kernel's one 1-D block: the end of its every `tl.arange(0, N)`."""
    ends = {
        ast.unparse(n.args[1])
        for n in ast.walk(site.tree)
        if isinstance(n, ast.Call) and tl_name(n) == "arange" and len(n.args) == 2
        if isinstance(n.args[0], ast.Constant) and n.args[0].value == 0
    }
    two_d = any(
        isinstance(n, ast.Subscript) and any(isinstance(e, ast.Constant) and e.value is None for e in ast.walk(n.slice))
        for n in ast.walk(site.tree)
    )
    if two_d or len(ends) != 1:
        raise NotApplicable(
            f"{site.where}: the kernel's blocks are not one 1-D `tl.arange(0, N)` "
            f"({'2-D blocks' if two_d else f'{len(ends)} block lengths'}), so its lanes have no single order to "
            "sum runs along"
        )
    return ends.pop()


def _jit_name(site: _Site) -> str:
    for decorator in site.tree.decorator_list:
        name = ast.unparse(decorator.func if isinstance(decorator, ast.Call) else decorator)
        if name.split(".")[-1] == "jit":
            return name
    raise NotApplicable(f"{site.where}: the kernel has no @jit decorator to give the helper")


def sum_runs_then_atomic(request: RewriteRequest, file_line: int) -> tuple[_Site, list[str]]:
    site = _parse_site(request, file_line)
    if site.op != "atomic_add":
        raise NotApplicable(f"{site.where}: summing runs needs atomic_add, not {site.op}")
    ev = site.evidence
    if ev is None or ev.lanes_per_address_mean is None:
        raise NotApplicable(f"{site.where}: no address trace of this line shows lanes repeating an address")
    if ev.lanes_per_address_mean < 2:
        raise NotApplicable(
            f"{site.where}: the lanes of one call rarely share an address (mean {ev.lanes_per_address_mean:.1f} "
            "lanes per address), so there are no runs to sum"
        )
    if isinstance(site.value, ast.Constant):
        raise NotApplicable(f"{site.where}: the value is a constant; counting lanes is privatize-histogram's case")
    block = _block_extent(site)
    jit = _jit_name(site)
    mask = ast.unparse(site.mask) if site.mask is not None else None
    keys = f"tl.where({mask}, _ip_ptrs.to(tl.int64), -1)" if mask else "_ip_ptrs.to(tl.int64)"
    values = f"tl.where({mask}, {ast.unparse(site.value)}, 0)" if mask else ast.unparse(site.value)
    lines = [
        "# intelliperf recipe sum-runs-then-atomic: neighbouring lanes that update one address sum their",
        "# values in the program (a segmented scan), and the last lane of each run issues the atomic",
        f"_ip_ptrs = {ast.unparse(site.pointer)}",
        f"_ip_keys = {keys}",  # masked-off lanes get an address no pointer has, so they join no run
        f"_ip_vals = ({values}).to(_ip_ptrs.dtype.element_ty)",
        f"_ip_lane = tl.arange(0, {block})",
        "_ip_prev = tl.gather(_ip_keys, tl.maximum(_ip_lane - 1, 0), 0)",
        f"_ip_next = tl.gather(_ip_keys, tl.minimum(_ip_lane + 1, {block} - 1), 0)",
        "_ip_starts = ((_ip_lane == 0) | (_ip_prev != _ip_keys)).to(tl.int32)",
        f"_ip_last = (_ip_lane == {block} - 1) | (_ip_next != _ip_keys)",
        f"_ip_started, _ip_sums = tl.associative_scan((_ip_starts, _ip_vals), 0, {RUN_SUM_HELPER})",
        f"tl.atomic_add(_ip_ptrs, _ip_sums, mask={mask + ' & ' if mask else ''}_ip_last)",
    ]
    site.helper = _run_sum_helper(jit)
    return site, lines


LineRecipe = Callable[[RewriteRequest, int], tuple[_Site, list[str]]]
# -> new kernel, new launcher, code beside the kernel (None: unchanged, none)
Recipe = Callable[[RewriteRequest], tuple[str, str | None, str | None]]


def at_lines(recipe: LineRecipe) -> Recipe:
    """A recipe that rewrites pinpointed statements, applied to the whole kernel."""

    def whole_kernel(request: RewriteRequest) -> tuple[str, str | None, str | None]:
        kernel, helpers = apply_recipe(recipe, request)
        return kernel, None, "\n\n".join(helpers) or None

    return whole_kernel


def declining(transform: Callable[[RewriteRequest], tuple[str, str | None]], *refusals: type[Exception]) -> Recipe:
    """A whole-kernel transform whose own exception (why its pattern does not match) becomes NotApplicable."""

    def recipe(request: RewriteRequest) -> tuple[str, str | None, str | None]:
        try:
            kernel, launcher = transform(request)
        except refusals as exc:
            raise NotApplicable(str(exc)) from None
        return kernel, launcher, None

    return recipe


# Recipe sets by name, each the recipes for one bottleneck in the order they are tried: a formula names its set
# (`Formula.recipes`, handed over as `RewriteRequest.recipes`), so a user's formula may use a built-in one's.
RECIPES: dict[str, dict[str, Recipe]] = {
    "atomicContention": {
        "reduce-then-atomic": at_lines(reduce_then_atomic),
        "privatize-histogram": at_lines(privatize_histogram),
        "sum-runs-then-atomic": at_lines(sum_runs_then_atomic),
        "rows-per-program": declining(row_partials.rows_per_program, row_partials.NotRowPartial),
    },
    "memoryAccess": {
        "tile-program-axis": declining(tiling.tile_program_axis, tiling.NotTileable),
        "tile-strided-reduction": declining(
            strided_reduction.tile_strided_reduction, strided_reduction.NotStridedReduction
        ),
    },
    "registerPressure": {"tile-row-loop": declining(row_tiling.tile_row_loop, row_tiling.NotRowTiled)},
    "laneUtilization": {
        "pack-rows": declining(lane_packing.pack_rows, lane_packing.NotPackable),
        "split-row-into-tiles": declining(lane_packing.split_row, lane_packing.NotPackable),
    },
    "memoryLocality": {"grouped-order": declining(program_order.grouped_order, program_order.NotReorderable)},
}


def apply_recipe(recipe: LineRecipe, request: RewriteRequest) -> tuple[str, list[str]]:
    """The kernel with the recipe applied at every pinpointed line it matches (bottom-up, so line
    numbers stay valid), and the helpers those lines call (each once). Raises NotApplicable with
    every line's reason when it matches none."""
    lines = request.kernel.source.splitlines()
    targets = sorted({src.line for src in request.finding.lines}, reverse=True)
    if not targets:
        raise NotApplicable("the finding names no source line to transform")
    reasons: list[str] = []
    helpers: list[str] = []
    for file_line in targets:
        try:
            site, new = recipe(request, file_line)
        except NotApplicable as exc:
            reasons.append(str(exc))
            continue
        if site.helper and site.helper not in helpers:
            helpers.append(site.helper)
        first = lines[site.stmt.lineno - 1]
        indent = indent_of(first)
        lines[site.stmt.lineno - 1 : last_line(site.stmt)] = textwrap.indent("\n".join(new), indent).splitlines()
    if reasons and len(reasons) == len(targets):
        raise NotApplicable("; ".join(reasons))
    return "\n".join(lines) + "\n", helpers


class RecipeRewriter(Rewriter):
    """Offers each recipe of the formula once, in order, then declines with the reasons."""

    name = "recipes"
    summary = "offline: textbook source transforms per formula, each declining with a reason"

    def rewrite_many(self, request: RewriteRequest, n: int) -> list[Candidate]:
        return self.next_untried(request, n)

    def rewrite(self, request: RewriteRequest) -> Candidate:
        recipes = RECIPES.get(request.recipes or "", {})
        if not recipes:
            return Candidate.decline(self.name, f"no recipe for the {request.formula} formula")
        tried = {a.title for a in request.history if a.rewriter == self.name}
        reasons = []
        for name, recipe in recipes.items():
            if name in tried:
                continue
            try:
                kernel, launcher, module = recipe(request)
            except NotApplicable as exc:
                reasons.append(f"{name}: {exc}")
                continue
            return Candidate(
                rewriter=self.name,
                title=name,
                kernel=kernel,
                launcher=launcher,
                module=module,
                rationale=f"recipe {name} applied for the pinpointed line(s)",
            )
        done = f" (already tried: {', '.join(sorted(tried))})" if tried else ""
        return Candidate.decline(self.name, "no recipe applies" + done + ("; " + "; ".join(reasons) if reasons else ""))
