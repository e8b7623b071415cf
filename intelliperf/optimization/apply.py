"""A candidate applied to the project's texts: only the kernel, its launch and the code beside the kernel
may change, each held to the source policy (ScopeError, PolicyError otherwise)."""

from __future__ import annotations

import ast
import builtins
import textwrap

from ..rewriters import Candidate, CodeUnit
from ..rewriters.source import (
    NotPython,
    ScopeError,
    check_scope,
    is_jit,
    item_name,
    module_items,
    splice,
    splice_items,
    statement_block,
)
from ..syntax import last_line
from ..validators.gate.allow_list import SAFE_IMPORTS
from ..validators.gate.policy import PolicyError, check_module_item, check_statement
from ..validators.gate.policy import check as check_policy


def apply_candidate(
    originals: dict[str, str], kernel: CodeUnit, launcher: CodeUnit | None, cand: Candidate
) -> dict[str, str]:
    """{relpath: new text} for the candidate (`originals`: {relpath: text} of the project's files),
    checked to change nothing but the kernel, its launcher and the code beside the kernel (more
    kernels, helpers, constants), all within the source policy; raises ScopeError or PolicyError."""
    texts: dict[str, str] = {}
    allowed: dict[str, set[str]] = {}
    block: tuple[int, int] | None = None
    if cand.launcher is not None and launcher is None:
        raise ScopeError(
            "the launch cannot be rewritten here (it is outside the project or not a kernel[grid](...) statement)"
        )
    edits = [(kernel, cand.kernel)] if cand.kernel is not None else []
    if launcher is not None and cand.launcher is not None:
        edits.append((launcher, cand.launcher))
    for unit, new in sorted(edits, key=lambda e: -e[0].line):  # bottom-up: a statement's line stays valid
        text = texts.get(unit.relpath) or originals[unit.relpath]
        texts[unit.relpath] = splice(text, unit.qualname, new)
        allowed.setdefault(unit.relpath, set()).add(unit.qualname)
        if unit.is_statement:
            block = statement_block(new, unit.line)
            _rebinds_nothing(originals[unit.relpath], unit.source, new)
        # A sweep is the search's own screen (its autotuner's `do_bench`, `**{}` in the launch), never a
        # fix: the config it finds comes back as a candidate of its own, held to the policy in full.
        if cand.sweep:
            continue
        if unit.is_statement:
            check_statement(unit.source, new)
        else:
            check_policy(unit.source, new, unit.name, kernel=unit is kernel)
    for unit, new in edits:
        _no_new_imported_names(originals[unit.relpath], unit.source, new)
    statement = launcher.relpath if launcher is not None and launcher.is_statement else None
    for rel, text in texts.items():
        check_scope(
            originals[rel],
            text,
            allowed[rel],
            kernel=kernel.qualname if rel == kernel.relpath else None,
            launches=kernel.name if rel == statement else None,
            block=block if rel == statement else None,
        )
    if cand.module:
        rel = kernel.relpath
        texts[rel] = _beside_kernel(texts.get(rel) or originals[rel], kernel, launcher, cand.module)
        for name in set(module_items(cand.module)) - {item_name(n) for n in ast.parse(originals[rel]).body}:
            _shadows_nothing(originals[rel], name)
        _no_new_imported_names(originals[rel], "", cand.module)
    return texts


POLICY_MODULES = {"math", "torch", "triton", "triton.language"}  # what the source policy judges by name


def _no_new_imported_names(text: str, old: str, new: str) -> None:
    """The policy judges `torch.x` and `tl.y` by name; a name the file imported from any other module
    (`from os import environ`, `import numpy as np`) it cannot judge, so new code may not start using one
    (a relative import is the program's own code, which the candidate may call as the original did)."""
    imported = set()
    for node in ast.parse(text).body:
        if isinstance(node, ast.Import):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name not in POLICY_MODULES}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module not in POLICY_MODULES:
            imported |= {a.asname or a.name for a in node.names}

    def used(code: str) -> set[str]:
        if not code.strip():
            return set()
        return {n.id for n in ast.walk(ast.parse(textwrap.dedent(code))) if isinstance(n, ast.Name)}

    added = sorted((used(new) - used(old)) & imported)
    if added:
        raise PolicyError(
            f"the candidate uses {', '.join(added)}, which the file imports from a module the source policy does "
            "not judge (only math, torch, triton and triton.language are); compute with those instead"
        )


def _rebinds_nothing(text: str, old: str, new: str) -> None:
    """A launch statement's block binds names of its own, never the program's functions, classes or
    imports (which would change code outside the block)."""
    tree = ast.parse(text)
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    program = {item_name(n) for n in tree.body} | {(a.asname or a.name).split(".")[0] for n in imports for a in n.names}

    def bound(code: str) -> set[str]:
        nodes = ast.walk(ast.parse(textwrap.dedent(code)))
        return {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}

    rebound = sorted((bound(new) - bound(old)) & (program - {None}))
    if rebound:
        raise ScopeError(f"the launch's block rebinds {', '.join(rebound)}, which the program defines elsewhere")


def _beside_kernel(text: str, kernel: CodeUnit, launcher: CodeUnit | None, module: str) -> str:
    """`text` with the candidate's code beside the kernel spliced in: new items before the kernel,
    changed ones in place. A changed item must be a kernel or constant the kernel section uses
    (the program's other functions stay); every item is held to the source policy."""
    try:
        statements = ast.parse(textwrap.dedent(module)).body
        items = module_items(module)
    except SyntaxError as exc:
        raise NotPython(f"the code beside the kernel is not valid Python: {exc.msg}") from None
    imports = _imports_beside(statements)
    for stmt in statements:  # functions and constants only: anything else would run at import
        if isinstance(stmt, ast.Import):
            continue
        if item_name(stmt) is None or isinstance(stmt, ast.ClassDef):
            check_module_item(None, ast.unparse(stmt), kernel=False)  # names what it is, where it can
            raise ScopeError(f"beside the kernel go functions and constants only, not `{ast.unparse(stmt)[:80]}`")
    tree = ast.parse(text)
    present = {item_name(n): n for n in tree.body if item_name(n) is not None}
    used = _names_used(text, [kernel.qualname] + ([launcher.qualname] if launcher else []), items)
    for name, source in items.items():
        if name in (kernel.name, launcher.name if launcher else None):
            raise ScopeError(f"{name} is the kernel or the launcher: give it in its own field, not beside them")
        node = present.get(name)
        new_node = ast.parse(source).body[0]
        jit = isinstance(new_node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_jit(new_node)
        if node is not None:
            was_jit = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_jit(node)
            constant = isinstance(node, (ast.Assign, ast.AnnAssign))
            if not (was_jit or constant) or name not in used:
                raise ScopeError(
                    f"{name} is the program's own code: a candidate may add kernels, helpers and constants, "
                    "and change the kernels and constants its kernel and launcher use, not other code"
                )
        check_module_item(module_items(text).get(name) if node is not None else None, source, kernel=jit)
    found = next((n for n in tree.body if item_name(n) == kernel.name), None)
    if found is None:
        raise ScopeError("code beside the kernel can be added only where the kernel is a top-level function")
    first = min([found.lineno] + [d.lineno for d in getattr(found, "decorator_list", [])])
    changed = _with_imports(splice_items(text, items, first), imports)
    check_scope(text, changed, set(items) | set(imports), kernel=kernel.qualname)
    return changed


def _imports_beside(statements: list[ast.stmt]) -> list[str]:
    """The imports among the code beside the kernel: of the modules candidate code may use only (math, torch,
    triton, triton.language as tl), each as its own statement."""
    found = []
    for stmt in statements:
        if isinstance(stmt, ast.ImportFrom):
            raise ScopeError(f"beside the kernel, `import MODULE` only, not `{ast.unparse(stmt)[:80]}`")
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if (alias.name, alias.asname) not in SAFE_IMPORTS:
                    raise ScopeError(
                        f"beside the kernel, imports of math, torch, triton and triton.language as tl only, not "
                        f"`{ast.unparse(stmt)[:80]}`"
                    )
                found.append(ast.unparse(ast.Import(names=[alias])))
    return found


def _with_imports(text: str, imports: list[str]) -> str:
    """`text` with each import it lacks added after its last top-level import (or at its top)."""
    tree = ast.parse(text)
    had = {ast.unparse(n) for n in tree.body if isinstance(n, ast.Import)}
    new = [i for i in imports if i not in had]
    if not new:
        return text
    tops = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    after = last_line(tops[-1]) if tops else 0
    lines = text.splitlines(keepends=True)
    return "".join(lines[:after]) + "".join(f"{i}\n" for i in new) + "".join(lines[after:])


def _shadows_nothing(text: str, name: str) -> None:
    """A new top-level name may not be a builtin's nor one the file reads without defining it at the top
    (a star import's, a global set elsewhere): a helper named `int` would change the program outside the
    kernel, wherever it calls int()."""
    tree = ast.parse(text)
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    if name in dir(builtins) or (name in read and name not in {item_name(n) for n in tree.body}):
        raise PolicyError(
            f"the new {name} beside the kernel shadows the {'builtin' if name in dir(builtins) else 'name'} {name} "
            "the rest of the program uses: give new kernels, helpers and constants names of their own"
        )


def _names_used(text: str, qualnames: list[str], items: dict[str, str]) -> set[str]:
    """The names the kernel, the launcher and the new items refer to."""
    tree = ast.parse(text)
    nodes: list[ast.AST] = [n for n in tree.body if item_name(n) in {q.split(".")[-1] for q in qualnames}]
    nodes += [ast.parse(source) for source in items.values()]
    return {n.id for top in nodes for n in ast.walk(top) if isinstance(n, ast.Name)}
