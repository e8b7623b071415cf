"""`--devices`: the GPUs candidate evaluation may spread over, one worker per GPU.

Each value is a GPU as the user's program would number it (an ordinal among the visible ones);
it is handed to that worker's processes as CUDA_VISIBLE_DEVICES (and HIP_VISIBLE_DEVICES, for
AMD GPUs), mapped through the caller's own CUDA_VISIBLE_DEVICES when set,
so `--devices 0,1` under CUDA_VISIBLE_DEVICES=4,5 means GPUs 4 and 5.
"""

from __future__ import annotations

import os
import queue
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TypeVar

from intelliperf.errors import UsageError

Job = TypeVar("Job")
Result = TypeVar("Result")

VISIBLE = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")


def parse_devices(spec: str | None) -> list[str]:
    """[] for no spec (every process sees what the caller sees), else the physical ids to pin to."""
    if spec is None or spec == "":
        return []
    if spec == "all":
        count = _visible_count()
        if count == 0:
            raise UsageError(
                "--devices all found no GPU",
                hint="On a machine without a GPU, leave --devices out; otherwise name the GPUs, e.g. --devices 0,1.",
            )
        ordinals = list(range(count))
    elif re.fullmatch(r"\d+(,\d+)*", spec):
        ordinals = [int(x) for x in spec.split(",")]
    else:
        raise UsageError(f"--devices must be `all` or a comma-separated list of GPU numbers such as 0,1; got {spec!r}")
    if len(set(ordinals)) != len(ordinals):
        raise UsageError(f"--devices names a GPU twice: {spec!r}")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None or visible.strip() == "":
        return [str(i) for i in ordinals]
    ids = [v.strip() for v in visible.split(",") if v.strip()]
    missing = [i for i in ordinals if i >= len(ids)]
    if missing:
        raise UsageError(
            f"--devices {spec}: CUDA_VISIBLE_DEVICES={visible} shows only {len(ids)} GPU(s), numbered 0-{len(ids) - 1}"
        )
    return [ids[i] for i in ordinals]


def pinned_env(device: str | None) -> dict[str, str]:
    """The variables that give a worker's processes exactly one GPU."""
    return {name: device for name in VISIBLE} if device is not None else {}


def spread_over(
    devices: Sequence[str | None],
    jobs: Sequence[Job],
    run: Callable[[Job, str | None], Result],
    done: Callable[[Job, Result], None],
    interrupted: Callable[[], None] | None = None,
) -> None:
    """Run every job on a free device, one job per device at a time, in worker threads; `done`
    is called in the caller's thread as each job finishes (so it may write reports unlocked). On an
    exception there (Ctrl-C included) the jobs not yet started are cancelled and `interrupted` stops
    the running ones (the pool waits for them before the exception goes on)."""
    free: queue.Queue[str | None] = queue.Queue()
    for device in devices:
        free.put(device)

    def work(job: Job) -> Result:
        device = free.get()
        try:
            return run(job, device)
        finally:
            free.put(device)

    with ThreadPoolExecutor(max_workers=len(devices), thread_name_prefix="intelliperf-device") as pool:
        futures = {pool.submit(work, job): job for job in jobs}
        try:
            for future in as_completed(futures):
                done(futures[future], future.result())
        except BaseException:  # Ctrl-C, or `done` failed: the jobs not started yet never start
            for future in futures:
                future.cancel()
            if interrupted is not None:
                interrupted()
            raise


def _visible_count() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0
