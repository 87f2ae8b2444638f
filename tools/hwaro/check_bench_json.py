"""Checks `hwaro bench --json` output (read on stdin): every field there, every number sane.

Used by the hwaro_bench_quick_json test; prints "bench json ok: ..." only when all checks pass.
"""
import json
import sys


def fail(message):
    print("bench json check failed: " + message)
    sys.exit(1)


def main():
    report = json.load(sys.stdin)
    for key in ("date_utc", "quick", "cpu", "load_average", "gpu_note", "devices", "results", "skipped"):
        if key not in report:
            fail("missing top-level field " + key)
    if report["cpu"]["logical_cores"] <= 0 or report["cpu"]["threads"] <= 0:
        fail("cpu cores and threads must be positive: " + json.dumps(report["cpu"]))
    for when in ("before", "after"):
        load = report["load_average"][when]
        if load is not None and load < 0:
            fail("load average " + when + " must not be negative")
    devices = {d["device"]: d for d in report["devices"]}
    if "cpu" not in devices:
        fail("the cpu is not among the devices")
    for d in report["devices"]:
        if d["peak_gflops"] is None:
            if not d["peak_how"].startswith("n/a"):
                fail(d["device"] + ": no peak but no n/a reason")
        elif d["peak_gflops"] <= 0:
            fail(d["device"] + ": peak must be positive")
    gpus = [name for name in devices if name.startswith("cuda:")]
    if not gpus and not report["gpu_note"].startswith("no CUDA device: GPU rows not measured ("):
        fail("no GPU and no note saying so: " + repr(report["gpu_note"]))
    if not report["results"]:
        fail("no results")
    measured = set()
    seen = set()
    for r in report["results"]:
        where = r["workload"] + " on " + r["device"]
        if where in seen:
            fail(where + ": measured twice")
        seen.add(where)
        if r["device"] not in devices:
            fail(where + ": device not listed")
        if r["runs"] < 1:
            fail(where + ": no runs")
        for key in ("median_ms", "p10_ms", "p90_ms", "throughput"):
            if not r[key] > 0:
                fail(where + ": " + key + " must be positive, found " + repr(r[key]))
        if not r["p10_ms"] <= r["median_ms"] <= r["p90_ms"]:
            fail(where + ": expected p10 <= median <= p90")
        if r["throughput_unit"] not in ("GFLOP/s", "samples/s"):
            fail(where + ": unknown unit " + r["throughput_unit"])
        if r["fraction_of_peak"] is None:
            if not r["fraction_of_peak_note"].startswith("n/a"):
                fail(where + ": no fraction of peak and no n/a reason")
        elif not r["fraction_of_peak"] > 0:
            fail(where + ": fraction of peak must be positive")
        if r["flops_per_run"] is not None and r["throughput_unit"] == "GFLOP/s":
            expected = r["flops_per_run"] / (r["median_ms"] * 1e-3) / 1e9
            if abs(expected - r["throughput"]) > 1e-6 * expected:
                fail(where + ": throughput is not flops / median")
        if r["device"] == "cpu":
            if r["speedup_vs_cpu"] is not None:
                fail(where + ": a CPU row has no speed-up over itself")
        elif r["speedup_vs_cpu"] is not None and not r["speedup_vs_cpu"] > 0:
            fail(where + ": speed-up must be positive")
        if r["workload"].startswith("train step "):
            batch = int(r["workload"].rsplit(" ", 1)[1])
            expected = batch / (r["median_ms"] * 1e-3)
            if r["throughput_unit"] != "samples/s" or abs(expected - r["throughput"]) > 1e-6 * expected:
                fail(where + ": throughput is not samples / median")
        measured.add(r["workload"])
    if not any(w.startswith("matmul ") for w in measured):
        fail("no matmul measured")
    if not any(w.startswith("train step mlp, batch ") for w in measured):
        fail("no training step of the MLP measured")
    print("bench json ok: %d rows on %s" % (len(report["results"]), ", ".join(sorted(devices))))


main()
