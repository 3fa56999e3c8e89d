#!/usr/bin/env python3
"""Gemini CLI and Qwen Code in one process (as ganger runs them) against their own relaunch.

Both CLIs start themselves a second time by default, with a heap of half the machine's memory
(docs/agents/relaunch.md); ganger sets GEMINI_CLI_NO_RELAUNCH / QWEN_CODE_NO_RELAUNCH so that
they do not. This runs cold rounds (`start`, then `fix` in the same session) through ganger
against its scripted model, the agent's program a wrapper that records the CPU time and the
wall time of the agent's whole process tree; in the "relaunch" column the wrapper removes
ganger's variable first, which is how the CLI behaves without it. Interleaved runs, medians.

Usage: python3 bench/relaunch.py [--runs N]
Needs: cargo, git, python3, the pinned CLIs (scripts/test.sh installs them).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import agents as common  # noqa: E402  (the agent benchmark's repository and server helpers)

VARIABLES = {"gemini": "GEMINI_CLI_NO_RELAUNCH", "qwen": "QWEN_CODE_NO_RELAUNCH"}
WRAPPER = """#!/bin/bash
{unset}
exec /usr/bin/time -a -o {timing} -f "%U %S %e $1" {real} "$@"
"""


class World:
    """A repository whose agent is run through the timing wrapper, with or without ganger's
    variable."""

    def __init__(self, root: Path, agent: str, program: Path, bench: Path, url: str,
                 ganger: Path, relaunch: bool):
        self.root = root / f"{agent}-{'relaunch' if relaunch else 'one'}"
        self.root.mkdir(parents=True)
        self.timing = self.root / "timing"
        self.ganger = ganger
        self.count = 0
        wrapper = self.root / f"{agent}-timed"
        unset = f"unset {VARIABLES[agent]}" if relaunch else ""
        wrapper.write_text(WRAPPER.format(unset=unset, timing=self.timing, real=program))
        wrapper.chmod(0o755)
        self.repo, self.env = common.scratch_repo(self.root, bench, agent, wrapper, url,
                                                  "\n[warm]\ndefault = false\n")

    def run(self, args: list[str]) -> tuple[float, float]:
        """One ganger command; the agent's round's (CPU seconds, wall seconds)."""
        before = self.timing.read_text().splitlines() if self.timing.exists() else []
        result = subprocess.run([str(self.ganger), *args, "--json"], cwd=self.repo, env=self.env,
                                capture_output=True, text=True, check=False)
        if result.returncode != 0:
            sys.exit(f"{' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        new = [line.split() for line in self.timing.read_text().splitlines()[len(before):]]
        rounds = [f for f in new if len(f) < 4 or f[3] not in ("--version", "models")]
        if len(rounds) != 1:
            sys.exit(f"the wrapper recorded {len(rounds)} rounds for {' '.join(args)}: {new}")
        user, system, wall = (float(x) for x in rounds[0][:3])
        return user + system, wall

    def start_and_fix(self) -> list[tuple[float, float]]:
        self.count += 1
        slug = f"r{self.count}"
        return [self.run(["start", slug, "--message", "Say done."]),
                self.run(["fix", slug, "--message", "Say it again."])]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    ganger, bench = common.build()
    programs = common.pinned()
    missing = [a for a in VARIABLES if a not in programs]
    if missing:
        sys.exit(f"not installed: {', '.join(missing)} (scripts/test.sh installs the pinned CLIs)")
    port = common.free_port()
    with tempfile.TemporaryDirectory(prefix="ganger-relaunch-bench-") as tmp:
        root = Path(tmp)
        (root / "script.toml").write_text(common.SCRIPT)
        server = subprocess.Popen([str(ganger), "fake-llm", "--port", str(port), "--script",
                                   str(root / "script.toml")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(0.5)
            url = f"http://127.0.0.1:{port}"
            worlds = {(a, r): World(root, a, programs[a], bench, url, ganger, r)
                      for a in VARIABLES for r in (False, True)}
            samples: dict[tuple[str, bool], list[tuple[float, float]]] = {k: [] for k in worlds}
            for _ in range(options.runs):
                for key, world in worlds.items():
                    samples[key].extend(world.start_and_fix())
        finally:
            server.terminate()
            server.wait()
    print(f"medians of {options.runs} interleaved runs of a start and a fix (cold rounds); "
          "CPU = user + system of the agent's process tree")
    print(f"{'agent':<8} {'CPU, one process':>17} {'CPU, relaunch':>14} {'wall, one':>10} {'wall, relaunch':>15}")
    for agent in VARIABLES:
        one, two = samples[(agent, False)], samples[(agent, True)]
        cpu1, cpu2 = (statistics.median(c for c, _ in s) for s in (one, two))
        wall1, wall2 = (statistics.median(w for _, w in s) for s in (one, two))
        print(f"{agent:<8} {cpu1:>15.2f} s {cpu2:>12.2f} s {wall1:>8.2f} s {wall2:>13.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
