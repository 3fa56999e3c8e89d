#!/usr/bin/env python3
"""Each agent's round overhead as ganger measures it, in one run.

For every pinned agent CLI (found in ganger's cache, where scripts/test.sh and `ganger agents
install` put them), ganger drives real rounds against its own scripted model server
(`ganger fake-llm`): a `start` (worktree, session, round 1) and a `fix` (the same session). The
agent's program is a small wrapper that records when the real CLI started and ended, so a
round's wall time splits into the agent's own time and ganger's overhead around it (model
check, worktree, snapshots, store, report, and the process start of ganger itself). Medians
over interleaved runs, so the shared machine's noise hits every agent alike.

Usage: python3 bench/agents.py [--runs N] [--agents opencode,claude,...]
Needs: cargo, git, bash, python3, the pinned CLIs (scripts/test.sh installs them).
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
AGENTS = ["opencode", "claude", "codex", "gemini", "qwen"]
SCRIPT = """default = "side answer"
repeat = true

[[turns]]
text = "Done. {{history}}"
"""
WRAPPER = """#!/bin/bash
start=$(date +%s%N)
{real} "$@"
code=$?
echo "$start $(date +%s%N) ${{1:-}}" >> {timing}
exit $code
"""


def build() -> tuple[Path, Path]:
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "ganger-cli", "-p", "ganger-bench"],
                   cwd=REPO, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release"
    return target / "ganger", target / "ganger-bench"


def pinned() -> dict[str, Path]:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ganger" / "agents"
    found = {}
    for line in (REPO / "pinned-agents.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        version = line.rsplit("@", 1)[1]
        for agent in AGENTS:
            program = cache / f"{agent}-{version}" / "node_modules" / ".bin" / agent
            if program.exists():
                found[agent] = program
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def scratch_repo(root: Path, bench: Path, agent: str, program: Path, url: str,
                 extra: str = "") -> tuple[Path, dict[str, str]]:
    """A repository at ROOT/repo, one commit, whose ganger.toml points `agent` (run as
    `program`) at the scripted model at `url`, with `extra` TOML appended; and an environment
    whose HOME is ROOT/home."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "bench")
    git(repo, "config", "user.email", "bench@example.invalid")
    (repo / "README.md").write_text("# bench\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "bench")
    toml = subprocess.run([str(bench), "scripted-toml", agent, str(program), url],
                          check=True, capture_output=True, text=True).stdout
    (repo / "ganger.toml").write_text(toml + extra)
    home = root / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local/share"), XDG_STATE_HOME=str(home / ".local/state"))
    return repo, env


class World:
    """A repository configured for one agent through a timing wrapper."""

    def __init__(self, root: Path, agent: str, program: Path, bench: Path, url: str, ganger: Path):
        self.root = root / agent
        self.root.mkdir(parents=True)
        self.timing = self.root / "timing"
        self.ganger = ganger
        self.count = 0
        wrapper = self.root / f"{agent}-timed"
        wrapper.write_text(WRAPPER.format(real=program, timing=self.timing))
        wrapper.chmod(0o755)
        # Cold rounds: each one starts the CLI, whose own time the wrapper records (warm, the
        # default for some agents, would start it once for many rounds).
        self.repo, self.env = scratch_repo(self.root, bench, agent, wrapper, url,
                                           "\n[warm]\ndefault = false\n")

    def round(self, args: list[str]) -> tuple[float, float]:
        """Runs one ganger command; returns (its wall time, the agent's own time) in seconds."""
        before = self.timing.read_text().splitlines() if self.timing.exists() else []
        start = time.perf_counter()
        result = subprocess.run([str(self.ganger), *args, "--json"], cwd=self.repo, env=self.env,
                                capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        if result.returncode != 0:
            sys.exit(f"{' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        # Besides the round itself, ganger may run `--version` and `models` (the untested-version
        # warning and the model check, both cached): those count as ganger's overhead.
        new = [line.split() for line in self.timing.read_text().splitlines()[len(before):]]
        rounds = [fields for fields in new if len(fields) < 3 or fields[2] not in ("--version", "models")]
        if len(rounds) != 1:
            sys.exit(f"the wrapper recorded {len(rounds)} rounds for {' '.join(args)}")
        began, ended = int(rounds[0][0]), int(rounds[0][1])
        return wall, (ended - began) / 1e9

    def start_and_fix(self) -> tuple[tuple[float, float], tuple[float, float]]:
        self.count += 1
        slug = f"b{self.count}"
        started = self.round(["start", slug, "--message", "Say done."])
        fixed = self.round(["fix", slug, "--message", "Say it again."])
        return started, fixed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--agents", default=",".join(AGENTS))
    options = parser.parse_args()
    ganger, bench = build()
    programs = pinned()
    agents = [a for a in options.agents.split(",") if a]
    missing = [a for a in agents if a not in programs]
    if missing:
        sys.exit(f"not installed: {', '.join(missing)} (scripts/test.sh installs the pinned CLIs)")
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="ganger-agents-bench-") as tmp:
        root = Path(tmp)
        (root / "script.toml").write_text(SCRIPT)
        server = subprocess.Popen([str(ganger), "fake-llm", "--port", str(port), "--script", str(root / "script.toml")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(0.5)
            url = f"http://127.0.0.1:{port}"
            worlds = {a: World(root, a, programs[a], bench, url, ganger) for a in agents}
            samples: dict[str, dict[str, list[float]]] = {a: {"start": [], "fix": [], "agent_start": [], "agent_fix": []} for a in agents}
            for _ in range(options.runs):
                for agent in agents:
                    (s_wall, s_agent), (f_wall, f_agent) = worlds[agent].start_and_fix()
                    samples[agent]["start"].append(s_wall - s_agent)
                    samples[agent]["fix"].append(f_wall - f_agent)
                    samples[agent]["agent_start"].append(s_agent)
                    samples[agent]["agent_fix"].append(f_agent)
        finally:
            server.terminate()
            server.wait()
    print(f"medians of {options.runs} interleaved runs; overhead = ganger's wall time minus the agent CLI's own")
    print(f"{'agent':<10} {'start overhead':>15} {'fix overhead':>13} {'agent, round 1':>15} {'agent, round 2':>15}")
    for agent in agents:
        m = {k: statistics.median(v) * 1000 for k, v in samples[agent].items()}
        print(f"{agent:<10} {m['start']:>12.1f} ms {m['fix']:>10.1f} ms {m['agent_start']:>12.0f} ms {m['agent_fix']:>12.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
