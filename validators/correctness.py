"""In-program comparison: the captures of a reference run and a candidate run, dispatch by dispatch.

Before any value is compared, the guards that need no values: the candidate launched the kernel,
as many times as the reference (a candidate that skips dispatches, or serves some from a cache,
launches it fewer times), and on the same streams (one that launches on a side stream and
returns races with whatever reads the result next).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Set
from pathlib import Path
from typing import IO

from .compare import Tolerances, compare_buffer
from .verdict import Problem

MAX_PROBLEMS = 20
VALUE_KINDS = ("mismatch", "nan", "inf", "all-zero", "precision", "shape", "dtype", "unwritten")


def load_capture(directory: Path) -> dict | None:
    """The capture manifest of the process that launched the target kernel (the first one that
    did, if several did); None if none did."""
    manifests = []
    for path in sorted(directory.glob("capture-*.json")):
        manifest = json.loads(path.read_text())
        if manifest.get("dispatches"):
            manifest["dir"] = str(directory)
            manifests.append(manifest)
    if not manifests:
        return None
    manifests.sort(key=lambda m: m["pid"])
    first = manifests[0]
    first["other_processes"] = len(manifests) - 1
    return first


def load_tensors(source: Path | IO[bytes]) -> dict:
    """A saved capture, trial's inputs or outputs (tensors and plain values only: weights_only)."""
    import torch

    return torch.load(source, weights_only=True)


def _buffers(manifest: dict, index: int, load: Callable[[Path], dict]) -> dict:
    return load(Path(manifest["dir"]) / f"dispatch-{manifest['pid']}-{index:09d}.pt")


def accumulated_terms(manifest: dict) -> int | None:
    """How many terms an atomically accumulated element may sum at most: the largest input."""
    if not manifest.get("accumulated"):
        return None
    sizes = [numel(a) for launch in manifest["launches"][:1] for a in launch["args"] if a["name"] in manifest["read"]]
    return max(sizes, default=None)


def reduction_terms(manifest: dict) -> int | None:
    """How many terms a reduced output element may sum at most: an input's largest dimension (a column
    sum's rows, a GEMM's K), or the largest input's elements per element of the smallest reduced output
    (a total over a whole tile), whichever is more."""
    launches, reduced = manifest.get("launches") or [{}], set(manifest.get("reduced", ()))
    args = [a for a in launches[0].get("args", []) if a["kind"] in ("tensor", "descriptor")]
    inputs = [a for a in args if a["name"] in manifest["read"]]
    outputs = [numel(a) for a in args if a["name"] in reduced]
    if not outputs or not inputs:
        return None
    longest = max((d for a in inputs for d in a.get("base", a).get("shape", [])), default=1)
    return max(longest, max(numel(a) for a in inputs) // max(1, min(outputs)))


def numel(arg: dict) -> int:
    """Elements of a described tensor argument (a descriptor's: its base tensor's)."""
    desc = arg.get("base", arg) if arg["kind"] == "descriptor" else arg
    return math.prod(desc.get("shape", []))


def compare_captures(
    ref: dict,
    cand: dict | None,
    kernel: str,
    tol: Tolerances,
    unstable: Set[str] = frozenset(),
    load_ref: Callable[[Path], dict] = load_tensors,
    launcher_judges: bool = False,
    launcher_changed: bool = False,
) -> tuple[list[Problem], list[str]]:
    """Problems found, and a line saying what was compared; buffers in `unstable` (two runs of the
    reference disagree on them) are not compared. `load_ref` reads the reference's files (the ground
    truth's loader checks their digests). `launcher_judges`: the launcher's replays compare what it
    returns and writes, so a kernel output the candidate renamed, dropped or reshaped (per-program
    partials its launcher sums, a second kernel) is left to them instead of refused here; with
    `launcher_changed` too (work moved between the launcher and the kernel: a scale folded into the
    kernel), so are values that differ, while the guards (launches, streams, races) still hold."""
    if cand is None or not cand.get("dispatches"):
        return [
            Problem(
                kind="not-launched",
                message=f"the candidate never launched {kernel!r}; the reference launched it {ref['dispatches']} times",
            )
        ], []
    problems = []
    skipped = "it skips dispatches (or serves results from a cache)"
    if cand["dispatches"] != ref["dispatches"]:
        problems.append(
            Problem(
                kind="dispatch-count",
                message=(
                    f"the candidate launched {kernel!r} {cand['dispatches']} times, the reference {ref['dispatches']}: "
                    f"{skipped if cand['dispatches'] < ref['dispatches'] else 'it launches extra ones'}; every "
                    "dispatch "
                    "must do its work"
                ),
            )
        )
    side = next((i for i, (a, b) in enumerate(zip(ref["streams"], cand["streams"], strict=False)) if a != b), None)
    if side is not None:
        problems.append(
            Problem(
                kind="side-stream",
                dispatch=side,
                message=(
                    f"dispatch {side} ran on stream {cand['streams'][side]!r}, the reference's on "
                    f"{ref['streams'][side]!r}: "
                    "a kernel launched on a side stream and not joined races with the code that reads its result"
                ),
            )
        )
    names = ref["written"]
    missing = [n for n in names if n not in cand["kernel"]["params"]]
    deferred = set(missing) if launcher_judges else set()
    if missing and not launcher_judges:
        problems.append(
            Problem(
                kind="missing-output",
                message=(
                    f"the candidate's {kernel!r} has no argument {', '.join(map(repr, missing))}, which the "
                    "reference writes; "
                    f"in-program comparison needs the output arguments to keep their names"
                ),
            )
        )
    problems += race(ref, cand, kernel)
    common = [i for i in ref["kept"] if i in set(cand["kept"])]
    terms, reduced = accumulated_terms(ref), reduction_terms(ref)
    compared = 0
    for index in common:
        if len(problems) >= MAX_PROBLEMS:
            break
        r, c = _buffers(ref, index, load_ref), _buffers(cand, index, load_tensors)
        for name in names:
            if launcher_judges and name in r and name in c and _reshaped(r[name], c[name]):
                deferred.add(name)
                continue
            if name in r and name in c and name not in unstable:
                found = compare_buffer(
                    r[name],
                    c[name],
                    name=name,
                    dispatch=index,
                    tol=tol,
                    accumulated_terms=terms if name in ref["accumulated"] else None,
                    reduced_terms=reduced if name in ref.get("reduced", ()) else None,
                    atomic=name in ref.get("atomic", ()),
                )
                # (only where its kernel still writes the buffer: work that left the kernel for host code is
                # not an intermediate the kernel computes otherwise)
                if found and launcher_judges and launcher_changed and name in cand.get("written", ()):
                    deferred.add(name)
                else:
                    problems += found
                compared += 1
    checks = [
        f"in-program: {len(common)} of {ref['dispatches']} dispatches of {kernel!r} compared "
        f"({compared} buffer comparisons; outputs {', '.join(names) or 'none'} found by {ref['method']})"
    ]
    if deferred:
        checks.append(
            f"in-program: the candidate's kernel output(s) {', '.join(sorted(deferred))} renamed, dropped, reshaped "
            "or (its launcher changed too) holding other values: an intermediate the launcher finishes, judged "
            "by the launcher's replays, not per dispatch"
        )
    if ref["dispatches"] > len(ref["kept"]):
        checks.append(
            f"the kernel ran {ref['dispatches']} times: compared the first {ref['limits'][0]}, the last "
            f"{ref['limits'][1]} and an evenly strided sample in between"
        )
    return problems, checks


def _reshaped(ref, cand) -> bool:
    return tuple(ref.shape) != tuple(cand.shape) or ref.dtype != cand.dtype


def race(ref: dict, cand: dict, kernel: str) -> list[Problem]:
    """A buffer the reference updates with atomics that the candidate reads and stores back with
    plain loads and stores, from more programs than it has elements: two programs then update one
    element without an atomic, which loses updates on a GPU. The interpreter runs programs one at
    a time, so its results cannot show it; the compiled TTIR and the grid can."""
    launch = cand["launches"][0] if cand.get("launches") else None
    if launch is None:
        return []
    programs = math.prod(launch.get("grid") or [1])
    sizes = {a["name"]: numel(a) for a in launch["args"] if a["kind"] in ("tensor", "descriptor")}
    racy = [
        n
        for n in ref.get("atomic", [])
        if n in cand.get("stored", [])
        and n in cand.get("read", [])
        and n not in cand.get("atomic", [])
        and programs > sizes.get(n, programs)
    ]
    return [
        Problem(
            kind="race",
            buffer=n,
            message=(
                f"the reference updates {n} with atomics; the candidate's {kernel!r} loads and stores it back "
                "without one, "
                f"from {programs} programs into {sizes[n]} elements, so two programs update the same element at once "
                "and one "
                "update is lost on a GPU (the interpreter runs programs one after another and hides this): keep the "
                "atomic, "
                "or give each element to one program"
            ),
        )
        for n in racy
    ]
