#!/usr/bin/env python3
"""The table printed last by scripts/gpu-check.sh: each measurement through hwaro (Google
Benchmark JSON from build-gpu/bench/bench_cuda_* and bench_conv) next to PyTorch's
(torch_reference.py).

A hwaro figure is found by matching the benchmark name against ROWS' pattern; its value is
a FLOP/s-like counter (TFLOP/s), bytes_per_second (GB/s), the samples counter (samples/s), or
the time per iteration (us).
Rows with no match say so rather than guess.

Usage: scripts/gpu_table.py TORCH_JSON BENCH_JSON...
"""
import json
import re
import sys

# label, key in torch_reference.py's results, regex on the hwaro benchmark name, unit,
# whether larger is better
ROWS = [
    ("matmul fp32 4096^3", "matmul_fp32", r"(?i)matmul.*(fp32|float32|f32)(?!.*tf32)", "TFLOP/s", True),
    ("matmul tf32 4096^3", "matmul_tf32", r"(?i)matmul.*tf32", "TFLOP/s", True),
    ("matmul bf16 4096^3", "matmul_bf16", r"(?i)matmul.*(bf16|bfloat16)", "TFLOP/s", True),
    ("elementwise add fp32", "elementwise_add_fp32", r"(?i)(elementwise|add).*(fp32|float32|f32)?", "GB/s", True),
    ("H2D copy, pinned", "h2d_pinned", r"BM_H2D_Pinned", "GB/s", True),
    ("H2D copy, pageable", "h2d_pageable", r"BM_H2D_Pageable", "GB/s", True),
    ("kernel launch overhead", "launch_overhead", r"(?i)launch", "us", False),
    ("CNN train step, batch 64", "cnn_train_step", r"BM_cnn_train_step_cuda", "samples/s", True),
]


def hwaro_value(bench, unit):
    if unit == "GB/s" and "bytes_per_second" in bench:
        return bench["bytes_per_second"] / 1e9
    if unit == "TFLOP/s":
        for key, value in bench.items():
            if re.fullmatch(r"(?i)t?flop(s|/s|_per_second)?|tflops", key):
                return value / 1e12 if value > 1e6 else value
        return None
    if unit == "samples/s":
        return bench.get("samples")
    if unit == "us":
        scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[bench.get("time_unit", "ns")]
        return bench["real_time"] * scale
    return None


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    torch_results = {}
    try:
        with open(argv[1]) as f:
            torch_results = json.load(f).get("results", {})
    except (OSError, ValueError) as e:
        print(f"(no PyTorch figures: {e})")
    benches = []
    for path in argv[2:]:
        try:
            with open(path) as f:
                benches += [b for b in json.load(f).get("benchmarks", []) if b.get("run_type") != "aggregate"]
        except (OSError, ValueError) as e:
            print(f"(skipping {path}: {e})")
    print(f"{'measurement':<26} {'unit':<8} {'hwaro':>10} {'torch':>10} {'hwaro/torch':>12}  hwaro benchmark")
    for label, key, pattern, unit, larger_better in ROWS:
        match = next((b for b in benches if re.search(pattern, b["name"]) and not b.get("error_occurred")), None)
        ours = hwaro_value(match, unit) if match else None
        theirs = torch_results.get(key, {}).get("value")
        ratio = "-"
        if ours and theirs:
            ratio = f"{(ours / theirs if larger_better else theirs / ours):.2f}"
        fmt = lambda v: f"{v:10.2f}" if isinstance(v, (int, float)) else f"{'n/a':>10}"
        print(f"{label:<26} {unit:<8} {fmt(ours)} {fmt(theirs)} {ratio:>12}  {match['name'] if match else '(none matched)'}")
    print("ratio > 1: hwaro is better (for launch overhead, lower time is better)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
