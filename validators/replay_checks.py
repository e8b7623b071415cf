"""Step 4, the replay's outputs compared with the ground truth, in intelliperf's process only:
values, aliasing, stale results, and what the candidate's launcher may have moved.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

from intelliperf.files import NotRegularFile
from intelliperf.profiling.inside.untouched import replaced_message
from intelliperf.redact import scrub
from intelliperf.workload.workspace import within

from .compare import UNCHANGED, Tolerances, compare_buffer, identical
from .correctness import load_tensors, reordering
from .settings import NAMED_BY_REPLAY, Program, ValidationSettings
from .verdict import Problem, Verdict
from .workers.jobs import ReplayJob
from .workers.replay_forms import GRAD, LAYOUTS
from .workers.replay_outputs import ABLATION, STRUCTURE

if TYPE_CHECKING:
    from .runs.reference import ReferenceRun


def compare_replay(
    verdict: Verdict, reference: ReferenceRun, cand: dict, job: ReplayJob, replay: dict, settings: ValidationSettings
) -> None:
    """The replay's outputs compared with the truth."""
    begin = time.perf_counter()
    reference.verify()
    same_params = cand["kernel"]["params"] == reference.manifest["kernel"]["params"]
    replayed = noted(verdict, _replay_problems(reference, replay, Path(job["out_dir"]), settings, same_params))
    replayed = _kernel_trials_advisory(verdict, replayed, replay)
    named = [p for p in replayed if p.kind in NAMED_BY_REPLAY]
    verdict.problems = named + verdict.problems + [p for p in replayed if p.kind not in NAMED_BY_REPLAY]
    idle = None if verdict.problems else _kernels_idle(reference, replay, Path(job["out_dir"]), settings)
    if idle and settings.allow_host_compute:
        verdict.notes.append(f"host compute allowed: {idle}")
    elif idle:
        verdict.problems.append(Problem(kind="not-launched", message=f"{idle} (allow_host_compute permits it)"))
    verdict.checks += _replay_checks(replay)
    verdict.notes += replay.get("notes", [])
    verdict.correct = not verdict.problems
    verdict.seconds["compare"] = round(verdict.seconds.get("compare", 0) + time.perf_counter() - begin, 3)


def _kernel_trials_advisory(verdict: Verdict, problems: list[Problem], replay: dict) -> list[Problem]:
    """Where the launcher's trials ran and found nothing, what only the kernel's own trials found is a note:
    the kernel's contract changed (a buffer the launcher zeroes now written with plain stores, scratch sized
    otherwise) while the program, which reaches the kernel only through its launcher, sees the same results."""
    launcher_ran = any(r.get("mode") == "launcher" for r in replay.get("runs", []))
    kernel = [p for p in problems if p.message.startswith("replay kernel-")]
    if not launcher_ran or not kernel or len(kernel) != len(problems):
        return problems
    verdict.notes += [
        f"the kernel's own trial differs, but every launcher trial agrees (the kernel's contract changed, not "
        f"what the program sees): {p.message[:300]}"
        for p in kernel[:3]
    ]
    return []


def launcher_changed(ref: dict | None, cand: dict | None) -> bool:
    """Whether the candidate's launcher (the function that launched the kernel) reads otherwise than the
    reference's: then work may have moved between it and the kernel."""
    if not ref or not cand or ref.get("qualname") != cand.get("qualname"):
        return bool(ref or cand)
    return _function_text(ref["file"], ref["qualname"]) != _function_text(cand["file"], cand["qualname"])


def _function_text(file: str, qualname: str) -> str | None:
    import ast

    try:
        text = Path(file).read_text()
        nodes: list = ast.parse(text).body
    except (OSError, SyntaxError, ValueError):
        return None
    found: ast.AST | None = None
    for part in qualname.split("."):
        found = next((n for n in nodes if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == part), None)
        if found is None:
            return None
        nodes = found.body
    return ast.dump(found) if found is not None else None


def noted(verdict: Verdict, problems: list[Problem]) -> list[Problem]:
    """The problems that hold against the candidate; a change the validator accepts but reports
    (NaN handling the reference left to its atomics) goes to the notes, once per buffer."""
    for p in problems:
        said = f"changes NaN handling: {p.message}"
        if p.kind == "nan-handling" and said not in verdict.notes:
            verdict.notes.append(said)
    return [p for p in problems if p.kind != "nan-handling"]


def loaded_outside(cand: dict | None, candidate: Program) -> Problem | None:
    """The candidate run must execute the copy's kernel, not an installed or original one."""
    if cand is None or not cand["kernel"].get("file"):
        return None
    root = Path(candidate.root).resolve()
    file = Path(cand["kernel"]["file"]).resolve()
    if within(file, root):
        return None
    return Problem(
        kind="capture",
        message=(
            f"the candidate run took the kernel from {file}, outside the candidate's copy {root}, so the change was "
            "never run (is the package installed from the original tree, e.g. `pip install -e`, ahead of the copy "
            "on sys.path?)"
        ),
    )


def candidate_job(reference: ReferenceRun, cand: dict, out: Path) -> ReplayJob:
    ref = reference.manifest
    return {
        "kernel": cand["kernel"],
        "launcher": cand["launcher"],
        "launch": cand["launches"][0],
        "reference_params": ref["kernel"]["params"],
        "reference_launch": ref["launches"][0],
        "reference_launcher_args": (ref.get("launcher") or {}).get("args", []),
        "written": ref["written"],
        "plan": reference.replay.get("runs", []),
        "ablation": (reference.replay.get(ABLATION) or {}).get("of"),
        "inputs_dir": str(reference.inputs),
        "out_dir": str(out),
    }


def _replay_problems(
    reference: ReferenceRun, replay: dict, out: Path, settings: ValidationSettings, kernel_expected: bool = True
) -> list[Problem]:
    """Problems of the candidate's replay against the ground truth. Every planned launcher trial
    must have run (or failed), and every kernel trial when the kernel kept its parameters."""
    if replay.get("problem"):
        return [replay["problem"]]
    replaced = sorted(set(replay.get("replaced", [])) - set(reference.replay.get("replaced", [])))
    if replaced:  # (what the program replaces itself, its reference side does too)
        return [Problem(kind="capture", message=replaced_message(replaced))]
    if replay.get("error"):
        return [
            Problem(
                kind="replay-failed",
                message=scrub(f"the replay failed: {replay['error']}\n{replay.get('traceback', '')[-1500:]}"),
            )
        ]
    plan = {r["label"]: r for r in reference.replay.get("runs", [])}
    ran = {r["label"]: r for r in replay["runs"] if r.get("label") in plan}
    failed = {f["label"] for f in replay["failures"]}
    unverified = _nothing_checked(reference, replay, plan, ran, failed)
    if unverified is not None:
        return [unverified]
    problems = _crashes(replay, plan)
    expected = [label for label, r in plan.items() if r["mode"] == "launcher" or kernel_expected]
    missing = [label for label in expected if label not in ran and label not in failed]
    if missing:
        problems.append(
            Problem(
                kind="unverified",
                message=(f"the replay did not run {', '.join(missing[:3])}: " + "; ".join(replay.get("notes", [])[:2])),
            )
        )
    previous: dict[str, dict] = {}  # per mode, the candidate's outputs of its last trial on the recorded tensors
    for label, run in ran.items():
        planned = plan[label]
        r = reference.load(reference.truth / "replay" / f"{label}.pt")
        try:
            c = load_tensors(out / f"{label}.pt")
        except NotRegularFile as exc:
            problems.append(Problem(kind="capture", message=f"the candidate's replay output was tampered with: {exc}"))
            continue
        problems += _trial_problems(reference, run, planned, r, c, previous.get(run["mode"], {}), set(ran), settings)
        regime = planned.get("regime", "captured")
        if planned["shape"] == "recorded" and regime == "captured" and not planned.get("fresh"):
            previous[run["mode"]] = c
    return problems


def _kernels_idle(reference: ReferenceRun, replay: dict, out: Path, settings: ValidationSettings) -> str | None:
    """The ablation: the candidate's launcher on a trial's inputs with its Triton kernels made no-ops. Outputs
    still the reference's there mean the result is computed outside the kernels (torch in the launcher or a
    heuristic, the kernel adding zero): what is wrong, or None. Judged only where the reference's own outputs
    change when its kernels do nothing."""
    plan = {r["label"]: r for r in reference.replay.get("runs", [])}
    mine, theirs = replay.get(ABLATION) or {}, reference.replay.get(ABLATION) or {}
    label = theirs.get("of")
    if not label or label not in plan or mine.get("of") != label or mine.get("error") or theirs.get("error"):
        return None
    truth = reference.load(reference.truth / "replay" / f"{label}.pt")
    theirs_ablated = reference.load(reference.truth / "replay" / f"{ABLATION}.pt")
    if not _trial_problems(
        reference, {"mode": "launcher"}, plan[label], dict(truth), dict(theirs_ablated), {}, set(), settings
    ):
        return None  # the reference's outputs do not change without its kernels on this trial: nothing to learn
    try:
        ablated = load_tensors(out / f"{ABLATION}.pt")
    except (NotRegularFile, FileNotFoundError):
        return None  # (the call raised without its kernels: their work was needed)
    if _trial_problems(reference, {"mode": "launcher"}, plan[label], dict(truth), dict(ablated), {}, set(), settings):
        outside = computed_outside(truth, theirs_ablated, ablated)
        if not outside:
            return None
        return (
            f"with its Triton kernels made no-ops, the candidate's launcher still returns the reference's values "
            f"where the reference's kernels make them ({'; '.join(outside)}) on {label}: that part of the result "
            "is computed outside the kernels (torch in the launcher or in a heuristic)"
        )
    return (
        f"with its Triton kernels made no-ops ({mine.get('launches', 0)} launches skipped), the candidate's launcher "
        f"still returns the reference's outputs on {label}: the result is computed outside the kernels (torch in "
        "the launcher or in a heuristic), and the kernels do no work that counts"
    )


def computed_outside(truth: dict, theirs: dict, mine: dict) -> list[str]:
    """Per output, the nonzero elements the reference's kernels make (its no-op-kernels call changes them)
    that the candidate's no-op-kernels call still returns (within 1e-4 of them): part of the work done outside
    the candidate's kernels. Zeros are left out (a launcher's torch.zeros is no work)."""
    import torch

    found = []
    for name, want in truth.items():
        a, b = theirs.get(name), mine.get(name)
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and isinstance(want, torch.Tensor)):
            continue
        if not (a.shape == b.shape == want.shape) or not want.numel():
            continue
        want, a, b = (t.detach().to("cpu", torch.float64) for t in (want, a, b))
        made = (want != 0) & ~torch.isclose(a, want, rtol=1e-4, atol=0.0, equal_nan=True)
        kept = made & torch.isclose(b, want, rtol=1e-4, atol=0.0)
        if int(kept.sum()):
            found.append(f"{name}: {int(kept.sum())} of the {int(made.sum())} elements")
    return found


def _nothing_checked(reference: ReferenceRun, replay: dict, plan: dict, ran: dict, failed: set[str]) -> Problem | None:
    """Why no replay checked the candidate, where none did: the reference itself could not be replayed (no
    plan), or the candidate ran and failed none of the planned trials (its notes say why)."""
    if plan and not ran and not failed:
        return Problem(
            kind="unverified",
            message=(
                "no replay could check the candidate ("
                + "; ".join(replay.get("notes", [])[:3])
                + "): it is unverified; "
                "keep the kernel's parameters or the launcher's arguments as they are"
            ),
        )
    if not plan:
        why = "; ".join(reference.replay.get("notes", []))[:600]
        return Problem(
            kind="unverified",
            message="the replay could not run for the reference itself, so nothing "
            "beyond the program's own dispatches checked the candidate: "
            f"unverified ({why})",
        )
    return None


def _crashes(replay: dict, plan: dict) -> list[Problem]:
    """The planned trials the candidate raised on, each with its shape, inputs, seed and traceback."""
    return [
        Problem(
            kind="crash",
            message=scrub(
                f"replay {f['label']} ({f['shape']} shape, {f.get('regime', 'captured')} inputs, seed {f['seed']}): "
                "the "
                f"candidate raised {f['error']}\n{f['traceback'][-1200:]}"
            ),
        )
        for f in replay["failures"]
        if f.get("label") in plan
    ]


def _trial_problems(
    reference: ReferenceRun,
    run: dict,
    planned: dict,
    r: dict,
    c: dict,
    previous: dict,
    labels: set[str],
    settings: ValidationSettings,
) -> list[Problem]:
    """One trial the candidate ran (its outputs `c`) against the truth (`r`): what its results alias (`labels`,
    the trials both sides ran), then each output's values; an output that differs but equals the candidate's
    result for the previous trial (`previous`, its outputs on the same tensors) is a stale result."""
    label, regime = planned["label"], planned.get("regime", "captured")
    where = f"replay {label} ({run['mode']}, {planned['shape']} shape, {regime} inputs, seed {planned['seed']})"
    problems = _aliasing(where, planned.get("aliases"), run.get("aliases"), labels)
    problems += _structure(where, r.pop(STRUCTURE, None), c.pop(STRUCTURE, None), UNCOMPARED.get(regime))
    if run.get("races") and not planned.get("races"):
        problems.append(
            Problem(
                kind="race",
                message=f"{where}: {'; '.join(run['races'])} (a read-modify-write without an atomic: the "
                "interpreter runs the programs one after another, a GPU runs them at once and loses updates; "
                "the reference's stores do not conflict)",
            )
        )
    if planned.get("launches") and run.get("launches") == 0 and not settings.allow_host_compute:
        problems.append(
            Problem(
                kind="not-launched",
                message=f"{where}: the candidate launched no Triton kernel where the reference launches "
                f"{planned['launches']}: it computes the result outside its kernels at these inputs (a torch "
                "fallback past a size; allow_host_compute permits it)",
            )
        )
    inputs: dict = {}  # the trial's inputs, read when an UNCHANGED argument meets a changed one
    written = set(reference.manifest.get("written", ()))
    for name, ref_value in r.items():
        if name not in c:
            problems.append(Problem(kind="missing-output", message=f"{where}: the candidate produced no {name}"))
            continue
        if _unchanged(ref_value) and _unchanged(c[name]):
            continue  # both left the same input as it was
        arg = name.removeprefix("arg:")
        if _unchanged(ref_value) and name.startswith("arg:") and (run["mode"] == "launcher" or arg not in written):
            problems.append(_input_changed(where, name))  # an input the reference leaves alone: bit for bit
            continue
        ref_value, c[name] = (_given(reference, label, arg, v, inputs) for v in (ref_value, c[name]))
        if regime == "mixed":  # (which of two inputs' dtypes an output takes is the launcher's choice)
            c[name] = _in_float_dtype_of(ref_value, c[name])
        made = _made_by(planned, name, reference.manifest, _held_nan(reference, label, inputs))
        computed_in = _computed_in(planned, ref_value)
        made["terms"] = made["terms"]._replace(computed_in=computed_in)
        half = regime in OTHER_DTYPES and not computed_in  # (a float64 output judged at its reference's precision)
        found = compare_buffer(
            ref_value,
            c[name],
            name=name,
            dispatch=None,
            tol=_half_tolerances(settings.tolerances) if half else settings.tolerances,
            poisoned=arg in planned["poisoned"],
            **made,
        )
        if found and _stale(previous.get(name), c[name]):
            found = [_stale_result(name)]
        for p in found:
            p.message = f"{where}: {p.message}"
        problems += found
    return problems


# The float16 trial looks for another path taken at a dtype the program never passes (a branch on the dtype, a
# part of the work dropped, an accumulator in float16 across a whole reduction), not for rounding: float16
# inputs summed in another order differ by a few of its units in the last place, float32 results of them too.
HALF_TOLERANCE = (1 / 64, 1 / 64)
OTHER_DTYPES = frozenset({"half", "double", "bfloat16", "mixed"})  # (the trials at a dtype the program never passes)


def _computed_in(planned: dict, value) -> str | None:
    """For a float64 output of the float64 trial: the float type the reference's kernels compute in there, where
    it is float64 or float32 (`KernelLaunches.computes_in`, from their TTIR), which the output is then judged
    at; None (1/64, as every dtype trial) where they round to 16 bits or were not read."""
    if planned.get("regime") != "double" or str(getattr(value, "dtype", "")) != "torch.float64":
        return None
    computes_in = planned.get("computes_in")
    return computes_in if computes_in in ("float64", "float32") else None


def _half_tolerances(tol: Tolerances) -> Tolerances:
    floats = ("float16", "bfloat16", "float32", "float64")
    return tol.model_copy(update={"overrides": {**{d: HALF_TOLERANCE for d in floats}, **tol.overrides}})


# What a trial's structure leaves out (`_structure`): the strides at a layout the program never passes (a launcher
# that copies a transposed input contiguous returns row-major outputs where the reference's `empty_like` follows
# the input), whether an output requires grad where the inputs do (torch math in a launcher carries autograd
# history, a kernel's output none: a fusion of that math into the kernel is no other result), the dtypes at mixed
# dtypes (a bias's gradient in the bias's dtype or in the weight's: `_in_float_dtype_of`)
UNCOMPARED = {
    **dict.fromkeys(LAYOUTS, r", strides \[[^\]]*\]"),
    GRAD: r", requires grad",
    "mixed": r"(?<=tensor\()\w+, ",
}


def _in_float_dtype_of(ref, cand):
    """`cand` in `ref`'s dtype where both are float tensors of two dtypes (compared at the trial's tolerance)."""
    import torch

    floats = all(isinstance(t, torch.Tensor) and t.is_floating_point() for t in (ref, cand))
    return cand.to(ref.dtype) if floats and cand.dtype != ref.dtype else cand


def _structure(where: str, ref: str | None, cand: str | None, ignored: str | None = None) -> list[Problem]:
    """What a launcher call returned and left in its arguments (types, nesting, dtypes, shapes, strides),
    which the program's code after the call relies on as much as on the values (but what `ignored` matches)."""
    if ignored and ref is not None and cand is not None:
        ref, cand = (re.sub(ignored, "", s) for s in (ref, cand))
    if ref is None or ref == cand:
        return []
    return [
        Problem(
            kind="shape",
            message=f"{where}: the candidate {cand or 'returned nothing the replay could describe'}; the reference "
            f"{ref}. A caller indexes, unpacks and passes on what the launcher returns (raw pointers read its "
            "strides): keep the structure, dtypes, shapes and strides",
        )
    ]


def _input_changed(where: str, name: str) -> Problem:
    return Problem(
        kind="mismatch",
        buffer=name,
        message=f"{where}: {name} is an input the reference leaves bit for bit as it was given; the candidate "
        "changed it (used as scratch, or written in place): a caller still holds it",
    )


def _held_nan(reference: ReferenceRun, label: str, inputs: dict) -> bool:
    """Whether a float input of trial `label` held a NaN (read once per trial, only for a kernel with atomics)."""
    if not reference.manifest.get("atomic"):
        return False
    if not inputs:
        inputs.update(reference.load(reference.inputs / f"{label}.pt"))
    return any(getattr(v, "is_floating_point", lambda: False)() and bool(v.isnan().any()) for v in inputs.values())


def _stale(earlier, value) -> bool:
    """Whether `value` is bit for bit the candidate's result for the previous trial's inputs."""
    import torch

    return isinstance(earlier, torch.Tensor) and identical(earlier, value)


def _stale_result(name: str) -> Problem:
    return Problem(
        kind="stale-result",
        buffer=name,
        message=(
            f"{name} is exactly the candidate's result for the previous trial's inputs: it returns a "
            "stale "
            "result (a cache keyed on pointers or shapes?), or its result no longer depends on the "
            "inputs "
            "(e.g. a float accumulator so large that the added values round away)"
        ),
    )


def _unchanged(value) -> bool:
    return isinstance(value, str) and value == UNCHANGED


def _given(reference: ReferenceRun, label: str, arg: str, value, inputs: dict):
    """A replay output as a tensor: an UNCHANGED argument is the trial's input, read (digest checked)
    into `inputs` once per trial."""
    if not _unchanged(value):
        return value
    if not inputs:
        inputs.update(reference.load(reference.inputs / f"{label}.pt"))
    return inputs[arg]


def _aliasing(where: str, reference: dict | None, candidate: dict | None, labels: set[str]) -> list[Problem]:
    """A returned tensor must share memory with nothing the reference's does not: not an argument, not
    another call's result (the aliases of every launcher call, with every other call's, on each side);
    `labels`, the trials both sides ran."""
    if reference is None:
        return []
    problems = []
    for name, ref_shared in reference.items():
        mine = (candidate or {}).get(name) or []
        extra = [a for a in mine if a not in ref_shared and (a.startswith("arg:") or a.rsplit(" of ", 1)[-1] in labels)]
        if not extra:
            continue
        more = f" (and {len(extra) - 4} more)" if len(extra) > 4 else ""
        theirs = "is a new tensor" if not ref_shared else "shares it with " + ", ".join(ref_shared[:4])
        problems.append(
            Problem(
                kind="aliased-output",
                buffer=name,
                message=(
                    f"{where}: {name} shares its storage with {', '.join(extra[:4])}{more}, where the reference's "
                    f"{theirs}: a caller keeping both results sees the later one overwrite the earlier"
                ),
            )
        )
    return problems


def _made_by(planned: dict, name: str, ref: dict, nan: bool) -> dict:
    """How output `name` of a trial was made, as `compare_buffer`'s keywords: a kernel replay names the
    kernel's argument (at the recorded launch); a launcher's result is the kernel arguments whose memory it
    is, at that trial's launch (its shapes and grid), where the reference's replay saw them; a result made
    otherwise (on the host, from the kernel's outputs) carries the order of every kernel output's sums.
    `nan`: whether the trial's inputs held a NaN (a NaN the reference's atomics ignored is a note then)."""
    if planned["mode"] == "kernel":
        return reordering(ref, [name.removeprefix("arg:")], nan=nan)
    made = (planned.get("made_of") or {}).get(name)
    if not made:
        return reordering(ref, None, nan=nan)
    return reordering(ref, made, planned.get("launch"), (planned.get("times") or {}).get(name, 1), nan=nan)


def _replay_checks(replay: dict) -> list[str]:
    runs = replay.get("runs", [])
    if not runs:
        return []
    kinds: dict[str, list[dict]] = {}
    for run in runs:
        kinds.setdefault(run["mode"], []).append(run)
    lines = []
    for mode, items in kinds.items():
        seeds = ", ".join(str(r["seed"]) for r in items)
        shapes = sorted({r["shape"] for r in items})
        regimes = sorted({r.get("regime", "captured") for r in items})
        lines.append(
            f"replay through the {mode}: {len(items)} runs on fresh inputs (seeds {seeds}; shapes: "
            f"{'; '.join(shapes)}; inputs: {', '.join(regimes)})"
            + (", write-only outputs poisoned first" if mode == "kernel" else "")
        )
    return lines
