"""The counter backends on recorded outputs: ncu's raw and source pages from the H100 (Triton
3.6, Nsight Compute 2025.3.1), rocprofv3's counter collection written from its documented
layout; the formulas judging on them; the choice of backend and its errors on this machine."""

import json
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_cli

from intelliperf.errors import ProfilerError, UsageError
from intelliperf.formulas import default_registry
from intelliperf.models import Evidence, KernelProfile
from intelliperf.profiling import counters, ncu, rocprof
from intelliperf.profiling.static import compile_here, sass_lines

FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures"
BANK = REPO / "examples" / "bank_conflict" / "column_sums.py"
COPY = REPO / "examples" / "memory_access" / "column_copy.py"


def _table(name: str, source: Path) -> list[list]:
    """The recorded SASS line table, with the example's path as it is on this machine."""
    rows = json.loads((FIXTURES / "ncu" / f"{name}-sass-lines.json").read_text())
    return [[o, str(source) if f.endswith(source.name) else f, line, text] for o, f, line, text in rows]


def _evidence(name: str, source: Path, formula: str) -> Evidence:
    metrics = list(default_registry().create(formula).counters["ncu"])
    launch = ncu.parse_raw((FIXTURES / "ncu" / f"{name}-raw.csv").read_text(), metrics)[0]
    rows = next(iter(ncu.parse_source((FIXTURES / "ncu" / f"{name}-source.csv").read_text()).values()))
    lines, why = ncu.attribute(rows, _table(name, source))
    assert why is None
    return Evidence(backend="ncu", modelled=False, kernel=launch.kernel, metrics=launch.metrics, lines=lines)


def _profile(name: str, source: Path, def_line: int) -> KernelProfile:
    return KernelProfile(
        id=name,
        name=name,
        file=str(source),
        line=def_line,
        launches=1,
        timed_launches=1,
        total_time_s=1e-4,
        mean_time_s=1e-4,
        share=1.0,
        signatures=[],
    )


def test_numbers_as_ncu_prints_them():
    assert ncu.number("16,777,216") == 16777216
    assert ncu.number("12.500000") == 12.5
    assert ncu.number("(!) n/a") is None and ncu.number("") is None and ncu.number("-") is None
    assert ncu.number("99.04", "us") == pytest.approx(99.04e-6)
    assert ncu.number("44.307456", "Mbyte") == pytest.approx(44.307456e6)


def test_raw_page_of_the_bank_conflict_example():
    metrics = [
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "gpu__time_duration.sum",
        "smsp__no_such_metric.sum",
    ]
    [launch] = ncu.parse_raw((FIXTURES / "ncu" / "column_sums-raw.csv").read_text(), metrics)
    assert launch.kernel == "column_sums_kernel"
    assert launch.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 1835037
    assert launch.metrics["gpu__time_duration.sum"] == pytest.approx(99.04e-6)
    assert launch.missing == ["smsp__no_such_metric.sum"]


def test_source_page_lines_of_the_column_copy():
    ev = _evidence("column_copy", COPY, "memoryAccess")
    by_line = {c.line: c for c in ev.lines if c.counters.get(ncu.SOURCE_COUNTERS[2])}
    assert set(by_line) == {20, 21}  # the load and the store, nothing else moves global sectors
    for c in by_line.values():
        assert c.counters["L2 Theoretical Sectors Global Ideal"] / c.counters["L2 Theoretical Sectors Global"] == 0.125
    assert "LDG.E" in by_line[20].instructions and "STG.E" in by_line[21].instructions


def test_a_different_binary_is_not_attributed():
    rows = next(iter(ncu.parse_source((FIXTURES / "ncu" / "column_copy-source.csv").read_text()).values()))
    table = _table("column_copy", COPY)
    table[3][3] = "NOP"
    lines, why = ncu.attribute(rows, table)
    assert lines == [] and "differs" in why


def test_sass_line_table_from_a_kernel_compiled_here():
    sys.path.insert(0, str(BANK.parent))
    import column_sums
    import torch

    x = torch.empty(64, 64)
    bound = {"x_ptr": x, "out_ptr": x, "m": 64, "n": 64, "BLOCK_M": 64, "BLOCK_N": 64}
    kernel = compile_here(column_sums.column_sums_kernel.fn, bound, "cuda:90", {"num_warps": 4})
    table = sass_lines(kernel.asm["cubin"])
    lines = {line for _, f, line, _ in table if f.endswith("column_sums.py")}
    assert {24, 25, 26} <= lines  # load, reduce, store
    assert all(offset % 16 == 0 for offset, *_ in table)
    reduce_ops = {text.split()[0] for _, f, line, text in table if line == 25 and f.endswith("column_sums.py")}
    assert reduce_ops & {"STS", "LDS", "BAR.SYNC.DEFER_BLOCKING"}  # the exchange through shared memory


def test_profile_command_filters_and_leaves_clocks_alone(tmp_path):
    req = ncu.NcuRequest(kernels=["a_kernel", "b.kernel"], metrics=["m1.sum", "m2.pct"], launches=2)
    args = ncu.profile_command("/x/ncu", req, tmp_path / "rep", ["python", "app.py"], tmp_path / "log")
    assert args[:3] == ["/x/ncu", "--clock-control", "none"]
    assert args[args.index("-k") + 1] == r"regex:^(a_kernel|b\.kernel)$"
    assert args[args.index("-c") + 1] == "4"
    assert args[args.index("--metrics") + 1] == "m1.sum,m2.pct"
    assert args[args.index("--log-file") + 1] == str(tmp_path / "log")
    assert args[-2:] == ["python", "app.py"]


def test_errors_a_user_must_act_on():
    with pytest.raises(ProfilerError, match="ERR_NVGPUCTRPERM") as exc:
        ncu.check_log("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission", 1, "ncu")
    assert "NVreg_RestrictProfilingToAdminUsers" in exc.value.hint
    with pytest.raises(ProfilerError, match="Failed to find metric"):
        ncu.check_log("==ERROR== Failed to find metric l1tex__no_such_metric.sum", 1, "ncu")
    ncu.check_log((FIXTURES / "ncu" / "no-kernel.log").read_text(), 0, "ncu")  # a note, not an error


def test_metrics_this_gpu_lacks_are_dropped():
    known = ncu.query_metrics((FIXTURES / "ncu" / "query-metrics-excerpt.txt").read_text())
    kept, dropped = ncu.supported(
        [
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
            "lts__t_requests_op_red_nonexistent.sum",
        ],
        known,
    )
    assert dropped == ["lts__t_requests_op_red_nonexistent.sum"] and len(kept) == 2


def test_memory_access_judges_on_counters_and_names_lines():
    formula = default_registry().create("memoryAccess")
    finding = formula.diagnose(
        _profile("column_copy_kernel", COPY, 16), [_evidence("column_copy", COPY, "memoryAccess")]
    )
    assert finding.present and not finding.modelled and finding.evidence_backend == "ncu"
    assert finding.metric.value == 0.125
    assert [s.line for s in finding.lines] == [20, 21]
    assert "measured" in finding.lines[0].detail


def test_memory_access_leaves_atomic_lines_to_atomic_contention():
    """A scattered atomic (a bincount's `tl.atomic_add(out + bin, 1)`) uses little of each sector
    by nature: its addresses are its data. The same measured line made of RED instructions is
    not named; the load line still is."""
    formula = default_registry().create("memoryAccess")
    counted = _evidence("column_copy", COPY, "memoryAccess")
    atomic = counted.model_copy(
        update={
            "lines": [
                c.model_copy(update={"instructions": ["RED.E.ADD.STRONG.GPU"]}) if c.line == 21 else c
                for c in counted.lines
            ]
        }
    )
    finding = formula.diagnose(_profile("column_copy_kernel", COPY, 16), [atomic])
    assert finding.present and [s.line for s in finding.lines] == [20]


def test_bank_conflict_on_counters_puts_the_helper_line_back_in_the_kernel():
    from intelliperf.models import StaticFact

    formula = default_registry().create("bankConflict")
    counted = _evidence("column_sums", BANK, "bankConflict")
    static = Evidence(
        backend="static",
        modelled=False,
        kernel="column_sums_kernel",
        facts=[
            StaticFact(target="cuda:90", file=str(BANK), line=25, kind=k, instruction=i, count=2)
            for k, i in (("shared_load", "ld.shared (float)"), ("shared_store", "st.shared (float)"))
        ],
    )
    finding = formula.diagnose(_profile("column_sums_kernel", BANK, 19), [counted, static])
    assert finding.present and finding.severity == "high"
    assert finding.metric.name == "bank_conflict_share" and finding.metric.value == pytest.approx(0.8247, abs=1e-3)
    assert finding.lines[0].line == 25 and "standard.py" in finding.lines[0].detail
    clean = formula.diagnose(
        _profile("column_sums_kernel", BANK, 19),
        [
            counted.model_copy(
                update={
                    "metrics": {
                        **counted.metrics,
                        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 0.0,
                        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": 0.0,
                    }
                }
            )
        ],
    )
    assert not clean.present


def test_bank_conflicts_of_an_exchange_done_once_after_the_loop_are_not_the_bottleneck():
    """Measured conflicts (the real ncu capture of column_sums, most of them inside tl.sum with its
    call site lost) that the static view places at a line after the loop (a reduction done once
    per program, as the layer-norm tutorial's dw/db kernel does): 0.45 conflicts per global sector
    is a small cost next to what the loop moves. Placed at the loop line, they are flagged."""
    from intelliperf.models import StaticFact

    formula = default_registry().create("bankConflict")
    counted = _evidence("column_sums", BANK, "bankConflict")
    kernel = _profile("column_sums_kernel", BANK, 19)
    assert formula.diagnose(kernel, [counted]).present  # most conflicts inside tl.sum, call site unknown
    static = Evidence(
        backend="static",
        modelled=False,
        kernel="column_sums_kernel",
        facts=[
            StaticFact(target="cuda:90", file=str(BANK), line=26, kind=k, instruction=i, count=2)
            for k, i in (("shared_load", "ld.shared (float)"), ("shared_store", "st.shared (float)"))
        ],
    )
    once = formula.diagnose(kernel, [counted, static])  # the round trip at line 26, after the loop
    assert not once.present and "once per program" in once.explanation and not once.modelled
    assert formula.diagnose(
        kernel,
        [counted, static.model_copy(update={"facts": [f.model_copy(update={"line": 25}) for f in static.facts]})],
    ).present  # the static view puts it in the loop


def test_rocprofv3_command_and_recorded_collection(tmp_path):
    args = rocprof.profile_command(
        "/opt/rocm/bin/rocprofv3", ["column_sums_kernel"], ["SQ_LDS_BANK_CONFLICT"], tmp_path, ["python", "app.py"]
    )
    assert args[args.index("--pmc") + 1] == "SQ_LDS_BANK_CONFLICT"
    assert args[args.index("--kernel-include-regex") + 1] == "^(column_sums_kernel)$"
    assert args[args.index("--output-format") + 1] == "csv" and args[-3:] == ["--", "python", "app.py"]
    parsed = rocprof.parse_counter_collection((FIXTURES / "rocprof" / "intelliperf_counter_collection.csv").read_text())
    assert [len(v) for v in parsed.values()] == [2, 1]  # dispatches per kernel, ".kd" stripped from names
    assert parsed["column_sums_kernel"][0]["SQ_LDS_BANK_CONFLICT"] == 1843200
    ev = Evidence(
        backend="rocprofv3", modelled=False, kernel="column_sums_kernel", metrics=parsed["column_sums_kernel"][0]
    )
    finding = default_registry().create("bankConflict").diagnose(_profile("column_sums_kernel", BANK, 19), [ev])
    assert finding.present and finding.metric.value == 0.75 and finding.evidence_backend == "rocprofv3"


def test_backend_choice_on_this_machine(monkeypatch):
    assert counters.choose("auto", True, None, True) == (None, None)
    assert counters.choose("off", False, "ncu", True) == (None, None)
    with pytest.raises(UsageError, match="interprets them on the CPU"):
        counters.choose("ncu", True, None, True)
    with pytest.raises(UsageError, match="one of"):
        counters.choose("nsight", False, "ncu", True)
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("CUDA_HOME", "/nonexistent")
    backend, note = counters.choose("auto", False, "ncu", True)
    assert backend is None and "ncu was not found" in note
    with pytest.raises(ProfilerError, match="not found"):
        counters.choose("ncu", False, "ncu", True)


def test_cli_counters_ncu_without_a_gpu_is_a_usage_error():
    result = run_cli(
        "diagnose",
        "-f",
        "memoryAccess",
        "--counters",
        "ncu",
        "--device",
        "cpu",
        "--",
        sys.executable,
        str(COPY),
        "--m",
        "64",
        "--n",
        "64",
    )
    assert result.returncode == 2, result.stderr
    assert "--counters ncu needs the kernels compiled on a GPU" in result.stderr
    assert "Traceback" not in result.stderr
