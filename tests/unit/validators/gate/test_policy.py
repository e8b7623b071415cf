"""The source policy (validators/policy.py), an allow-list, against real code and real cheats.

1. The corpus: every @triton.jit function, every function or autograd.Function method that launches a
   kernel (`kernel[grid](...)`), every module-level launch statement and every module constant those
   functions use, in the real public Triton files of this repository (benchmarks/corpus,
   benchmarks/fixes, examples, tests/programs) and in tests/fixtures/triton_corpus (Liger-Kernel,
   unsloth, FlagGems, flash-linear-attention, triton-lang/kernels, each with its source and license),
   checked as a candidate that is new (no grandfathering): 113 files (57 of them public), 320 units,
   287 pass (134 of 146 kernels, 151 of 172 launchers, methods and constants, 2 of 2 launch
   statements), 33 refused (EXPECTED_REFUSALS, each with why the refusal is right).
2. Cheats, each refused with a reason that names the construct.
3. Honest expert rewrites, accepted.
"""

from __future__ import annotations

import ast
import textwrap
from functools import cache
from pathlib import Path

import pytest

from intelliperf.validators.gate.policy import PolicyError, check, check_module_item, check_statement

REPO = Path(__file__).resolve().parents[4]
CORPUS = sorted(
    [
        *REPO.glob("benchmarks/corpus/*.py"),
        *REPO.glob("benchmarks/fixes/*.py"),
        *REPO.glob("examples/**/*.py"),
        *REPO.glob("tests/programs/**/*.py"),
        *REPO.glob("tests/fixtures/triton_corpus/*.py"),
    ]
)

# {file::unit: a words the refusal must contain}, each a refusal that is right for a candidate
EXPECTED_REFUSALS = {
    # reads the environment (the repository's CPU switch around the published wrapper)
    "benchmarks/corpus/tritonbench_index_select_bwd.py::index_select_cat_bwd": "`os.environ.get`",
    # logs through the logging module: a side effect no rewrite needs
    "benchmarks/corpus/tritonbench_matrix_vector.py::mv": "`logging.debug`",
    # `**autotune_cache_kwargs`: decorator arguments not written out (they could carry do_bench, hooks)
    "benchmarks/fixes/fla_chunk_local_cumsum_vector_after.py::chunk_local_cumsum_vector_kernel": "**autotune",
    "benchmarks/fixes/fla_chunk_local_cumsum_vector_before.py::chunk_local_cumsum_vector_kernel": "**autotune",
    "tests/fixtures/triton_corpus/fla_cumsum.py::chunk_global_cumsum_scalar_kernel": "**autotune_cache_kwargs",
    "tests/fixtures/triton_corpus/fla_cumsum.py::chunk_global_cumsum_vector_kernel": "**autotune_cache_kwargs",
    # a lost device context kept in a module-level list: the state that program stands for
    "tests/programs/windows/faulting_scale.py::faulting_scale": "`_LOST.append`",
    "tests/programs/windows/faulting_scale.py::_LOST": "`[]`",
    # module-level lists and dicts: state a later call can see (a new constant is a tuple or a literal)
    "benchmarks/fixes/fla_chunk_local_cumsum_vector_after.py::BS_LIST": "`[32, 64]`",
    "benchmarks/fixes/fla_chunk_local_cumsum_vector_before.py::BS_LIST": "`[32, 64]`",
    "benchmarks/fixes/fla_chunk_local_cumsum_vector_after.py::autotune_cache_kwargs": "`{}`",
    "benchmarks/fixes/fla_chunk_local_cumsum_vector_before.py::autotune_cache_kwargs": "`{}`",
    "benchmarks/fixes/liger_fused_add_rms_norm_backward_after.py::torch_to_triton_dtype": "list, dict or set",
    "benchmarks/fixes/liger_fused_add_rms_norm_backward_before.py::torch_to_triton_dtype": "list, dict or set",
    "benchmarks/fixes/liger_rms_norm_backward_after.py::torch_to_triton_dtype": "list, dict or set",
    "benchmarks/fixes/liger_tvd_forward_after.py::_str_to_reduction_mode": "list, dict or set",
    "benchmarks/fixes/liger_tvd_forward_before.py::_str_to_reduction_mode": "list, dict or set",
    # ... and computed at import by a call into the program (check_shared_mem())
    "tests/fixtures/triton_corpus/fla_cumsum.py::BS_LIST": "`check_shared_mem()`",
    # the program's own decorators: they wrap, cache or re-tune the function (fla's cached autotuner,
    # FlagGems' libentry, fla's input_guard on a launcher)
    "tests/fixtures/triton_corpus/fla_cumsum.py::chunk_local_cumsum_scalar_kernel": "`@fla_cache_autotune(",
    "tests/fixtures/triton_corpus/fla_cumsum.py::chunk_local_cumsum_vector_kernel": "`@fla_cache_autotune(",
    "tests/fixtures/triton_corpus/fla_cumsum.py::chunk_global_cumsum_scalar": "`@input_guard`",
    "tests/fixtures/triton_corpus/fla_cumsum.py::chunk_global_cumsum_vector": "`@input_guard`",
    "tests/fixtures/triton_corpus/flaggems_argmax.py::argmax_kernel_1": "`@libentry()`",
    "tests/fixtures/triton_corpus/flaggems_argmax.py::argmax_kernel_2": "`@libentry()`",
    # ... and attributes of the program's modules in a kernel: ext.program_id, runtime.get_heuristic_config
    # (a kernel reaches Triton's language and this file's names, not another module's attributes)
    "tests/fixtures/triton_corpus/flaggems_argmax.py::argmax_kernel_non_inner": "`runtime.get_heuristic_config`",
    "tests/fixtures/triton_corpus/flaggems_argmax.py::argmax_kernel_inner": "`ext.program_id`",
    # a module-level logger: a logging side effect, and an attribute of a module-level object
    "tests/fixtures/triton_corpus/flaggems_argmax.py::argmax": "`logger.debug`",
    "tests/fixtures/triton_corpus/flaggems_argmax.py::logger": "`logging.getLogger`",
    # tl.advance is not in Triton 3.9's language any more (block pointers advance with ptr.advance(...))
    "tests/fixtures/triton_corpus/tritonkernels_flash_attention.py::_fwd_kernel": "`tl.advance`",
    "tests/fixtures/triton_corpus/tritonkernels_flash_attention.py::_bwd_kernel_one_col_block": "`tl.advance`",
    # getattr(tl, <a computed name>): the attribute a candidate reaches is not in its source
    "tests/fixtures/triton_corpus/tritonkernels_matmul.py::_matmul._call": "`getattr`",
    # test drivers that launch a kernel themselves: they print and draw random inputs (no launcher does)
    "tests/programs/many_launches.py::main": "`print`",
    "tests/programs/multi_kernel.py::main": "`torch.rand`",
    # the programs' device switch, read from the environment at import
    "tests/programs/many_launches.py::DEVICE": "`os.environ.get`",
    "tests/programs/multi_kernel.py::DEVICE": "`os.environ.get`",
}


def _launches(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript) for n in ast.walk(node))


def _is_jit(fn: ast.FunctionDef) -> bool:
    return any("jit" in ast.unparse(d) for d in fn.decorator_list)


def _outer_names(fn: ast.FunctionDef) -> set[str]:
    """The names `fn` reads but does not bind (the module-level names it uses)."""
    bound = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    for node in ast.walk(fn):
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            bound |= {a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]}
    return {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} - bound


def corpus_units(path: Path) -> list[tuple[str, str, str]]:
    """(name, kind, source) of each unit of `path` a candidate could bring: kernels ("kernel"),
    launching functions and methods and the constants they use ("item"), launch statements ("statement")."""
    text = path.read_text()
    lines = text.splitlines()

    def source(node: ast.stmt) -> str:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        return textwrap.dedent("\n".join(lines[first - 1 : node.end_lineno]) + "\n")

    tree = ast.parse(text)
    units, used = [], set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and (_is_jit(node) or _launches(node)):
            units.append((node.name, "kernel" if _is_jit(node) else "item", source(node)))
            used |= _outer_names(node)
        elif isinstance(node, ast.ClassDef):
            for method in node.body:
                if isinstance(method, ast.FunctionDef) and _launches(method):
                    units.append((f"{node.name}.{method.name}", "method", source(method)))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        name = targets[0].id if len(targets) == 1 and isinstance(targets[0], ast.Name) else None
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and name in used:
            units.append((name, "item", source(node)))

    def statements(body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(stmt, (ast.Expr, ast.Assign)) and _launches(stmt):
                units.append((f"<launch@{stmt.lineno}>", "statement", source(stmt)))
            for field in ("body", "orelse"):
                statements(getattr(stmt, field, None) or [])

    statements(tree.body)
    return units


def _verdict(kind: str, code: str) -> str | None:
    """None when the unit passes as a new candidate, else the policy's reason."""
    try:
        if kind == "statement":
            check_statement("", code)
        else:
            check_module_item(None, code, kernel=kind == "kernel", method=kind == "method")
    except PolicyError as exc:
        return str(exc)
    return None


@cache
def corpus_verdicts() -> dict[str, str | None]:
    return {
        f"{path.relative_to(REPO)}::{name}": _verdict(kind, code)
        for path in CORPUS
        for name, kind, code in corpus_units(path)
    }


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: str(p.relative_to(REPO)))
def test_the_corpus_passes_or_is_refused_for_a_listed_reason(path):
    prefix = f"{path.relative_to(REPO)}::"
    for key, reason in corpus_verdicts().items():
        if not key.startswith(prefix):
            continue
        if key in EXPECTED_REFUSALS:
            assert reason is not None, f"{key} passes now: drop it from EXPECTED_REFUSALS"
            assert EXPECTED_REFUSALS[key] in reason, reason
        else:
            assert reason is None, f"{key}: {reason}"


def test_the_corpus_is_large_and_its_refusals_are_all_real():
    verdicts = corpus_verdicts()
    assert set(EXPECTED_REFUSALS) <= set(verdicts), set(EXPECTED_REFUSALS) - set(verdicts)
    passed = [k for k, v in verdicts.items() if v is None]
    assert len(CORPUS) >= 80 and len(passed) >= 190, (len(CORPUS), len(passed))
    assert sum(1 for k in passed if "tests/fixtures/triton_corpus/" in k) >= 30
    for path in REPO.glob("tests/fixtures/triton_corpus/*.py"):
        header = path.read_text().splitlines()[:3]
        assert header[0].startswith("# Source: https://github.com/") and "License: " in header[2], path


# --- cheats: each refused, the reason naming the construct

KERNEL = """@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)
"""
LAUNCHER = """def add(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
"""
LAUNCH = "    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)\n"
STORE = "    tl.store(out_ptr + offs, x + y, mask=mask)\n"


def _launcher(before: str = "", after: str = "", signature: str = "def add(x, y):\n") -> str:
    return LAUNCHER.replace(LAUNCH, before + LAUNCH + after).replace("def add(x, y):\n", signature)


def _kernel(body: str = "", decorators: str = "@triton.jit\n") -> str:
    return KERNEL.replace("@triton.jit\n", decorators).replace(STORE, STORE + body)


# name: (where: launcher / kernel / item / statement, candidate, a word the reason must contain)
CHEATS = {
    "exec through tl.core.builtins in a decorator": (
        "kernel",
        _kernel(decorators="@triton.jit(do_not_specialize=tl.core.builtins.exec(\"open('p', 'w')\") or [])\n"),
        "`tl.core.builtins.exec`",
    ),
    "exec through tl.core.builtins in the body (the interpreter runs it)": (
        "kernel",
        _kernel("    tl.core.builtins.exec('import os')\n"),
        "tl.core is outside",
    ),
    "environ through torch.serialization.os": (
        "launcher",
        _launcher("    if 'INTELLIPERF_CAPTURE' in torch.serialization.os.environ:\n        return x + y\n"),
        "`torch.serialization.os.environ`",
    ),
    "os through torch.cuda.importlib": (
        "launcher",
        _launcher("    env = torch.cuda.importlib.import_module('os').environ\n"),
        "`torch.cuda.importlib.import_module`",
    ),
    "getattr with a name built at run time": (
        "launcher",
        _launcher(after="    getattr(torch, 'sa' + 've')(out, 'stash.pt')\n"),
        "`getattr`",
    ),
    "the object graph through __class__": (
        "launcher",
        _launcher("    base = x.__class__.__mro__[-1]\n"),
        "`x.__class__.__mro__`",
    ),
    "type() of an argument": (
        "launcher",
        _launcher("    if type(x) is not torch.Tensor:\n        return x + y\n"),
        "`type`",
    ),
    "launches on a side stream": (
        "launcher",
        _launcher("    stream = torch.cuda.Stream()\n"),
        "`torch.cuda.Stream`",
    ),
    "times itself with CUDA events": (
        "launcher",
        _launcher("    start = torch.cuda.Event(enable_timing=True)\n"),
        "`torch.cuda.Event`",
    ),
    "a memo keyed on x._version": ("launcher", _launcher("    key = (x._version, n)\n"), "`x._version`"),
    "a memo keyed on x.data_ptr()": ("launcher", _launcher("    key = x.data_ptr()\n"), "`x.data_ptr`"),
    "the storage behind an argument": (
        "launcher",
        _launcher("    same = x.untyped_storage() is y.untyped_storage()\n"),
        "`x.untyped_storage`",
    ),
    "a class in the launcher (a lazy Tensor subclass)": (
        "launcher",
        _launcher("    class Lazy(torch.Tensor):\n        pass\n"),
        "`class Lazy`",
    ),
    "a ring of buffers, a module-level list (beside)": (
        "item",
        "_RING = [torch.empty(4096) for _ in range(4)]\n",
        "_RING",
    ),
    "the ring used from the launcher": (
        "launcher",
        _launcher("    out = _RING[0][:n].zero_()\n"),
        "`_RING[0][:n].zero_`",
    ),
    "a memo dict at module level (beside)": ("item", "_MEMO = {}\n", "the constant _MEMO"),
    "writes into a module-level dict": ("launcher", _launcher(after="    _MEMO[n] = out\n"), "`_MEMO[n] = ...`"),
    "a module-level list through a local alias": (
        "launcher",
        _launcher("    ring = _RING\n    ring.append(out)\n"),
        "`ring.append`",
    ),
    "global": ("launcher", _launcher("    global CACHE\n"), "`global CACHE`"),
    "nonlocal in a nested function": (
        "launcher",
        _launcher("    calls = [0]\n    def bump():\n        nonlocal calls\n        calls = calls\n    bump()\n"),
        "`nonlocal calls`",
    ),
    "patches elapsed_time": (
        "launcher",
        _launcher("    torch.cuda.Event.elapsed_time = lambda *a: 0.001\n"),
        "`torch.cuda.Event.elapsed_time = ...`",
    ),
    "patches triton.testing.do_bench": (
        "launcher",
        _launcher("    triton.testing.do_bench = lambda *a, **k: 0.001\n"),
        "`triton.testing.do_bench = ...`",
    ),
    "caches on the input tensor": ("launcher", _launcher(after="    x.stash = out\n"), "`x.stash = ...`"),
    "a decorator argument that is a function of the program (a hook)": (
        "kernel",
        _kernel(
            decorators="@triton.autotune(configs=[triton.Config({'BLOCK': 1024})], key=['n'], pre_hook=log)\n"
            "@triton.jit\n"
        ),
        "`pre_hook=log`",
    ),
    "an autotuner whose timing is replaced": (
        "kernel",
        _kernel(
            decorators="@triton.autotune(configs=[triton.Config({'BLOCK': 1024})], key=['n'], "
            "do_bench=lambda fn, quantiles: [0.001] * 3)\n@triton.jit\n"
        ),
        "`do_bench=",
    ),
    "decorator arguments not written out": (
        "kernel",
        _kernel(decorators="@triton.autotune(configs=CONFIGS, key=['n'], **TUNING)\n@triton.jit\n"),
        "`**TUNING`",
    ),
    "a decorator other than Triton's on a kernel": (
        "kernel",
        _kernel(decorators="@functools.lru_cache\n@triton.jit\n"),
        "`@functools.lru_cache`",
    ),
    "a lambda default capturing state (the grid)": (
        "launcher",
        LAUNCHER.replace(LAUNCH, "    grid = lambda meta, seen=SEEN: (triton.cdiv(n, meta['BLOCK']),)\n" + LAUNCH),
        "a lambda with a default",
    ),
    "a lambda default capturing state (heuristics)": (
        "kernel",
        _kernel(decorators="@triton.heuristics({'BLOCK': lambda args, seen=[]: 1024})\n@triton.jit\n"),
        "a lambda with a default",
    ),
    "a mutable default in a helper (beside)": (
        "item",
        "def _remember(x, _cache={}):\n    return _cache.setdefault(x.shape, x)\n",
        "`_cache={}`",
    ),
    "open()": ("launcher", _launcher("    open('/proc/1/environ').read()\n"), "`open`"),
    "open() in the kernel body (Python under the interpreter)": ("kernel", _kernel("    open('f', 'w')\n"), "`open`"),
    "import os inside the launcher": ("launcher", _launcher("    import os\n"), "`import os`"),
    "os.environ": (
        "launcher",
        _launcher("    if os.environ.get('INTELLIPERF_CAPTURE'):\n        return x + y\n"),
        "os.environ",
    ),
    "sys.argv": ("launcher", _launcher("    if len(sys.argv) > 5:\n        return x + y\n"), "`sys.argv`"),
    "detects the interpreter": (
        "launcher",
        _launcher("    if not torch.cuda.is_available():\n        return x + y\n"),
        "`torch.cuda.is_available`",
    ),
    "a namespace of tl that is a module (tl.extra imports pkgutil)": (
        "kernel",
        _kernel("    m = tl.extra.pkgutil\n"),
        "tl.extra.pkgutil is outside",
    ),
    "the interpreter's raw data of a pointer": ("kernel", _kernel("    raw = x_ptr.handle\n"), "`x_ptr.handle`"),
    "an attribute of another module in a kernel": (
        "kernel",
        _kernel("    pid2 = ext.program_id(0)\n"),
        "`ext.program_id`",
    ),
    "a constant loaded from a file (beside)": ("item", "_TRUTH = torch.load('/tmp/truth.pt')\n", "`torch.load`"),
    "a launch statement that reads the environment": (
        "statement",
        "add_kernel[grid](x, y, out, n, BLOCK=int(os.environ['BLOCK']))\n",
        "`os.environ`",
    ),
    # round 3: no exemption by name, no reach through format strings, decorators or heuristics
    "a helper whose parameter is named ctx patches what it is given (torch.Tensor)": (
        "item",
        "def _patch(ctx, fake):\n    ctx.detach = fake\n    return ctx\n",
        "`ctx.detach = ...`",
    ),
    "a static helper named forward beside the kernel (not an autograd method)": (
        "item",
        "@staticmethod\ndef forward(ctx, fake):\n    ctx.detach = fake\n",
        "`ctx.detach = ...`",
    ),
    "a launcher parameter named ctx": (
        "launcher",
        _launcher("    ctx = x\n    ctx.cached = out\n"),
        "`ctx.cached = ...`",
    ),
    "str.format reaching a function's globals": (
        "launcher",
        _launcher("    env = '{0.__globals__[os].environ}'.format(add)\n"),
        "a format field reaching",
    ),
    "str.format with a field nested in its spec": (
        "launcher",
        _launcher("    s = '{0:{1.__class__}}'.format(1, x)\n"),
        "a format field reaching",
    ),
    "str.format on a template built at run time": (
        "launcher",
        _launcher("    s = ('{0.' + 'x}').format(x)\n"),
        ".format on a string not written out",
    ),
    "format_map": ("launcher", _launcher("    s = '{x}'.format_map({'x': x})\n"), "format_map"),
    "a walrus in a decorator makes a module-level ring of buffers": (
        "kernel",
        _kernel(decorators="@triton.heuristics({'R': lambda a: len(ring := [0] * 8)})\n@triton.jit\n"),
        "a binding in a decorator",
    ),
    "torch in a heuristics lambda does the kernel's work": (
        "kernel",
        _kernel(
            decorators="@triton.heuristics({'D': lambda a: torch.add(a['x_ptr'], a['y_ptr'], out=a['out_ptr']) "
            "is None})\n@triton.jit\n"
        ),
        "torch in a decorator's callable",
    ),
    "a tensor method in a heuristics lambda does the kernel's work": (
        "kernel",
        _kernel(
            decorators="@triton.heuristics({'D': lambda a: a['out_ptr'].copy_(a['x_ptr']) is None})\n@triton.jit\n"
        ),
        "a tensor method in a decorator's callable",
    ),
    "a launch block that writes into a program value": (
        "statement",
        "CACHE[0] = out\nadd_kernel[grid](x, y, out, n, BLOCK=1024)\n",
        "`CACHE[0] = ...`",
    ),
}


@pytest.mark.parametrize("name", list(CHEATS))
def test_a_cheat_is_refused_naming_its_construct(name):
    where, candidate, word = CHEATS[name]
    with pytest.raises(PolicyError) as refused:
        if where == "launcher":
            check(LAUNCHER, candidate, "add", kernel=False)
        elif where == "kernel":
            check(KERNEL, candidate, "add_kernel", kernel=True)
        elif where == "item":
            check_module_item(None, candidate, kernel=False)
        else:
            check_statement("add_kernel[grid](x, y, out, n, BLOCK=1024)\n", candidate)
    assert word in str(refused.value), str(refused.value)


def test_a_refusal_says_what_is_allowed_instead():
    with pytest.raises(PolicyError) as refused:
        check(LAUNCHER, _launcher("    torch.cuda.synchronize()\n"), "add", kernel=False)
    assert "`torch.cuda.synchronize` (torch.cuda.synchronize is outside the allowed torch names: tensor " in str(
        refused.value
    )
    with pytest.raises(PolicyError) as refused:
        check(LAUNCHER, _launcher("    p = x.data_ptr()\n"), "add", kernel=False)
    assert "allowed tensor methods and attributes (shape, stride()" in str(refused.value)


def test_what_the_original_already_did_is_not_a_refusal():
    original = _launcher("    if os.environ.get('DEBUG'):\n        n = n\n")
    check(original, original.replace("BLOCK=1024", "BLOCK=512").replace("1024),)", "512),)"), "add", kernel=False)
    check_module_item("BS_LIST = [32, 64]\n", "BS_LIST = [32, 64]\n", kernel=False)
    with pytest.raises(PolicyError, match="import os"):
        check(original, original.replace("    out =", "    import os\n    out ="), "add", kernel=False)


def test_an_item_beside_the_kernel_is_one_function_or_one_constant():
    with pytest.raises(PolicyError, match="not ClassDef"):
        check_module_item(None, "class Lazy(torch.Tensor):\n    pass\n", kernel=False)
    with pytest.raises(PolicyError, match="not Import"):
        check_module_item(None, "import os\n", kernel=False)


# --- honest expert rewrites: accepted

TILED = """@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in tl.range(0, n_cols, BLOCK, num_stages=2):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))
"""
ONE_ATOMIC = """@triton.jit
def total_kernel(x_ptr, total_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(total_ptr, tl.sum(x, axis=0), sem="relaxed")
"""
AUTOTUNED = """@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 256}, num_warps=4),
        triton.Config({"BLOCK": 1024}, num_warps=8, num_stages=3),
    ],
    key=["n"],
    reset_to_zero=["total_ptr"],
)
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0,
                    "CHUNK": lambda args: triton.next_power_of_2(args["n"]) // 4})
@triton.jit(do_not_specialize=["n"])
def total_kernel(x_ptr, total_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr, CHUNK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs)
    else:
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(total_ptr, tl.sum(x, axis=0))
"""
GET_CONFIGS = """def get_configs():
    configs = []
    for block in (128, 256, 512):
        for warps in (4, 8):
            configs.append(triton.Config({"BLOCK": block}, num_warps=warps, num_stages=2))
    return configs + [triton.Config({"BLOCK": 1024}, num_warps=8, pre_hook=lambda nargs: nargs["total_ptr"].zero_())]
"""
USES_CONFIGS = (
    AUTOTUNED.split("@triton.heuristics")[0].replace(
        AUTOTUNED.split("configs=")[1].split("key=")[0], "get_configs(),\n    "
    )
    + "@triton.jit\n"
    + ONE_ATOMIC.split("@triton.jit\n")[1]
)
HELPER = """@triton.jit
def _row_max(x, axis: tl.constexpr = 0):
    return tl.max(x, axis=axis)
"""
CALLS_HELPER = """@triton.jit
def row_max_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=float("-inf"))
    tl.store(out_ptr + row, _row_max(x) * tl.math.exp2(0.0) + libdevice.fast_expf(0.0) - 1.0)
"""
SPLIT_K = """def matmul(a, b):
    M, K = a.shape
    K, N = b.shape
    split_k = 4 if K >= 4096 else 1
    partial = torch.empty((split_k, M, N), device=a.device, dtype=torch.float32)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]), split_k)
    matmul_partial_kernel[grid](a, b, partial, M, N, K, *a.stride(), *b.stride(), SPLIT_K=split_k)
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    reduce_kernel[(triton.cdiv(M * N, 1024),)](partial, c, M * N, SPLIT_K=split_k, BLOCK=1024)
    return c
"""
SM_GRID = """def add(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count
    with torch.cuda.device(x.device):
        add_kernel[(min(sms * 4, triton.cdiv(n, 1024)),)](x, y, out, n, BLOCK=1024)
    return out
"""
LAUNCH_BLOCK = """n = x.numel()
block = min(4096, triton.next_power_of_2(n))
grid = (triton.cdiv(n, block),)
if n % block == 0:
    add_kernel[grid](x, y, out, n, BLOCK=block, num_warps=8)
else:
    for start in range(0, 1):
        add_kernel[grid](x, y, out, n, BLOCK=block)
"""


def test_honest_kernels_are_accepted():
    for kernel in (TILED, ONE_ATOMIC, AUTOTUNED, USES_CONFIGS, CALLS_HELPER):
        name = ast.parse(kernel).body[0].name
        check(KERNEL.replace("add_kernel", name), kernel, name, kernel=True)
        check_module_item(None, kernel, kernel=True)


def test_honest_items_beside_the_kernel_are_accepted():
    check_module_item(None, GET_CONFIGS, kernel=False)
    check_module_item(None, HELPER, kernel=True)
    for constant in [
        "BLOCK = 1024\n",
        "NUM = tl.constexpr(4)\n",
        "X: tl.constexpr = 8\n",
        "SIZES = (64, 128)\n",
        "BLOCK_MAX = 4 * 1024 if BLOCK > 512 else BLOCK\n",
        "LOG2E = 1.0 / math.log(2)\n",
        "DTYPE = torch.float16\n",
        "MODE = _REDUCTION_MODE_MEAN.value\n",
    ]:
        check_module_item(None, constant, kernel=False)
    check_module_item("BLOCK = 512\n", "BLOCK = 1024\n", kernel=False)


def test_honest_launchers_are_accepted():
    check(SPLIT_K, SPLIT_K.replace("split_k = 4", "split_k = 8"), "matmul", kernel=False)
    check_module_item(None, SPLIT_K, kernel=False)
    check(LAUNCHER, SM_GRID, "add", kernel=False)
    check(
        LAUNCHER,
        _launcher(
            "    assert x.is_contiguous() and x.shape == y.shape, 'same shapes'\n"
            "    if x.dtype not in (torch.float16, torch.float32):\n"
            "        raise ValueError(f'unsupported {x.dtype}')\n"
        ),
        "add",
        kernel=False,
    )


# an autograd.Function's forward, as its class holds it (the method's source, dedented)
AUTOGRAD_FORWARD = """@staticmethod
def forward(context, x, y):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    context.save_for_backward(x, y)
    context.BLOCK = 1024
    return out
"""


def test_an_autograd_method_writes_its_context_whatever_its_name():
    method = AUTOGRAD_FORWARD
    check(method, method.replace("BLOCK=1024)", "BLOCK=512)").replace("1024),)", "512),)"), "forward", kernel=False)
    check_module_item(None, method, kernel=False, method=True)
    # ... but not once the name is rebound, nor from a function that is not an autograd method
    for cheat in (
        method.replace("    context.BLOCK = 1024\n", "    context = x\n    context.BLOCK = 1024\n"),
        method.replace("    context.BLOCK = 1024\n", "    def g(context):\n        context.BLOCK = 1024\n"),
    ):
        with pytest.raises(PolicyError, match="context.BLOCK = ..."):
            check(method, cheat, "forward", kernel=False)
    with pytest.raises(PolicyError, match="context.BLOCK = ..."):
        check_module_item(None, method, kernel=False)


def test_honest_format_strings_and_heuristics_are_accepted():
    check(
        LAUNCHER,
        _launcher("    assert x.numel() == y.numel(), 'sizes {} and {:>8}'.format(x.numel(), y.numel())\n"),
        "add",
        kernel=False,
    )
    check(LAUNCHER, _launcher("    assert n > 0, f'n={n} {x.dtype!r}'\n"), "add", kernel=False)
    honest = _kernel(
        decorators="@triton.heuristics({'EVEN': lambda a: a['n'] % a['BLOCK'] == 0, "
        "'WIDE': lambda a: triton.next_power_of_2(a['x_ptr'].stride(0)) > 64})\n"
        "@triton.autotune(configs=[triton.Config({'BLOCK': 256}, pre_hook=lambda a: a['out_ptr'].zero_())], "
        "key=['n'])\n@triton.jit\n"
    )
    check(KERNEL, honest, "add_kernel", kernel=True)


def test_a_launch_statement_may_become_a_block():
    check_statement("add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)\n", LAUNCH_BLOCK)


CACHED = """
_WS = {}


def launch(x):
    key = x.shape
    cnt = x.sum()
    _WS[key] = cnt
    return _WS[key] * 2
"""


@pytest.mark.parametrize(
    "edit,refused",
    [
        (("key = x.shape", "key = 1"), True),  # the program's own cache store, keyed on something else: a memo
        (("cnt = x.sum()", "cnt = x.sum() * 0"), True),  # ... or storing something else
        (("return _WS[key] * 2", "return _WS[key] + _WS[key]"), False),  # the store as it was, the rest changed
    ],
)
def test_a_state_store_the_original_has_is_kept_only_with_the_same_inputs(edit, refused):
    candidate = CACHED.replace(*edit)
    if refused:
        with pytest.raises(PolicyError, match="writes into _WS"):
            check(CACHED, candidate, "launch", kernel=False)
    else:
        check(CACHED, candidate, "launch", kernel=False)
