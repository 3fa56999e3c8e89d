#!/usr/bin/env python3
"""A fix round's wall time with the agent kept warm against started cold, per agent, in one run.

For every pinned agent CLI found in ganger's cache, two repositories point the agent at ganger's
own scripted model server (`ganger fake-llm`, which answers at once): one with `[warm] default =
true`, one without. Each starts a task, then the runs interleave one `fix` in each (cold, warm,
for every agent in turn), timed from the command's start to its report. Agents without a warm
mode run cold in both and say so. At the end, the memory of each warm agent (`ganger warm
list`). Medians, so the shared machine's noise hits both sides alike.

Usage: python3 bench/warm.py [--runs N] [--agents opencode,gemini,...]
Needs: cargo, git, python3, the pinned CLIs (scripts/test.sh installs them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agents import AGENTS, SCRIPT, build, free_port, pinned, scratch_repo  # noqa: E402


class World:
    """A repository configured for one agent, warm or cold."""

    def __init__(self, root: Path, agent: str, program: Path, bench: Path, url: str, ganger: Path, warm: bool):
        self.root = root / f"{agent}-{'warm' if warm else 'cold'}"
        self.ganger = ganger
        self.repo, self.env = scratch_repo(self.root, bench, agent, program, url,
                                           f"\n[warm]\ndefault = {'true' if warm else 'false'}\n")

    def ganger_json(self, args: list[str]) -> tuple[float, dict]:
        start = time.perf_counter()
        result = subprocess.run([str(self.ganger), *args, "--json"], cwd=self.repo, env=self.env,
                                capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        if result.returncode != 0:
            sys.exit(f"{' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return wall, json.loads(result.stdout)

    def warm_stream(self, round_number: int) -> bool:
        stream = self.repo / ".ganger" / "tasks" / "b" / f"round-{round_number}.jsonl"
        first = stream.read_text().split("\n", 1)[0] if stream.exists() else ""
        return '"ganger":"turn"' in first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--agents", default=",".join(AGENTS))
    options = parser.parse_args()
    ganger, bench = build()
    programs = pinned()
    agents = [a for a in options.agents.split(",") if a]
    missing = [a for a in agents if a not in programs]
    if missing:
        sys.exit(f"not installed: {', '.join(missing)} (scripts/test.sh installs the pinned CLIs)")
    port = free_port()
    fix: dict[tuple[str, bool], list[float]] = {}
    first: dict[tuple[str, bool], float] = {}
    warm_rounds: dict[str, int] = {}
    memory: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="ganger-warm-bench-") as tmp:
        root = Path(tmp)
        (root / "script.toml").write_text(SCRIPT)
        server = subprocess.Popen([str(ganger), "fake-llm", "--port", str(port), "--script", str(root / "script.toml")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        worlds: dict[tuple[str, bool], World] = {}
        try:
            time.sleep(0.5)
            url = f"http://127.0.0.1:{port}"
            for agent in agents:
                for warm in (False, True):
                    world = World(root, agent, programs[agent], bench, url, ganger, warm)
                    worlds[(agent, warm)] = world
                    first[(agent, warm)], _ = world.ganger_json(["start", "b", "--message", "Say done."])
                    fix[(agent, warm)] = []
            for run in range(options.runs):
                for agent in agents:
                    for warm in (False, True):
                        wall, report = worlds[(agent, warm)].ganger_json(["fix", "b", "--message", f"Again, {run}."])
                        if report.get("status") != "done":
                            sys.exit(f"{agent} {'warm' if warm else 'cold'} fix: {report.get('status')}: {report.get('reason')}")
                        fix[(agent, warm)].append(wall)
            for agent in agents:
                world = worlds[(agent, True)]
                warm_rounds[agent] = sum(world.warm_stream(n) for n in range(1, options.runs + 2))
                _, listed = world.ganger_json(["warm", "list"])
                memory[agent] = sum(a["memory_bytes"] for a in listed["agents"])
                world.ganger_json(["warm", "stop", "--all"])
        finally:
            server.terminate()
            server.wait()
    print(f"a fix round, command to report, instant scripted model; medians of {options.runs} interleaved runs "
          f"({os.cpu_count()} cores)")
    print(f"{'agent':<10} {'cold fix':>10} {'warm fix':>10} {'cold/warm':>10} {'warm rounds':>12} "
          f"{'warm memory':>12} {'first round cold/warm':>22}")
    for agent in agents:
        cold = statistics.median(fix[(agent, False)]) * 1000
        hot = statistics.median(fix[(agent, True)]) * 1000
        rounds = warm_rounds[agent]
        mode = f"{rounds}/{options.runs + 1}" if rounds else "none (cold)"
        mem = f"{memory[agent] / 1e6:.0f} MB" if memory[agent] else "-"
        starts = f"{first[(agent, False)] * 1000:.0f} / {first[(agent, True)] * 1000:.0f} ms"
        print(f"{agent:<10} {cold:>7.0f} ms {hot:>7.0f} ms {cold / hot:>9.1f}x {mode:>12} {mem:>12} {starts:>22}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
