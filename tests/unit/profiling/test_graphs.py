"""CUDA graphs in the profiled program: recognised at run time and in the source, and the report says
what was timed. Without a GPU torch makes no graph; the program then takes its eager fallback."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest
from conftest import PROGRAMS, py, run_cli

from intelliperf.diagnosis.run import graph_note

GRAPH_TIMED = PROGRAMS / "graphs" / "graph_timed.py"


@pytest.mark.slow
def test_a_graph_timed_workload_on_the_cpu_is_recognised_and_its_eager_launches_timed(tmp_path):
    out = tmp_path / "report.json"
    done = run_cli("diagnose", "--device", "cpu", "-o", str(out), "--", *py(GRAPH_TIMED))
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    (note,) = [n for n in report["notes"] if n.startswith("CUDA graphs:")]
    assert f"{GRAPH_TIMED}:28" in note and f"{GRAPH_TIMED}:35" in note  # CUDAGraph(), torch.cuda.graph(
    assert "torch refused the 1 it tried to make" in note and "launches it made eagerly" in note
    (kernel,) = report["kernels"]
    assert kernel["name"] == "add_one_kernel" and kernel["launches"] == kernel["timed_launches"] == 3


@pytest.mark.slow
def test_captures_replays_and_the_launches_captured_are_counted(tmp_path):
    """The wrappers on a class shaped as torch's CUDAGraph (capture_begin, capture_end, replay), in a
    process of its own: what a GPU run counts, and that launches while capturing are left untimed."""
    (tmp_path / "fake_graphs.py").write_text(
        "class CUDAGraph:\n"
        "    def __new__(cls, keep_graph=False):\n"
        "        return super().__new__(cls)\n"
        "    def capture_begin(self, pool=None):\n        pass\n"
        "    def capture_end(self):\n        pass\n"
        "    def replay(self):\n        pass\n"
    )
    script = (
        "import fake_graphs, json\n"
        "from intelliperf.profiling.inside import graphs\n"
        "graphs.install(fake_graphs)\n"
        "graphs.install(fake_graphs)  # a second install wraps nothing twice\n"
        "g = fake_graphs.CUDAGraph()\n"
        "graphs.launched()\n"
        "g.capture_begin()\n"
        "during = graphs.capturing()\n"
        "graphs.launched(); graphs.launched()\n"
        "g.capture_end()\n"
        "for _ in range(4): g.replay()\n"
        "print(json.dumps([during, graphs.capturing(), graphs.tally([])]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True)
    during, after, tally = json.loads(done.stdout)
    assert during is True and after is False
    assert tally == {"made": 1, "refused": 0, "captures": 1, "replays": 4, "launches_in_capture": 2, "sites": []}


@pytest.mark.slow
def test_torch_refusing_a_graph_is_counted_and_still_raised():
    torch_graphs = importlib.import_module("torch.cuda.graphs")
    if importlib.import_module("torch").cuda.is_available():
        pytest.skip("torch makes CUDA graphs here")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import torch.cuda.graphs as g\n"
            "from intelliperf.profiling.inside import graphs\n"
            "graphs.install(g)\n"
            "try:\n    g.CUDAGraph()\nexcept RuntimeError as exc:\n    print(exc)\n"
            "print(graphs.COUNTS['refused'])\n",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split("\n")[:2] == ["Tried to instantiate dummy base class CUDAGraph", "1"]
    assert not hasattr(torch_graphs.CUDAGraph, "__intelliperf_graphs__")  # this process's torch is untouched


def test_the_note_says_what_a_gpu_run_of_a_graphed_workload_timed():
    record = {"made": 2, "refused": 0, "captures": 2, "replays": 200, "launches_in_capture": 6, "sites": ["r.py:9"]}
    note = graph_note([{"graphs": record}, {"graphs": None}], interpret=False)
    assert note is not None and "captured 2 graph(s) and replayed them 200 time(s) (r.py:9)" in note
    assert "The 6 Triton launch(es) made while capturing are counted once each and not timed" in note
    # A GPU run whose source can make graphs but made none this time has nothing to say.
    assert graph_note([{"graphs": {**record, "made": 0, "captures": 0, "replays": 0}}], interpret=False) is None
    assert graph_note([{"kernels": []}], interpret=True) is None
