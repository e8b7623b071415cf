"""The reference side of the replay (`prepare`, once per session): every trial's inputs drawn and saved for the
candidates, the pristine reference run on them and its outputs saved as the ground truth. The launcher's
trials first (fresh draws on the same tensors, inputs beyond the captured range, two unseen shapes, enough
calls at one shape to compare their storage), then the kernel's own (write-only outputs poisoned).

Imports only torch and triton.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..compare import INT_POISON, UNCHANGED
from ..correctness import load_tensors
from .fresh_memory import int_poison
from .jobs import ReplayJob
from .replay_calls import (
    ablate,
    call_launcher,
    kernel_args,
    launch_recorded,
    launcher_fn,
    placed,
    save_tensors,
    sync_device,
)
from .replay_forms import GRAD, forms, laid_out, plainly, same_values
from .replay_inputs import (
    ReplayUnsupported,
    extreme_shapes,
    fill_fresh,
    fill_gaps,
    float_tensor,
    interpreted,
    least_stretch,
    make_inputs,
    ranked_shape,
    square_shape,
    stretched_shape,
    stretches,
    tensor_bytes,
    unseen_budget,
    unseen_shapes,
    variants,
)
from .replay_outputs import ABLATION, ALIAS_CALLS, KernelLaunches, aliases, call_record, outputs_of
from .store_bounds import take_races

# inputs beyond the captured range, at the recorded shape; then values within it that real data has and uniform
# draws never do: exact zeros (activations after a ReLU, padding), the range's very ends (saturated or clamped
# data) and few distinct values (ids that repeat); then zeros with NaN and infinities among them (0 x Inf)
REGIMES = ("negative", "wide", "nonfinite", "sparse", "edges", "repeated", "sparse-nonfinite")
BEYOND = frozenset({"negative", "wide", "nonfinite", "sparse-nonfinite"})  # on a GPU never for addresses


def prepare(job: ReplayJob, module, summary: dict) -> None:
    """Inputs for every trial (saved for candidates) and the reference's outputs on them (the truth).

    The launcher's trials come first: where they ran (fresh inputs on refilled tensors, inputs
    beyond the captured range, unseen shapes), the kernel's own trials add only what the launcher
    cannot show, one trial with its write-only outputs poisoned. Every trial costs a call on each
    side, and under the interpreter a call of a large kernel takes seconds."""
    inputs, truth = Path(job["inputs_dir"]), Path(job["out_dir"])
    kernel = getattr(module, job["kernel"]["name"], None)
    fn = launcher_fn(job, "_intelliperf_side", summary)
    if fn is not None:
        try:
            _prepare_launcher(job, fn, inputs, truth, summary, compiled_sizes(job))
        except ReplayUnsupported as exc:
            summary["notes"].append(f"launcher replay not possible: {exc}")
    covered = any(r["mode"] == "launcher" and r["regime"] != "captured" for r in summary["runs"])
    try:
        _prepare_kernel(job, kernel, inputs, truth, summary, poisoned_only=covered)
    except ReplayUnsupported as exc:
        summary["notes"].append(f"kernel replay not possible: {exc}")


def compiled_sizes(job: ReplayJob) -> dict[str, int]:
    """The integers the kernel was compiled for at the recorded launch (its constexpr arguments, by name): a
    tensor dimension equal to one may be built into the kernel (a record's 8 fields strided by FIELDS=8, a
    head dimension one HEAD_DIM tile covers); a trial that changes it counts only where the reference's
    launcher passes another value then (`KernelLaunches.kept`), or it would compare garbage with garbage."""
    constexprs = set(job["kernel"].get("constexprs", ()))
    return {
        d["name"]: d["value"]
        for d in job["launch"]["args"]
        if d["name"] in constexprs and d["kind"] == "scalar" and type(d["value"]) is int and d["value"] >= 2
    }


def _prepare_kernel(job, kernel, inputs: Path, truth: Path, summary: dict, poisoned_only: bool = False) -> None:
    import torch

    launch = job["launch"]
    written, read = set(job["written"]), set(job["read"])
    descs = [d for d in launch["args"] if d["kind"] == "tensor"]
    kernel_args(launch, {})  # raises ReplayUnsupported for arguments it cannot draw
    trials = [("captured", t) for t in range(job["trials"])] + [(r, job["trials"] + i) for i, r in enumerate(REGIMES)]
    if poisoned_only:
        trials = trials[:1]
    for regime, trial in trials:
        seed = job["seed"] + 100 + trial
        generator = torch.Generator().manual_seed(seed)
        tensors = make_inputs(descs)
        poisoned = []
        for d in descs:
            if "alias_of" in d:
                continue
            t = tensors[d["name"]]
            if d["name"] in written and d["name"] not in read:
                t.fill_(float("nan") if t.dtype.is_floating_point else INT_POISON)
                poisoned.append(d["name"])
            elif d["name"] in job.get("locks", ()):
                t.fill_(d.get("min") or 0)  # released, as the program's zero-filled locks start
            else:
                fill_fresh(t, d, generator, regime if d["name"] not in job.get("indexes", ()) else "captured")
        label = f"kernel-{trial if regime == 'captured' else regime}"
        save_tensors(inputs / f"{label}.pt", {n: t.detach().to("cpu", copy=True) for n, t in tensors.items()})
        try:
            out = launch_recorded(kernel, launch, tensors, written)
        except Exception as exc:
            if regime == "captured":
                raise
            summary["notes"].append(
                f"{label}: the reference rejected {regime} inputs ({type(exc).__name__}); not compared"
            )
            continue
        save_tensors(truth / f"{label}.pt", out)
        _ran(
            summary,
            truth,
            {
                "label": label,
                "mode": "kernel",
                "seed": seed,
                "shape": "recorded",
                "regime": regime,
                "poisoned": poisoned,
            },
        )


def _prepare_launcher(job, fn, inputs: Path, truth: Path, summary: dict, compiled: dict[str, int]) -> None:
    """The launcher's trials: fresh draws on the same tensors, inputs beyond the captured range, the unseen
    shapes; every call's returned storage then compared with every other's. At least ALIAS_CALLS of those
    calls, on distinct inputs, are at one shape (a ring of output buffers kept per shape shows there): the
    recorded shape has them with the default 3 trials; where the reference rejected some, or fewer trials
    were asked for, fresh draws make up the count at the shape where that costs least."""
    descs = job["launcher"]["args"]
    values = make_inputs(descs)
    calls: list[dict] = []
    trial = _Trial(job, fn, inputs, truth, summary, calls, compiled)
    # per shape replayed: how to draw its inputs, its tensors' bytes and the calls made at it
    shapes_run = {"recorded": {"descs": descs, "shapes": None, "bytes": tensor_bytes(descs), "calls": 0}}
    for t in range(job["trials"]):  # the same tensors every trial, refilled: pointer caches go stale
        seed = job["seed"] + t
        _refill(values, descs, seed)
        trial.run(f"launcher-{t}", descs, values, {"seed": seed, "shape": "recorded", "regime": "captured"}, True)
        shapes_run["recorded"]["calls"] += 1
    if job.get("program_inputs"):  # the user's own data, whatever the candidate changes (ids, zeros, padding)
        given = placed(load_tensors(Path(job["program_inputs"])), descs)
        info = {"seed": 0, "shape": "recorded", "regime": "program"}
        shapes_run["recorded"]["calls"] += trial.run("launcher-program", descs, given, info)
    integers = any(d["kind"] == "tensor" and not d["dtype"].startswith(("float", "bfloat")) for d in descs)
    for i, regime in enumerate(r for r in REGIMES if r != "repeated" or integers):
        seed = job["seed"] + 500 + i
        fresh = make_inputs(descs)
        _refill(fresh, descs, seed, lambda d, r=regime: "captured" if r in BEYOND and _addresses(d, job) else r)
        info = {"seed": seed, "shape": "recorded", "regime": regime}
        shapes_run["recorded"]["calls"] += trial.run(f"launcher-{regime}", descs, fresh, info)
    budget = unseen_budget(descs)
    for grow in (False, True):
        make = lambda held, g=grow: unseen_shapes(descs, g, held, max_bytes=budget)  # noqa: E731
        shapes, _ = make(trial.held)
        if not _changed(shapes, descs):
            summary["notes"].append(
                "no unseen shape tried: every dimension of the launcher's tensors is 1, indexed by an integer input, "
                "or a size the kernel is compiled for (a constexpr the launcher passes as recorded)"
            )
            break
        twice = unseen_shapes(descs, True, trial.held)[0]
        if grow and twice != shapes:
            summary["notes"].append(
                f"the larger unseen shape grows the sizes by less than twice: twice ({_changed(twice, descs)}) "
                f"would take {tensor_bytes(descs, twice) / 2**20:,.0f} MiB of tensors, more than the "
                f"{budget / 2**20:,.0f} MiB a replay's trial may take here"
            )
        name = "larger" if grow else "smaller"
        _unseen_trial(trial, name, descs, make, job["seed"] + (1001 if grow else 1000), shapes_run)
    _extreme_trials(job, trial, descs, shapes_run)
    _variant_trials(job, trial, descs, shapes_run)
    shape, where = min(
        ((k, v) for k, v in shapes_run.items() if v["calls"]),
        key=lambda kv: (max(0, ALIAS_CALLS - kv[1]["calls"]) * kv[1]["bytes"], kv[1]["bytes"]),
    )
    for k in range(max(0, ALIAS_CALLS - where["calls"])):
        seed = job["seed"] + 2000 + k
        fresh = make_inputs(where["descs"], where["shapes"], guarded=where["shapes"] is not None)
        _refill(fresh, where["descs"], seed)
        info = {"seed": seed, "shape": shape, "regime": "captured", "fresh": True, "args": where["descs"]}
        trial.run(f"launcher-again-{k}", where["descs"], fresh, info)
    _square_and_rank(job, trial, descs)
    _form_trials(job, trial, descs, truth)
    found = aliases(calls)
    for run in summary["runs"]:
        if run["mode"] == "launcher" and run["label"] in found:
            run["aliases"] = found[run["label"]]
    # the reference with its kernels made no-ops, on the first trial: where its own outputs do not change, the
    # ablation says nothing of a candidate's (the kernels write nothing the launcher returns there)
    summary[ABLATION] = ablate(
        fn, descs, load_tensors(inputs / "launcher-0.pt"), truth / f"{ABLATION}.pt", "launcher-0"
    )
    _ran(summary, truth, None)


def _extreme_trials(job: ReplayJob, trial: _Trial, descs: list[dict], shapes_run: dict) -> None:
    """The launcher at the extreme shapes (`replay_inputs.extreme_shapes`), then each large size stretched
    (`replay_inputs.stretches`): under the interpreter only as far as the reference runs in STRETCH_SECONDS."""
    seed = job["seed"] + 1100

    def extreme(name: str):
        return lambda held: next(((s, c) for k, s, c in extreme_shapes(descs, held) if k == name), None)

    for i, (name, _, _) in enumerate(extreme_shapes(descs, trial.held)):
        _unseen_trial(trial, name, descs, extreme(name), seed + i, shapes_run)
    _aligned_strided(trial, shapes_run, seed + 40)
    for i, (d, far) in enumerate(stretches(descs, trial.held, unseen_budget(descs))):
        if interpreted(descs):
            far = _affordable(trial, descs, d, far, seed + 50 + i)
        make = lambda held, d=d, far=far: None if d in held else stretched_shape(descs, held, d, far)  # noqa: E731
        _unseen_trial(trial, f"stretched-{d}", descs, make, seed + 60 + i, shapes_run)


def _square_and_rank(job: ReplayJob, trial: _Trial, descs: list[dict]) -> None:
    """The launcher at a square shape (`replay_inputs.square_shape`) and at one more leading dimension
    (`replay_inputs.ranked_shape`), after the other trials (their seeds and order kept)."""
    seed = job["seed"] + 1180
    for i, (name, make) in enumerate((("square", square_shape), ("rank", ranked_shape))):
        _unseen_trial(trial, name, descs, lambda held, make=make: make(descs, held), seed + i, {})


def _form_trials(job: ReplayJob, trial: _Trial, descs: list[dict], truth: Path) -> None:
    """At the recorded shape, each of `replay_forms.forms` (layouts, integer widths, mixed dtypes, grad): fresh
    draws laid out as it says; but for grad, compared only where the reference's outputs are those it gives on the
    same values as the program passes them (one more call of the reference each)."""
    first = load_tensors(truth / "launcher-0.pt")
    left_alone = {n.removeprefix("arg:") for n, v in first.items() if isinstance(v, str) and v == UNCHANGED}
    for i, (name, moved) in enumerate(forms(descs, left_alone).items()):
        seed = job["seed"] + 1300 + i
        fresh = make_inputs(moved)
        _refill(fresh, moved, seed)
        given = laid_out(fresh, moved, descs)
        try:
            like = None if name == GRAD else _plain_call(trial.fn, given, descs)
        except Exception as exc:  # (the program's own forms: a reference that raises here says nothing)
            if device_fault(exc):  # (the device's context is lost: no later trial could run)
                raise
            trial.summary["notes"].append(f"launcher-{name}: the reference raised {type(exc).__name__}; not compared")
            continue
        info = {"seed": seed, "shape": "recorded", "regime": name, "args": moved}
        trial.run(f"launcher-{name}", moved, given, info, like=like)


def _plain_call(fn, given: dict, descs: list[dict]) -> dict:
    """The reference's outputs on `given`'s values as the program passes them (`replay_forms.plainly`)."""
    plain = plainly(given, descs)
    result = call_launcher(fn, descs, plain)
    sync_device()
    return outputs_of(result, plain, _host(plain))


def _aligned_strided(trial: _Trial, shapes_run: dict, seed: int) -> None:
    """The aligned shape again with every float tensor a strided view: a path for sizes that divide the
    block (no masks) may also assume unit strides, which neither trial alone shows."""
    shape, where = next(((k, v) for k, v in shapes_run.items() if k.startswith("unseen, aligned")), (None, None))
    if where is None or not any(float_tensor(d) for d in where["descs"]):
        return
    new_descs = [{**d, "layout": "strided"} if float_tensor(d) else d for d in where["descs"]]
    fresh = make_inputs(new_descs, where["shapes"])
    _refill(fresh, new_descs, seed)
    for d in new_descs:
        if d.get("layout") == "strided" and "alias_of" not in d:
            fill_gaps(fresh[d["name"]])
    info = {"seed": seed, "shape": shape, "regime": "strided", "args": new_descs}
    trial.run("launcher-aligned-strided", new_descs, fresh, info)


# Under the interpreter, what the reference's call may take at a stretched shape: the interpreter runs every
# program, and every iteration of its loops, in Python (a row of 500K in tiles, or 500K rows, is a minute), and
# every candidate runs the trial again.
STRETCH_SECONDS = 1.0


def _affordable(trial: _Trial, descs: list[dict], d: int, far: int, seed: int) -> int:
    """How far size `d` is stretched under the interpreter: the reference timed at the least stretch, the
    reach scaled (time grows with the size stretched: programs, or iterations of a program's loop) to
    STRETCH_SECONDS, between the least stretch and `far`."""
    near = least_stretch(d)
    if near >= far:
        return far
    new_descs, fresh = _unseen_inputs(descs, *stretched_shape(descs, trial.held, d, near), seed)
    start = time.perf_counter()
    try:
        call_launcher(trial.fn, new_descs, fresh)
    except Exception:  # the trial at the full stretch says what the reference rejects
        return far
    took = time.perf_counter() - start
    reach = int(near * STRETCH_SECONDS / max(took, 1e-3))
    return min(far, max(near, reach | 1))


def _unseen_trial(trial: _Trial, name: str, descs: list[dict], make, seed: int, shapes_run: dict) -> None:
    """One trial at an unseen shape, `make(held)` its shapes and the integers that follow the sizes (None: no
    such shape): fresh guarded inputs; where the reference turns out to be compiled for a size it changed, once
    more with that size held. A shape the reference took is counted in `shapes_run`."""
    for _ in range(2):
        held = set(trial.held)
        made = make(held)
        if made is None or not _changed(made[0], descs):
            return
        shapes, scalars = made
        new_descs, fresh = _unseen_inputs(descs, shapes, scalars, seed)
        shape = f"unseen, {name} ({_changed(shapes, descs)})"
        info = {"seed": seed, "shape": shape, "regime": "captured", "args": new_descs}
        if trial.run(f"launcher-{name}", new_descs, fresh, info):
            shapes_run[shape] = {"descs": new_descs, "shapes": shapes, "bytes": tensor_bytes(descs, shapes), "calls": 1}
            return
        if trial.held == held:
            return


def _unseen_inputs(descs: list[dict], shapes: dict, scalars: dict, seed: int) -> tuple[list[dict], dict]:
    """The descriptions at an unseen shape (the integers that follow the sizes) and fresh guarded inputs for them."""
    new_descs = [{**d, "value": scalars.get(d["name"], d.get("value"))} for d in descs]
    fresh = make_inputs(new_descs, shapes, guarded=True)
    _refill(fresh, new_descs, seed)
    return new_descs, fresh


def _variant_trials(job: ReplayJob, trial: _Trial, descs: list[dict], shapes_run: dict) -> None:
    """At the recorded shape, each of `replay_inputs.variants` that changes something: its arguments as described, its
    values drawn as the variant says (`values_at`); the strided views' gaps and the clamped values set after."""
    moved = variants(descs, trial.fn, interpreted(descs), set(trial.compiled.values()))
    # values a dtype is for: float64 beyond the captured range, bfloat16 past float16's; a block moved to a power of
    # two meets values beyond the range too (a path for such blocks that drops a range test) (not where addresses)
    values_at = {"double": "wide", "bfloat16": "scaled", "powers": "wide"}
    # many segments come with many rows: the hundredfold counts at the larger unseen shape, where it was run
    larger = next((v for k, v in shapes_run.items() if k.startswith("unseen, larger")), None)
    bounds = [d["value"] for d in descs if d["kind"] == "scalar" and type(d.get("value")) is float]
    for i, (name, new_descs) in enumerate(moved.items()):
        moves = bool(bounds) if name == "at-arguments" else new_descs != descs  # (its values move, not its args)
        if not moves:
            continue
        seed = job["seed"] + 1200 + i
        if name == "hundredfold" and larger is not None:
            _hundredfold_larger(trial, descs, new_descs, larger, seed)
            continue
        fresh = make_inputs(new_descs)
        at = values_at.get(name, "captured")
        _refill(fresh, new_descs, seed, lambda d, a=at: "captured" if not float_tensor(d) or _addresses(d, job) else a)
        for d in new_descs:
            if d.get("layout") == "strided" and "alias_of" not in d:
                fill_gaps(fresh[d["name"]])
            elif name == "at-arguments" and float_tensor(d) and "alias_of" not in d:
                if interpreted(descs) or not _indexes(d, job):  # (on a GPU, values that become addresses stay)
                    _at_values(fresh[d["name"]], bounds, seed)
        info = {"seed": seed, "shape": "recorded", "regime": name, "args": new_descs}
        shapes_run["recorded"]["calls"] += trial.run(f"launcher-{name}", new_descs, fresh, info)


def _hundredfold_larger(trial: _Trial, descs: list[dict], moved: list[dict], larger: dict, seed: int) -> None:
    """The hundredfold counts (`moved`) at the larger unseen shape, the integers that follow the sizes as there."""
    at = {d["name"]: d["value"] for d in larger["descs"] if d["kind"] == "scalar"}
    new_descs = [
        {**m, "value": at[m["name"]]} if m["kind"] == "scalar" and m["value"] == d["value"] else m
        for d, m in zip(descs, moved, strict=True)
    ]
    fresh = make_inputs(new_descs, larger["shapes"], guarded=True)
    _refill(fresh, new_descs, seed)
    shape = f"unseen, larger ({_changed(larger['shapes'], descs)})"
    info = {"seed": seed, "shape": shape, "regime": "hundredfold", "args": new_descs}
    trial.run("launcher-hundredfold", new_descs, fresh, info)


def _at_values(tensor, values: list[float], seed: int) -> None:
    """Half of `tensor`'s elements, drawn from `seed`, set to one of `values` each."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    flat = tensor.view(-1) if tensor.is_contiguous() else None
    if flat is None or not flat.numel():
        return
    picks = torch.rand(flat.numel(), generator=generator) < 0.5
    chosen = torch.tensor(values, dtype=torch.float64)[torch.randint(len(values), (flat.numel(),), generator=generator)]
    flat[picks.to(flat.device)] = chosen[picks].to(flat.dtype).to(flat.device)


def _changed(shapes: dict, descs: list[dict]) -> str:
    """The shapes that differ from the recorded ones, `name=[...]`."""
    return ", ".join(f"{n}={s}" for n, s in shapes.items() if s != next(d["shape"] for d in descs if d["name"] == n))


class _Trial:
    """One launcher trial on the reference's side: its inputs saved, the call (the kernel's launches watched),
    its outputs saved as the truth and the call kept for the aliasing comparison."""

    def __init__(
        self, job: ReplayJob, fn, inputs: Path, truth: Path, summary: dict, calls: list[dict], compiled: dict[str, int]
    ):
        self.job, self.fn, self.inputs, self.truth, self.summary, self.calls = job, fn, inputs, truth, summary, calls
        self.compiled = compiled
        self.held: set[int] = set()  # sizes a trial changed that the reference's launcher did not follow

    def run(
        self, label: str, descs: list[dict], values: dict, info: dict, must: bool = False, like: dict | None = None
    ) -> bool:
        """Whether the reference took the trial (`must`: one at the captured shape and range, which it has to;
        `like`: its outputs on the same values as the program passes them, which these must equal)."""
        if label in self.job.get("skip", ()):
            self.summary["notes"].append(
                f"{label}: these inputs made the reference fault on the device (the trial ended its replay "
                "worker, and a fresh one went on without it); not compared"
            )
            return False
        given = _host(values)
        save_tensors(self.inputs / f"{label}.pt", given)
        start = time.perf_counter()
        take_races()  # (only this call's)
        try:
            with KernelLaunches(self.job["kernel"]["name"], precision=info["regime"] == "double") as launches:
                result = call_launcher(self.fn, descs, values)
                sync_device()
        except Exception as exc:
            if must:
                raise
            if device_fault(exc):  # the device's context is lost: say which trial, and end this worker
                self.summary["faulted"] = label
                _ran(self.summary, self.truth, None)
                raise
            self.summary["notes"].append(
                f"{label}: the reference itself rejected these inputs "
                f"({type(exc).__name__}: {str(exc)[:200]}); not compared"
            )
            return False
        outputs = outputs_of(result, values, given)
        if info["regime"] == "strided" and nan_from_nowhere(outputs, given):
            self.summary["notes"].append(
                f"{label}: the reference does not take strided views (NaN from between their elements reached its "
                "outputs); not compared"
            )
            return False
        if like is not None and not same_values(outputs, like):
            self.summary["notes"].append(
                f"{label}: the reference's outputs differ from those it gives on the same values laid out "
                f"contiguously at the program's dtypes (it does not take {info['regime']} inputs); not compared"
            )
            return False
        if info["shape"].startswith("unseen") and self._not_compared(label, launches, values, outputs, given):
            return False
        self.calls.append(call_record(label, result, values))
        save_tensors(self.truth / f"{label}.pt", outputs)
        run = {"label": label, "mode": "launcher", "poisoned": [], **info, **launches.made_of(result, values)}
        if nan_from_nowhere(outputs, given):  # (memory the reference never wrote: the candidate's starts as NaN too)
            run["unwritten"] = True
        run["launches"] = launches.any_kernel
        if launches.precision is not None:  # (float64 outputs are judged at the precision the kernels have)
            run["computes_in"] = launches.computes_in
        run["seconds"] = round(time.perf_counter() - start, 3)
        _ran(self.summary, self.truth, run)
        return True

    def _not_compared(self, label: str, launches: KernelLaunches, values: dict, outputs: dict, given: dict) -> bool:
        """Whether an unseen shape says nothing of the reference: it read past its inputs (NaN from the guard
        around them reached its outputs), or its kernel is built for a size the shape changed (a constexpr equal
        to it passed as recorded: a size grown, where it reads part of the new one, or any where it read past).
        Such a size is held from then on, and the trial tried again (`_unseen_trial`)."""
        launcher = self.job["launcher"]
        assert launcher is not None  # (a launcher trial)
        recorded = launcher["args"]
        grown = launches.kept(self.compiled, _sizes_changed(recorded, values, grown_only=True))
        past = nan_from_nowhere(outputs, given)
        kept = launches.kept(self.compiled, _sizes_changed(recorded, values)) if past else grown
        if kept:
            self.held |= {self.compiled[name] for name in kept}
            self.summary["notes"].append(
                f"{label}: the reference's kernel is compiled for a size this shape changes ({', '.join(kept)} "
                "passed as recorded); not compared at it, tried again with the size held"
            )
        elif past:
            self.summary["notes"].append(
                f"{label}: the reference read past its inputs at this shape (NaN from the guard around them reached "
                "its outputs: its sizes only hold together as recorded); not compared"
            )
        return bool(kept) or past


def _sizes_changed(recorded: list[dict], values: dict, grown_only: bool = False) -> set[int]:
    """The recorded sizes a trial's tensors (`values`, by name) changed (`grown_only`: made larger); at another
    rank, the sizes no longer there (none grown)."""
    changed = set()
    for d in recorded:
        shape = getattr(values.get(d["name"]), "shape", None)
        if d["kind"] != "tensor" or shape is None:
            continue
        if len(shape) != len(d["shape"]):
            changed |= set() if grown_only else set(d["shape"]) - set(shape)
            continue
        changed |= {a for a, b in zip(d["shape"], shape, strict=True) if b > a or (b != a and not grown_only)}
    return changed


def _refill(values: dict, descs: list[dict], seed: int, regime=lambda desc: "captured") -> None:
    """Each distinct tensor in `values` drawn afresh from `seed`, in the regime `regime(desc)` names
    (a tensor shared by two arguments is drawn once)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    drawn = set()
    for d in descs:
        if d["kind"] == "tensor" and id(values[d["name"]]) not in drawn:
            drawn.add(id(values[d["name"]]))
            fill_fresh(values[d["name"]], d, generator, regime(d))


def _indexes(desc: dict, job: ReplayJob) -> bool:
    """A launcher argument that is (by dtype and shape) a kernel argument whose values become
    addresses: values outside its captured range would write out of bounds, in the reference too."""
    index_args = [a for a in job["launch"]["args"] if a["name"] in job.get("indexes", ()) and a["kind"] == "tensor"]
    return any(a["dtype"] == desc["dtype"] and a["shape"] == desc["shape"] for a in index_args)


def _addresses(desc: dict, job: ReplayJob) -> bool:
    """Values that become addresses and must stay within the captured range: on a GPU only, where one out of
    bounds writes memory unseen; the interpreter refuses such an access (the reference rejects the trial then,
    and it is not compared), so a NaN or a negative value there is a trial too."""
    return not interpreted(job["launcher"]["args"] if job["launcher"] else []) and _indexes(desc, job)


def device_fault(exc: BaseException) -> bool:
    """An error after which the process's GPU context is unusable (an illegal address: every later call fails
    too), as torch words it for CUDA and HIP."""
    text = f"{type(exc).__name__}: {exc}"
    return "AcceleratorError" in text or "CUDA error" in text or "HIP error" in text


def nan_from_nowhere(outputs: dict, given: dict) -> bool:
    """NaN (or an integer dtype's sentinel: fresh memory left unwritten) in an output of a trial whose inputs
    held none, nor an infinity (0 x Inf and Inf - Inf make NaN)."""
    import torch

    def nan(t, sources: bool = False) -> bool:
        if not isinstance(t, torch.Tensor):
            return False
        if t.is_floating_point():
            return bool(torch.isnan(t).any()) or (sources and bool(torch.isinf(t).any()))
        poison = int_poison(t.dtype)
        return poison is not None and bool((t == poison).any())

    return not any(nan(t, sources=True) for t in given.values()) and any(nan(t) for t in outputs.values())


def _ran(summary: dict, out: Path, run: dict | None) -> None:
    """Record a finished trial at once: if a later one brings the process down (an out-of-bounds
    write on an unseen shape), the trials before it still count. (None: the summary as it is now.)"""
    if run is not None:
        races = take_races()  # (plain stores of two programs at one address, under the interpreter)
        summary["runs"].append({**run, "races": races} if races else run)
    (out / "replay.json").write_text(json.dumps(summary))


def _host(values: dict) -> dict:
    import torch

    return {
        n: (v.detach().to("cpu", copy=True) if isinstance(v, torch.Tensor) else v)
        for n, v in values.items()
        if isinstance(v, (torch.Tensor, int, float, bool)) or v is None
    }
