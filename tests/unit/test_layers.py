"""Dependencies point down the layers of docs/architecture.md, read from every module's imports.

A known exception is listed with its reason; the lists only shrink (a listed import that is
gone fails the test too, so the list stays true)."""

from __future__ import annotations

import ast
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAYERS = {  # module prefix -> layer; the longest matching prefix decides
    "intelliperf": 0,
    "intelliperf.errors": 0,
    "intelliperf.models": 0,
    "intelliperf.files": 0,
    "intelliperf.env": 0,
    "intelliperf.redact": 0,
    "intelliperf.syntax": 0,
    "intelliperf.plugins": 0,
    "intelliperf.workload": 1,
    "intelliperf.pinpoint": 1,
    "intelliperf.testing": 1,
    "intelliperf.profiling": 2,
    "intelliperf.validators": 2,
    "intelliperf.formulas": 2,
    "intelliperf.rewriters": 2,
    # Inside the user's program the bootstrap is the top: it puts the recorder, the launch window
    # and (in validation runs) the output capture into Triton. Nothing imports it; the runner
    # only puts its folder on PYTHONPATH.
    "intelliperf.bootstrap": 3,
    "intelliperf.delivery": 3,
    "intelliperf.settings": 3,
    "intelliperf.diagnosis": 3,
    "intelliperf.optimization": 3,
    "intelliperf.api": 4,
    "intelliperf.cli": 5,
    "intelliperf.__main__": 5,
    "intelliperf.evaluation": 5,
    "intelliperf.campaign": 5,
}
KNOWN_UPWARD: set[tuple[str, str]] = set()  # none left; an exception needs its reason here
KNOWN_CYCLES: set[frozenset[str]] = set()
KNOWN_MODULE_CIRCLES: set[frozenset[str]] = set()
PACKAGES = (
    "intelliperf.workload",
    "intelliperf.profiling",
    "intelliperf.validators",
    "intelliperf.formulas",
    "intelliperf.rewriters",
    "intelliperf.delivery",
    "intelliperf.testing",
    "intelliperf.campaign",
)


def _module(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    parts = ["intelliperf", *parts] if parts[0] in ("formulas", "validators") else parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> list[Path]:
    return [*REPO.glob("intelliperf/**/*.py"), *REPO.glob("formulas/**/*.py"), *REPO.glob("validators/**/*.py")]


def _imported_from(node: ast.ImportFrom, package: str) -> str:
    """The module a `from X import ...` reads, relative imports resolved against `package`."""
    if node.level:
        base = package.split(".")[: len(package.split(".")) - node.level + 1]
        return ".".join(base + ([node.module] if node.module else []))
    return node.module or ""


def _imports() -> set[tuple[str, str]]:
    edges = set()
    for path in _sources():
        module = _module(path)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom):
                names = [_imported_from(node, package)]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                if name.split(".")[0] in ("formulas", "validators"):
                    name = f"intelliperf.{name}"
                if name.split(".")[0] == "intelliperf":
                    edges.add((module, name))
    return edges


def _layer(module: str) -> tuple[str, int]:
    prefix = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return prefix, LAYERS[prefix]


def _group(module: str) -> str:
    inside = [p for p in PACKAGES if module == p or module.startswith(p + ".")]
    return max(inside, key=len) if inside else _layer(module)[0]


def test_no_import_goes_up_a_layer():
    edges = _imports()
    assert len(edges) > 100  # the scan reads the package
    upward = {(a, b) for a, b in edges if _layer(b)[1] > _layer(a)[1]}
    assert upward - KNOWN_UPWARD == set(), "imports that go up a layer (see docs/architecture.md)"
    assert KNOWN_UPWARD - upward == set(), "a known exception is gone: remove it from KNOWN_UPWARD"


def test_sibling_packages_form_no_new_cycle():
    graph = defaultdict(set)
    for a, b in _imports():
        if _group(a) != _group(b):
            graph[_group(a)].add(_group(b))
    cycles = {frozenset({a, b}) for a in graph for b in graph[a] if a in graph.get(b, ())}
    assert cycles - KNOWN_CYCLES == set(), "packages that import each other"
    assert KNOWN_CYCLES - cycles == set(), "a known cycle is gone: remove it from KNOWN_CYCLES"


def _module_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports, every import counted (inside functions and under
    TYPE_CHECKING too); `from pkg import name` depends on `pkg.name` where that is a module, else on `pkg`."""
    paths = _sources()
    modules = {_module(path) for path in paths}
    graph: dict[str, set[str]] = defaultdict(set)
    for path in paths:
        module = _module(path)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.ImportFrom):
                base = _imported_from(node, package)
                if base.split(".")[0] in ("formulas", "validators"):
                    base = f"intelliperf.{base}"
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for target in targets:
                while target not in modules and "." in target:  # a name inside a module: the module
                    target = target.rpartition(".")[0]
                if target in modules and target != module:
                    graph[module].add(target)
    return graph


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    stack = [start]
    while stack:
        for following in graph.get(stack.pop(), ()):
            if following not in seen:
                seen.add(following)
                stack.append(following)
    return seen


def test_modules_form_no_import_circle():
    """No module imports, directly or through others, a module that imports it: each circle is a tangle the
    layers cannot show (a shared piece belongs in a module below both)."""
    graph = _module_graph()
    assert len(graph) > 50  # the scan reads the package
    reach = {module: _reachable(graph, module) for module in list(graph)}
    circles = {
        frozenset(other for other in reach[module] if module in reach.get(other, ()))
        for module in reach
        if module in reach[module]
    }
    assert circles - KNOWN_MODULE_CIRCLES == set(), "modules that import each other (through others too)"
    assert KNOWN_MODULE_CIRCLES - circles == set(), "a known circle is gone: remove it from KNOWN_MODULE_CIRCLES"


def _folders() -> list[str]:
    return sorted({_module(path) for path in _sources() if path.name == "__init__.py"})


def _parts_graph(graph: dict[str, set[str]], folder: str) -> dict[str, set[str]]:
    """The imports between a folder's parts: its modules and its sub-folders (each with all it holds), and the
    folder's own `__init__` as one more part."""

    def part(module: str) -> str | None:
        if module == folder:
            return folder
        if module.startswith(folder + "."):
            return f"{folder}.{module[len(folder) + 1 :].split('.')[0]}"
        return None

    parts: dict[str, set[str]] = defaultdict(set)
    for module, imported in graph.items():
        for target in imported:
            a, b = part(module), part(target)
            if a and b and a != b:
                parts[a].add(b)
    return parts


def test_no_two_parts_of_a_folder_import_each_other():
    """In every folder, its modules and sub-folders import one way only, through any number of others: a
    sub-folder never imports a module beside it that imports the sub-folder, nor the folder's `__init__` (which
    re-exports from its sub-folders). So validators/workers/ may use validators/compare.py, which never uses
    the workers; the folders below a folder are floors, not a tangle."""
    graph = _module_graph()
    folders = _folders()
    assert {"intelliperf.validators.workers", "intelliperf.validators.runs", "intelliperf.profiling.inside"} <= set(
        folders
    )
    tangles = {}
    for folder in folders:
        parts = _parts_graph(graph, folder)
        circle = sorted(p for p in parts if p in _reachable(parts, p))
        if circle:
            tangles[folder] = circle
    assert tangles == {}, "parts of a folder that import each other (through others too)"


def test_every_environment_variable_is_named_in_the_env_module():
    """One module names every INTELLIPERF_* variable (intelliperf/env.py); the rest of the package
    uses its constants. Only the bootstrap spells the names it reads (it runs before intelliperf is
    importable in the program's Python), and messages may quote a name: each must be a real one."""
    import re

    from intelliperf import env

    declared = {v for k, v in vars(env).items() if k.isupper() and isinstance(v, str)}
    spelled = re.compile(r"""(?:environ(?:\.get)?\(?\[?|getenv\(|envvar=)\s*["'](INTELLIPERF_\w+)""")
    named = re.compile(r"INTELLIPERF_[A-Z0-9_]*[A-Z0-9]")
    readers, unknown = [], []
    for path in [
        *(REPO / "intelliperf").rglob("*.py"),
        *(REPO / "validators").rglob("*.py"),
        *(REPO / "formulas").rglob("*.py"),
    ]:
        text = path.read_text()
        where = path.relative_to(REPO)
        if path.name != "env.py" and path.parent.name != "bootstrap":
            readers += [f"{where}: {m}" for m in spelled.findall(text)]
        unknown += [f"{where}: {m}" for m in named.findall(text) if m not in declared]
    assert not readers, f"read by name outside intelliperf/env.py: {readers}"
    assert not unknown, f"not declared in intelliperf/env.py: {unknown}"


@pytest.mark.slow
def test_the_package_type_checks():
    """mypy (with the pydantic plug-in) over the package in its installed layout, as .ci/typecheck
    runs it: a type error anywhere in intelliperf, formulas/ or validators/ fails the suite."""
    done = subprocess.run(["bash", str(REPO / ".ci" / "typecheck")], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Success: no issues found" in done.stdout


def test_no_module_over_600_lines_and_no_function_over_80():
    """Small modules and functions a reader can hold: the package and the benchmark suite's own scripts
    (not the third-party programs of benchmarks/corpus and benchmarks/fixes)."""
    long_modules, long_functions = [], []
    for path in [*_sources(), *REPO.glob("benchmarks/*.py")]:
        text = path.read_text()
        if len(text.splitlines()) > 600:
            long_modules.append(f"{path.relative_to(REPO)} ({len(text.splitlines())} lines)")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 80:
                long_functions.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name}")
    assert long_modules == [] and long_functions == [], (long_modules, long_functions)


MAX_PARAMETERS = 8


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """A function's named parameters, positional and keyword-only (`*args`, `**kwargs` aside), `self`/`cls` not."""
    names = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def _typer_commands() -> set[str]:
    """The functions intelliperf/cli/commands.py puts on the app (`app.command(...)(optimize)`)."""
    tree = ast.parse((REPO / "intelliperf" / "cli" / "commands.py").read_text())
    return {
        node.args[0].id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Call) and isinstance(node.func.func, ast.Attribute)
        and node.func.func.attr == "command" and node.args and isinstance(node.args[0], ast.Name)
    }  # fmt: skip


def test_no_function_takes_more_than_eight_parameters():
    """Parameters that travel together go as one typed object (a settings model, a run's session, a small
    dataclass); only the typer commands in intelliperf/cli/ take more, their parameters being the command line's
    options."""
    commands = _typer_commands()
    assert {"diagnose", "optimize", "campaign", "tune"} <= commands
    long, seen = [], 0
    for path in _sources():
        in_cli = path.parent == REPO / "intelliperf" / "cli"
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                seen += 1
                command = in_cli and node.col_offset == 0 and node.name in commands
                if len(_parameters(node)) > MAX_PARAMETERS and not command:
                    long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({len(_parameters(node))})")
    assert seen > 1000  # the scan reads the package
    assert long == [], "functions over 8 parameters: group those that travel together"


def test_every_folder_has_its_floor_and_the_top_folders_stay_small():
    """Each folder of the package is on one floor of its own in LAYERS (no sub-folder listed apart), the top
    folder holds at most 12 modules and validators/ at most 8: a concept that grows gets a folder, not a
    prefix."""
    folders = {f"intelliperf.{p.parent.name}" for p in REPO.glob("intelliperf/*/__init__.py")}
    folders |= {"intelliperf.formulas", "intelliperf.validators"}  # installed under intelliperf
    assert folders - set(LAYERS) == set(), "folders with no floor in LAYERS"
    nested = [p for p in LAYERS if p.count(".") > 1 or (p.count(".") == 1 and p not in folders and not _top_module(p))]
    assert nested == [], f"LAYERS lists a part of a folder apart: {nested}"
    top = sorted(p.stem for p in REPO.glob("intelliperf/*.py") if p.name != "__init__.py")
    assert len(top) <= 12, top
    validators = sorted(p.stem for p in REPO.glob("validators/*.py") if p.name != "__init__.py")
    assert len(validators) <= 8, validators


def _top_module(prefix: str) -> bool:
    return (REPO / "intelliperf" / f"{prefix.split('.')[1]}.py").exists()
