#!/usr/bin/env python3
"""A fleet of real agent rounds, kept warm against started cold, in one run.

The fleet benchmark (bench/fleet.py) with a real, pinned agent CLI against ganger's scripted
model server (`ganger fake-llm`, which answers at once) instead of a shell: T tasks (default
20) of R rounds each (default 25: 500 rounds). Round 1 of every task comes from a fleet file
(`ganger fleet run`, at most L rounds at once, default 2 for 2 cores); then each further round
of every task is a `ganger fix`, L at a time, as a supervisor sends them (a queued fix is for
`ganger serve`, which does not end when drained), so every round after the first continues its
task's session. One repository has `[warm]
default = false`, the other `[warm] default = true` with `max = T` (every task keeps its agent
between rounds; with fewer, the least recently used would be stopped before its next round).
The two sides alternate for --runs runs. Printed: the drain time, the time per round, the rounds
that really ran warm (their stream opens with the warm host's `turn` line), and the memory of
the warm agents at the end (`ganger warm list`).

Usage: python3 bench/fleet_warm.py [--agent claude] [--tasks T] [--rounds R] [--limit L] [--runs N]
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agents import SCRIPT, build, free_port, pinned, scratch_repo  # noqa: E402


class Side:
    """A repository whose fleet runs warm or cold."""

    def __init__(self, root: Path, name: str, agent: str, program: Path, bench: Path, url: str,
                 ganger: Path, warm: bool, tasks: int, limit: int):
        self.root = root / name
        self.program, self.tasks, self.limit = ganger, tasks, limit
        warm_table = f"default = true\nmax = {tasks}\n" if warm else "default = false\n"
        self.repo, self.env = scratch_repo(self.root, bench, agent, program, url,
                                           f"\n[warm]\n{warm_table}")
        self.fleet = self.root / "fleet.toml"
        self.fleet.write_text(f'name = "bench"\n[limits]\nglobal = {limit}\n' + "".join(
            f'[[task]]\nslug = "t{n}"\nmessage = "Say done."\n' for n in range(tasks)))
        self.rounds = 0

    def ganger(self, *args: str) -> str:
        result = subprocess.run([str(self.program), *args], cwd=self.repo, env=self.env,
                                capture_output=True, text=True, check=False)
        if result.returncode != 0:
            sys.exit(f"{' '.join(args)} failed ({result.returncode}):\n{result.stdout[-3000:]}\n"
                     f"{result.stderr[-3000:]}")
        return result.stdout

    def round_of_every_task(self) -> float:
        """Round 1 from the fleet file, or one fix round of every task (at most `limit` at
        once, as a supervisor sends them); the wall time until all have ended."""
        began = time.perf_counter()
        if self.rounds:
            with ThreadPoolExecutor(self.limit) as pool:
                list(pool.map(lambda n: self.ganger("fix", f"t{n}", "--message", "Say it again."),
                              range(self.tasks)))
        else:
            self.ganger("fleet", "run", str(self.fleet), "--json")
        self.rounds += 1
        return time.perf_counter() - began

    def warm_rounds(self) -> int:
        warm = 0
        for stream in (self.repo / ".ganger" / "tasks").glob("t*/round-*.jsonl"):
            with stream.open() as lines:
                warm += '"ganger":"turn"' in lines.readline()
        return warm

    def warm_memory_mb(self) -> tuple[float, int]:
        agents = json.loads(self.ganger("warm", "list", "--json"))["agents"]
        return sum(agent["memory_bytes"] for agent in agents) / 2**20, len(agents)

    def stop(self) -> None:
        self.ganger("warm", "stop", "--all")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="claude")
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--limit", type=int, default=2)
    parser.add_argument("--runs", type=int, default=1)
    options = parser.parse_args()
    ganger, bench = build()
    programs = pinned()
    if options.agent not in programs:
        sys.exit(f"not installed: {options.agent} (scripts/test.sh installs the pinned CLIs)")
    port = free_port()
    drains: dict[str, list[float]] = {"cold": [], "warm": []}
    firsts: dict[str, list[float]] = {"cold": [], "warm": []}
    warm_seen: dict[str, list[int]] = {"cold": [], "warm": []}
    memory: list[tuple[float, int]] = []
    with tempfile.TemporaryDirectory(prefix="ganger-fleet-warm-") as tmp:
        root = Path(tmp)
        (root / "script.toml").write_text(SCRIPT)
        server = subprocess.Popen([str(ganger), "fake-llm", "--port", str(port), "--script",
                                   str(root / "script.toml")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(0.5)
            url = f"http://127.0.0.1:{port}"
            for run in range(options.runs):
                order = ["cold", "warm"] if run % 2 == 0 else ["warm", "cold"]
                for mode in order:
                    side = Side(root, f"{mode}-{run}", options.agent, programs[options.agent], bench,
                                url, ganger, mode == "warm", options.tasks, options.limit)
                    try:
                        walls = [side.round_of_every_task() for _ in range(options.rounds)]
                        drains[mode].append(sum(walls))
                        firsts[mode].append(walls[0])
                        warm_seen[mode].append(side.warm_rounds())
                        if mode == "warm":
                            memory.append(side.warm_memory_mb())
                    finally:
                        side.stop()
                    print(f"run {run + 1} {mode}: {sum(walls):.1f} s", file=sys.stderr)
        finally:
            server.terminate()
            server.wait()
    n = options.tasks * options.rounds
    print(f"{options.agent}: {options.tasks} tasks x {options.rounds} rounds = {n} rounds, at most "
          f"{options.limit} at once; medians of {options.runs} alternating runs ({os.cpu_count()} cores)")
    print(f"{'measure':46} {'cold':>10} {'warm':>10} {'cold/warm':>10}")
    cold, warm = statistics.median(drains["cold"]), statistics.median(drains["warm"])
    print(f"{'drain, all rounds (s)':46} {cold:10.1f} {warm:10.1f} {cold / warm:10.1f}")
    print(f"{'per round (ms)':46} {cold / n * 1000:10.0f} {warm / n * 1000:10.0f}")
    c1, w1 = statistics.median(firsts["cold"]), statistics.median(firsts["warm"])
    print(f"{'round 1 of every task, from the fleet file (s)':46} {c1:10.1f} {w1:10.1f}")
    rest = n - options.tasks
    print(f"{'each later round (ms)':46} {(cold - c1) / rest * 1000:10.0f} {(warm - w1) / rest * 1000:10.0f}"
          f" {(cold - c1) / (warm - w1):10.1f}")
    print(f"{'rounds that ran warm':46} {statistics.median(warm_seen['cold']):10.0f} "
          f"{statistics.median(warm_seen['warm']):10.0f}")
    mb = statistics.median(m for m, _ in memory)
    agents = statistics.median(a for _, a in memory)
    print(f"{'warm agents at the end, their memory (MB)':46} {'':10} {mb:10.0f}  ({agents:.0f} agents)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
