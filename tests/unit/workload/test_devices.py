"""--devices: a round's candidates validated in parallel, one worker per GPU, each pinned to its GPU.

On CPU the kernels run in the interpreter, so CUDA_VISIBLE_DEVICES changes nothing for them; what
is checked for real is the scheduling: the candidates' program runs overlap in time and each
sees the GPU of its worker (the probe logs both from inside the candidate's process)."""

from __future__ import annotations

import json
import os
import shutil
import sys

import pytest
from conftest import EXAMPLES, SMALL, run_cli

from intelliperf.errors import UsageError
from intelliperf.workload.devices import parse_devices, pinned_env

PROBE = """import os, runpy, sys, time
start = time.time()
runpy.run_path("contended_sum.py", run_name="__main__")
time.sleep(2)  # long enough that two candidates' runs must overlap if they run in parallel
with open(os.environ["PROBE_LOG"], "a") as log:
    log.write(f"{os.environ.get('CUDA_VISIBLE_DEVICES')} {start} {time.time()}\\n")
"""


def test_devices_are_parsed_and_mapped_through_the_visible_ones(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert parse_devices(None) == [] and parse_devices("0,1") == ["0", "1"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5")
    assert parse_devices("1,0") == ["5", "4"]
    assert pinned_env("5") == {"CUDA_VISIBLE_DEVICES": "5", "HIP_VISIBLE_DEVICES": "5"} and pinned_env(None) == {}
    for spec, message in (("2", "shows only 2 GPU"), ("0,0", "twice"), ("gpu1", "comma-separated list")):
        with pytest.raises(UsageError, match=message):
            parse_devices(spec)


@pytest.mark.slow
def test_devices_all_without_a_gpu_is_a_clear_error(tmp_path):
    done = run_cli(
        "optimize",
        "--devices",
        "all",
        "--device",
        "cpu",
        "--",
        sys.executable,
        str(EXAMPLES / "contended_sum.py"),
        *SMALL,
        cwd=tmp_path,
    )
    assert done.returncode == 2 and "--devices all found no GPU" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_a_round_runs_on_every_device_in_parallel(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(EXAMPLES, project, ignore=shutil.ignore_patterns("__pycache__"))
    (project / "probe.py").write_text(PROBE)
    log, out = tmp_path / "probe.log", tmp_path / "out"
    env = {**os.environ, "PROBE_LOG": str(log)}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    # The probe writes outside its copy, which the sandbox forbids: this test is about the devices.
    done = run_cli(
        "optimize",
        "--device",
        "cpu",
        "--rewriter",
        "search",
        "--devices",
        "0,1",
        "--max-attempts",
        "2",
        "--no-sandbox",
        "--sandbox-env",
        "PROBE_LOG",
        "--out-dir",
        str(out),
        "--",
        sys.executable,
        "probe.py",
        *SMALL,
        cwd=project,
        env=env,
    )
    assert done.returncode == 6, done.stderr[-3000:]  # no win: see below
    opt = json.loads((out / "report.json").read_text())["optimization"]
    assert opt["devices"] == ["0", "1"] and opt["budget"]["candidates"] == 2 and opt["sandbox"].startswith("off")
    attempts = opt["attempts"]
    assert [a["number"] for a in attempts] == [1, 2]
    assert {a["device"] for a in attempts} == {"0", "1"}
    assert [a["title"] for a in attempts] == ["BLOCK=2048 (was 1024)", "BLOCK=512 (was 1024)"]
    # A block size alone moves no atomic update off its address: neither is a fix of atomic contention.
    assert opt["status"] == "no-win" and opt["formula"] == "atomicContention"
    assert all("atomic_updates_per_address did not improve: 65536 -> 65536" in a["reasons"] for a in attempts)
    runs = [line.split() for line in log.read_text().splitlines()]
    candidates = [(dev, float(a), float(b)) for dev, a, b in runs if dev != "None"]
    assert sorted(dev for dev, _, _ in candidates) == ["0", "1"]
    (_, a0, a1), (_, b0, b1) = candidates
    assert a0 < b1 and b0 < a1, f"the candidates' runs did not overlap: {candidates}"
    assert sum(dev == "None" for dev, _, _ in runs) >= 2  # profile and reference: the caller's own GPUs
