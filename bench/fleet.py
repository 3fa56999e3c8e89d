#!/usr/bin/env python3
"""The scheduler under load, in one run: 500 rounds of a fast fake agent.

A fleet of N tasks (default 500) whose agent is the `command` agent running a shell that
answers at once (it records when it started and ended), run by `ganger fleet run` under a
global limit L (default 8). Printed side by side:

- the same N rounds started directly, L at a time, with no scheduler: `ganger start --detach`
  then `ganger wait` (a round in a detached host, as the scheduler starts every round, so that
  killing it stops none), and `ganger start` in the foreground (the round in the command's own
  process, the cheapest way to run one);
- the fleet's drain time, and the ideal: the agents' own time spread over L slots;
- ganger's whole cost per round, (drain - ideal) / N: worktree, records, host process,
  snapshot, the scheduler, everything but the agent;
- the scheduler's overhead per round: the time its loop spent deciding (passes without the
  deliveries, as `fleet run --json` reports it) / N, and (fleet drain - detached drain) / N,
  what running the rounds through the scheduler adds to starting them detached by hand;
- the daemon's peak RSS (VmHWM of the `fleet run` process, sampled every 20 ms).

Medians over --runs interleaved runs (default 3), so the shared machine's noise hits both
sides alike.

Usage: python3 bench/fleet.py [--tasks N] [--limit L] [--runs R] [--ganger PATH]
Needs: cargo, git, bash, python3.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
AGENT = """#!/bin/bash
start=$(date +%s%N)
cat > /dev/null
echo "done"
echo "$start $(date +%s%N)" >> {timing}
"""


def build() -> Path:
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "ganger-cli"], cwd=REPO, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release"
    return target / "ganger"


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GANGER_")}
    env.update({
        "HOME": str(home), "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b", "USER": "bench",
    })
    return env


def world(root: Path, name: str) -> tuple[Path, Path, dict[str, str]]:
    repo = root / name / "repo"
    home = root / name / "home"
    repo.mkdir(parents=True)
    home.mkdir(parents=True)
    env = env_for(home)
    timing = root / name / "timing.txt"
    agent = root / name / "agent.sh"
    agent.write_text(AGENT.format(timing=timing))
    agent.chmod(0o755)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, env=env, check=True)
    (repo / "README.md").write_text("bench\n")
    (repo / "ganger.toml").write_text(
        '[defaults]\nagent = "command"\n\n[agents.command]\n'
        f'argv = ["{agent}"]\nformat = "text"\n')
    subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, env=env, check=True)
    return repo, timing, env


def agent_time(timing: Path) -> list[float]:
    spans = []
    for line in timing.read_text().splitlines():
        start, end = line.split()
        spans.append((int(end) - int(start)) / 1e9)
    return spans


def direct(ganger: Path, root: Path, tasks: int, limit: int, run: int,
           detach: bool = False) -> dict[str, float]:
    repo, timing, env = world(root, f"direct-{'detached-' if detach else ''}{run}")

    def one(n: int) -> None:
        quiet = {"cwd": repo, "env": env, "stdout": subprocess.DEVNULL,
                 "stderr": subprocess.DEVNULL, "check": True}
        if detach:
            # As the scheduler starts rounds: in a detached host, then waited for.
            subprocess.run([str(ganger), "start", f"t{n}", "--message", "hello", "--detach"], **quiet)
            subprocess.run([str(ganger), "wait", f"t{n}"], **quiet)
        else:
            subprocess.run([str(ganger), "start", f"t{n}", "--message", "hello"], **quiet)

    began = time.monotonic()
    with ThreadPoolExecutor(limit) as pool:
        list(pool.map(one, range(tasks)))
    drain = time.monotonic() - began
    spans = agent_time(timing)
    assert len(spans) == tasks, len(spans)
    return {"drain": drain, "ideal": sum(spans) / limit}


def fleet(ganger: Path, root: Path, tasks: int, limit: int, run: int) -> dict[str, float]:
    repo, timing, env = world(root, f"fleet-{run}")
    file = root / f"fleet-{run}.toml"
    file.write_text(f'name = "bench"\n[limits]\nglobal = {limit}\n' + "".join(
        f'[[task]]\nslug = "t{n}"\nmessage = "hello"\n' for n in range(tasks)))
    began = time.monotonic()
    proc = subprocess.Popen([str(ganger), "fleet", "run", str(file), "--json"], cwd=repo, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    peak = [0]

    def sample() -> None:
        status = Path(f"/proc/{proc.pid}/status")
        while proc.poll() is None:
            try:
                for line in status.read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak[0] = max(peak[0], int(line.split()[1]))
            except OSError:
                break
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    out, _ = proc.communicate()
    drain = time.monotonic() - began
    sampler.join()
    assert proc.returncode == 0, out[-2000:]
    drained = next(json.loads(line) for line in out.splitlines() if '"event":"drained"' in line)
    spans = agent_time(timing)
    assert len(spans) == tasks, len(spans)
    return {"drain": drain, "ideal": sum(spans) / limit, "rss_mb": peak[0] / 1024,
            "deciding": drained["deciding_ms"] / 1000, "passes": drained["passes"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--limit", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ganger", type=Path, help="use this binary instead of building one")
    args = parser.parse_args()
    ganger = args.ganger or build()
    direct_runs, detached_runs, fleet_runs = [], [], []
    with tempfile.TemporaryDirectory(prefix="ganger-bench-fleet-") as tmp:
        root = Path(tmp)
        for run in range(args.runs):
            direct_runs.append(direct(ganger, root, args.tasks, args.limit, run))
            detached_runs.append(direct(ganger, root, args.tasks, args.limit, run, detach=True))
            fleet_runs.append(fleet(ganger, root, args.tasks, args.limit, run))
            subprocess.run(["rm", "-rf", str(root / f"direct-{run}"), str(root / f"fleet-{run}"),
                            str(root / f"direct-detached-{run}")])

    def med(runs: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    n = args.tasks
    fleet_drain, direct_drain = med(fleet_runs, "drain"), med(direct_runs, "drain")
    detached_drain = med(detached_runs, "drain")
    fleet_ideal = med(fleet_runs, "ideal")
    added = (fleet_drain - detached_drain) / n * 1000
    deciding = med(fleet_runs, "deciding") / n * 1000
    rss = med(fleet_runs, "rss_mb")
    met = "yes" if deciding < 5 and added < 5 else "no"

    def per_round(drain: float, ideal: float) -> float:
        return (drain - ideal) / n * 1000

    print(f"{n} rounds of a fast fake agent, limit {args.limit}; medians of {args.runs} interleaved runs "
          f"({os.cpu_count()} cores)")
    print(f"{'measure':50} {'fleet run':>9} {'detached':>9} {'foregr.':>9}  target    met")
    print(f"{'drain (s)':50} {fleet_drain:9.2f} {detached_drain:9.2f} {direct_drain:9.2f}")
    print(f"{'ideal: the agents own time / limit (s)':50} {fleet_ideal:9.2f} "
          f"{med(detached_runs, 'ideal'):9.2f} {med(direct_runs, 'ideal'):9.2f}")
    print(f"{'ganger per round in all: (drain - ideal) / N (ms)':50} "
          f"{per_round(fleet_drain, fleet_ideal):9.2f} "
          f"{per_round(detached_drain, med(detached_runs, 'ideal')):9.2f} "
          f"{per_round(direct_drain, med(direct_runs, 'ideal')):9.2f}")
    print(f"{'scheduler overhead per round: loop deciding (ms)':50} {deciding:9.2f} {'':19}  < 5 ms    {met}")
    print(f"{'  and (fleet - detached drain) / N (ms)':50} {added:9.2f}")
    print(f"{'  passes of the loop':50} {med(fleet_runs, 'passes'):9.0f}")
    print(f"{'daemon peak RSS (MB)':50} {rss:9.1f} {'':19}  < 100 MB  {'yes' if rss < 100 else 'no'}")


if __name__ == "__main__":
    main()
