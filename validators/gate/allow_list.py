"""The candidate-code policy's allow-list: the names, attributes, decorators, context managers and imports
candidate code may use (`policy.py` refuses everything else), as literal sets.

Triton's lists are frozen from the installed Triton (3.9) and regenerated with the snippet in the comment
above TL_NAMES; the torch, tensor and Python lists are chosen by hand, each with what it leaves out and why.
KERNEL_TREE and PYTHON_TREE say which dotted names each root (tl, triton, torch, math, ...) reaches.
Standard library only.
"""

from __future__ import annotations

import builtins
import sys


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
KERNEL_TREE: dict[str, tuple[frozenset[str], frozenset[str]]] = {
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
PYTHON_TREE: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    **KERNEL_TREE,
    "torch": (TORCH_NAMES, frozenset({"cuda", "xpu", "version"})),
    "torch.cuda": (
        frozenset({"get_device_properties", "current_device", "device", "get_device_capability"}),
        frozenset(),
    ),
    "torch.xpu": (frozenset({"get_device_properties", "current_device", "device"}), frozenset()),
    "torch.version": (frozenset({"cuda", "hip"}), frozenset()),
    "triton": (
        KERNEL_TREE["triton"][0] | frozenset({"reinterpret", "OutOfResources", "TritonError"}),
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
ROOT_NAMES = {"tl": "tl", "language": "tl", "libdevice": "libdevice", "triton": "triton", "math": "math"}
PYTHON_ROOTS = {**ROOT_NAMES, "torch": "torch", "contextlib": "contextlib", "typing": "typing"}
# A bare name that is a module of the standard library (os, sys, subprocess, ...) is refused
STDLIB_MODULES = frozenset(sys.stdlib_module_names) - {"math"}
BUILTIN_NAMES = frozenset(dir(builtins))
