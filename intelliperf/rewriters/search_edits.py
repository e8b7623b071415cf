"""The source edits of the knob search: a knob pinned in the launcher (or a loop's pipelining depth
in the kernel), and an autotuned kernel's config list widened.

Edits replace exact node spans, so the rest of the user's text survives byte for byte. A literal
is replaced where it is; a launcher parameter is assigned at the top of the launcher (callers that
pass their own value are overridden, which is what a pinned config means); a local, after its last
assignment before the launch; a missing `num_warps`/`num_stages` keyword is added.
"""

from __future__ import annotations

import ast

from ..syntax import end, indent_of, last_line
from .kernel_syntax import decorator_name, plain_function, range_loops
from .source import Node, grid_of, launch_call, lines_of, node_span, replace_spans


def pin_loop(kernel: str, line: int, value: int) -> str:
    """The kernel with the loop at `line` software-pipelined over `value` stages (`tl.range`)."""
    call = next(over for loop, over in range_loops(ast.parse(kernel)) if loop.lineno == line)
    keyword = next((k for k in call.keywords if k.arg == "num_stages"), None)
    added = (keyword.value, str(value)) if keyword is not None else _keyword_added(kernel, call, "num_stages", value)
    edits: list[tuple[Node, str]] = [added]
    if ast.unparse(call.func) == "range":  # plain range has no stages: make it tl.range
        edits.append((call.func, "tl.range"))
    return replace_spans(kernel, edits)


def _keyword_added(text: str, call: ast.Call, name: str, value: int) -> tuple[Node, str]:
    """The edit that adds `name=value` right after the call's last argument (a trailing comma
    and one argument a line, as black writes calls, stay valid)."""
    arguments: list[Node] = [*call.args, *call.keywords]
    last = max(arguments, key=end, default=None)
    if last is None:  # `f()`: the call itself, its closing parenthesis after the new keyword
        return call, _segment(text, call)[:-1] + f"{name}={value})"
    return last, _segment(text, last) + f", {name}={value}"


def _segment(text: str, node: Node) -> str:
    start, stop = node_span(text, node)
    return text[start:stop]


def pin(launcher: str, kernel: str, knob: str, value: int, params: list[str] | None = None) -> str:
    """The launcher (a function, or a launch statement) with `knob` fixed to `value` at the
    kernel's launch call: a keyword or positional literal is replaced, a launcher parameter is
    assigned at the top of the launcher, a `**kwargs` is overridden, a missing keyword is added.
    The same literal or name in the grid expression follows (a grid of cdiv(n, 1024) with BLOCK=1024)."""
    tree = ast.parse(launcher)
    fn = tree.body[0] if isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    call = launch_call(tree, kernel)
    if call is None:
        raise ValueError(f"the launcher does not launch {kernel}[grid](...) directly")
    keyword = next((k for k in call.keywords if k.arg == knob), None)
    index = (params or []).index(knob) if knob in (params or []) else None
    current = (
        keyword.value
        if keyword is not None
        else call.args[index]
        if index is not None
        and index < len(call.args)
        and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1])
        else None
    )
    starred = next((k for k in call.keywords if k.arg is None), None)
    fn_params = {a.arg for a in fn.args.args + fn.args.kwonlyargs} if fn is not None else set()
    if current is None and starred is not None:  # **cfg may hold the knob: override it there
        return replace_spans(launcher, [(starred.value, f"{{**{ast.unparse(starred.value)}, {knob!r}: {value}}}")])
    if current is None:
        return replace_spans(launcher, [_keyword_added(launcher, call, knob, value)])
    if isinstance(current, ast.Constant):
        grid = [n for n in ast.walk(grid_of(call)) if isinstance(n, ast.Constant) and n.value == current.value]
        return replace_spans(launcher, [(n, str(value)) for n in [current, *grid]])
    if isinstance(current, ast.Name) and fn is not None and current.id in fn_params:
        first = fn.body[0]
        at = (
            fn.body[1]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and len(fn.body) > 1)
            else first
        )
        return _assign_line(launcher, at.lineno - 1, at, current.id, value, knob)
    if isinstance(current, ast.Name) and fn is None:  # a launch statement: the name's uses in it
        uses = [n for n in ast.walk(call) if isinstance(n, ast.Name) and n.id == current.id]
        return replace_spans(launcher, [(n, str(value)) for n in uses])
    if isinstance(current, ast.Name) and fn is not None:  # a local of the launcher: after its last assignment
        return _pin_local(launcher, fn, call, current.id, value, knob)
    raise ValueError(f"{knob}={ast.unparse(current)} is set by an expression the search does not rewrite")


def _pin_local(
    launcher: str, fn: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call, name: str, value: int, knob: str
) -> str:
    """`name = value` right after the last statement, in the block that holds the launch, that
    assigns `name` before it (so buffers sized from the name later follow it too), or just
    before the launch statement when no statement of that block assigns it."""
    block, launch = next(
        (b, st) for node in ast.walk(fn) for b in _blocks(node) for st in b if any(n is call for n in ast.walk(st))
    )
    before = block[: block.index(launch)]
    assigns = [
        st
        for st in before
        if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(st))
    ]
    anchor = assigns[-1] if assigns else launch
    return _assign_line(launcher, last_line(anchor) if assigns else launch.lineno - 1, anchor, name, value, knob)


def _assign_line(launcher: str, row: int, like: ast.stmt, name: str, value: int, knob: str) -> str:
    """The launcher with `name = value` inserted as line `row` (0-based), indented as `like`."""
    lines = lines_of(launcher)
    indent = indent_of(lines[like.lineno - 1])
    lines.insert(row, f"{indent}{name} = {value}  # intelliperf search: pinned {knob}")
    return "\n".join(lines) + "\n"


def _blocks(node: ast.AST) -> list[list[ast.stmt]]:
    return [b for f in ("body", "orelse", "finalbody") if isinstance(b := getattr(node, f, None), list)]


CONFIG_DEFAULTS = {"num_warps": 4, "num_stages": 3}  # a triton.Config's, where it does not say


def widen_autotune(kernel: str) -> str | None:
    """The kernel with its @triton.autotune config list widened by each config's pipelining and
    warp neighbours (num_stages +/- 1, num_warps x2), so the autotuner itself picks among more; None
    when the configs are not a list written out in the decorator. The neighbours are written out
    beside each config (what a reviewer reads in the patch, and what candidate code may contain:
    computed copies of computed configs would have to read their hooks, which it may not)."""
    try:
        fn = plain_function(kernel)
    except (SyntaxError, ValueError):
        return None
    dec = next((d for d in fn.decorator_list if isinstance(d, ast.Call) and decorator_name(d) == "autotune"), None)
    if dec is None:
        return None
    configs = next((k.value for k in dec.keywords if k.arg == "configs"), None)
    if configs is None and dec.args and not isinstance(dec.args[0], ast.Starred):
        configs = dec.args[0]
    if not isinstance(configs, (ast.List, ast.Tuple)) or not configs.elts:
        return None
    calls = [c for c in configs.elts if isinstance(c, ast.Call)]
    if len(calls) != len(configs.elts):
        return None
    seen = {_config_key(c) for c in calls}
    added = []
    for call in calls:
        for neighbour in _neighbours(call):
            key = _config_key(neighbour)
            if key not in seen:
                seen.add(key)
                added.append(ast.unparse(neighbour))
    if not added:
        return None
    first = configs.elts[0]
    pad = " " * (first.col_offset if first.lineno != configs.lineno else configs.col_offset + 4)
    listed = _segment(kernel, configs)
    body, close = listed[:-1].rstrip(), listed[-1]
    before_close = listed[len(body) : -1]  # the closing bracket's own line and indent, where it has them
    before_close = before_close if "\n" in before_close else "\n" + " " * configs.col_offset
    body += "" if body.endswith(",") else ","
    listed = body + "".join(f"\n{pad}{text}," for text in added) + before_close + close
    wider = replace_spans(kernel, [(configs, listed)])
    try:
        ast.parse(wider)
    except SyntaxError:  # not expected; never hand on a kernel that does not parse
        return None
    return wider


def _neighbours(call: ast.Call) -> list[ast.Call]:
    """A config's copies with num_stages +/- 1 and num_warps x2 (to 16 at most), its other arguments
    as they are; none where its warps or stages are not literal numbers."""
    given = {k.arg: k.value for k in call.keywords}
    warps, stages = (_literal(given.get(name), default) for name, default in CONFIG_DEFAULTS.items())
    if warps is None or stages is None:
        return []
    kept = [k for k in call.keywords if k.arg not in ("num_warps", "num_stages")]
    moves = [(warps, stages + 1), (warps, stages - 1)] + ([(warps * 2, stages)] if warps * 2 <= 16 else [])
    return [
        ast.Call(
            func=call.func,
            args=call.args,
            keywords=[*kept, ast.keyword("num_warps", ast.Constant(w)), ast.keyword("num_stages", ast.Constant(s))],
        )
        for w, s in moves
        if s >= 1
    ]


def _literal(node: ast.expr | None, default: int) -> int | None:
    if node is None:
        return default
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _config_key(call: ast.Call) -> str:
    """A config by what it sets, keywords in any order, Triton's defaults filled in."""
    given = {k.arg: ast.dump(k.value) for k in call.keywords if k.arg}
    for name, default in CONFIG_DEFAULTS.items():
        given.setdefault(name, ast.dump(ast.Constant(default)))
    splats = [ast.dump(k.value) for k in call.keywords if k.arg is None]
    return repr((ast.dump(call.func), [ast.dump(a) for a in call.args], sorted(given.items()), splats))
