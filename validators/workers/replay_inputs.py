"""Fresh inputs for the replay's trials: tensors laid out as recorded (or at unseen shapes), filled with values
drawn like the captured ones or beyond their range, and the unseen shapes themselves (about 3/4 and a little
over twice the recorded sizes, never a multiple of a block size, within a budget of bytes).

Imports only torch (when a tensor is made).
"""

from __future__ import annotations

import math
from collections.abc import Set
from typing import Any


class ReplayUnsupported(Exception):
    """An argument (of the kernel or the launcher) the replay cannot draw afresh or pass again."""


def torch_dtype(name: str):
    """The torch dtype a description names (`float32`)."""
    import torch

    return getattr(torch, name)


def _strided_like(shape, strides, dtype, device):
    """An empty tensor of `shape` laid out in the order of `strides` (row-major, transposed...)."""
    import torch

    if not shape:
        return torch.empty((), dtype=dtype, device=device)
    if len(strides) != len(shape):  # (another rank than recorded: row-major)
        return torch.empty(shape, dtype=dtype, device=device)
    order = sorted(range(len(shape)), key=lambda i: -strides[i] if i < len(strides) else 0)
    base = torch.empty([shape[i] for i in order], dtype=dtype, device=device)
    inverse = [order.index(i) for i in range(len(shape))]
    return base.permute(inverse)


def fill_fresh(tensor, desc: dict, generator, regime: str = "captured") -> None:
    """Refill in place with values drawn like the captured ones (uniform in their range; integers
    sorted along the last axis where the captured ones were), or,
    for floating-point tensors, beyond it: `negative` (all below zero), `wide` (mixed sign, 16x
    the captured magnitude), `nonfinite` (captured range with NaN, +Inf and -Inf sprinkled in),
    `sparse-nonfinite` (a `sparse` draw with them sprinkled in: an infinity where another input holds a
    zero, whose product is NaN).

    The values are drawn on the tensor's device (a 16M-element input drawn on the host and
    copied took most of a second per trial), from a seed the trial's generator gives."""
    import torch

    lo, hi = desc.get("min", 0.0), desc.get("max", 1.0)
    device = tensor.device
    local = torch.Generator(device=device).manual_seed(int(torch.randint(1 << 62, (1,), generator=generator)))
    draw = {"generator": local, "device": device}
    if tensor.dtype == torch.bool:
        values = torch.rand(tensor.shape, **draw) < 0.5
    elif tensor.dtype.is_floating_point:
        wide = torch.float64 if tensor.dtype == torch.float64 else torch.float32
        magnitude = max(abs(lo), abs(hi), 1.0)
        if regime == "negative":
            lo, hi = -magnitude, -magnitude / 64
        elif regime == "wide":
            big = min(16 * magnitude, float(torch.finfo(tensor.dtype).max) / 1e3)
            lo, hi = -big, big
        values = torch.rand(tensor.shape, dtype=wide, **draw) * (hi - lo) + lo
        if regime == "scaled":  # past float16's range, within bfloat16's (a copy through float16 overflows)
            values = values * 2.0**17
        if regime.startswith("sparse"):  # (repeated floats would bias a sum far past what float32 atomics keep exact)
            near = lo <= 0.0 <= hi or 0.0 < lo <= hi / 64  # (a range that reaches down to about zero holds it)
            values = _near_zero(_within(values, "sparse", 0.0 if near else lo, draw), tensor.dtype, hi, draw)
        elif regime == "edges":
            values = _edges(values, lo, hi, draw)
        if regime in ("nonfinite", "sparse-nonfinite") and values.numel():
            flat = values.view(-1)
            every = 97 if regime == "nonfinite" else 24  # (among zeros: an infinity meets one in a product)
            picks = torch.randint(0, flat.numel(), (max(3, flat.numel() // every),), **draw)
            flat[picks[0::3]] = float("nan")
            flat[picks[1::3]] = float("inf")
            flat[picks[2::3]] = float("-inf")
    else:
        values = torch.randint(int(lo), int(hi) + 1, tensor.shape, dtype=torch.int64, **draw)
        values = _edges(values, int(lo), int(hi), draw) if regime == "edges" else _within(values, regime, int(lo), draw)
        if desc.get("sorted") and values.dim():
            values = values.sort(dim=-1).values
    tensor.copy_(values.to(tensor.dtype))


def _within(values, regime: str, zero, draw: dict):
    """Values within the captured range shaped like real data: `sparse`, about half of them exactly `zero`
    (0 where the range holds it, else its low end: a padding id); `repeated` (integers), only three distinct
    values (ids that repeat, where atomics contend and a dedup or a cache keyed on values shows), in runs of
    1 to 512 (sorted or bucketed ids fill whole blocks with one value, scattered ones do not)."""
    import torch

    if regime == "sparse" and values.numel():
        return torch.where(torch.rand(values.shape, **draw) < 0.5, torch.full_like(values, zero), values)
    if regime == "repeated" and values.numel():
        flat = values.reshape(-1)
        picks = flat[torch.randint(0, flat.numel(), (3,), **draw)]
        lengths = torch.tensor((1, 3, 64, 512), device=flat.device)[torch.randint(0, 4, (flat.numel(),), **draw)]
        run_of = torch.repeat_interleave(torch.arange(flat.numel(), device=flat.device), lengths)[: flat.numel()]
        return picks[torch.randint(0, 3, (flat.numel(),), **draw)[run_of]].reshape(values.shape)
    return values


def _near_zero(values, dtype, hi, draw: dict):
    """The exact zeros of a `sparse` draw split three ways: +0.0, -0.0 (a negated or scaled zero: a sign-bit
    test tells it apart) and subnormals (underflow: a test against the smallest normal number drops them),
    of the sign the captured range allows."""
    import torch

    zeros = values == 0
    if not bool(zeros.any()):
        return values
    tiny = float(torch.finfo(dtype).tiny) * (1.0 if hi > 0 else -1.0)
    pick = torch.randint(0, 3, values.shape, **draw)
    spread = torch.rand(values.shape, dtype=values.dtype, **draw) * 0.5 * tiny
    near = torch.where(pick == 0, torch.zeros_like(values), torch.where(pick == 1, -torch.zeros_like(values), spread))
    return torch.where(zeros, near, values)


def _edges(values, lo, hi, draw: dict):
    """About half the values exactly at the captured range's ends (saturated or clamped data: a histogram's
    last edge, a mask's bound), the rest as drawn."""
    import torch

    if not values.numel():
        return values
    ends = torch.where(torch.rand(values.shape, **draw) < 0.5, torch.full_like(values, lo), torch.full_like(values, hi))
    return torch.where(torch.rand(values.shape, **draw) < 0.5, ends, values)


def strided_view(shape, dtype, device):
    """An empty tensor of `shape` whose last dimension steps by 2 (a column slice, one field of a record):
    what a launcher meets when its caller passes a view. `fill_gaps` once its values are in."""
    import torch

    if not shape:
        return torch.empty((), dtype=dtype, device=device)
    return torch.empty([*shape[:-1], 2 * shape[-1]], dtype=dtype, device=device)[..., ::2]


def fill_gaps(view) -> None:
    """The elements between a `strided_view`'s own (floats) hold NaN: a launcher that ignores the stride reads
    them, and where the reference does, its outputs show NaN from nowhere and the trial is not compared."""
    base = view._base
    if base is not None and base.dim() and base.shape[-1] == 2 * view.shape[-1]:
        base[..., 1::2].fill_(float("nan"))


def make_inputs(descs: list[dict], shapes: dict | None = None, guarded: bool = False) -> dict:
    """Tensors (and scalars) for the described arguments; `shapes` maps names to new shapes. `guarded`:
    each float tensor sits inside a larger allocation whose rest holds NaN, so a reference that reads
    past its inputs at this shape (sizes that only hold together as recorded) shows it by NaN in its
    outputs, and the trial is not compared (`replay_reference._Trial.run`)."""
    values: dict[str, Any] = {}
    for d in descs:
        if d["kind"] == "tensor":
            if d.get("alias_of") in values and shapes is None:
                values[d["name"]] = values[d["alias_of"]]
                continue
            shape = (shapes or {}).get(d["name"], d["shape"])
            if d.get("layout") == "strided":
                tensor = strided_view(shape, torch_dtype(d["dtype"]), d["device"])
            else:
                tensor = _strided_like(shape, d["strides"], torch_dtype(d["dtype"]), d["device"])
            values[d["name"]] = guarded_by_nan(tensor) if guarded and tensor.is_floating_point() else tensor
        elif d["kind"] == "scalar":
            values[d["name"]] = d["value"]
        elif d["kind"] == "dtype":
            values[d["name"]] = torch_dtype(d["value"])
        else:
            raise ReplayUnsupported(
                f"argument {d['name']!r} is a {d.get('type_name', d['kind'])}, which the replay cannot draw afresh"
            )
    return values


GUARD_ELEMENTS = 1 << 16  # NaN on each side of a guarded tensor


def guarded_by_nan(tensor):
    """`tensor`'s shape and strides in the middle of a NaN-filled allocation."""
    import torch

    span = sum((s - 1) * st for s, st in zip(tensor.shape, tensor.stride(), strict=True)) + 1 if tensor.numel() else 0
    base = torch.full((span + 2 * GUARD_ELEMENTS,), float("nan"), dtype=tensor.dtype, device=tensor.device)
    return base.as_strided(tensor.shape, tensor.stride(), GUARD_ELEMENTS)


def _smaller(d: int) -> int:
    s = d - max(1, d // 4)
    s = s if s % 2 else s - 1
    return max(1, s if s != d else d - 1)


def _larger(d: int, factor: float = 2.0) -> int:
    """`d` grown by `factor`, odd; at 2 (the default) past double by an eighth more, 1,024 -> 2,177: a block
    hard-coded at twice a power-of-two size, 2,048 for 1,000-1,024, no longer covers it."""
    g = d + max(1, int(d * (factor - 1))) + (2 * (d // 16) if factor >= 2 else 0)
    return g if g % 2 else g + 1


# The tensors of the larger unseen shape, at most (the recorded shape's, grown by 3/2 in every dimension, fits
# whatever its size, as the program's own run did). On a device: what a trial may hold beside the program run
# (workers.AHEAD_INPUTS_BYTES). Under the interpreter, which runs each program's block in NumPy: about 1 us per
# element of a simple kernel on this 2-core machine, so 32 MiB (8M float32 elements) is seconds a call, per side.
UNSEEN_BYTES = 1 << 30
UNSEEN_BYTES_INTERPRETED = 32 << 20
SMALLEST_GROWTH = 1.5


def tensor_bytes(descs: list[dict], shapes: dict | None = None) -> int:
    """Bytes of the distinct tensors `descs` describe, at `shapes` where given."""
    total = 0
    for d in descs:
        if d["kind"] == "tensor" and "alias_of" not in d:
            shape = (shapes or {}).get(d["name"], d["shape"])
            total += math.prod(shape) * torch_dtype(d["dtype"]).itemsize
    return total


def unseen_shapes(
    descs: list[dict], grow: bool, held: Set[int] = frozenset(), max_bytes: int | None = None
) -> tuple[dict, dict]:
    """New sizes for every dimension of 2 or more: odd (so no multiple of any block size), about
    3/4 (`grow=False`) or a little over twice (`grow=True`: see `_larger`) the original; where the
    grown tensors would take more than `max_bytes`, the largest growth that fits, but never less than 3/2.
    Integer arguments equal to a changed size or element count follow. A size that an integer input's
    values index (they span 0..size-1: histogram bins, a gather's table) stays, or the indices would fall
    outside it; so does one in `held` (a size the reference's kernel turned out to be compiled for:
    `KernelLaunches.kept`)."""
    sizes = _free_sizes(descs, held)

    def grown(factor: float) -> dict[int, int]:
        return {d: _larger(d, factor) for d in sizes}

    def shapes_for(new: dict[int, int]) -> dict[str, list[int]]:
        return _shapes_for(descs, new)

    if not grow:
        new = {d: _smaller(d) for d in sizes}
    else:
        new = grown(2.0)
        if max_bytes is not None and tensor_bytes(descs, shapes_for(new)) > max_bytes:
            low, high = SMALLEST_GROWTH, 2.0  # the largest growth that fits, to a 1/64 step
            while high - low > 1 / 64:
                mid = (low + high) / 2
                low, high = (mid, high) if tensor_bytes(descs, shapes_for(grown(mid))) <= max_bytes else (low, mid)
            new = grown(low)
    return _resized(descs, new)


def _free_sizes(descs: list[dict], held: Set[int] = frozenset()) -> set[int]:
    """The sizes of 2 or more a trial may change: not one an integer input's values index, nor one `held`."""
    indexed = {
        int(a["max"]) + 1
        for a in descs
        if a["kind"] == "tensor" and "max" in a and not a["dtype"].startswith(("float", "bfloat", "complex", "bool"))
    }
    kept = indexed | set(held)
    return {d for a in descs if a["kind"] == "tensor" for d in a["shape"] if d >= 2 and d not in kept}


def _shapes_for(descs: list[dict], new: dict[int, int]) -> dict[str, list[int]]:
    return {a["name"]: [new.get(d, d) for d in a["shape"]] for a in descs if a["kind"] == "tensor"}


def _resized(descs: list[dict], new: dict[int, int], sizes_follow: bool = True) -> tuple[dict, dict]:
    """The shapes with every size in `new` changed, and the integer arguments that follow: one equal to a
    changed size (`sizes_follow`) or to a tensor's element count."""
    shapes = _shapes_for(descs, new)
    numels = {math.prod(a["shape"]): math.prod(shapes[a["name"]]) for a in descs if a["kind"] == "tensor"}
    scalars = {}
    for a in descs:
        if a["kind"] == "scalar" and isinstance(a["value"], int) and not isinstance(a["value"], bool):
            if sizes_follow and a["value"] in new:
                scalars[a["name"]] = new[a["value"]]
            elif a["value"] in numels and a["value"] >= 2:
                scalars[a["name"]] = numels[a["value"]]
    return shapes, scalars


def extreme_shapes(descs: list[dict], held: Set[int] = frozenset()) -> list[tuple[str, dict, dict]]:
    """More shapes a fix must hold at, as (label, shapes, scalars): about a quarter
    of every free size (a block or loop bound tuned to the recorded size), every free size but the largest
    made 1 (a launcher that squeezes a batch of one), every size-1 dimension made 3 (a kernel that assumes
    a batch or a head of one) and every free size rounded down to a power of two (a multiple of every block:
    a tail handled only where the size leaves one; the unseen sizes are odd)."""
    sizes = _free_sizes(descs, held)
    found = []
    quarter = {d: q for d in sizes if (q := max(1, d // 4) | 1) < d}
    if quarter:
        found.append(("quarter", *_resized(descs, quarter)))
    single = {d: 1 for d in sizes if d != max(sizes)}
    if single:
        found.append(("single", *_resized(descs, single)))
    ones = any(1 in a["shape"] for a in descs if a["kind"] == "tensor")
    if ones:
        found.append(("ones", *_resized(descs, {1: 3}, sizes_follow=False)))
    aligned = {d: 1 << (d.bit_length() - 1) for d in sizes if d & (d - 1)}
    if aligned:
        found.append(("aligned", *_resized(descs, aligned)))
    return found


STRETCHED = 2  # the largest sizes each stretched on its own
STRETCH_SHARE = 16  # of a trial's bytes: one long dimension costs time in proportion


def stretches(descs: list[dict], held: Set[int], max_bytes: int) -> list[tuple[int, int]]:
    """Each of the two largest free sizes with how far it can be stretched, the other free sizes at 1, in a
    share of the budget (a cap, a hard-coded block or a fallback at an absolute size, past what the larger
    unseen shape reaches); only where that is past four times it."""
    sizes = _free_sizes(descs, held)
    found = []
    for d in sorted(sizes, reverse=True)[:STRETCHED]:
        far = _stretched(descs, d, max_bytes // STRETCH_SHARE, _others(sizes, d))
        if far is not None:
            found.append((d, far))
    return found


def stretched_shape(descs: list[dict], held: Set[int], d: int, size: int) -> tuple[dict, dict]:
    """The shapes (and the integers that follow) with size `d` made `size` and the other free sizes 1 (the bytes
    go to the one size: a row of 500K, not 24 of 21K)."""
    return _resized(descs, {**_others(_free_sizes(descs, held), d), d: size})


def _others(sizes: set[int], d: int) -> dict[int, int]:
    return {o: 1 for o in sizes if o != d}


def _stretched(descs: list[dict], d: int, max_bytes: int, others: dict[int, int]) -> int | None:
    """Size `d` grown as far as `max_bytes` allows (odd), the `others` sizes set as they say, where that is
    past four times it: a limit or a block hard-coded at an absolute size (2,048 columns, a fallback above
    4,096) no relative growth reaches."""
    low, high = 4 * d, 1 << 26

    def fits(size: int) -> bool:
        return tensor_bytes(descs, _shapes_for(descs, {**others, d: size})) <= max_bytes

    if not fits(low):
        return None
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if fits(mid) else (low, mid)
    far = low if low % 2 else low - 1
    return far if far > _larger(d, 4.0) else None


def least_stretch(d: int) -> int:
    """Past four times `d`, odd: the shortest stretch that counts."""
    return _larger(d, 4.0) + 2


def interpreted(descs: list[dict]) -> bool:
    """Whether the launcher's tensors are on the host (the kernels run under the interpreter)."""
    return all(d.get("device", "cpu") == "cpu" for d in descs if d["kind"] == "tensor")


def unseen_budget(descs: list[dict]) -> int:
    """`max_bytes` of the larger unseen shape: the interpreter's where the tensors are on the host."""
    return UNSEEN_BYTES_INTERPRETED if interpreted(descs) else UNSEEN_BYTES


def variants(descs: list[dict], fn, interpreter: bool, compiled: set[int]) -> dict[str, list[dict]]:
    """The launcher's arguments moved off what the program always passed, at the recorded shape: every float tensor a
    view whose last dimension steps by 2 (a caller's slice); its float arguments, then its integer ones moved (a
    `lo` of 0, 10 bins), to a power of two (a block of 512 where 256 was passed, 16 bins); those the kernel
    takes at run time (no constexpr of its recorded launch has the value: a block of 1 would be a grid of every
    element) to 1 (one segment, one graph: integer inputs below the old value follow it) and a hundredfold (a
    path kept for many segments; compiled, at least 65,537: past what 16-bit ids hold); the defaults its
    signature declares where the program passed others (a padding id of -1); every float32 tensor in float16 (an
    accumulator that follows the input's dtype), in float64 (values beyond the captured range), and, compiled
    only, float32 and float16 ones in bfloat16 (values past float16's range: a copy through float16 overflows
    there); (`at-arguments`) half of every float tensor's values at the launcher's float arguments (a bound,
    a threshold or a bin edge met exactly: clamped data); and (`lower`) its float and integer arguments moved
    down, halved (a smaller block, fewer bins, a smaller eps or bound: a minimum hard-coded at the program's
    value; integer inputs below a moved integer follow it)."""
    sizes = {d for a in descs if a["kind"] == "tensor" for d in a["shape"]}
    sizes |= {math.prod(a["shape"]) for a in descs if a["kind"] == "tensor"}

    def scalars(move) -> list[dict]:
        return [{**d, "value": move(d["value"])} if d["kind"] == "scalar" else d for d in descs]

    def counts(value):  # (an integer that is no tensor's size or element count: a bin count, not a length)
        return type(value) is int and value >= 2 and value not in sizes

    def runtime(value):
        return counts(value) and value not in compiled

    floor = 1 if interpreter else 65537  # (a grid of one program per count would take minutes in the interpreter)

    variants = {  # (in this order: a trial's seed follows its place)
        "strided": [{**d, "layout": "strided"} if float_tensor(d) else d for d in descs],
        "floats": scalars(lambda v: v * 1.5 + 0.25 if type(v) is float else v),
        "counts": scalars(lambda v: 2 * v + 1 if counts(v) else v),
        "powers": scalars(lambda v: _power_of_two(v, sizes)),
        "half": [{**d, "dtype": "float16"} if float_tensor(d) and d["dtype"] == "float32" else d for d in descs],
        "at-arguments": descs,
        "at-one": _following(descs, scalars(lambda v: 1 if runtime(v) else v)),
        "hundredfold": scalars(lambda v: min(max(100 * v, floor), 1 << 20) if runtime(v) else v),
        "defaults": scalars(lambda v: v) if fn is None else _defaults(descs, fn),
        "double": [{**d, "dtype": "float64"} if float_tensor(d) and d["dtype"] == "float32" else d for d in descs],
        "bfloat16": [
            {**d, "dtype": "bfloat16"} if float_tensor(d) and d["dtype"] in ("float32", "float16") else d for d in descs
        ],
        "lower": _following(descs, scalars(lambda v: _lower(v) if counts(v) or type(v) is float else v)),
    }
    if interpreter:  # (the interpreter computes garbage on bfloat16: a trial only where kernels compile)
        del variants["bfloat16"]
    return variants


def _lower(value):
    """An argument moved down: an integer count halved, a float halved (a negative one moves up, which the `floats`
    trial's x 1.5 + 0.25 moves down), 0.0 to -0.25."""
    if type(value) is int:
        return max(1, value // 2)
    return value / 2 if value else -0.25


def _following(recorded: list[dict], moved: list[dict]) -> list[dict]:
    """`moved` with each integer tensor whose captured values all lie in [0, v) for an integer argument v that
    moved down (ids below a segment count, below a bin count) drawn below the new value instead (the smallest
    such v taken as its bound)."""
    drops = sorted(
        (d["value"], m["value"])
        for d, m in zip(recorded, moved, strict=True)
        if d["kind"] == "scalar" and type(d["value"]) is int and m["value"] < d["value"]
    )
    out = []
    for d in moved:
        integer = d["kind"] == "tensor" and not d["dtype"].startswith(("float", "bfloat", "bool"))
        low, high = d.get("min"), d.get("max")
        bound = None
        if integer and low is not None and high is not None and 0 <= low:
            bound = next((new for old, new in drops if high < old), None)
        out.append(d if bound is None else {**d, "min": min(low, bound - 1), "max": min(high, bound - 1)})
    return out


def _defaults(descs: list[dict], fn) -> list[dict]:
    """The launcher's scalar arguments at the defaults its signature declares, where the program passed others."""
    import inspect

    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # (a builtin or a wrapper without a signature: nothing to say)
        return descs
    out = []
    for d in descs:
        default = params[d["name"]].default if d["name"] in params else inspect.Parameter.empty
        usable = d["kind"] == "scalar" and type(default) in (int, float, bool) and default != d["value"]
        out.append({**d, "value": default} if usable else d)
    return out


def _power_of_two(value, sizes: set[int]):
    """A positive integer argument that is no tensor's size or element count moved to a power of two: twice a
    power of two (a block size the launcher takes), else the next one above it (a bin count)."""
    if type(value) is not int or value < 1 or value in sizes:
        return value
    return 2 * value if not value & (value - 1) else 1 << value.bit_length()


def float_tensor(desc: dict) -> bool:
    return desc["kind"] == "tensor" and bool(desc["shape"]) and desc["dtype"].startswith(("float", "bfloat"))


def square_shape(descs: list[dict], held: Set[int] = frozenset()) -> tuple[dict, dict] | None:
    """Every free size made the smallest size of 2 or more the tensors have (a path taken only where two sizes
    are equal, `if M == N:`), the integers that follow the sizes with them; None where no size would change."""
    every = {d for a in descs if a["kind"] == "tensor" for d in a["shape"] if d >= 2}
    side = min(every, default=0)
    new = {d: side for d in _free_sizes(descs, held) if d != side}
    return _resized(descs, new) if new else None


def ranked_shape(descs: list[dict], held: Set[int] = frozenset()) -> tuple[dict, dict] | None:
    """One more leading dimension (a launcher that flattens its leading dimensions): the first size of the largest
    tensor (its rows, tokens or batch) split in two, [d, ...] -> [2, d / 2, ...], in every tensor of 2 or more
    dimensions that starts with it (a vector, ids say, stays one); an odd free size made even first (d - 1, the
    integers that follow the sizes with it). None where the largest tensor is a vector, or that size is below 2,
    or odd and not free."""
    tensors = [a for a in descs if a["kind"] == "tensor" and len(a["shape"]) >= 2]
    largest = max((a for a in descs if a["kind"] == "tensor"), key=lambda a: math.prod(a["shape"]), default=None)
    if largest is None or len(largest["shape"]) < 2:
        return None
    first = largest["shape"][0]
    even = first - first % 2
    if even < 2 or (even != first and first not in _free_sizes(descs, held)):
        return None
    shapes, scalars = _resized(descs, {first: even} if even != first else {})
    for a in tensors:
        if a["shape"][0] == first:
            shapes[a["name"]] = [2, even // 2, *shapes[a["name"]][1:]]
    return shapes, scalars
