#!/usr/bin/env python3
"""What the model gateway adds to a model request, against talking to the upstream directly,
side by side in one run (issue 42; docs/gateway.md, docs/benchmarks.md).

Runs `gateway-bench` (crates/gateway/src/bin/gateway-bench.rs), built in release mode:

  latency       sequential requests on a kept-alive connection, alternating blocks of 100
                direct and through the gateway (a process of its own), time to the end of
                the body: p50 and p95 of each and the difference    target: added p50 < 1 ms
  first byte    a stream whose upstream sends its first event at once: time to the first
                body byte, direct and through the gateway
  load          N concurrent streaming rounds (22 events over ~100 ms each, 20 in a row per
                round) through one gateway: wall time, the gateway's CPU and peak memory

The upstream is a small server in the benchmark's process that answers at once, so what is
measured is the gateway's own work: placeholder found, grant looked up, key file read, the
request rebuilt and forwarded on a pooled connection, the response streamed back and counted.

Usage: python3 bench/gateway.py [--requests N] [--concurrent N] [--runs N]
Needs: cargo.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=6000)
    parser.add_argument("--concurrent", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "ganger-gateway", "--bin", "gateway-bench"],
        cwd=ROOT,
        check=True,
    )
    binary = os.path.join(ROOT, "target", "release", "gateway-bench")
    added_p50, added_p95, first_added = [], [], []
    for run in range(args.runs):
        out = subprocess.run(
            [binary, str(args.requests), str(args.concurrent)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        print(f"--- run {run + 1} of {args.runs}")
        print(out, end="")
        rows = re.findall(r"^\s+p(50|95)\s+([\d.]+)\s+([\d.]+)\s+(-?[\d.]+)$", out, re.M)
        added_p50.append(float(rows[0][3]))
        added_p95.append(float(rows[1][3]))
        first_added.append(float(rows[2][3]))
    print("--- medians over the runs")
    print(f"added latency p50: {statistics.median(added_p50):.3f} ms (target < 1 ms)")
    print(f"added latency p95: {statistics.median(added_p95):.3f} ms")
    print(f"added delay to the first streamed byte, p50: {statistics.median(first_added):.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
