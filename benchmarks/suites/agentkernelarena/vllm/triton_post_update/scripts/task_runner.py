#!/usr/bin/env python3
# Vendored from https://github.com/AMD-AGI/AgentKernelArena (Apache-2.0, see LICENSE in benchmarks/suites/agentkernelarena/),
# tasks/triton2triton/vllm/triton_post_update/scripts/task_runner.py at commit d6f7c8a4f01fb0e57b6ee7a7c0af4d7c9d8a0f2b. Changes for intelliperf: CUDA-graph helpers materialised from src/tools/perf/vllm_cuda_graph_block.py; device from AKA_DEVICE (2 hard-coded device string(s)); torch.cuda.synchronize a no-op with AKA_DEVICE=cpu.
"""Task runner for triton2triton/triton_post_update"""

# intelliperf (vendoring): the torch device comes from AKA_DEVICE (default cuda, as published); with
# AKA_DEVICE=cpu (Triton's interpreter) torch.cuda.synchronize waits for nothing instead of raising.
import os as _aka_os

AKA_DEVICE = _aka_os.environ.get("AKA_DEVICE", "cuda")
if AKA_DEVICE == "cpu":
    import torch as _aka_torch

    _aka_torch.cuda.synchronize = lambda device=None: None

import sys
import os
import json
import argparse
import importlib.util

TASK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(TASK_DIR)

TASK_NAME = "triton2triton/triton_post_update"
SOURCE_FILE = os.path.join(TASK_DIR, "source", "triton_post_update.py")

# (num_reqs, vocab_size, max_model_len, num_spec_steps)
TEST_SHAPES = [
    (4, 256, 128, 1),
    (8, 512, 256, 2),
    (16, 1024, 512, 3),
    (32, 2048, 1024, 4),
    (64, 4096, 2048, 3),
]
WARMUP_ITERATIONS = 10
BENCHMARK_ITERATIONS = 100


# >>> AKA-GENERATED: shared CUDA-graph benchmark helpers - edit src/tools/perf/vllm_cuda_graph_block.py then run `make sync-perf-helpers` >>>
def _measure_cuda_event_fallback(fn, repetition):
    import time
    import torch

    repetition = max(1, int(repetition))
    if not torch.cuda.is_available():
        times_ms = []
        for _ in range(repetition):
            start = time.perf_counter()
            fn()
            end = time.perf_counter()
            times_ms.append((end - start) * 1000.0)
        return times_ms

    times_ms = []
    for _ in range(repetition):
        torch.cuda.synchronize()
        start_event = torch.cuda.Event(enable_timing=True)
        end_event = torch.cuda.Event(enable_timing=True)
        start_event.record()
        fn()
        end_event.record()
        torch.cuda.synchronize()
        times_ms.append(start_event.elapsed_time(end_event))
    return times_ms


class _TimedRun:
    """Handle on the exact invocation a benchmark measured.

    Timing and correctness are otherwise separate invocations, so a kernel can
    tell them apart and do less work in the one that is scored. Passing this
    collector to the benchmark makes the scored invocation itself observable:
    ``outputs`` aliases the buffers the timed unit last wrote, and ``rerun``
    executes that same unit again.

    Under CUDA-graph timing the buffers are captured once and every replay
    writes to those same addresses, so ``outputs`` keeps tracking replays. Under
    event-timing fallback the measured outputs cannot be observed reliably, so a
    benchmark that requests this collector fails closed instead of validating a
    separate post-timing invocation.
    """

    def __init__(self):
        self._rerun = None
        self.outputs = None

    def _bind(self, rerun, outputs=None):
        self._rerun = rerun
        self.outputs = outputs

    @property
    def bound(self):
        return self._rerun is not None

    def rerun(self):
        if self._rerun is None:
            raise RuntimeError(
                "timed run was never bound; the benchmark did not reach a "
                "measurement path"
            )
        self.outputs = self._rerun()
        return self.outputs


def _benchmark_cuda_graph_or_events(
    fn,
    warmup=10,
    repetition=100,
    target_ms=1.0,
    n_retries=5,
    estimate_reps=5,
    max_graph_repeats=1000,
    use_cuda_graph=True,
    fallback_reason=None,
    timed_run=None,
):
    import torch

    def _reject_unobservable_fallback(reason):
        if timed_run is not None:
            raise RuntimeError(
                f"{reason}; timed_run requires an observable CUDA-graph replay "
                "and cannot validate a separate post-timing invocation"
            )

    # A captured graph whose measured per-iteration time falls below this floor is
    # treated as empty (it recorded no device work) and rejected in favour of
    # per-launch event timing, so a graph that silently captured nothing is never
    # reported as a fabricated ~0 ms cuda_graph result. Real kernels measure far
    # above this floor; an empty-graph replay measures ~1e-5 ms.
    empty_graph_floor_ms = 1e-4

    for _ in range(max(0, int(warmup))):
        fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()

    max_graph_repeats = max(1, int(max_graph_repeats))
    metadata = {
        "benchmark_target_ms": float(target_ms),
        "benchmark_samples": int(repetition),
        "benchmark_max_repeats": int(max_graph_repeats),
    }

    if not torch.cuda.is_available():
        _reject_unobservable_fallback("CUDA is unavailable")
        times = _measure_cuda_event_fallback(fn, repetition)
        metadata.update({
            "benchmark_method": "cpu_timer_fallback",
            "benchmark_effective_repeats": int(repetition),
            "benchmark_fallback_reason": fallback_reason or "cuda_unavailable",
        })
        return sum(times) / len(times), metadata

    if not use_cuda_graph:
        _reject_unobservable_fallback("CUDA-graph timing is disabled")
        times = _measure_cuda_event_fallback(fn, repetition)
        metadata.update({
            "benchmark_method": "cuda_event_fallback",
            "benchmark_effective_repeats": int(repetition),
            "benchmark_fallback_reason": fallback_reason or "cuda_graph_disabled",
        })
        return sum(times) / len(times), metadata

    try:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            estimate_reps = max(1, int(estimate_reps))
            estimate_graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(estimate_graph):
                for _ in range(estimate_reps):
                    fn()
            torch.cuda.synchronize()

            start_event = torch.cuda.Event(enable_timing=True)
            end_event = torch.cuda.Event(enable_timing=True)
            start_event.record(stream)
            estimate_graph.replay()
            end_event.record(stream)
            torch.cuda.synchronize()

            estimate_ms = start_event.elapsed_time(end_event) / estimate_reps
            if estimate_ms == 0:
                n_repeat = max_graph_repeats
            else:
                n_repeat = min(max_graph_repeats, max(1, int(float(target_ms) / estimate_ms)))

            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                captured_outputs = None
                for _ in range(n_repeat):
                    captured_outputs = fn()
            torch.cuda.synchronize()

            retry_times = []
            for _ in range(max(1, int(repetition))):
                start_event = torch.cuda.Event(enable_timing=True)
                end_event = torch.cuda.Event(enable_timing=True)
                start_event.record(stream)
                graph.replay()
                end_event.record(stream)
                torch.cuda.synchronize()
                retry_times.append(start_event.elapsed_time(end_event) / n_repeat)

        graph_mean = sum(retry_times) / len(retry_times)
        if graph_mean < empty_graph_floor_ms:
            _reject_unobservable_fallback("CUDA graph captured no device work")
            times = _measure_cuda_event_fallback(fn, repetition)
            metadata.update({
                "benchmark_method": "cuda_event_fallback",
                "benchmark_effective_repeats": int(repetition),
                "benchmark_fallback_reason": fallback_reason or "empty_cuda_graph_capture",
            })
            return sum(times) / len(times), metadata

        metadata.update({
            "benchmark_method": "cuda_graph",
            "benchmark_effective_repeats": int(n_repeat),
        })
        if timed_run is not None:

            def _replay_once():
                # Callers stage work on their own stream before re-running (they
                # perturb inputs and poison outputs). The capture stream must be
                # ordered after that, or the replay races the staged writes and
                # they land on top of the kernel's results.
                stream.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(stream):
                    graph.replay()
                torch.cuda.synchronize()
                return captured_outputs

            timed_run._bind(_replay_once, captured_outputs)
        return graph_mean, metadata
    except Exception as exc:
        # Isolate the aborted capture before re-measuring so the fallback timing is
        # not polluted by the failed attempt (a mid-capture failure can leave the
        # first few launches abnormally slow).
        try:
            torch.cuda.synchronize()
        except Exception:
            pass
        if timed_run is not None:
            raise RuntimeError(
                "CUDA-graph capture failed; timed_run cannot validate the "
                "separate CUDA-event fallback invocation"
            ) from exc
        for _ in range(min(3, max(1, int(warmup)))):
            fn()
        torch.cuda.synchronize()
        times = _measure_cuda_event_fallback(fn, repetition)
        metadata.update({
            "benchmark_method": "cuda_event_fallback",
            "benchmark_effective_repeats": int(repetition),
            "benchmark_fallback_reason": f"cuda_graph_failed: {type(exc).__name__}: {str(exc)[:160]}",
        })
        return sum(times) / len(times), metadata
# <<< AKA-GENERATED <<<

def load_module():
    spec = importlib.util.spec_from_file_location("triton_kernel", SOURCE_FILE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def reference_post_update(idx_mapping, num_computed_tokens, last_sampled_tokens,
                           output_bin_counts, sampled_tokens, num_sampled,
                           num_rejected, query_start_loc, all_token_ids, total_len):
    import torch
    num_reqs = idx_mapping.shape[0]
    num_computed_tokens = num_computed_tokens.clone()
    last_sampled_tokens = last_sampled_tokens.clone()
    output_bin_counts = output_bin_counts.clone()
    all_token_ids = all_token_ids.clone()
    total_len = total_len.clone()

    for r in range(num_reqs):
        req_state_idx = idx_mapping[r].item()
        tlen = total_len[req_state_idx].item()
        ns = num_sampled[r].item()

        if ns > 0:
            tok = sampled_tokens[r, ns - 1].item()
            last_sampled_tokens[req_state_idx] = tok
            total_len[req_state_idx] = tlen + ns

        for j in range(ns):
            tok = sampled_tokens[r, j].item()
            output_bin_counts[req_state_idx, tok] += 1
            all_token_ids[req_state_idx, tlen + j] = tok

        qstart = query_start_loc[r].item()
        qend = query_start_loc[r + 1].item()
        qlen = qend - qstart
        nr = num_rejected[r].item()
        nc = num_computed_tokens[req_state_idx].item()
        num_computed_tokens[req_state_idx] = nc + qlen - nr

    return num_computed_tokens, last_sampled_tokens, output_bin_counts, all_token_ids, total_len


def run_compile():
    try:
        import ast
        with open(SOURCE_FILE, "r") as f:
            source = f.read()
        ast.parse(source)
        mod = load_module()
        assert hasattr(mod, "post_update")
        assert hasattr(mod, "_post_update_kernel")
        return True, None
    except Exception as e:
        return False, str(e)


def run_correctness():
    import torch
    try:
        mod = load_module()
    except Exception as e:
        return False, f"Failed to load module: {e}"

    device = AKA_DEVICE
    for i, (num_reqs, vocab_size, max_model_len, num_spec) in enumerate(TEST_SHAPES):
        try:
            torch.manual_seed(42 + i)
            max_num_reqs = num_reqs + 8
            idx_mapping = torch.arange(num_reqs, dtype=torch.int32, device=device)

            query_len = num_spec + 1
            query_start_loc = torch.zeros(num_reqs + 1, dtype=torch.int32, device=device)
            for r in range(num_reqs):
                query_start_loc[r + 1] = query_start_loc[r] + query_len

            num_computed_tokens = torch.randint(10, 50, (max_num_reqs,), dtype=torch.int32, device=device)
            last_sampled_tokens = torch.randint(0, vocab_size, (max_num_reqs,), dtype=torch.int32, device=device)
            output_bin_counts = torch.zeros((max_num_reqs, vocab_size), dtype=torch.int32, device=device)
            sampled_tokens = torch.randint(0, vocab_size, (num_reqs, num_spec + 1), dtype=torch.int32, device=device)
            num_sampled = torch.randint(1, num_spec + 2, (num_reqs,), dtype=torch.int32, device=device)
            num_rejected = torch.zeros(num_reqs, dtype=torch.int32, device=device)
            for r in range(num_reqs):
                nr = query_len - num_sampled[r].item()
                num_rejected[r] = max(0, nr)
            all_token_ids = torch.zeros((max_num_reqs, max_model_len), dtype=torch.int32, device=device)
            total_len = torch.randint(10, 50, (max_num_reqs,), dtype=torch.int32, device=device)

            # Clone for GPU
            nct_g = num_computed_tokens.clone()
            lst_g = last_sampled_tokens.clone()
            obc_g = output_bin_counts.clone()
            ati_g = all_token_ids.clone()
            tl_g = total_len.clone()

            mod.post_update(
                idx_mapping, nct_g, lst_g, obc_g, sampled_tokens,
                num_sampled, num_rejected, query_start_loc, ati_g, tl_g,
            )
            torch.cuda.synchronize()

            ref = reference_post_update(
                idx_mapping.cpu(), num_computed_tokens.cpu(), last_sampled_tokens.cpu(),
                output_bin_counts.cpu(), sampled_tokens.cpu(), num_sampled.cpu(),
                num_rejected.cpu(), query_start_loc.cpu(), all_token_ids.cpu(), total_len.cpu(),
            )

            if not torch.equal(nct_g.cpu(), ref[0]):
                return False, f"Shape {i+1}: num_computed_tokens mismatch"
            if not torch.equal(lst_g.cpu(), ref[1]):
                return False, f"Shape {i+1}: last_sampled_tokens mismatch"
            if not torch.equal(obc_g.cpu(), ref[2]):
                return False, f"Shape {i+1}: output_bin_counts mismatch"
            if not torch.equal(ati_g.cpu(), ref[3]):
                return False, f"Shape {i+1}: all_token_ids mismatch"
            if not torch.equal(tl_g.cpu(), ref[4]):
                return False, f"Shape {i+1}: total_len mismatch"

        except Exception as e:
            return False, f"Shape {i+1}: exception: {e}"

    return True, None


def run_performance():
    import torch
    try:
        mod = load_module()
    except Exception:
        return []

    device = AKA_DEVICE
    test_cases = []

    for test_idx, (num_reqs, vocab_size, max_model_len, num_spec) in enumerate(TEST_SHAPES):
        try:
            max_num_reqs = num_reqs + 8
            query_len = num_spec + 1

            torch.manual_seed(0)
            idx_mapping = torch.arange(num_reqs, dtype=torch.int32, device=device)
            query_start_loc = torch.zeros(num_reqs + 1, dtype=torch.int32, device=device)
            for r in range(num_reqs):
                query_start_loc[r + 1] = query_start_loc[r] + query_len

            def make_inputs():
                nct = torch.randint(10, 50, (max_num_reqs,), dtype=torch.int32, device=device)
                lst = torch.randint(0, vocab_size, (max_num_reqs,), dtype=torch.int32, device=device)
                obc = torch.zeros((max_num_reqs, vocab_size), dtype=torch.int32, device=device)
                st = torch.randint(0, vocab_size, (num_reqs, num_spec + 1), dtype=torch.int32, device=device)
                ns = torch.full((num_reqs,), num_spec + 1, dtype=torch.int32, device=device)
                nr = torch.zeros(num_reqs, dtype=torch.int32, device=device)
                ati = torch.zeros((max_num_reqs, max_model_len), dtype=torch.int32, device=device)
                tlen = torch.randint(10, 50, (max_num_reqs,), dtype=torch.int32, device=device)
                return nct, lst, obc, st, ns, nr, ati, tlen

            for _ in range(WARMUP_ITERATIONS):
                nct, lst, obc, st, ns, nr, ati, tlen = make_inputs()
                mod.post_update(idx_mapping, nct, lst, obc, st, ns, nr, query_start_loc, ati, tlen)
            torch.cuda.synchronize()

            n_iter = BENCHMARK_ITERATIONS
            start_events = [torch.cuda.Event(enable_timing=True) for _ in range(n_iter)]
            end_events = [torch.cuda.Event(enable_timing=True) for _ in range(n_iter)]
            for j in range(n_iter):
                nct, lst, obc, st, ns, nr, ati, tlen = make_inputs()
                start_events[j].record()
                mod.post_update(idx_mapping, nct, lst, obc, st, ns, nr, query_start_loc, ati, tlen)
                end_events[j].record()
            torch.cuda.synchronize()
            times = [s.elapsed_time(e) for s, e in zip(start_events, end_events)]
            elapsed_ms = sum(times) / len(times)
            benchmark_metadata = {
                "benchmark_method": "cuda_event_fallback",
                "benchmark_target_ms": 20.0,
                "benchmark_retries": 1,
                "benchmark_max_repeats": 1000,
                "benchmark_effective_repeats": n_iter,
                "benchmark_fallback_reason": "per_iteration_prepare_or_state_reset",
            }

            test_cases.append({
                "test_case_id": f"perf{test_idx + 1}",
                "execution_time_ms": elapsed_ms,
                **benchmark_metadata,
                "params": {
                    "num_reqs": num_reqs,
                    "vocab_size": vocab_size,
                    "max_model_len": max_model_len,
                    "num_spec_steps": num_spec
                }
            })
        except Exception:
            test_cases.append({
                "test_case_id": f"perf{test_idx + 1}",
                "execution_time_ms": -1.0,
                "params": {
                    "num_reqs": num_reqs,
                    "vocab_size": vocab_size,
                    "max_model_len": max_model_len,
                    "num_spec_steps": num_spec
                }
            })
    return test_cases


def main():
    parser = argparse.ArgumentParser(description=f"Task runner for {TASK_NAME}")
    parser.add_argument("mode", choices=["compile", "correctness", "performance"])
    args = parser.parse_args()

    build_dir = os.path.join(TASK_DIR, "build")
    os.makedirs(build_dir, exist_ok=True)

    if args.mode == "compile":
        ok, err = run_compile()
        report = {"status": "ok" if ok else "fail", "error": err}
        with open(os.path.join(build_dir, "compile_report.json"), "w") as f:
            json.dump(report, f, indent=2)
        print(f"Compilation: {'PASS' if ok else 'FAIL'}")
        if err:
            print(f"Error: {err}")
        sys.exit(0 if ok else 1)
    elif args.mode == "correctness":
        ok, err = run_correctness()
        report = {"status": "ok" if ok else "fail", "error": err, "num_shapes": len(TEST_SHAPES)}
        with open(os.path.join(build_dir, "correctness_report.json"), "w") as f:
            json.dump(report, f, indent=2)
        print(f"Correctness: {'PASS' if ok else 'FAIL'}")
        if err:
            print(f"Error: {err}")
        sys.exit(0 if ok else 1)
    elif args.mode == "performance":
        test_cases = run_performance()
        with open(os.path.join(build_dir, "performance_report.json"), "w") as f:
            json.dump(test_cases, f, indent=2)
        if test_cases:
            total_time = sum(case["execution_time_ms"] for case in test_cases if case["execution_time_ms"] > 0)
            print(f"Performance: measured {len(test_cases)} test case(s), total time: {total_time:.4f} ms")
        else:
            print("Performance: FAILED - no test cases measured")
        sys.exit(0)


if __name__ == "__main__":
    main()
