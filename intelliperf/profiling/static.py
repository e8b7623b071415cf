"""Static view: compile a recorded launch for a GPU target on any machine and read the code.

`triton.compile` produces PTX (NVIDIA) and AMDGCN (AMD) without a GPU. Compiled with the
recorded signature (dtypes, constexpr values, integer arguments divisible by 16, num_warps,
num_stages), the code shows what the hardware will be asked to do, line by line through the
`.loc` debug directives: global load/store widths (a 128-bit `ld.global.v4.b32` or
`global_load_dwordx4` against a 32-bit scalar one), atomics, shared-memory traffic (layout
conversions, `ds_*`), asynchronous copies, TMA and tensor-core instructions.

Tensors are assumed 16-byte aligned, as torch allocates them (the recorder does not see data
pointers); a view at an odd offset compiles to narrower accesses on the GPU than shown here.

Imports triton (and the stdlib) only, lazily where it can: this runs where the kernel lives.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from collections import Counter

DEFAULT_TARGETS = ("cuda:90", "hip:gfx942")
_MISSING = object()
_TRITON_TYPES = {
    "float32": "fp32",
    "float16": "fp16",
    "bfloat16": "bf16",
    "float64": "fp64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "bool": "i1",
    "float8_e4m3fn": "fp8e4nv",
    "float8_e5m2": "fp8e5",
}

# (kind, pattern) per vendor; the first match names the instruction's kind.
_PTX = [
    ("load", re.compile(r"\bld\.global(?:\.[\w]+)*")),
    ("store", re.compile(r"\bst\.global(?:\.[\w]+)*")),
    ("atomic", re.compile(r"\b(?:atom|red)\.global(?:\.[\w]+)*")),
    ("tma", re.compile(r"\bcp\.async\.bulk\.tensor(?:\.[\w:]+)*")),
    ("async_copy", re.compile(r"\bcp\.async\.(?:ca|cg)(?:\.[\w]+)*")),
    ("mma", re.compile(r"\b(?:wgmma\.mma_async|mma\.sync)(?:\.[\w]+)*")),
    ("shared_load", re.compile(r"\b(?:ld\.shared|ldmatrix)(?:\.[\w:]+)*")),
    ("shared_store", re.compile(r"\b(?:st\.shared|stmatrix)(?:\.[\w:]+)*")),
]
_AMDGCN = [
    ("local_load", re.compile(r"\bscratch_load_\w+")),
    ("local_store", re.compile(r"\bscratch_store_\w+")),
    ("atomic", re.compile(r"\b(?:global|buffer|flat)_atomic_\w+")),
    ("load", re.compile(r"\b(?:global|buffer)_load_\w+")),
    ("store", re.compile(r"\b(?:global|buffer)_store_\w+")),
    ("mma", re.compile(r"\bv_mfma_\w+")),
    ("shared_load", re.compile(r"\bds_(?:read|load)\w*")),
    ("shared_store", re.compile(r"\bds_(?:write|store)\w*")),
]
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)")
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s+"([^"]*)")?')


# A fact is a dict with the fields of `intelliperf.models.StaticFact` (its one definition; `kind` one of its
# kinds): the view crosses the process boundary as JSON, and `aggregate.load_recording` makes each a StaticFact.
Fact = dict


def parse_target(name: str):
    """'cuda:90' or 'hip:gfx942' -> triton's GPUTarget."""
    from triton.backends.compiler import GPUTarget

    backend, _, arch = name.partition(":")
    if backend == "cuda" and arch.isdigit():
        return GPUTarget("cuda", int(arch), 32)
    if backend == "hip" and arch.startswith("gfx"):
        return GPUTarget("hip", arch, 64)
    raise ValueError(
        f"unknown target {name!r}: expected cuda:<sm number> (e.g. cuda:90) or hip:<gfx arch> (e.g. hip:gfx942)"
    )


def compile_args(fn_params: list[str], args: list[dict]) -> tuple[dict, dict, dict]:
    """Triton's signature, constexprs and attributes for a recorded launch (ArgInfo dicts)."""
    by_name = {a["name"]: a for a in args}
    signature, constexprs, attrs = {}, {}, {}
    for index, name in enumerate(fn_params):
        arg = by_name.get(name, {"kind": "none"})
        kind = arg["kind"]
        if kind in ("constexpr", "none"):
            signature[name], constexprs[name] = "constexpr", arg.get("value")
        elif kind == "tensor":
            signature[name] = "*" + _TRITON_TYPES.get(arg["dtype"], arg["dtype"])
            attrs[(index,)] = [["tt.divisibility", 16]]  # torch allocations are aligned
        elif kind == "scalar":
            value = arg["value"]
            if isinstance(value, bool):
                signature[name] = "i1"
            elif type(value) is int and value == 1:  # Triton specialises an integer 1 as a constant
                signature[name], constexprs[name] = "constexpr", 1
            elif isinstance(value, int):
                signature[name] = "i32" if -(2**31) <= value < 2**31 else "i64"
                if value % 16 == 0:
                    attrs[(index,)] = [["tt.divisibility", 16]]
            else:
                signature[name] = "fp32"
        else:
            raise ValueError(
                f"argument {name!r} is a {arg.get('type_name', kind)}, which cannot be compiled from its description"
            )
    return signature, constexprs, attrs


def compile_launch(
    jit_fn, args: list[dict], target: str, num_warps: int | None = None, num_stages: int | None = None
) -> dict:
    """The compiled kernel's text (ttgir, ptx or amdgcn) and binary (cubin) for one target, without a GPU."""
    import triton
    from triton.compiler import ASTSource

    signature, constexprs, attrs = compile_args([p.name for p in jit_fn.params], args)
    options = {k: v for k, v in (("num_warps", num_warps), ("num_stages", num_stages)) if v is not None}
    compiled = triton.compile(
        ASTSource(jit_fn, signature, constexprs, attrs), target=parse_target(target), options=options
    )
    return {k: v for k, v in compiled.asm.items() if isinstance(v, (str, bytes))}


def analyse(asm: dict, target: str) -> list[Fact]:
    """Per (line, instruction) facts: NVIDIA from the LLVM IR (its PTX instructions are inline asm
    there, each with its debug location; the PTX's own `.loc` runs put a vector load at lines
    that are not in the kernel, seen with Triton 3.9), AMD from the AMDGCN `.loc` directives."""
    if target.startswith("cuda"):
        return _from_llir(asm.get("llir", ""), target)
    return _from_amdgcn(asm.get("amdgcn", ""), target)


_META = re.compile(r"^!(\d+) = (?:distinct )?(.*)$")
_DBG = re.compile(r"!dbg !(\d+)")
_SHARED = re.compile(
    r"\b(load|store)\b[^,]*?(<\d+ x \w+>|\bi\d+\b|\bfloat\b|\bhalf\b|\bdouble\b|\bbfloat\b)"
    r".*addrspace\(3\)"
)


def _from_llir(text: str, target: str) -> list[Fact]:
    meta = {m.group(1): m.group(2) for m in map(_META.match, text.splitlines()) if m}
    counts: Counter = Counter()
    for raw in text.splitlines():
        dbg = _DBG.search(raw)
        if dbg is None:
            continue
        where = _location(meta, dbg.group(1))
        if where is None:
            continue
        if " asm " in raw:
            body = raw.split('"')[1] if '"' in raw else raw
            # LLVM escapes the asm string's newlines and tabs (`\0A\09ld.global`): without decoding,
            # `ld` after a tab has no word boundary and every `other=`-initialised load went uncounted
            body = re.sub(r"\\([0-9A-Fa-f]{2})", lambda e: chr(int(e.group(1), 16)), body)
            for kind, pattern in _PTX:
                for found in pattern.finditer(body):
                    counts[(where, kind, found.group(0))] += 1
        elif m := _SHARED.search(raw):
            verb, type_ = m.groups()
            counts[(where, f"shared_{verb}", f"{'ld' if verb == 'load' else 'st'}.shared ({type_})")] += 1
    return _facts(counts, target)


def _location(meta: dict, ref: str) -> tuple[str, int] | None:
    """(file, line) of a DILocation, following `inlinedAt` out to the kernel's own line."""
    seen = set()
    while ref not in seen:
        seen.add(ref)
        text = meta.get(ref, "")
        inlined = re.search(r"inlinedAt: !(\d+)", text)
        if inlined is None:
            line = re.search(r"line: (\d+)", text)
            scope = re.search(r"scope: !(\d+)", text)
            if line is None or int(line.group(1)) == 0:
                return None
            file = _file(meta, scope.group(1) if scope else "")
            return (file, int(line.group(1))) if file is not None else None
        ref = inlined.group(1)
    return None


def _file(meta: dict, scope: str) -> str | None:
    seen = set()
    while scope and scope not in seen:
        seen.add(scope)
        text = meta.get(scope, "")
        if text.startswith("!DIFile"):
            name = re.search(r'filename: "([^"]*)"', text)
            folder = re.search(r'directory: "([^"]*)"', text)
            if name is None:
                return None
            return f"{folder.group(1)}/{name.group(1)}" if folder and folder.group(1) else name.group(1)
        ref = re.search(r"\bfile: !(\d+)", text) or re.search(r"\bscope: !(\d+)", text)
        scope = ref.group(1) if ref else ""
    return "?"


def _from_amdgcn(text: str, target: str) -> list[Fact]:
    files = {
        m.group(1): f"{m.group(2)}/{m.group(3)}" if m.group(3) else m.group(2)
        for m in map(_FILE.match, text.splitlines())
        if m
    }
    where: tuple[str, int] | None = None
    counts: Counter = Counter()
    for raw in text.splitlines():
        if m := _LOC.match(raw):
            where = (files.get(m.group(1), "?"), int(m.group(2))) if int(m.group(2)) > 0 else where
            continue
        code = raw.split(";")[0]
        for kind, pattern in _AMDGCN:
            if (m := pattern.search(code)) and where is not None:
                counts[(where, kind, m.group(0))] += 1
                break
    return _facts(counts, target)


def _facts(counts: Counter, target: str) -> list[Fact]:
    return [
        dict(target=target, file=file, line=line, kind=kind, instruction=instr, width_bits=_width(instr), count=n)
        for ((file, line), kind, instr), n in sorted(counts.items(), key=lambda item: (item[0][0][1], item[0][2]))
    ]


def _width(instruction: str) -> int | None:
    """Bits per lane: ld.global.v4.b32 -> 128, global_load_dwordx2 -> 64, global_atomic_add_f32 -> 32."""
    if m := re.search(r"<(\d+) x (?:i|float|half|bfloat|double)(\d*)>", instruction):
        if m.group(2):
            bits = int(m.group(2))
        elif element := re.search(r"x (\w+?)\d*>", instruction):
            bits = {"float": 32, "half": 16, "bfloat": 16, "double": 64}[element.group(1)]
        else:
            return None
        return int(m.group(1)) * bits
    if m := re.search(r"\((i(\d+)|float|half|bfloat|double)\)", instruction):
        return int(m.group(2)) if m.group(2) else {"float": 32, "half": 16, "bfloat": 16, "double": 64}[m.group(1)]
    if m := re.search(r"\.v(\d)\.[busf](\d+)", instruction):
        return int(m.group(1)) * int(m.group(2))
    if m := re.search(r"\.[busf](\d+)$", instruction) or re.search(r"\.[busf](\d+)\b", instruction):
        return int(m.group(1))
    if m := re.search(r"dword(?:x(\d))?", instruction):
        return 32 * int(m.group(1) or 1)
    if m := re.search(r"_(?:ubyte|sbyte|byte)", instruction):
        return 8
    if m := re.search(r"_(?:ushort|sshort|short)", instruction):
        return 16
    if m := re.search(r"_[bfiu](\d+)$", instruction):
        return int(m.group(1))
    return None


def static_view(
    jit_fn, args: list[dict], targets=DEFAULT_TARGETS, num_warps: int | None = None, num_stages: int | None = None
) -> dict:
    """Facts for every target from a recorded launch (ArgInfo dicts). Never raises."""
    return _view(lambda target: compile_launch(jit_fn, args, target, num_warps, num_stages), targets)


def _view(compile_for, targets) -> dict:
    """Facts for every target; a target that fails to compile becomes a note."""
    out: dict = {"facts": [], "notes": [], "targets": [], "resources": {}}
    for target in targets:
        try:
            asm = compile_for(target)
        except Exception as exc:  # a kernel this target cannot compile: say so, keep the others
            out["notes"].append(
                f"static view for {target} not available: {type(exc).__name__}: "
                f"{str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ''}"
            )
            continue
        out["facts"] += analyse(asm, target)
        out["targets"].append(target)
        try:
            found, spills = resources(asm, target)
        except (OSError, subprocess.SubprocessError) as exc:  # a toolkit without cuobjdump/nvdisasm
            out["notes"].append(f"registers for {target} not read: {type(exc).__name__}: {str(exc)[:200]}")
            continue
        out["resources"][target] = found
        out["facts"] += spills
    return out


# --- registers and spills ------------------------------------------------------------------------

_CUDA_USAGE = re.compile(r"\bREG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")
_AMD_USAGE = {
    "registers": re.compile(r";\s*NumVgprs:\s*(\d+)"),
    "spill_bytes": re.compile(r";\s*ScratchSize:\s*(\d+)"),
    "occupancy_waves": re.compile(r";\s*Occupancy:\s*(\d+)"),
    "vgpr_spills": re.compile(r"\.vgpr_spill_count:\s*(\d+)"),
    "sgpr_spills": re.compile(r"\.sgpr_spill_count:\s*(\d+)"),
}


def resources(asm: dict, target: str) -> tuple[dict[str, float], list[Fact]]:
    """Registers per thread and bytes spilled to local memory per thread, from what the assembler
    made of the kernel (ptxas's cubin read by cuobjdump; the AMDGCN listing's own comments), and
    on NVIDIA the spill instructions (LDL/STL) per kernel line when there are any. On AMD the
    scratch instructions are among `analyse`'s facts already."""
    if not target.startswith("cuda"):
        text = asm.get("amdgcn", "")
        found = {key: float(m.group(1)) for key, pattern in _AMD_USAGE.items() if (m := pattern.search(text))}
        return found, []
    cubin = asm.get("cubin")
    if not isinstance(cubin, bytes):
        return {}, []
    from triton import knobs

    m = _CUDA_USAGE.search(_read_cubin(knobs.nvidia.cuobjdump.path, "--dump-resource-usage", cubin=cubin))
    if m is None:
        return {}, []
    registers, stack, shared, local = (int(g) for g in m.groups())
    found = {"registers": registers, "spill_bytes": stack + local, "shared_bytes": shared}
    if not stack + local:
        return found, []
    counts: Counter = Counter()
    for _, file, line, instruction in sass_lines(cubin):
        opcode = instruction.split()[0] if instruction.split() else ""
        if opcode.startswith(("LDL", "STL")):
            kind = "local_load" if opcode.startswith("LDL") else "local_store"
            counts[((file, line), kind, opcode)] += 1
    return found, _facts(counts, target)


# --- compiling inside the user's process, also under the interpreter ------------------------------


def compile_here(py_fn, bound: dict, target: str, options: dict | None = None):
    """Compile the kernel `py_fn` for `target` with the launch's own arguments (dtypes,
    constexprs, 16-divisible integers and 16-byte aligned pointers, as Triton specialises).

    Works in a process that runs the interpreter (TRITON_INTERPRET=1) too: there every
    @triton.jit function, the library's own included, is an InterpretedFunction, which the
    compiler refuses; for the duration of the compile they are swapped for JITFunctions and
    triton.language is put back as it was before the first kernel ran, then all is restored."""
    import triton
    from triton import knobs
    from triton.compiler import ASTSource
    from triton.runtime.jit import JITFunction, mangle_type

    jit_fn = JITFunction(py_fn)
    signature, constexprs, attrs = {}, {}, {}
    for index, param in enumerate(jit_fn.params):
        value = bound.get(param.name)
        if param.is_constexpr or value is None:
            signature[param.name], constexprs[param.name] = "constexpr", value
            continue
        if type(value) is int and value == 1:  # Triton specialises an integer 1 as a constant (and so do we)
            signature[param.name], constexprs[param.name] = "constexpr", 1
            continue
        signature[param.name] = mangle_type(value)
        aligned = (
            value.data_ptr() % 16 == 0
            if hasattr(value, "data_ptr")
            else (isinstance(value, int) and not isinstance(value, bool) and value % 16 == 0)
        )
        if aligned:
            attrs[(index,)] = [["tt.divisibility", 16]]
    options = {k: v for k, v in (options or {}).items() if k in ("num_warps", "num_stages") and v is not None}
    restore: list[tuple[object, str, object]] = []
    try:
        if _interpreting():
            from triton.runtime.interpreter import InterpretedFunction

            for (obj, name), value in _PRISTINE.items():  # undo what earlier interpreted kernels patched
                restore.append((obj, name, vars(obj).get(name, _MISSING)))
                setattr(obj, name, value)
            with warnings.catch_warnings():  # some modules hold deprecated objects that warn when touched
                warnings.simplefilter("ignore")
                _swap_interpreted(restore, InterpretedFunction, JITFunction, py_fn.__globals__)
        with knobs.runtime.scope():
            knobs.runtime.interpret = False
            return triton.compile(
                ASTSource(jit_fn, signature, constexprs, attrs), target=parse_target(target), options=options
            )
    finally:
        for obj, name, value in reversed(restore):
            if isinstance(obj, dict):  # a namespace reached only through the kernel's globals
                obj[name] = value
            elif value is _MISSING:
                delattr(obj, name)
            else:
                setattr(obj, name, value)


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET") == "1"


def static_launch(py_fn, bound: dict, options: dict, targets=DEFAULT_TARGETS) -> dict:
    """`static_view` for a live launch inside the program (the recorder calls it). Never raises."""
    return _view(lambda target: compile_here(py_fn, bound, target, options).asm, targets)


# The interpreter patches triton.language for each kernel it runs and leaves helper calls'
# patches in place, so compiling later needs the values from before any kernel ran.
_PRISTINE: dict[tuple[object, str], object] = {}


def remember_language() -> None:
    """Note triton.language as it is before the first interpreted kernel runs."""
    if _PRISTINE:
        return
    import triton.language as tl
    from triton.runtime import interpreter as ti

    touched = []

    class _Recording(ti._LangPatchScope):
        def set_attr(self, obj, name, value):
            touched.append((obj, name))

    namespace = {"tl": tl, "core": tl.core}
    probe = eval("lambda: None", namespace)  # a function that sees triton.language, as kernels do
    saved = ti._LangPatchScope
    ti._LangPatchScope = _Recording
    try:
        ti._patch_lang(probe)
    finally:
        ti._LangPatchScope = saved
    for obj, name in touched:
        value = vars(obj).get(name, _MISSING)
        if value is not _MISSING:
            _PRISTINE[(obj, name)] = value


def _swap_interpreted(swapped: list, interpreted_type, jit_type, kernel_globals: dict | None = None) -> None:
    """Every InterpretedFunction a kernel can reach becomes one JITFunction: in any module's
    namespace, as an attribute of a class a module defines (helpers grouped as `Ops.scale`), and
    in the kernel's own globals and the modules they name, registered in sys.modules or not
    (a file loaded with importlib.util.spec_from_file_location)."""
    import types

    made: dict[int, object] = {}

    def swap(owner, name, value) -> None:
        swapped.append((owner, name, value))
        new = made.setdefault(id(value), jit_type(value.fn))
        if isinstance(owner, dict):
            owner[name] = new
        else:
            setattr(owner, name, new)

    modules = {id(m): m for m in list(sys.modules.values())}
    extra = [v for v in (kernel_globals or {}).values() if isinstance(v, types.ModuleType) and id(v) not in modules]
    seen_globals = {id(getattr(m, "__dict__", None)) for m in modules.values()}
    if kernel_globals is not None and id(kernel_globals) not in seen_globals:
        for name, value in list(kernel_globals.items()):
            if isinstance(value, interpreted_type):
                swap(kernel_globals, name, value)
    for module in [*modules.values(), *extra]:
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for name, value in list(namespace.items()):
            if isinstance(value, interpreted_type):
                swap(module, name, value)
            elif isinstance(value, type) and getattr(value, "__module__", None) == getattr(module, "__name__", None):
                for attr, member in list(vars(value).items()):
                    if isinstance(member, interpreted_type):
                        swap(value, attr, member)


# --- SASS offsets to kernel lines (for the ncu backend's per-instruction counters) ----------------

_SASS_INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_SASS_LOCATION = re.compile(r'"([^"]+)", line (\d+)')


def sass_lines(cubin: bytes) -> list[list]:
    """[offset, file, line, instruction] for every SASS instruction of a cubin, from nvdisasm's
    line information (Triton emits it). An instruction inlined from a helper (tl.sum's
    combine, say) is put at the kernel line that called it: the outermost 'inlined at'."""
    from triton import knobs

    return parse_sass_lines(_read_cubin(knobs.nvidia.nvdisasm.path, "-gi", "-c", cubin=cubin))


def _read_cubin(tool: str, *options: str, cubin: bytes) -> str:
    """What a CUDA binary tool (cuobjdump, nvdisasm) prints about a cubin, given as a file."""
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run([tool, *options, f.name], capture_output=True, text=True, check=True, timeout=60).stdout


def parse_sass_lines(text: str) -> list[list]:
    rows, where, block = [], None, []
    for raw in text.splitlines():
        if raw.lstrip().startswith("//##"):
            block.append(raw)
            continue
        m = _SASS_INSTRUCTION.search(raw)
        if not m:
            continue
        if block:  # the comments since the last instruction: the last location named is the outermost
            found = _SASS_LOCATION.findall(block[-1])
            where = (found[-1][0], int(found[-1][1])) if found else where
            block = []
        if where is not None:
            rows.append([int(m.group(1), 16), where[0], where[1], " ".join(m.group(2).split())])
    return rows
