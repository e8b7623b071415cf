"""What candidate code may contain, checked on its source before anything runs: an allow-list.

The sandbox confines what a candidate can reach; this check refuses, with a reason the rewriter
can act on, any construct outside what a kernel rewrite needs. It lists what is allowed (anything
else is refused), unless the original code already contained the same construct (grandfathering:
the violations of the candidate minus those of the original):

- Kernels (@triton.jit functions, their decorators included: under TRITON_INTERPRET=1 the body
  runs as Python): Triton's language only. Names from `tl` / `triton.language` (its public names,
  frozen below from the installed Triton), its sub-namespaces `tl.math` and the libdevice
  functions (`tl.extra.cuda.libdevice`, `libdevice`), `triton.cdiv` and friends, the kernel's own
  parameters and locals (with the attributes of Triton tensors, dtypes and descriptors), the
  program's other names (jit helpers, constants) as values, a few pure builtins, arithmetic and
  control flow. No imports, lambdas, nested functions, `with`, `try`, `raise`, no dunders, no
  private attributes, no attributes of the program's other names (`ext.program_id`) but the
  `.value` of a constexpr constant.
- Kernel decorators: `triton.jit`, `triton.autotune`, `triton.heuristics` (or those names imported
  from triton), whose arguments follow the launcher's rules below, with hooks only as lambdas
  written out, no `do_bench` or `launch_metadata`, no `**` keyword arguments, no lambda defaults.
- Launchers and Python helpers: the same names and expressions, plus the listed torch functions
  and dtypes, the listed tensor methods and attributes, `math`, the device properties, control
  flow, `assert`, `raise` of the usual exceptions, nested functions and lambdas (the grid), `with`
  on the listed context managers or the program's own, the kernel launches, `import math` /
  `torch` / `triton` / `triton.language as tl`. Assignments only to names, and into the items of
  the function's own values (its parameters and locals), never to attributes; no `global`, no
  classes, no decorators but torch.no_grad()/inference_mode() and staticmethod (a launcher may be an
  autograd.Function's forward/backward, whose `ctx` takes any attribute), constant defaults only, no `try`,
  no attributes of module-level names (state kept between calls, the program's modules), no list
  or dict methods that mutate but on containers the function made itself.
- A launch statement (or the block of statements replacing it): the launcher's rules, where the
  names it does not bind are the program's values (a tensor's attributes allowed, no stores).
- Module constants a candidate adds beside the kernel: literals, tuples, arithmetic, the names of
  other constants, `tl.constexpr(...)` and the pure functions of math and triton; no lists, dicts,
  sets (state) and no other calls.

Every refusal names the construct as written and says what is allowed instead. The launcher keeps
its parameters (callers and the replay depend on them). The lists are this module's literal sets;
the Triton ones come from `dir(triton.language)` (3.9) and are regenerated with the snippet in the
comment above TL_NAMES. Standard library only.
"""

from __future__ import annotations

import ast
import builtins
import sys
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field


def _names(text: str) -> frozenset[str]:
    """The names of a literal list written as words (a `#` starts a comment)."""
    return frozenset(word for line in text.splitlines() for word in line.split("#")[0].split())


# --- Triton's language, frozen from the installed Triton (3.9). Regenerate with:
#   import types, triton.language as tl; from triton.language.extra import libdevice
#   sorted(n for n in dir(tl) if not n.startswith("_") and not isinstance(getattr(tl, n), types.ModuleType))
#   sorted(n for n in dir(tl.math) if not n.startswith("_") and n in TL_NAMES)
#   sorted(n for n in dir(libdevice) if not n.startswith("_") and callable(getattr(libdevice, n)))
# The modules of triton.language (core, semantic, standard, random, extra, math) are not names:
# `tl.core.builtins` is refused; `tl.math` and the libdevice modules are the sub-namespaces below.
TL_NAMES = _names(
    """
    PropagateNan TRITON_MAX_TENSOR_NUMEL abs add aggregate_replace arange argmax argmin associative_scan
    assume atomic_add atomic_and atomic_cas atomic_load atomic_max atomic_min atomic_or atomic_poll
    atomic_store atomic_xchg atomic_xor bfloat16 bitonic_merge block_type broadcast broadcast_to cast cat
    cdiv ceil clamp condition const constexpr constexpr_type cos cumprod cumsum debug_barrier device_assert
    device_print div_rn dot dot_scaled dtype erf exp exp2 expand_dims expect_zero fdiv flip float16 float32
    float64 float8e4b15 float8e4b8 float8e4nv float8e5 float8e5b16 floor fma full gather histogram
    inline_asm_elementwise int1 int16 int32 int64 int8 interleave join load load_tensor_descriptor log log2
    make_block_ptr make_tensor_descriptor map_elementwise max max_constancy max_contiguous maximum min
    minimum mul multiple_of num_programs pair_uniform_to_normal permute philox philox_impl pi32_t
    pointer_type program_id rand rand4x randint randint4x randn randn4x range ravel reduce reduce_or reshape
    rsqrt sigmoid sin slice softmax sort split sqrt sqrt_rn squeeze static_assert static_print static_range
    store store_tensor_descriptor str_to_ty sub sum swizzle2d tensor tensor_descriptor
    tensor_descriptor_type to_tensor topk trans tuple tuple_type uint16 uint32 uint64 uint8
    uint_to_uniform_float umulhi unsqueeze view void where xor_sum zeros zeros_like
    """
)
TL_MATH = _names(
    """
    abs ceil cos div_rn erf exp exp2 fdiv floor fma log log2 rsqrt sin sqrt sqrt_rn umulhi
    """
)
LIBDEVICE = _names(
    """
    abs acos acosh add_rd add_rn add_ru add_rz asin asinh atan atan2 atanh brev byte_perm cbrt ceil clz
    copysign cos cosh cospi cyl_bessel_i0 cyl_bessel_i1 div_rd div_rn div_ru div_rz double2float_rd
    double2float_rn double2float_ru double2float_rz double2hiint double2int_rd double2int_rn double2int_ru
    double2int_rz double2ll_rd double2ll_rn double2ll_ru double2ll_rz double2loint double2uint_rd
    double2uint_rn double2uint_ru double2uint_rz double2ull_rd double2ull_rn double2ull_ru double2ull_rz
    double_as_longlong erf erfc erfcinv erfcx erfinv exp exp10 exp2 expm1 fast_cosf fast_dividef fast_exp10f
    fast_expf fast_log10f fast_log2f fast_logf fast_powf fast_sinf fast_tanf fast_tanhf fdim ffs finitef
    float2int_rd float2int_rn float2int_ru float2int_rz float2ll_rd float2ll_rn float2ll_ru float2ll_rz
    float2uint_rd float2uint_rn float2uint_ru float2uint_rz float2ull_rd float2ull_rn float2ull_ru
    float2ull_rz float_as_int float_as_uint floor fma fma_rd fma_rn fma_ru fma_rz fmod hadd hiloint2double
    hypot ilogb int2double_rn int2float_rd int2float_rn int2float_ru int2float_rz int_as_float isfinited
    isinf isnan j0 j1 jn ldexp lgamma ll2double_rd ll2double_rn ll2double_ru ll2double_rz ll2float_rd
    ll2float_rn ll2float_ru ll2float_rz llrint llround log log10 log1p log2 logb longlong_as_double mul24
    mul_rd mul_rn mul_ru mul_rz mulhi nearbyint nextafter norm3d norm4d normcdf normcdfinv popc pow rcbrt
    rcp64h rcp_rd rcp_rn rcp_ru rcp_rz remainder rhadd rhypot rint rnorm3d rnorm4d round rsqrt rsqrt_rn sad
    saturatef scalbn signbit sin sinh sinpi sqrt sqrt_rd sqrt_rn sqrt_ru sqrt_rz sub_rd sub_rn sub_ru sub_rz
    tan tanh tgamma trunc uint2double_rn uint2float_rd uint2float_rn uint2float_ru uint2float_rz
    uint_as_float ull2double_rd ull2double_rn ull2double_ru ull2double_rz ull2float_rd ull2float_rn
    ull2float_ru ull2float_rz y0 y1 yn
    """
)
# tl.extra.cuda's own functions, but globaltimer (a clock: a kernel whose work depends on time)
EXTRA_CUDA = _names(
    """
    convert_custom_float8_sm70 convert_custom_float8_sm80 gdc_launch_dependents gdc_wait num_threads
    num_warps smid
    """
)
# The public functions and constants of Python's math module (pure)
MATH = _names(
    """
    acos acosh asin asinh atan atan2 atanh cbrt ceil comb copysign cos cosh degrees dist e erf erfc exp exp2
    expm1 fabs factorial floor fmod frexp fsum gamma gcd hypot inf isclose isfinite isinf isnan isqrt lcm
    ldexp lgamma log log10 log1p log2 modf nan nextafter perm pi pow prod radians remainder sin sinh sqrt
    tan tanh tau trunc ulp
    """
)
# The attributes of a kernel's values: Triton tensors (their methods and the fields a tensor, a
# dtype, a pointer or block type, a constexpr, a tuple or a tensor descriptor carries), not
# `handle` (the interpreter's raw data) nor the compiler's internals (to_ir, mangle, ...)
KERNEL_VALUE_ATTRS = _names(
    """
    T abs address_space advance argmax argmin associative_scan atomic_add atomic_and atomic_cas atomic_load
    atomic_max atomic_min atomic_or atomic_poll atomic_store atomic_xchg atomic_xor block_shape block_type
    broadcast_to cast cdiv ceil const cos cumprod cumsum dtype element_ty erf exp exp2 expand_dims
    exponent_bias fields flip floor fp_mantissa_width gather get_block_shapes get_int_max_value
    get_int_min_value histogram int_bitwidth int_signedness is_bf16 is_block is_bool is_const is_dtype
    is_floating is_fp16 is_fp32 is_fp64 is_fp8 is_fp8e4b15 is_fp8e4b8 is_fp8e4nv is_fp8e5 is_fp8e5b16 is_int
    is_int1 is_int16 is_int32 is_int64 is_int8 is_int_signed is_int_unsigned is_ptr is_standard_floating
    is_uint16 is_uint32 is_uint64 is_uint8 is_void item itemsize kind load log log2 logical_and logical_or
    max min name nbytes numel permute primitive_bitwidth ravel reduce reduce_or reshape rsqrt scalar scatter
    shape shape_type sigmoid sin softmax sort split sqrt sqrt_rn store strides strides_type sum to trans
    type types value values view with_element_ty xor_sum
    """
)
KERNEL_BUILTINS = frozenset({"range", "min", "max", "len", "int", "float", "bool", "abs", "isinstance"})
# isinstance: Triton compiles it (constexpr dispatch on a value's type); getattr/hasattr, which it
# also compiles, reach attributes by a computed name, so they stay out.

# --- Launchers, Python helpers and launch statements
# The exceptions (and warnings) of the builtins, to raise: not SystemExit, KeyboardInterrupt, GeneratorExit
EXCEPTIONS = frozenset(
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, Exception)
)
PYTHON_BUILTINS = (
    EXCEPTIONS
    | KERNEL_BUILTINS
    | _names(
        """
    tuple list dict set frozenset zip enumerate sum any all sorted reversed round divmod pow str slice map
    filter
    """
    )
)
# torch's functions, dtypes and types a launcher needs: constructors, dtypes, shape and dtype
# queries, pure tensor math, autograd modes. Not save/load, the RNG, streams, events, graphs,
# synchronize, is_available (a launcher that detects the interpreter), torch.backends / set_*
# (global state), torch.library / ops / compile / autograd.Function / nn, the private modules.
TORCH_NAMES = _names(
    """
    # constructors
    empty zeros ones full empty_like zeros_like ones_like full_like arange empty_strided tensor linspace eye
    # dtypes
    float16 half bfloat16 float32 float float64 double int8 int16 short int32 int int64 long uint8 uint16
    uint32 uint64 bool complex64 complex128 float8_e4m3fn float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz
    float8_e8m0fnu
    # types, devices, dtype facts
    Tensor dtype device Size LongTensor IntTensor FloatTensor HalfTensor BFloat16Tensor BoolTensor
    ByteTensor finfo iinfo is_tensor is_floating_point is_complex get_default_dtype promote_types
    result_type broadcast_shapes numel
    # autograd modes (decorators and context managers)
    no_grad inference_mode enable_grad
    # pure tensor math
    sum mean max min amax amin prod cumsum cumprod exp exp2 log log2 log1p sqrt rsqrt abs neg sign where
    clamp clip maximum minimum add sub mul div pow matmul mm bmm cat concat stack split chunk narrow squeeze
    unsqueeze flatten reshape transpose permute t gather scatter index_select masked_select masked_fill
    argmax argmin sort argsort topk equal allclose isclose isnan isinf isfinite count_nonzero nonzero any
    all sigmoid tanh softmax log_softmax relu erf sin cos floor ceil round remainder fmod bincount
    searchsorted repeat_interleave flip roll tril triu diff broadcast_to unique logsumexp
    """
)
# The attributes of a launcher's values: a torch tensor's shape, layout, dtype and device queries,
# views, conversions, pure math and in-place math (writing into an output it was given); a dtype's,
# a device's and the device properties' fields; a triton.Config's and the target's fields. Not
# data_ptr, untyped_storage/storage, _version, storage_offset, set_/resize_, record_stream,
# register_hook, backward, numpy, the private ones: identity, storage games, hooks.
TENSOR_ATTRS = _names(
    """
    shape stride size dtype device numel nelement view view_as reshape reshape_as contiguous is_contiguous
    dim ndim ndimension element_size transpose permute expand expand_as flatten unflatten unsqueeze squeeze
    t T mT to type float half bfloat16 double int long short bool byte cpu cuda is_cuda is_cpu
    is_floating_point is_complex requires_grad item tolist clone detach zero_ fill_ copy_ add_ sub_ mul_
    div_ clamp_ masked_fill_ scatter_ scatter_add_ index_add_ index_copy_ sum mean max min amax amin prod
    abs exp log sqrt rsqrt sigmoid tanh softmax log_softmax cumsum argmax argmin sort argsort topk gather
    scatter scatter_add index_select masked_fill masked_select where split chunk narrow select unbind repeat
    repeat_interleave new_empty new_zeros new_ones new_full new_tensor any all eq ne lt le gt ge add sub mul
    div pow matmul mm bmm flip nonzero count_nonzero diff neg square reciprocal clamp clip floor ceil round
    bincount index itemsize is_signed bits eps tiny resolution smallest_normal primitive_bitwidth
    """
)
OTHER_VALUE_ATTRS = _names(
    """
    # device properties (torch.cuda/xpu.get_device_properties, the triton driver's target)
    multi_processor_count name total_memory major minor warp_size L2_cache_size regs_per_multiprocessor
    max_threads_per_multi_processor shared_memory_per_block shared_memory_per_block_optin
    shared_memory_per_multiprocessor gcnArchName gpu_eu_count gpu_subslice_count max_work_group_size backend
    arch
    # a triton.Config's fields, a tl.constexpr's value
    kwargs all_kwargs num_warps num_stages num_ctas maxnreg value
    # reading dicts, tuples, strings, ints
    get items keys values copy count startswith endswith lower upper format join strip bit_length
    """
)
PYTHON_VALUE_ATTRS = TENSOR_ATTRS | OTHER_VALUE_ATTRS
# The attributes of the values around a launch statement (the program's, unknown to the check): the
# same but `get` (requests.get, httpx.get: a module's function by that name)
OUTER_VALUE_ATTRS = PYTHON_VALUE_ATTRS - {"get"}
# Methods that change a list, dict or set: only on one the function made itself (a fresh container)
MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "update", "setdefault", "add", "remove", "discard", "clear", "sort"}
)
# Context managers a launcher may enter (besides the program's own, called by name)
CONTEXT_MANAGERS = _names(
    """
    torch.cuda.device torch.xpu.device torch.device torch.no_grad torch.inference_mode torch.enable_grad
    contextlib.nullcontext
    """
)
# staticmethod: a launcher may be an autograd.Function's forward/backward
LAUNCHER_DECORATORS = frozenset({"torch.no_grad", "torch.inference_mode", "staticmethod"})
KERNEL_DECORATORS = frozenset({"triton.jit", "jit", "triton.autotune", "autotune", "triton.heuristics", "heuristics"})
HOOKS = frozenset({"pre_hook", "post_hook"})  # a decorator's hooks: lambdas written out, or None
DECORATOR_REFUSED = frozenset({"do_bench", "launch_metadata"})  # the autotuner's timing, a launch hook
# The imports a launcher may make: they bind a root of the allow-list under its usual name
SAFE_IMPORTS = frozenset({("math", None), ("torch", None), ("triton", None), ("triton.language", "tl")})
# Module constants may call only these (pure, on literals)
CONSTANT_CALLS = frozenset(
    {"tl.constexpr", "triton.cdiv", "triton.next_power_of_2", "int", "float", "bool", "abs", "min", "max", "round"}
)

# The dotted names each root reaches: {namespace: (its leaves, its sub-namespaces)}. A leaf is a value
# (its attributes are then a value's); a namespace is not a value of its own.
_KERNEL_TREE: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "tl": (TL_NAMES, frozenset({"math", "extra"})),
    "tl.math": (TL_MATH, frozenset()),
    "tl.extra": (frozenset(), frozenset({"cuda", "hip", "libdevice"})),
    "tl.extra.cuda": (EXTRA_CUDA, frozenset({"libdevice"})),
    "tl.extra.hip": (frozenset(), frozenset({"libdevice"})),
    "tl.extra.libdevice": (LIBDEVICE, frozenset()),
    "tl.extra.cuda.libdevice": (LIBDEVICE, frozenset()),
    "tl.extra.hip.libdevice": (LIBDEVICE, frozenset()),
    "libdevice": (LIBDEVICE, frozenset()),
    "triton": (frozenset({"jit", "autotune", "heuristics", "Config", "cdiv", "next_power_of_2"}), frozenset()),
    "math": (MATH, frozenset()),
}
_PYTHON_TREE: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    **_KERNEL_TREE,
    "torch": (TORCH_NAMES, frozenset({"cuda", "xpu", "version"})),
    "torch.cuda": (
        frozenset({"get_device_properties", "current_device", "device", "get_device_capability"}),
        frozenset(),
    ),
    "torch.xpu": (frozenset({"get_device_properties", "current_device", "device"}), frozenset()),
    "torch.version": (frozenset({"cuda", "hip"}), frozenset()),
    "triton": (
        _KERNEL_TREE["triton"][0] | frozenset({"reinterpret", "OutOfResources", "TritonError"}),
        frozenset({"runtime", "tools"}),
    ),
    "triton.runtime": (frozenset(), frozenset({"driver"})),
    "triton.runtime.driver": (frozenset(), frozenset({"active"})),
    "triton.runtime.driver.active": (
        frozenset({"get_current_target", "get_active_torch_device", "get_current_device"}),
        frozenset({"utils"}),
    ),
    "triton.runtime.driver.active.utils": (frozenset({"get_device_properties"}), frozenset()),
    "triton.tools": (frozenset(), frozenset({"tensor_descriptor"})),
    "triton.tools.tensor_descriptor": (frozenset({"TensorDescriptor"}), frozenset()),
    "contextlib": (frozenset({"nullcontext"}), frozenset()),
    "typing": (
        frozenset({"Optional", "Union", "List", "Tuple", "Dict", "Any", "Callable", "Sequence", "Literal"}),
        frozenset(),
    ),
}
_ROOT_NAMES = {"tl": "tl", "language": "tl", "libdevice": "libdevice", "triton": "triton", "math": "math"}
_PYTHON_ROOTS = {**_ROOT_NAMES, "torch": "torch", "contextlib": "contextlib", "typing": "typing"}
# A bare name that is a module of the standard library (os, sys, subprocess, ...) is refused
STDLIB_MODULES = frozenset(sys.stdlib_module_names) - {"math"}
BUILTIN_NAMES = frozenset(dir(builtins))

GUIDE = {
    "kernel": "a kernel uses Triton's language (tl.*, tl.math, libdevice, triton.cdiv), its own values and "
    "the program's jit functions and constants",
    "python": "a launcher uses its arguments and locals, the listed torch functions, tensor methods, math, "
    "triton.cdiv/next_power_of_2/Config and launches kernels",
}


class PolicyError(Exception):
    """The candidate contains what candidate code may not; the message says what and why."""


def check(original: str, candidate: str, name: str, *, kernel: bool) -> None:
    """Raise PolicyError when `candidate` (the source of function `name`) adds a construct outside the
    allow-list (kernel: a @triton.jit function with its decorators; otherwise the launcher, which also
    keeps its parameters)."""
    old, new = _function(original, name), _function(candidate, name)
    if old is None or new is None:
        return  # the scope check reports a missing function
    added = _added(_function_violations(new, kernel), _function_violations(old, kernel))
    if not kernel:
        added = _signature_changes(old, new) + added
    if added:
        what = "kernel" if kernel else "launcher"
        raise PolicyError(_message(f"the {what} {name}", added, "kernel" if kernel else "python"))


def check_statement(original: str, candidate: str) -> None:
    """The same allow-list for a launch statement (at module level or in a nested function) and the
    block of statements that may replace it: the launcher's rules, where the names the block does not
    bind are the program's values (their tensor attributes may be read, nothing stored into them)."""
    try:
        old, new = ast.parse(textwrap.dedent(original)), ast.parse(textwrap.dedent(candidate))
    except SyntaxError:
        return  # the scope check reports it
    added = _added(_statement_violations(new), _statement_violations(old))
    if added:
        raise PolicyError(_message("the launch statement", added, "python"))


def check_module_item(original: str | None, candidate: str, *, kernel: bool) -> None:
    """The allow-list for one top-level item a candidate adds (`original` None) or changes beside the
    kernel: a @triton.jit function (`kernel`, the kernel's rules), a plain Python helper function (the
    launcher's rules) or a module constant (a literal, a tuple, arithmetic, tl.constexpr(...))."""
    try:
        new = ast.parse(textwrap.dedent(candidate)).body
        old = ast.parse(textwrap.dedent(original)).body if original else []
    except SyntaxError:
        return  # the syntax check reports it
    if len(new) != 1 or not isinstance(new[0], (ast.FunctionDef, ast.Assign, ast.AnnAssign)):
        kinds = ", ".join(type(n).__name__ for n in new) or "nothing"
        raise PolicyError(
            f"code beside the kernel is one function or one constant per item, not {kinds}: a candidate adds "
            "@triton.jit functions, helper functions and constants (no classes, imports or other statements)"
        )
    item = new[0]
    before = _item_violations(old[0], kernel) if len(old) == 1 else []
    added = _added(_item_violations(item, kernel), before)
    if added:
        kind = "constant" if not isinstance(item, ast.FunctionDef) else "kernel" if kernel else "helper"
        name = item.name if isinstance(item, ast.FunctionDef) else _text(_targets(item)[0])
        raise PolicyError(_message(f"the {kind} {name} beside the kernel", added, _mode(item, kernel)))


# --- violations of each kind of code


def _function_violations(fn: ast.FunctionDef | ast.AsyncFunctionDef, kernel: bool) -> list[str]:
    """The constructs of `fn` outside the allow-list, in source order (a kernel's body too: the
    interpreter runs it as Python; its decorators and defaults: they run when the file is imported)."""
    mode = "kernel" if kernel else "python"
    scope = _scope(fn, mode, [a.arg for a in _parameters(fn.args)])
    checker = _Checker(scope)
    if isinstance(fn, ast.AsyncFunctionDef):
        scope.flag(f"async def {fn.name}", "an async function: a launcher is a plain function")
    for decorator in fn.decorator_list:
        checker.decorator(decorator, kernel)
    checker.defaults(fn.args)
    for node in [*_annotations(fn.args), fn.returns, *fn.body]:
        if node is not None:
            checker.visit(node)
    return scope.found


def _statement_violations(tree: ast.Module) -> list[str]:
    scope = _scope(tree, "statement", [])
    checker = _Checker(scope)
    for stmt in tree.body:
        checker.visit(stmt)
    return scope.found


def _item_violations(item: ast.stmt, kernel: bool) -> list[str]:
    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _function_violations(item, kernel)
    if not isinstance(item, (ast.Assign, ast.AnnAssign)):
        return [f"`{_text(item)}` (a statement other than a function or a constant)"]
    scope = _Scope("python", frozenset())
    checker = _Checker(scope)
    targets = _targets(item)
    if len(targets) != 1 or not isinstance(targets[0], ast.Name):
        scope.flag(_text(item), "a constant binds one name: NAME = value")
    if isinstance(item, ast.AnnAssign):
        checker.visit(item.annotation)
    if item.value is not None:
        _constant_value(item.value, scope)
        checker.visit(item.value)
    return scope.found


def _constant_value(value: ast.expr, scope: _Scope) -> None:
    """A module constant's value: literals, tuples, arithmetic, names, the pure calls of CONSTANT_CALLS
    and math; no containers that can change (state shared between calls), lambdas or other calls."""
    for node in ast.walk(value):
        if isinstance(node, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
            scope.flag(
                _text(node),
                "a list, dict or set at module level is state kept between calls: use a tuple or literals",
            )
        elif isinstance(node, (ast.Lambda, ast.GeneratorExp, ast.NamedExpr, ast.Await, ast.Yield)):
            scope.flag(_text(node), "a constant is a literal, a tuple of literals or arithmetic of them")
        elif isinstance(node, ast.Call) and not _constant_call(node.func):
            scope.flag(
                _text(node),
                "a call at module level: a constant is a literal, a tuple or arithmetic of them, "
                "tl.constexpr(...), math's functions or triton.cdiv/next_power_of_2",
            )


def _constant_call(func: ast.expr) -> bool:
    name = _dotted(func)
    if name is None:
        return False
    name = name.replace("triton.language.", "tl.", 1)
    return name in CONSTANT_CALLS or (name.startswith("math.") and name[5:] in MATH)


# --- what names and attributes a scope has


@dataclass
class _Scope:
    """The names of a function (or a statement block) and what was found in it."""

    mode: str  # "kernel", "python" (launchers and helpers) or "statement"
    local: frozenset[str]  # parameters and the names it binds
    aliases: frozenset[str] = frozenset()  # locals bound to (a part of) a module-level name's value
    # `ctx` of an autograd.Function's forward/backward: made per call by autograd, its attributes are free
    contexts: frozenset[str] = frozenset()
    fresh: frozenset[str] = frozenset()  # locals bound only to containers it made itself
    found: list[str] = field(default_factory=list)

    def flag(self, what: str, why: str) -> None:
        text = f"`{what}` ({why})"
        if text not in self.found:
            self.found.append(text)

    @property
    def kernel(self) -> bool:
        return self.mode == "kernel"


def _scope(tree: ast.AST, mode: str, parameters: list[str]) -> _Scope:
    """The scope of a function or block: every name it binds, nested functions and lambdas included
    (their parameters too), which of those alias a module-level value and which are fresh containers."""
    local = set(parameters)
    bindings: dict[str, list[ast.expr | None]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not tree:
            local |= {a.arg for a in _parameters(node.args)}
            if not isinstance(node, ast.Lambda):
                local.add(node.name)
        for target, value in _binds(node):
            for name in _stored(target):
                local.add(name)
                bindings.setdefault(name, []).append(value if isinstance(target, ast.Name) else None)
    local -= _imported(tree)
    aliases: set[str] = set()
    for _ in range(2):  # an alias of an alias
        aliases |= {
            name
            for name, values in bindings.items()
            for value in values
            if value is not None and _outside_root(value, local - aliases, mode)
        }
    fresh = {
        name for name, values in bindings.items() if name not in parameters and all(_fresh_container(v) for v in values)
    }
    contexts = frozenset({"ctx"} & set(parameters)) if mode == "python" else frozenset()
    return _Scope(mode, frozenset(local), aliases=frozenset(aliases), fresh=frozenset(fresh), contexts=contexts)


def _binds(node: ast.AST) -> Iterable[tuple[ast.expr, ast.expr | None]]:
    """(target, the value bound to it, when known) of each binding `node` makes."""
    if isinstance(node, ast.Assign):
        return [(t, node.value) for t in node.targets]
    if isinstance(node, ast.AnnAssign):
        return [(node.target, node.value)]
    if isinstance(node, ast.AugAssign):  # `acc += STEP` computes a new value, `parts += [x]` stays fresh
        return [(node.target, node.value if _fresh_container(node.value) else None)]
    if isinstance(node, ast.NamedExpr):
        return [(node.target, node.value)]
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return [(node.target, node.iter)]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [(item.optional_vars, item.context_expr) for item in node.items if item.optional_vars is not None]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [(ast.Name(node.name, ast.Store()), None)]
    return []


def _stored(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for element in target.elts for n in _stored(element)]
    if isinstance(target, ast.Starred):
        return _stored(target.value)
    return []


def _imported(tree: ast.AST) -> set[str]:
    """The names an import inside `tree` binds: modules, never locals (`import math` is math)."""
    return {
        (a.asname or a.name).split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, (ast.Import, ast.ImportFrom))
        for a in n.names
    }


def _outside_root(value: ast.expr, local: Iterable[str], mode: str) -> bool:
    """Whether `value` is (a part of) a module-level name's value: `BUF`, `RING[0]`, `CACHE.x`."""
    root = _root_name(value, through_calls=False)
    return root is not None and root not in local and _kind_of_name(root, mode) == "program"


def _fresh_container(value: ast.expr | None) -> bool:
    if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    if isinstance(value, ast.BinOp):
        return _fresh_container(value.left) and (
            _fresh_container(value.right) or isinstance(value.op, ast.Mult) and isinstance(value.right, ast.Constant)
        )
    return isinstance(value, ast.Call) and _dotted(value.func) in {"list", "dict", "set", "sorted", "tuple"}


def _kind_of_name(name: str, mode: str) -> str:
    """What a name that is not local is: a root of the allow-list, a builtin, a module of the standard
    library, a dunder, or the program's own (a kernel, a helper, a constant, or an outer value)."""
    if name.startswith("__"):
        return "dunder"
    if name in (_ROOT_NAMES if mode == "kernel" else _PYTHON_ROOTS):
        return "root"
    if name in _PYTHON_ROOTS:
        return "host module"  # torch in a kernel
    if name in BUILTIN_NAMES:
        return "builtin" if name in (KERNEL_BUILTINS if mode == "kernel" else PYTHON_BUILTINS) else "other builtin"
    if name in STDLIB_MODULES:
        return "stdlib"
    return "program"


NAME_REFUSALS = {
    "dunder": "a dunder name: it reaches the interpreter's internals",
    "host module": "torch in a kernel: a kernel uses Triton's language",
    "other builtin": "a builtin outside the pure ones: range, len, min, max, abs, int, float, bool, isinstance, "
    "and in launchers tuple, list, dict, zip, enumerate, sum, any, all, sorted, round, str and the usual "
    "exceptions",
    "stdlib": "a module of the standard library: a candidate reaches only torch, triton, triton.language and math",
}


class _Checker(ast.NodeVisitor):
    """Records, in `scope`, each construct of the code it visits that is outside the allow-list."""

    def __init__(self, scope: _Scope) -> None:
        self.scope = scope

    def flag(self, what: str, why: str) -> None:
        self.scope.flag(what, why)

    # names and attributes

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and node.id not in self.scope.local:
            kind = _kind_of_name(node.id, self.scope.mode)
            if kind == "root":
                self.flag(node.id, f"{node.id} on its own: use its listed names ({node.id}.<name>)")
            elif kind in NAME_REFUSALS:
                self.flag(node.id, NAME_REFUSALS[kind])

    def visit_Attribute(self, node: ast.Attribute) -> None:
        base, links = _chain(node)
        dunder = next((link for link in links if link.attr.startswith("__")), None)
        if dunder is not None:
            self.flag(_text(node), f".{dunder.attr}: a dunder attribute reaches the interpreter's internals")
            if not isinstance(base, ast.Name):
                self.visit(base)
        elif isinstance(base, ast.Name):
            self._named(base.id, links)
        else:
            self.visit(base)
            root = _root_name(base, through_calls=False)
            if isinstance(base, ast.Subscript) and root is not None and self._outside(root):
                self.flag(_text(node), f"reaches into {root}, {OUTSIDE}")
            else:
                self._attributes(
                    links, 0, outer=self.scope.mode == "statement" and root not in {None, *self.scope.local}
                )

    def _outside(self, name: str) -> bool:
        """A module-level value seen from a function (or a local alias of one)."""
        s = self.scope
        if s.mode == "statement":
            return False
        if name in s.local:
            return name in s.aliases
        return _kind_of_name(name, s.mode) == "program"

    def _named(self, name: str, links: list[ast.Attribute]) -> None:
        s = self.scope
        if name in s.contexts:  # ctx.save_for_backward, ctx.saved_tensors, ctx.BLOCK
            self._attributes(links, 0 if links[0].attr.startswith("_") else 1)
            return
        if name in s.local and name not in s.aliases:
            self._attributes(links, 0, fresh=name in s.fresh)
            return
        if name in s.local:  # bound to a module-level value
            self.flag(_text(links[-1]), f"{name} is bound to {OUTSIDE}")
            return
        kind = _kind_of_name(name, s.mode)
        if kind == "root":
            self._resolve(name, links)
        elif kind in NAME_REFUSALS:
            self.flag(_text(links[-1]), f"{name}: {NAME_REFUSALS[kind]}")
        elif s.mode == "statement":  # the program's values around the statement
            self._attributes(links, 0, outer=True)
        elif links[0].attr == "value":  # a tl.constexpr constant's value
            self._attributes(links, 1)
        else:
            self.flag(_text(links[-1]), f"an attribute of {name}, {OUTSIDE}")

    def _resolve(self, name: str, links: list[ast.Attribute]) -> None:
        """A dotted name from a root (tl, triton, torch, math, ...): each step must be in the tree."""
        tree = _KERNEL_TREE if self.scope.kernel else _PYTHON_TREE
        path, i = (_PYTHON_ROOTS[name], 0)
        if path == "triton" and links[0].attr == "language":
            path, i = "tl", 1
        while i < len(links):
            attr = links[i].attr
            leaves, spaces = tree.get(path, (frozenset(), frozenset()))
            if attr in leaves:
                self._attributes(links, i + 1)
                return
            if attr not in spaces:
                root = path.split(".")[0]
                hint = ROOT_HINTS["kernel" if self.scope.kernel and root in ("tl", "triton") else root]
                self.flag(_text(links[-1]), f"{path}.{attr} is outside the allowed {root} names: {hint}")
                return
            path, i = f"{path}.{attr}", i + 1
        self.flag(_text(links[-1]), f"{path} on its own: use its listed names ({path}.<name>)")

    def _attributes(self, links: list[ast.Attribute], start: int, fresh: bool = False, outer: bool = False) -> None:
        """The attributes of a value (a local, a call's result, an item): from the mode's list."""
        kernel = self.scope.kernel
        allowed = KERNEL_VALUE_ATTRS if kernel else OUTER_VALUE_ATTRS if outer else PYTHON_VALUE_ATTRS
        for i in range(start, len(links)):
            attr = links[i].attr
            if attr.startswith("_"):
                why = f".{attr} is private: not an interface a rewrite may depend on"
            elif attr in allowed or (i == 0 and fresh and attr in MUTATORS and not kernel):
                continue
            elif attr in MUTATORS and not kernel:
                why = f".{attr} changes a container the function did not make (state kept between calls)"
            elif kernel:
                why = f".{attr} is not an attribute of a Triton tensor, dtype or descriptor"
            else:
                why = f".{attr} is outside the allowed tensor methods and attributes ({TENSOR_HINT})"
            self.flag(_text(links[i]), why)
            return

    # statements

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if self.scope.kernel or (alias.name, alias.asname) not in SAFE_IMPORTS:
                text = f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
                self.flag(text, IMPORT_REFUSAL)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        names = ", ".join(a.name for a in node.names)
        self.flag(f"from {'.' * node.level}{node.module or ''} import {names}", IMPORT_REFUSAL)

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        word = "global" if isinstance(node, ast.Global) else "nonlocal"
        self.flag(f"{word} {', '.join(node.names)}", "state shared between calls: a rewrite keeps none")

    visit_Nonlocal = visit_Global

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.flag(
            f"class {node.name}",
            "a class definition: a rewrite adds kernels, functions and constants, not classes (a Tensor subclass "
            "can defer the work past the timing)",
        )

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if self.scope.kernel or isinstance(node, ast.AsyncFunctionDef):
            self.flag(f"def {node.name}", "a function inside a kernel: define a @triton.jit helper beside it")
            return
        for decorator in node.decorator_list:
            self.flag(f"@{_text(decorator)}", "a decorator on a nested function: it can wrap or cache the function")
        self.defaults(node.args)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        if self.scope.kernel:
            self.flag(_text(node), "a lambda in a kernel: define a @triton.jit helper beside it")
            return
        if node.args.defaults or any(d is not None for d in node.args.kw_defaults):
            self.flag(_text(node), "a lambda with a default: a value captured once and kept between calls")
        self.visit(node.body)

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            if self.scope.kernel or not _context_manager(item.context_expr):
                self.flag(f"with {_text(item.context_expr)}", CONTEXT_REFUSAL)
        self.generic_visit(node)

    visit_AsyncWith = visit_With

    def visit_Try(self, node: ast.AST) -> None:
        self.flag("try", "exception handling: an error of the rewrite must surface, not be caught")
        self.generic_visit(node)

    visit_TryStar = visit_Try

    def visit_Raise(self, node: ast.Raise) -> None:
        if self.scope.kernel:
            self.flag(_text(node), "raise in a kernel: use tl.device_assert or tl.static_assert")
        self.generic_visit(node)

    def visit_Await(self, node: ast.AST) -> None:
        self.flag(_text(node), "async code and generators: a launcher runs its work when called")
        self.generic_visit(node)

    visit_Yield = visit_YieldFrom = visit_Await

    def visit_Assign(self, node: ast.Assign | ast.AugAssign | ast.AnnAssign) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            self._store(target, "=")
        for part in [getattr(node, "annotation", None), node.value]:
            if part is not None:
                self.visit(part)

    visit_AugAssign = visit_AnnAssign = visit_Assign

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._store(target, "del")

    def _store(self, target: ast.expr, how: str) -> None:
        """A binding may store into names, and into items of the code's own values."""
        text = f"del {_text(target)}" if how == "del" else f"{_text(target)} = ..."
        if isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
            for element in target.elts if not isinstance(target, ast.Starred) else [target.value]:
                self._store(element, how)
            return
        if isinstance(target, ast.Name):
            return
        root = _root_name(target, through_calls=False)
        if isinstance(target, ast.Attribute) and _on_context(target, self.scope.contexts):
            pass  # ctx.BLOCK_SIZE = ...: what forward leaves for backward, in this call's context
        elif isinstance(target, ast.Attribute):
            self.flag(text, "sets an attribute: a rewrite writes into tensors, it does not patch objects or modules")
        elif self.scope.kernel:
            self.flag(text, "item assignment in a kernel: Triton values are immutable (tl.where, tl.store)")
        elif root is None or root not in self.scope.local or root in self.scope.aliases:
            self.flag(
                text,
                f"writes into {root or 'a value'}, which the code neither made nor received: state kept between calls",
            )
        self.visit(getattr(target, "value", target))
        if isinstance(target, ast.Subscript):
            self.visit(target.slice)

    # decorators and defaults

    def decorator(self, node: ast.expr, kernel: bool) -> None:
        target = node.func if isinstance(node, ast.Call) else node
        allowed = KERNEL_DECORATORS if kernel else LAUNCHER_DECORATORS
        if _dotted(target) not in allowed:
            self.flag(f"@{_text(node)}", DECORATOR_REFUSAL)
            return
        if isinstance(node, ast.Call):
            inner = _scope(node, "python", [])
            inner.found = self.scope.found
            _Checker(inner).decorator_arguments(node)

    def decorator_arguments(self, call: ast.Call) -> None:
        """triton.autotune/heuristics/jit arguments (their Configs too): the launcher's expressions,
        hooks only as lambdas written out, keyword arguments written out, not the autotuner's timing."""
        for node in ast.walk(call):
            for kw in node.keywords if isinstance(node, ast.Call) else []:
                if kw.arg is None:
                    self.flag(f"**{_text(kw.value)}", "keyword arguments not written out in a decorator")
                elif kw.arg in DECORATOR_REFUSED:
                    self.flag(f"{kw.arg}={_text(kw.value)}", "replaces the autotuner's timing or hooks the launch")
                elif kw.arg in HOOKS and not isinstance(kw.value, ast.Lambda) and not _is_none(kw.value):
                    self.flag(f"{kw.arg}={_text(kw.value)}", "a hook is a lambda written out (or None)")
        for part in [*call.args, *[kw.value for kw in call.keywords]]:
            self.visit(part)

    def defaults(self, args: ast.arguments) -> None:
        named = list(zip([*args.posonlyargs, *args.args][::-1], args.defaults[::-1], strict=False))
        named += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
        for arg, default in named:
            # a kernel's constexpr default may name a module constant (`reduction=_REDUCTION_MODE_MEAN`)
            if not _static(default) and not (self.scope.kernel and isinstance(default, ast.Name)):
                self.flag(
                    f"{arg.arg}={_text(default)}",
                    "a default that is not a constant: a mutable or computed default keeps state between calls",
                )
            self.visit(default)


OUTSIDE = (
    "a module-level name: a function works on its arguments and locals (module-level values are state "
    "kept between calls, or the program's modules)"
)
IMPORT_REFUSAL = (
    "an import: a candidate uses the program's imports (only import math, torch, triton, triton.language as tl)"
)
CONTEXT_REFUSAL = (
    "a context manager outside torch.cuda.device(...), torch.no_grad(), torch.inference_mode(), "
    "contextlib.nullcontext() and the program's own device contexts"
)
DECORATOR_REFUSAL = (
    "a decorator other than triton.jit/autotune/heuristics on a kernel or torch.no_grad()/inference_mode() "
    "on a launcher: a decorator can wrap, cache or replace the function"
)
TENSOR_HINT = "shape, stride(), size(), dtype, device, numel(), view, reshape, contiguous, to, item, zero_, ..."
ROOT_HINTS = {
    "kernel": "Triton's public language (tl.load, tl.math.exp, libdevice, ...) and triton.cdiv/next_power_of_2",
    "tl": "Triton's public language names (tl.load, tl.float32, tl.math.exp, tl.extra.cuda.libdevice, ...)",
    "libdevice": "the libdevice math functions",
    "triton": "triton.jit/autotune/heuristics/Config/cdiv/next_power_of_2, triton.language and the driver's "
    "device properties",
    "torch": "tensor constructors (empty, zeros, full, *_like, arange), dtypes, finfo/iinfo, pure tensor math, "
    "torch.device, torch.cuda.get_device_properties/current_device/device, no_grad/inference_mode",
    "math": "math's functions and constants",
    "contextlib": "contextlib.nullcontext",
    "typing": "typing's annotation names",
}


def _context_manager(expr: ast.expr) -> bool:
    if isinstance(expr, ast.IfExp):
        return _context_manager(expr.body) and _context_manager(expr.orelse)
    if not isinstance(expr, ast.Call):
        return isinstance(expr, ast.Name)  # a value made earlier, itself checked where it was made
    name = _dotted(expr.func)
    return name in CONTEXT_MANAGERS or isinstance(expr.func, ast.Name)  # the program's own, by name


def _on_context(target: ast.Attribute, contexts: frozenset[str]) -> bool:
    """`ctx.NAME`: an attribute of an autograd.Function's context, not a private one."""
    return isinstance(target.value, ast.Name) and target.value.id in contexts and not target.attr.startswith("_")


def _static(expr: ast.expr) -> bool:
    """A default that is a value written out: a constant, a tuple of them, a dtype (torch.float32)."""
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.UnaryOp):
        return _static(expr.operand)
    if isinstance(expr, ast.Tuple):
        return all(_static(e) for e in expr.elts)
    name = _dotted(expr)
    return name is not None and name.split(".")[0] in _PYTHON_ROOTS and "." in name


# --- small helpers


def _added(new: list[str], old: list[str]) -> list[str]:
    """What `new` has that `old` had not (grandfathering), in `new`'s order."""
    seen = set(old)
    return [v for v in new if v not in seen]


def _message(subject: str, added: list[str], mode: str) -> str:
    more = f"; and {len(added) - 6} more" if len(added) > 6 else ""
    return (
        f"{subject} contains what candidate code may not: {'; '.join(added[:6])}{more}. A rewrite may change how "
        f"the kernel computes and launches within an allow-list ({GUIDE[mode]}); not read files or the "
        "environment, inspect or patch the process, import modules or keep state between calls"
    )


def _mode(item: ast.stmt, kernel: bool) -> str:
    return "kernel" if kernel and isinstance(item, ast.FunctionDef) else "python"


def _text(node: ast.AST) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= 80 else text[:77] + "..."


def _chain(node: ast.Attribute) -> tuple[ast.expr, list[ast.Attribute]]:
    """The base of an attribute chain and its links, innermost first: a.b.c -> (a, [a.b, a.b.c])."""
    links: list[ast.Attribute] = []
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        links.append(current)
        current = current.value
    return current, links[::-1]


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _root_name(node: ast.expr, through_calls: bool) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred, ast.Call)):
        if isinstance(node, ast.Call) and not through_calls:
            return None
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _targets(item: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return item.targets if isinstance(item, ast.Assign) else [item.target]


def _parameters(args: ast.arguments) -> list[ast.arg]:
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *extra]


def _annotations(args: ast.arguments) -> list[ast.expr]:
    return [a.annotation for a in _parameters(args) if a.annotation is not None]


def _function(source: str, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return None
    return next(
        (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name), None
    )


def _signature_changes(
    old: ast.FunctionDef | ast.AsyncFunctionDef, new: ast.FunctionDef | ast.AsyncFunctionDef
) -> list[str]:
    def shape(fn):
        a = fn.args
        return (
            [p.arg for p in a.posonlyargs],
            [p.arg for p in a.args],
            a.vararg and a.vararg.arg,
            [p.arg for p in a.kwonlyargs],
            a.kwarg and a.kwarg.arg,
            len(a.defaults),
            [d is None for d in a.kw_defaults],
        )

    if shape(old) != shape(new):
        return [
            f"other parameters ({ast.unparse(new.args)} instead of {ast.unparse(old.args)}); the launcher's "
            "signature must stay as it is"
        ]
    changed = [
        ast.unparse(n)
        for o, n in zip(
            [*old.args.defaults, *old.args.kw_defaults], [*new.args.defaults, *new.args.kw_defaults], strict=False
        )
        if n is not None and (o is None or ast.dump(o) != ast.dump(n)) and not isinstance(n, ast.Constant)
    ]
    return [f"a default that is not a constant ({c})" for c in changed]
