#!/usr/bin/env python3
"""The same few GPU measurements as hwaro's bench_cuda_* programs, through PyTorch, for
scripts/gpu-check.sh's comparison table. Timed with torch.cuda.Event on the current stream,
after a warm-up, as the median of several repeats. Writes JSON {name: {"value", "unit"}}.

Usage: scripts/torch_reference.py [--out FILE]
"""
import argparse
import json
import statistics
import sys


def timed_ms(torch, fn, repeats=20, inner=1):
    """Median milliseconds per call of fn, measured with CUDA events."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / inner)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="-")
    args = parser.parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"torch_reference: PyTorch is not installed ({e})", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("torch_reference: torch.cuda.is_available() is false", file=sys.stderr)
        return 2

    results = {}
    n = 4096
    for name, dtype, tf32 in (("matmul_fp32", torch.float32, False), ("matmul_tf32", torch.float32, True),
                              ("matmul_bf16", torch.bfloat16, False)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)
        ms = timed_ms(torch, lambda: torch.mm(a, b), repeats=10)
        results[name] = {"value": 2 * n**3 / (ms * 1e-3) / 1e12, "unit": "TFLOP/s", "shape": f"{n}x{n}x{n}"}
    torch.backends.cuda.matmul.allow_tf32 = False

    numel = 1 << 26  # 256 MiB of float32 per operand
    x = torch.randn(numel, device="cuda")
    y = torch.randn(numel, device="cuda")
    out = torch.empty_like(x)
    ms = timed_ms(torch, lambda: torch.add(x, y, out=out))
    results["elementwise_add_fp32"] = {"value": 3 * 4 * numel / (ms * 1e-3) / 1e9, "unit": "GB/s", "numel": numel}

    nbytes = 256 << 20
    device_buffer = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    for name, pinned in (("h2d_pinned", True), ("h2d_pageable", False)):
        host = torch.ones(nbytes, dtype=torch.uint8, pin_memory=pinned)
        ms = timed_ms(torch, lambda: device_buffer.copy_(host, non_blocking=True), repeats=10)
        results[name] = {"value": nbytes / (ms * 1e-3) / 1e9, "unit": "GB/s", "bytes": nbytes}

    tiny = torch.zeros(1, device="cuda")
    launches = 1000
    ms = timed_ms(torch, lambda: tiny.add_(1.0), repeats=10, inner=launches)
    results["launch_overhead"] = {"value": ms * 1e3, "unit": "us", "note": "one tiny add_, events around 1000"}

    # The CNN of bench/bench_conv.cpp's BM_cnn_train_step_cuda, step for step: batch 64, float32
    # with TF32 off in cuDNN too (hwaro's default), cudnn.benchmark off (PyTorch's default), SGD
    # with momentum, and the step waited for each time, as hwaro's benchmark does.
    torch.backends.cudnn.allow_tf32 = False
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, padding=1),
                          nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * 7 * 7, 10)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    batch = 64
    images = torch.randn(batch, 1, 28, 28, device="cuda")
    labels = torch.randint(0, 10, (batch,), device="cuda")

    def train_step():
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(images), labels).backward()
        optimizer.step()

    for _ in range(10):  # warm-up: cuDNN's heuristics and the optimiser's state
        train_step()
    ms = timed_ms(torch, train_step, repeats=50)
    results["cnn_train_step"] = {"value": batch / (ms * 1e-3), "unit": "samples/s", "batch": batch}

    text = json.dumps({"torch_version": torch.__version__, "device": torch.cuda.get_device_name(0),
                       "results": results}, indent=2)
    if args.out == "-":
        print(text)
    else:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
