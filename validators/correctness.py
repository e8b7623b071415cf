"""In-program comparison: the captures of a reference run and a candidate run, dispatch by dispatch.

Before any value is compared, the guards that need no values: the candidate launched the kernel,
as many times as the reference (a candidate that skips dispatches, or serves some from a cache,
launches it fewer times), on the same streams (one that launches on a side stream and
returns races with whatever reads the result next), and without races between its programs that
the interpreter cannot show (`race`). Each output's tolerance for a reordered sum counts what one of
its elements sums (`reordering`).
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable, Set
from pathlib import Path
from typing import IO, NamedTuple

from intelliperf.files import read_regular

from .compare import Reordering, Tolerances, compare_buffer
from .verdict import Problem, ProblemKind

MAX_PROBLEMS = 20
VALUE_KINDS: tuple[ProblemKind, ...] = (
    "mismatch",
    "nan",
    "inf",
    "all-zero",
    "precision",
    "shape",
    "dtype",
    "unwritten",
)


def load_capture(directory: Path) -> dict | None:
    """The capture manifest of the process that launched the target kernel (the first one that
    did, if several did); None if none did."""
    manifests = []
    for path in sorted(directory.glob("capture-*.json")):
        manifest = json.loads(read_regular(path))
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
    """A saved capture, trial's inputs or outputs (tensors and plain values only: weights_only); a path
    must name a regular file (a link is refused, not followed)."""
    import torch

    return torch.load(io.BytesIO(read_regular(source)) if isinstance(source, Path) else source, weights_only=True)


def _buffers(manifest: dict, index: int, load: Callable[[Path], dict]) -> dict:
    return load(Path(manifest["dir"]) / f"dispatch-{manifest['pid']}-{index:09d}.pt")


def accumulated_terms(manifest: dict, name: str | None = None, launch: dict | None = None) -> int | None:
    """How many terms one element of output `name`, which the kernel adds into with float atomics, may sum
    at `launch` (default: the first recorded): the adds it gets, times the terms each added value already
    sums (split-K's partial products, a block's tl.sum). The adds: the lanes of the kernel's atomic ops
    into it times the launch's programs, spread over the elements they reach (every one of them into one
    element where the data picks the element, a histogram's). Where the TTIR cannot count them (an atomic in
    a loop, an older capture) or no output is named (a launcher's result made on the host from the kernel's
    outputs): the largest input."""
    if not manifest.get("accumulated") or (name is not None and name not in manifest["accumulated"]):
        return None
    launch = launch or _first_launch(manifest)
    sizes = _numels(launch)
    largest = max((n for a, n in sizes.items() if a in manifest["read"]), default=None)
    lanes = manifest.get("adds", {}).get(name) if name is not None else None
    if not lanes or name not in sizes:  # (None: not counted; 0: UNBOUNDED)
        return largest
    total = lanes * _programs(launch)
    if name in manifest.get("scattered", ()):
        adds = total
    elif name in manifest.get("shared", ()):  # every program into the same elements: its lanes' worth of them
        adds = -(-total // max(1, min(sizes[name], lanes)))
    else:
        adds = -(-total // max(1, sizes[name]))
    depth = reduction_terms(manifest, name, launch) or 1
    return adds * depth


def reduction_terms(manifest: dict, name: str | None = None, launch: dict | None = None) -> int | None:
    """How many terms one element of output `name`, whose values a reduction made, sums at `launch`
    (default: the first recorded); None where it sums one (an element-wise result: the dtype's own tolerance).
    The TTIR's count where it has one: the widths of the summing reductions the stored value went through
    (tl.sum's axis, tl.dot's K; a max has no order to round in). Where a float carried through a loop took
    part (its trip count is the launch's): an input's largest dimension (a column sum's rows, a GEMM's K) or
    the largest input's elements per element of the output, whichever is more. No output named (a
    launcher's result made on the host from the kernel's outputs): the same, per element of the smallest
    reduced output."""
    reduced = set(manifest.get("reduced", ()))
    if not reduced or (name is not None and name not in reduced):
        return None
    launch = launch or _first_launch(manifest)
    depth = manifest.get("depths", {}).get(name) if name is not None else None
    if depth:  # (None: an older capture; 0: UNBOUNDED)
        return depth if depth > 1 else None
    args = [a for a in launch.get("args", []) if a["kind"] in ("tensor", "descriptor")]
    inputs = [a for a in args if a["name"] in manifest["read"]]
    outputs = [numel(a) for a in args if a["name"] in (reduced if name is None else {name})]
    if not outputs or not inputs:
        return None
    longest = max((d for a in inputs for d in a.get("base", a).get("shape", [])), default=1)
    return max(longest, -(-max(numel(a) for a in inputs) // max(1, min(outputs))))


def _first_launch(manifest: dict) -> dict:
    return (manifest.get("launches") or [{}])[0]


def _numels(launch: dict) -> dict[str, int]:
    return {a["name"]: numel(a) for a in launch.get("args", []) if a["kind"] in ("tensor", "descriptor")}


def _programs(launch: dict) -> int:
    return math.prod(launch.get("grid") or [1])


def reordering(
    manifest: dict, names: list[str] | None, launch: dict | None = None, times: int = 1, nan: bool | None = None
) -> dict:
    """The keyword arguments of `compare_buffer` for an output made by kernel arguments `names` (several: a
    launcher's result that is one of them), at `launch`, written by `times` launches (their atomic adds add
    up); None: made on the host from the kernel's outputs, so by all of them. `nan`: whether the inputs held
    a NaN (default: the launch's description says)."""
    nan = _nan_given(manifest, launch) if nan is None else nan
    if names is None:
        terms = Reordering(accumulated_terms(manifest), reduction_terms(manifest))
        return {"terms": terms, "atomic": nan and bool(manifest.get("atomic"))}
    added = [accumulated_terms(manifest, n, launch) for n in names]
    summed = [reduction_terms(manifest, n, launch) for n in names]
    terms = Reordering(max((t * times for t in added if t), default=None), max((t for t in summed if t), default=None))
    return {"terms": terms, "atomic": nan and any(n in manifest.get("atomic", ()) for n in names)}


def _nan_given(manifest: dict, launch: dict | None) -> bool:
    """Whether an input of the launch (an argument the kernel does not write) held a NaN: only then can
    the reference's atomics have ignored one, and a candidate that propagates it change only NaN handling."""
    launch = launch or _first_launch(manifest)
    written = set(manifest.get("written", ()))
    return any(a.get("nan") for a in (launch or {}).get("args", []) if a.get("name") not in written)


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
    names = ref["written"]
    missing = [n for n in names if n not in cand["kernel"]["params"]]
    deferred = set(missing) if launcher_judges else set()
    problems = _launch_guards(ref, cand, kernel, [] if launcher_judges else missing)
    common = [i for i in ref["kept"] if i in set(cand["kept"])]
    launcher = LauncherJudges(launcher_judges, launcher_changed)
    found, compared, left = _compare_dispatches(ref, cand, common, tol, unstable, load_ref, launcher, len(problems))
    return problems + found, _compared_lines(ref, kernel, common, compared, deferred | left)


def _launch_guards(ref: dict, cand: dict, kernel: str, missing: list[str]) -> list[Problem]:
    """What is wrong before any value is compared: as many dispatches as the reference's, on the same streams,
    the output arguments the reference writes (`missing`: those the candidate's kernel lacks and no launcher
    replay judges instead), and no races between the candidate's programs."""
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
    if missing:
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
    return problems + race(ref, cand, kernel)


class LauncherJudges(NamedTuple):
    """What the launcher's replays judge instead of the comparison per dispatch (`compare_captures`): outputs
    renamed, dropped or reshaped, and (the launcher changed too) values that differ."""

    outputs: bool
    values: bool


def _compare_dispatches(
    ref: dict,
    cand: dict,
    common: list[int],
    tol: Tolerances,
    unstable: Set[str],
    load_ref: Callable[[Path], dict],
    launcher: LauncherJudges,
    already: int,
) -> tuple[list[Problem], int, set[str]]:
    """The written buffers of every dispatch both runs kept, compared value by value (until MAX_PROBLEMS,
    counting the `already` found by the guards); how many buffer comparisons ran, and the outputs the
    launcher's replays judge instead (reshaped, or holding other values where the launcher changed too)."""
    names = ref["written"]
    launches = dict(zip(ref["kept"], ref.get("launches") or [], strict=False))  # each dispatch's own shapes
    problems: list[Problem] = []
    deferred: set[str] = set()
    compared = 0
    for index in common:
        if already + len(problems) >= MAX_PROBLEMS:
            break
        r, c = _buffers(ref, index, load_ref), _buffers(cand, index, load_tensors)
        for name in names:
            if launcher.outputs and name in r and name in c and _reshaped(r[name], c[name]):
                deferred.add(name)
                continue
            if name in r and name in c and name not in unstable:
                found = compare_buffer(
                    r[name],
                    c[name],
                    name=name,
                    dispatch=index,
                    tol=tol,
                    **reordering(ref, [name], launches.get(index)),
                )
                # (only where its kernel still writes the buffer: work that left the kernel for host code is
                # not an intermediate the kernel computes otherwise)
                if found and launcher.outputs and launcher.values and name in cand.get("written", ()):
                    deferred.add(name)
                else:
                    problems += found
                compared += 1
    return problems, compared, deferred


def _compared_lines(ref: dict, kernel: str, common: list[int], compared: int, deferred: set[str]) -> list[str]:
    """The checks' lines: what was compared in-program, what was left to the launcher's replays, and which
    dispatches a long run's capture kept."""
    names = ref["written"]
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
    return checks


def _reshaped(ref, cand) -> bool:
    return tuple(ref.shape) != tuple(cand.shape) or ref.dtype != cand.dtype


def race(ref: dict, cand: dict, kernel: str) -> list[Problem]:
    """Races between the candidate's programs that the interpreter cannot show (it runs them one at a time),
    read from the compiled TTIR and the grid; only those the reference's kernel does not have itself:

    * a buffer the reference updates with atomics that the candidate loads and stores back with plain
      loads and stores, or any buffer the candidate stores back a value it read from (a load, or an atomic
      used as a read: `tl.atomic_add(p, 0)`, `atomic_xchg`), with nothing ordering its programs (a lock),
      from more programs than the buffer has elements: two programs update one element and one update is
      lost on a GPU;
    * a buffer the candidate stores program by program and loads at addresses that do not depend on the
      program id, with nothing ordering its programs (no condition or wait an atomic decides): a program
      reads another's partial results, which on a GPU may not be written yet. A second launch (a kernel
      that reduces the partials the first wrote) is ordered and not one of these."""
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
    stored_back = [
        n
        for n in cand.get("rmw", [])
        if n not in racy and n not in ref.get("rmw", []) and programs > sizes.get(n, programs)
    ]
    shared = [n for n in cand.get("cross", []) if n not in ref.get("cross", []) and programs > 1]
    fix = "keep the atomic, or give each element to one program"
    problems = [
        Problem(
            kind="race",
            buffer=n,
            message=(
                f"the reference updates {n} with atomics; the candidate's {kernel!r} loads and stores it back "
                f"without one, from {programs} programs into {sizes[n]} elements, so two programs update the same "
                "element at once and one update is lost on a GPU (the interpreter runs programs one after "
                f"another and hides this): {fix}"
            ),
        )
        for n in racy
    ]
    problems += [
        Problem(
            kind="race",
            buffer=n,
            message=(
                f"the candidate's {kernel!r} stores into {n} a value it read from {n} (a load, or an atomic used "
                f"as a read) with a plain store, from {programs} programs into {sizes.get(n, '?')} elements and "
                "nothing ordering them: two programs read the same old value and one update is lost on a GPU "
                f"(the interpreter runs programs one after another and hides this): {fix}"
            ),
        )
        for n in stored_back
    ]
    problems += [
        Problem(
            kind="race",
            buffer=n,
            message=(
                f"the candidate's {kernel!r} stores {n} program by program and loads it at addresses that do not "
                f"depend on the program id, in the same launch of {programs} programs, with no atomic ordering "
                "them: a program reads other programs' partial results, which on a GPU may not be written yet "
                "(the interpreter runs programs one after another and always has them ready); reduce them in a "
                "second launch, or wait on an atomic counter before reading them"
            ),
        )
        for n in shared
    ]
    return problems
