"""The launcher's inputs in forms the program never passes, at the recorded shape: laid out otherwise (`rows`, a
slice of the columns of a tensor twice as wide, as `qkv[:, 128:256]`; `transposed`, column-major; `expanded`, one row
repeated by a stride of 0), int64 integers as int32, floats at mixed dtypes,
and float inputs that require grad (a launcher's path for training). But for grad, each holds the values the
program's own forms hold too: the reference's outputs must be those it gives on them laid out contiguously at the
program's dtypes (`plainly`, `same_values`), or it does not take that form and the trial is not compared.

Imports only torch.
"""

from __future__ import annotations

from .replay_inputs import float_tensor, torch_dtype
from .replay_outputs import STRUCTURE

LAYOUTS = frozenset({"rows", "transposed", "expanded"})
OTHER_WIDTH = {"int64": "int32"}  # (narrower only: a kernel may take int32 alone, as `tl.histogram` does)
MIXED = {"float32": "float16", "float16": "float32", "bfloat16": "float32", "float64": "float32"}
GRAD = "grad"  # the trial whose inputs require grad: its reference may take another path, so no `plainly` call


def forms(descs: list[dict], left_alone: set[str]) -> dict[str, list[dict]]:
    """The trials' descriptions, by name, each that changes something: every float tensor of 2 or more dimensions
    as a row slice, column-major, or (those the reference leaves alone, `left_alone`, with a first size of 2 or
    more) expanded; every int64 tensor as int32 (where its captured values fit); every
    second float tensor at another float dtype (float32 and float16 swapped, bfloat16 and float64 to float32);
    every float tensor the reference leaves alone requiring grad."""

    def matrix(d: dict) -> bool:
        return float_tensor(d) and len(d["shape"]) >= 2

    def fits(d: dict) -> bool:
        return (
            d["kind"] == "tensor"
            and d["dtype"] in OTHER_WIDTH
            and -(2**31) <= d.get("min", 0) <= d.get("max", 0) < 2**31
        )

    floats = [d["name"] for d in descs if float_tensor(d) and "alias_of" not in d]
    second = set(floats[1::2])
    found = {
        "rows": [{**d, "layout": "rows"} if matrix(d) else d for d in descs],
        "transposed": [{**d, "layout": "transposed"} if matrix(d) and min(d["shape"][-2:]) >= 2 else d for d in descs],
        "expanded": [
            {**d, "layout": "expanded"} if matrix(d) and d["shape"][0] >= 2 and d["name"] in left_alone else d
            for d in descs
        ],
        "widths": [{**d, "dtype": OTHER_WIDTH[d["dtype"]]} if fits(d) else d for d in descs],
        "mixed": [
            {**d, "dtype": MIXED[d["dtype"]]} if d.get("alias_of", d["name"]) in second and d["dtype"] in MIXED else d
            for d in descs
        ],
        GRAD: [{**d, "grad": True} if float_tensor(d) and d["name"] in left_alone else d for d in descs],
    }
    return {name: moved for name, moved in found.items() if moved != descs}


def arranged(tensor, desc: dict):
    """A new tensor of `tensor`'s values in the layout `desc` names, requiring grad where it says. Between and past
    the elements of a row slice or an expanded tensor, memory holds NaN (a reader that ignores the layout meets it;
    an expanded tensor's allocation spans what a contiguous one would); `expanded` repeats the first row."""
    import torch

    layout, nan = desc.get("layout"), float("nan")
    if layout == "rows":  # (in a tensor twice as wide, a quarter of the width in: gaps on both sides)
        *outer, cols = tensor.shape
        wide = torch.full([*outer, 2 * cols], nan, dtype=tensor.dtype, device=tensor.device)
        out = wide[..., cols // 2 : cols // 2 + cols]
        out.copy_(tensor)
    elif layout == "transposed":
        out = tensor.mT.contiguous().mT
    elif layout == "expanded":
        row = tensor[:1].contiguous()
        span = torch.full((tensor.numel(),), nan, dtype=tensor.dtype, device=tensor.device)
        span[: row.numel()] = row.reshape(-1)
        out = span.as_strided(tensor.shape, (0, *row.stride()[1:]))
    else:
        out = tensor
    return out.requires_grad_() if desc.get("grad") else out


def laid_out(values: dict, descs: list[dict], recorded: list[dict]) -> dict:
    """A trial's inputs from its fresh contiguous draws (`values`): each tensor's values made what its recorded
    dtype holds too (a float16 draw is exact in float32; a float32 one is rounded through float16 first), then
    arranged as its description says; a tensor two arguments share stays shared."""
    out: dict = {}
    for d, r in zip(descs, recorded, strict=True):
        value = values[d["name"]]
        if d["kind"] != "tensor":
            out[d["name"]] = value
        elif d.get("alias_of") in out:
            out[d["name"]] = out[d["alias_of"]]
        else:
            if d["dtype"] != r["dtype"]:
                value.copy_(value.to(torch_dtype(r["dtype"])))
            out[d["name"]] = arranged(value, d)
    return out


def plainly(values: dict, recorded: list[dict]) -> dict:
    """The same values as the program passes them: contiguous copies at its dtypes (shared tensors shared)."""
    import torch

    out: dict = {}
    for d in recorded:
        value = values[d["name"]]
        if d["kind"] == "tensor" and d.get("alias_of") in out:
            out[d["name"]] = out[d["alias_of"]]
        elif d["kind"] == "tensor":
            dtype = torch_dtype(d["dtype"])
            out[d["name"]] = value.detach().to(dtype=dtype, memory_format=torch.contiguous_format, copy=True)
        else:
            out[d["name"]] = value
    return out


SAME_SCALE = 1 / 64  # of an output's largest magnitude: rounding and summation order, not another reading


def same_values(outputs: dict, plain: dict) -> bool:
    """Whether a call's outputs (`replay_outputs.outputs_of`) are those it gave on the same values in the program's
    own forms (`plain`): every tensor of the same shape, integers equal, NaN and infinities in the same places and
    other floats within SAME_SCALE of the output's largest magnitude (another dtype rounds, another layout may sum
    in another order; a reader that ignores the layout reads other values, or NaN). Dtypes and strides may differ."""
    import torch

    for name, want in plain.items():
        got = outputs.get(name)
        if not isinstance(want, torch.Tensor) or not isinstance(got, torch.Tensor):
            if type(want) is not type(got) or (isinstance(want, str) and want != got and name != STRUCTURE):
                return False  # (one left an argument as given, the other wrote it)
            continue
        if want.shape != got.shape:
            return False
        a, b = got.detach().double(), want.detach().double()
        if not (want.is_floating_point() or got.is_floating_point()):
            if not torch.equal(a, b):
                return False
            continue
        finite = torch.isfinite(b)
        if not torch.equal(torch.isfinite(a), finite) or not torch.equal(
            a[~finite].nan_to_num(), b[~finite].nan_to_num()
        ):
            return False
        scale = float(b[finite].abs().max()) if bool(finite.any()) else 0.0
        if bool(((a - b)[finite].abs() > scale * SAME_SCALE).any()):
            return False
    return True
