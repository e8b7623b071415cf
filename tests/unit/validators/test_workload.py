"""The verdict is about the profiled workload: the program's environment reaches the sandbox minus
secrets, and a validation run that launches the kernel otherwise than the profile did stops the run."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import PROGRAMS, run_cli

from intelliperf import redact
from intelliperf.validators.workload import check_same, compared, signature_key
from intelliperf.workload import sandbox as sandboxing

SIZED = PROGRAMS / "configured" / "env_sized_sum.py"


def _optimize(tmp_path: Path, env: dict) -> tuple:
    out = tmp_path / "out"
    done = run_cli(
        "optimize", "-f", "atomicContention", "--device", "cpu", "--rewriter", "recipes", "--max-attempts", "1",
        "--out-dir", str(out), "--", sys.executable, str(SIZED),
        cwd=SIZED.parent, env={**os.environ, **env},
    )  # fmt: skip
    return done, out


@pytest.mark.slow
def test_a_program_sized_by_a_variable_is_validated_at_the_profiled_size(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    done, out = _optimize(tmp_path, {"SUM_N": "40000", "HOME": str(home)})
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    shapes = {tuple(a["shape"]) for s in report["kernels"][0]["signatures"] for a in s["args"] if a["kind"] == "tensor"}
    assert (40000,) in shapes  # the profile's size; the validation reproduced it, or the run would have stopped
    assert report["optimization"]["status"] == "won"


@pytest.mark.slow
def test_a_workload_the_sandbox_changes_stops_the_run_naming_both(tmp_path):
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    (home / ".config" / "env_sized_sum.json").write_text('{"n": 30000}')  # $HOME is hidden in the sandbox
    done, out = _optimize(tmp_path, {"SUM_N": "40000", "HOME": str(home), "DATA_URL": "https://me:hunter22x@h/d"})
    assert done.returncode == 2, done.stderr[-3000:]
    said = " ".join(done.stderr.split())
    assert "did not reproduce the profiled workload of env_sum_kernel" in said
    assert "x_ptr: float32[30000]" in said and "x_ptr: float32[40000]" in said
    assert "withheld here: DATA_URL" in said and "hunter22x" not in said
    assert "Traceback" not in done.stderr


def test_the_environment_passes_minus_secrets_by_name_and_value():
    env = {
        "PATH": "/bin",
        "SIZE": "large",
        "MODEL_CONFIG": "/data/cfg.yaml",
        "GIT_SHA": "0a3b911c5e7d0f2b9c1a4e6d8f0a2c4e6b8d0f1a",  # a hex digest is configuration
        "HF_TOKEN": "x",
        "AWS_SECRET_ACCESS_KEY": "y",
        "DB_URL": "postgres://app:s3cretpw@db:5432/x",
        "UPSTREAM": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "OPAQUE": "Zm9vYmFyYmF6cXV4UVdFUlRZdWlvcDEyMzQ1Njc4OTA",
        "SSH_AUTH_SOCK": "/run/user/0/agent.sock",
        "MODEL_API_BASE": "https://api.example.com/v1",
        "LOOKS_LIKE_ONE": "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "MY_CREDS": "w",
    }
    passed = sandboxing.allowed_env(env, extra=("LOOKS_LIKE_ONE", "HF_TOKEN"), deny=("MY_CREDS",))
    assert passed == {
        "PATH": "/bin",
        "SIZE": "large",
        "MODEL_CONFIG": "/data/cfg.yaml",
        "GIT_SHA": env["GIT_SHA"],
        "MODEL_API_BASE": "https://api.example.com/v1",
        "LOOKS_LIKE_ONE": env["LOOKS_LIKE_ONE"],  # --sandbox-env passes a value that only looks secret
    }
    text = "could not reach postgres://app:s3cretpw@db:5432/x with ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    scrubbed = redact.scrub(text, env)
    assert "s3cretpw" not in scrubbed and "ghp_" not in scrubbed


def _sig(grid, n, launches=10, block=1024, tuning=0):
    return {
        "grid": [grid, 1, 1],
        "num_warps": None,
        "num_stages": None,
        "args": [
            {"name": "x", "kind": "tensor", "dtype": "float32", "shape": [n]},
            {"name": "n", "kind": "scalar", "value": n},
            {"name": "seed", "kind": "scalar", "value": 7},
            {"name": "BLOCK", "kind": "constexpr", "value": block},
        ],
        "launches": launches,
        "tuning_launches": tuning,
    }


def test_signatures_compare_grid_shapes_and_constexprs_not_runtime_scalars():
    seeded = _sig(8, 8192)
    seeded["args"][2]["value"] = 12345  # a seed differs between runs: the workload does not
    assert signature_key(seeded) == signature_key(_sig(8, 8192))
    assert signature_key(_sig(8, 8192, block=512)) != signature_key(_sig(8, 8192))
    # The compared ones cover 90 % of the program's launches; autotuning's benchmark launches do not count.
    profiled = [_sig(8, 8192, launches=95), _sig(4, 4096, launches=5), _sig(2, 2048, launches=50, tuning=50)]
    assert [s["grid"][0] for s in compared(profiled)] == [8]
    check_same("k", profiled, [_sig(8, 8192, launches=1)], [])  # a rare shape missing is no mismatch
    try:
        check_same("k", profiled, [_sig(1, 1024)], ["SIZE_TOKEN"])
    except Exception as exc:
        assert exc.exit_code == 2 and "grid (8, 1, 1)" in str(exc) and "SIZE_TOKEN" in str(exc)
    else:
        raise AssertionError("a missing profiled signature must stop the run")


LAUNCHERS = PROGRAMS / "launchers"
RENAMED = [
    ("(x_ptr, out_ptr, n, alpha, beta, BLOCK", "(x_ptr, out_ptr, n, alpha, shift, BLOCK"),
    ("tl.store(out_ptr + offs, alpha * x + beta, mask=mask)", "tl.store(out_ptr + offs, alpha * x + shift, mask=mask)"),
]


@pytest.mark.slow
@pytest.mark.parametrize("style", ["keyword", "varargs", "autograd"])
def test_real_launchers_replay_and_verify_a_kernel_whose_parameters_changed(style, tmp_path):
    """Keyword-only and defaulted parameters, *args/**kwargs, and an autograd Function's forward (through
    `apply`): the reference replays, and a candidate that renames a kernel parameter (no kernel replay
    possible) is verified through the launcher, never left unverified."""
    from intelliperf.validators import Program, capture_reference, copy_project, validate

    command = [sys.executable, "launchers.py", style]
    ref = capture_reference(Program(LAUNCHERS, command), "scale_shift_kernel", interpret=True, work_dir=tmp_path / "r")
    assert any(r["mode"] == "launcher" for r in ref.replay["runs"]), ref.replay["notes"]
    text = (LAUNCHERS / "launchers.py").read_text()
    for old, new in RENAMED:
        text = text.replace(old, new)
    honest = Program(copy_project(LAUNCHERS, {"launchers.py": text}, tmp_path / "c1"), command)
    verdict = validate(ref, honest, work_dir=tmp_path / "v1")
    assert verdict.correct, verdict.reasons()
    assert any("launcher" in c for c in verdict.checks), verdict.checks
    # wrong only at sizes the program never runs: the launcher's unseen shapes catch it
    wrong = text.replace("mask = offs < n\n", "mask = offs < n\n    alpha = tl.where(n > 3000, alpha * 0.5, alpha)\n")
    cheat = Program(copy_project(LAUNCHERS, {"launchers.py": wrong}, tmp_path / "c2"), command)
    rejected = validate(ref, cheat, work_dir=tmp_path / "v2")
    assert not rejected.correct and "mismatch" in [p.kind for p in rejected.problems], rejected.reasons()


def test_a_reference_that_reads_past_its_inputs_at_an_unseen_shape_is_not_compared_there():
    """Unseen shapes change sizes one by one; a launcher whose sizes only hold together as recorded reads past
    its inputs there. Guarded inputs (NaN around them) make that show as NaN from inputs that held none."""
    import torch

    from intelliperf.validators.workers.replay_inputs import guarded_by_nan
    from intelliperf.validators.workers.replay_reference import nan_from_nowhere

    big = guarded_by_nan(torch.empty(3, 300, 200))  # the guard is past the whole span, not one dimension's
    assert big.shape == (3, 300, 200) and big.storage_offset() + 3 * 300 * 200 < big.untyped_storage().size() // 4
    x = guarded_by_nan(torch.empty(4, 6).t())
    assert x.shape == (6, 4) and x.stride() == (1, 6)
    x.copy_(torch.arange(24.0).reshape(6, 4))
    flat = torch.as_strided(x, (x.numel() + 8,), (1,), x.storage_offset() - 4)  # reads 4 past each end
    assert torch.isnan(flat[:4]).all() and torch.isnan(flat[-4:]).all() and not torch.isnan(x).any()
    assert nan_from_nowhere({"return[0]": flat.sum().reshape(1)}, {"x": x.clone()})
    assert not nan_from_nowhere({"return[0]": x.sum().reshape(1)}, {"x": x.clone()})
