"""Same workload, or stop: the reference's validation run must launch the kernel as the profiled run did.

Validation runs the program again, in the sandbox, seeded. If that run launches the kernel on other
grids, shapes, dtypes or compile-time values than the profile recorded (a size read from a variable
the sandbox withheld, a config file under a hidden $HOME), every check and every time after it would
be about a workload the user does not have. So the launch signatures that make up most of the
profiled launches must all appear in the reference run's own recording, or the run stops (exit 2)
naming what differs and which variables were withheld.

Compared per signature: the grid, num_warps/num_stages, every tensor argument's dtype and shape, and
every constexpr's value. Runtime scalars are not (a seed or a step counter differs from run to run
while the workload stays the same; sizes that matter show in the grid and the shapes).
Imports only the standard library.
"""

from __future__ import annotations

import json
from pathlib import Path

from intelliperf.errors import UsageError

COVER = 0.9  # the profiled signatures compared: most launched first, until they make up this share
MOST = 5


class WorkloadMismatchError(UsageError):
    """The reference's validation run did not reproduce the profiled launches."""


def signature_key(signature: dict) -> tuple:
    args: list[tuple] = []
    for arg in signature.get("args", []):
        if arg.get("kind") == "tensor":
            args.append((arg["name"], arg.get("dtype"), tuple(arg.get("shape") or ())))
        elif arg.get("kind") == "constexpr":
            args.append((arg["name"], repr(arg.get("value"))))
    return tuple(signature["grid"]), signature.get("num_warps"), signature.get("num_stages"), tuple(args)


def describe(signature: dict) -> str:
    parts = [f"grid {tuple(signature['grid'])}"]
    for arg in signature.get("args", []):
        if arg.get("kind") == "tensor":
            parts.append(f"{arg['name']}: {arg.get('dtype')}{list(arg.get('shape') or [])}")
        elif arg.get("kind") == "constexpr":
            parts.append(f"{arg['name']}={arg.get('value')!r}")
    for option in ("num_warps", "num_stages"):
        if signature.get(option) is not None:
            parts.append(f"{option}={signature[option]}")
    return ", ".join(parts)


def compared(profiled: list[dict]) -> list[dict]:
    """The profiled signatures that must reappear: the program's own launches (autotuning's benchmark
    launches aside), most launched first, until they cover COVER of them."""
    own = [(s, s.get("launches", 0) - s.get("tuning_launches", 0)) for s in profiled]
    own = sorted([(s, n) for s, n in own if n > 0], key=lambda item: -item[1])
    total = sum(n for _, n in own) or 1
    out, covered = [], 0
    for signature, launches in own[:MOST]:
        out.append(signature)
        covered += launches
        if covered >= COVER * total:
            break
    return out


def recorded_signatures(record_dir: Path, kernel: str) -> list[dict]:
    """The signatures of `kernel` in the recorder's files of one run (every process of it)."""
    out = []
    for path in sorted(Path(record_dir).glob("record-*.json")):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        for entry in record.get("kernels", []):
            if entry.get("name") == kernel:
                out += entry.get("signatures", [])
    return out


def check_same(kernel: str, profiled: list[dict], replayed: list[dict], withheld: list[str]) -> None:
    """Raises WorkloadMismatchError when a compared profiled signature is missing from `replayed`."""
    seen = {signature_key(s) for s in replayed}
    missing = [s for s in compared(profiled) if signature_key(s) not in seen]
    if not missing or not replayed:
        return
    ran = sorted(replayed, key=lambda s: -s.get("launches", 0))
    message = (
        f"the validation run did not reproduce the profiled workload of {kernel}: the profile launched it "
        f"with {describe(missing[0])}, the validation run with {describe(ran[0])}"
        + (f" (and {len(ran) - 1} other signature(s))" if len(ran) > 1 else "")
        + "; a verdict there would be about another workload than yours"
    )
    hint = (
        "The validation runs in a sandbox: no $HOME, a fresh /tmp, no network, and no secret variables"
        + (f" (withheld here: {', '.join(withheld)})" if withheld else "")
        + ". Pass a variable with --sandbox-env NAME if its value only looks like a credential, data in a "
        "hidden folder with --sandbox-read PATH, or configure the program by its arguments."
    )
    raise WorkloadMismatchError(message, hint=hint)
