"""The sandbox (bubblewrap, for real), the environment minus secrets, secrets by value, the source policy."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import run_cli, running_sandboxes

from intelliperf import redact
from intelliperf.validators.gate.policy import PolicyError, check
from intelliperf.workload import sandbox as sandboxing
from intelliperf.workload.runner import Running

PROBE = """
import os, socket, subprocess, sys
from pathlib import Path
results = {}
def attempt(name, fn):
    try:
        results[name] = "ok: " + str(fn())[:80]
    except Exception as exc:
        results[name] = "refused: " + type(exc).__name__
attempt("parent environ", lambda: Path("/proc/%d/environ" % PARENT).read_bytes())
attempt("pids", lambda: sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
attempt("read project", lambda: Path(PROJECT, "secret.txt").read_text())
attempt("write project", lambda: Path(PROJECT, "new.txt").write_text("x"))
attempt("read truth", lambda: Path(TRUTH, "outputs.pt").read_bytes())
attempt("write home", lambda: Path(HOME, ".bashrc").write_text("x"))
attempt("write copy", lambda: Path(COPY, "out.txt").write_text("x"))
attempt("network", lambda: socket.create_connection(("127.0.0.1", PORT), timeout=2))
attempt("secret variable", lambda: os.environ["HF_TOKEN"])
attempt("capabilities", lambda: [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0])
attempt("unmount the hidden project", lambda: subprocess.run(["umount", PROJECT], check=True, capture_output=True))
subprocess.Popen(["sh", "-c", "sleep 3; touch " + str(Path(COPY, "late.txt"))], start_new_session=True)
print(repr(results))
"""


@pytest.fixture
def places(tmp_path):
    project, truth, home, copy = (tmp_path / n for n in ("project", "work/truth", "home", "work/attempt/copy"))
    for folder in (project, truth, home, copy):
        folder.mkdir(parents=True)
    (project / "secret.txt").write_text("the user's")
    (truth / "outputs.pt").write_text("ground truth")
    (home / ".bashrc").write_text("# mine")
    return project, truth, home, copy


@pytest.mark.slow
def test_sandbox_confines_a_hostile_process(places, monkeypatch):
    project, truth, home, copy = places
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HF_TOKEN", "hf_probe_secret")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    box = sandboxing.make(enabled=True, hide=(project, truth.parent))
    script = PROBE
    for name, value in {
        "PARENT": os.getpid(),
        "PROJECT": repr(str(project)),
        "TRUTH": repr(str(truth)),
        "HOME": repr(str(home)),
        "COPY": repr(str(copy)),
        "PORT": server.getsockname()[1],
    }.items():
        script = script.replace(name, str(value), 1) if name in ("PARENT", "PORT") else script.replace(name, value)
    command = box.wrap([sys.executable, "-c", script], cwd=copy, writable=(copy,))
    done = subprocess.run(command, env=box.env(dict(os.environ)), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    results = eval(done.stdout.strip().splitlines()[-1])  # a dict literal our probe printed
    assert results["parent environ"].startswith("refused")  # another PID namespace: the parent is not there
    assert len(eval(results["pids"].removeprefix("ok: "))) <= 3
    assert results["read project"].startswith("refused") and results["write project"].startswith("refused")
    assert results["read truth"].startswith("refused") and results["write home"].startswith("refused")
    assert results["network"].startswith("refused") and results["secret variable"].startswith("refused")
    assert results["write copy"].startswith("ok")
    assert results["capabilities"] == "ok: 0000000000000000"  # root or not: no capability inside
    assert results["unmount the hidden project"].startswith("refused")
    time.sleep(4)  # the detached child died with the sandbox: it never wrote late.txt
    assert not (copy / "late.txt").exists()
    assert (project / "secret.txt").read_text() == "the user's" and not (project / "new.txt").exists()
    assert (home / ".bashrc").read_text() == "# mine"
    server.close()


def test_environment_passes_minus_secrets():
    env = {
        "PATH": "/bin",
        "LC_ALL": "C",
        "TRITON_INTERPRET": "1",
        "CUDA_VISIBLE_DEVICES": "0",
        "HF_TOKEN": "x",
        "AWS_SECRET_ACCESS_KEY": "y",
        "INTELLIPERF_API_KEY": "z",
        "MY_CREDS": "w",
        "DATA_DIR": "/d",
        "TRITON_AUTH_TOKEN": "v",
        # a long path of token characters, upper and lower case and digits: a folder, not a token
        "RUN_DIR": "/tmp/pytest-of-root/pytest-3/test_a_module_level_launch_tur0/v-True/candidate",
        "MODEL_SEED": "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MEFCQ0RFRkdI",  # an opaque token by value
    }
    allowed = sandboxing.allowed_env(env, extra=("MY_CREDS",), deny=("MY_CREDS",))
    assert allowed == {
        "PATH": "/bin",
        "LC_ALL": "C",
        "TRITON_INTERPRET": "1",
        "CUDA_VISIBLE_DEVICES": "0",
        "DATA_DIR": "/d",
        "RUN_DIR": env["RUN_DIR"],
    }


def test_secrets_are_scrubbed_by_value(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_TOKEN", "hf_abcdef123456")
    monkeypatch.setenv("SERVICE_CREDS_FILE", "s3cr3t-value-99")
    monkeypatch.setenv("SHORT_TOKEN", "1")  # too short to redact without breaking ordinary text
    redact.also("SERVICE_CREDS_FILE")
    text = "crash: token hf_abcdef123456 and s3cr3t-value-99, count 1"
    assert redact.scrub(text) == "crash: token [redacted HF_TOKEN] and [redacted SERVICE_CREDS_FILE], count 1"
    from intelliperf.delivery.report import write_text_file

    write_text_file(tmp_path / "r.json", text)
    assert "hf_abcdef123456" not in (tmp_path / "r.json").read_text()


LAUNCHER = """def launch(x, block=128):
    out = torch.empty_like(x)
    kernel[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), BLOCK=block)
    return out
"""


@pytest.mark.parametrize(
    "edit",
    [
        ("block=128", "block=512"),  # another constant default
        ("    return out", "    out[0] = out[0]\n    return out"),  # writing into a local tensor
        ("    out = torch.empty_like(x)", "    import math\n    out = torch.empty_like(x)"),
    ],
)
def test_policy_lets_ordinary_rewrites_through(edit):
    check(LAUNCHER, LAUNCHER.replace(*edit), "launch", kernel=False)


def test_policy_allows_what_the_original_already_does():
    original = LAUNCHER.replace("    return out", "    if os.environ.get('DEBUG'):\n        print(out)\n    return out")
    check(original, original.replace("block=128", "block=256"), "launch", kernel=False)
    with pytest.raises(PolicyError, match="os"):
        check(LAUNCHER, original, "launch", kernel=False)


def test_policy_checks_kernel_decorators_not_triton_code():
    kernel = textwrap.dedent("""
        @triton.jit
        def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            tl.store(out_ptr, tl.load(x_ptr))
        """)
    autotuned = "@triton.autotune(configs=[triton.Config({'BLOCK': 64})], key=['n'])\n" + kernel.lstrip()
    check(kernel, autotuned, "kernel", kernel=True)
    hooked = autotuned.replace("key=['n']", "key=['n'], pre_hook=lambda args: open('f', 'w')")
    with pytest.raises(PolicyError, match="open"):
        check(kernel, hooked, "kernel", kernel=True)


def test_no_sandbox_means_a_clear_refusal_before_anything_runs(tmp_path):
    program = tmp_path / "app.py"
    program.write_text("raise SystemExit('must not run')\n")
    env = {**os.environ, sandboxing.ENV_BWRAP: str(tmp_path / "no-bwrap-here")}
    started = time.perf_counter()
    done = run_cli(
        "optimize",
        "--device",
        "cpu",
        "--out-dir",
        str(tmp_path / "out"),
        "--",
        sys.executable,
        str(program),
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    assert "sandbox" in done.stderr and "--no-sandbox" in done.stderr and "bubblewrap" in done.stderr
    assert "must not run" not in done.stderr and time.perf_counter() - started < 60
    assert Path(program).read_text() == "raise SystemExit('must not run')\n"


def test_a_secret_cannot_be_let_through(tmp_path):
    done = run_cli(
        "optimize",
        "--device",
        "cpu",
        "--sandbox-env",
        "HF_TOKEN",
        "--out-dir",
        str(tmp_path / "out"),
        "--",
        sys.executable,
        "app.py",
        cwd=tmp_path,
    )
    assert done.returncode == 2 and "--sandbox-env HF_TOKEN" in done.stderr and "Traceback" not in done.stderr


def test_an_out_dir_inside_home_is_hidden_with_it(places, monkeypatch):
    """`--out-dir ~/out/run` (found on the H100 machine, $HOME=/root): the out-dir lies in the
    hidden $HOME, and mounting over both made bwrap fail ("Can't remount readonly ... No such file
    or directory"), which the probe reported as a machine without namespaces."""
    project, truth, home, copy = places
    out_dir = home / "out" / "run"
    out_dir.mkdir(parents=True)
    (out_dir / "report.json").write_text("{}")
    monkeypatch.setenv("HOME", str(home))
    box = sandboxing.make(enabled=True, hide=(project, out_dir, truth.parent))  # probes: raises if bwrap fails
    look = f"import os; print(os.path.exists({str(out_dir / 'report.json')!r}), os.path.exists({str(home)!r}))"
    done = subprocess.run(
        box.wrap([sys.executable, "-c", look], cwd=copy, writable=(copy,)),
        env=box.env(dict(os.environ)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]  # home is an empty folder inside, the report not there


@pytest.mark.slow
def test_a_sandbox_stopped_at_any_moment_of_its_start_leaves_no_process(tmp_path):
    """bubblewrap killed between cloning the sandbox's first process and that process asking to die with
    its parent left the sandbox running (at 2 ms, 20 of 40 starts): `stop` ends the whole sandbox."""
    box = sandboxing.make(enabled=True, hide=())
    command = box.wrap([sys.executable, "-c", "import sys; sys.stdin.read()"], cwd=tmp_path, writable=(tmp_path,))
    before = running_sandboxes()
    for delay in (0.0, 0.001, 0.002, 0.003, 0.005, 0.2):
        for _ in range(10):
            running = Running(command, cwd=str(tmp_path), env=dict(os.environ), stdin=True)
            time.sleep(delay)
            running.stop()
            assert running.proc.returncode is not None
    time.sleep(0.5)  # an orphan is adopted by this process (conftest makes it the subreaper)
    assert running_sandboxes() - before == set()
