"""The capture inside the user's program (validators/inside/): what it says of each argument, and a real
program run with the bootstrap and the capture on, in the Triton interpreter: the kernel's outputs read from
its TTIR (outputs.py), the launcher found past Triton's and intelliperf's own frames, each kept dispatch's
written buffers saved as they were after it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import torch

from intelliperf.validators.correctness import load_capture, load_tensors
from intelliperf.validators.inside.capture import ENV_DIR, ENV_KERNEL, describe_args
from intelliperf.workload.runner import TraceSettings, workload_env


def test_arguments_are_described_enough_to_draw_fresh_ones_and_aliases_are_named():
    x = torch.tensor([[1.0, -3.0], [2.0, 5.0]])
    offsets = torch.tensor([0, 2, 2, 7])
    rows = describe_args(["x", "x_t", "offsets", "n", "dtype"], [x, x.t(), offsets, 4, torch.float16], stats=True)
    by_name = {row["name"]: row for row in rows}
    assert by_name["x"] == {
        "name": "x",
        "kind": "tensor",
        "dtype": "float32",
        "shape": [2, 2],
        "strides": [2, 1],
        "device": "cpu",
        "nan": False,
        "min": -3.0,
        "max": 5.0,
    }
    assert by_name["x_t"]["alias_of"] == "x" and by_name["x_t"]["strides"] == [1, 2]
    assert by_name["offsets"]["sorted"] is True and "alias_of" not in by_name["offsets"]
    assert by_name["n"] == {"name": "n", "kind": "scalar", "value": 4}
    assert by_name["dtype"] == {"name": "dtype", "kind": "dtype", "value": "float16"}
    unsorted = describe_args(["ids"], [torch.tensor([3, 1, 2])], stats=True)[0]
    assert unsorted["sorted"] is False
    assert "min" not in describe_args(["x"], [x], stats=False)[0]


PROGRAM = """
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


def scale(x, factor):
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 32),)](x, out, x.numel(), factor, BLOCK=32)
    return out


for step in range(3):
    scale(torch.arange(40, dtype=torch.float32) + step, 2.0)
"""


@pytest.mark.slow
def test_a_program_run_with_the_capture_on_keeps_what_the_kernel_wrote_and_who_launched_it(tmp_path):
    program = tmp_path / "prog.py"
    program.write_text(textwrap.dedent(PROGRAM))
    out = tmp_path / "capture"
    out.mkdir()
    env = workload_env(out, interpret=True, trace=TraceSettings())
    env.update({ENV_KERNEL: "scale_kernel", ENV_DIR: str(out)})
    done = subprocess.run([sys.executable, str(program)], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]

    manifest = load_capture(out)
    assert manifest is not None, sorted(p.name for p in out.iterdir())
    assert manifest["dispatches"] == 3 and manifest["kept"] == [0, 1, 2]
    assert manifest["written"] == ["out_ptr"] and "x_ptr" in manifest["read"], manifest["method"]
    assert manifest["kernel"]["name"] == "scale_kernel" and manifest["kernel"]["constexprs"] == ["BLOCK"]
    launcher = manifest["launcher"]
    assert (launcher["function"], launcher["file"]) == ("scale", str(program))
    assert [a["name"] for a in launcher["args"]] == ["x", "factor"]
    for index in manifest["kept"]:
        saved = load_tensors(out / f"dispatch-{manifest['pid']}-{index:09d}.pt")
        assert set(saved) == {"out_ptr"}
        assert torch.equal(saved["out_ptr"], (torch.arange(40, dtype=torch.float32) + index) * 2.0)
    inputs = load_tensors(out / f"launcher-inputs-{manifest['pid']}.pt")
    # the launcher's arguments as its next call began (`at_entry`: a launcher may rebind them before launching)
    assert torch.equal(inputs["x"], torch.arange(40, dtype=torch.float32) + 1)
