#!/usr/bin/env python3
"""`ganger fleet status` over a big queue (issue 13, item 18): 20,000 and 100,000 queued items.

For each count N, a throw-away repository gets a fleet of one task through `ganger fleet
submit` (which makes the store and the fleet), then N - 1 more queued starts of that fleet
written straight into the `queue` table in one transaction (a submission of them all would
write N prompt files, which is slow on its own and not what this measures). Then
`ganger fleet status NAME` (the table), `fleet status NAME --json` and `ganger status` are
timed, wall clock, median over --runs runs each.

Usage: python3 bench/fleet_status.py [--counts 20000,100000] [--runs 3] [--ganger PATH]
Needs: cargo (unless --ganger), git, python3.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


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


def world(root: Path, count: int, ganger: Path) -> tuple[Path, dict[str, str]]:
    repo = root / "repo"
    repo.mkdir()
    env = env_for(root / "home")
    (root / "home").mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, env=env, check=True)
    (repo / "f").write_text("f\n")
    subprocess.run(["git", "add", "."], cwd=repo, env=env, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, env=env, check=True)
    (repo / "ganger.toml").write_text(
        '[defaults]\nagent = "command"\n[agents.command]\nargv = ["true"]\nformat = "text"\n'
    )
    fleet = root / "big.toml"
    fleet.write_text('[[task]]\nslug = "s0"\nmessage = "m"\n')
    subprocess.run([str(ganger), "fleet", "submit", str(fleet)], cwd=repo, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    db = sqlite3.connect(repo / ".ganger" / "state.db")
    with db:
        db.executemany(
            "INSERT INTO queue (slug, kind, prompt_file, commander, fleet, created_at, updated_at) "
            "VALUES (?, 'start', '/nowhere', 'bench', 'big', 0, 0)",
            ((f"s{n}",) for n in range(1, count)),
        )
    db.close()
    return repo, env


def timed(ganger: Path, repo: Path, env: dict[str, str], args: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run([str(ganger), *args], cwd=repo, env=env, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="20000,100000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ganger", type=Path)
    args = parser.parse_args()
    ganger = args.ganger.resolve() if args.ganger else build()
    print(f"ganger: {ganger}")
    print(f"{'items':>8}  {'fleet status':>12}  {'--json':>8}  {'status':>8}")
    for count in (int(c) for c in args.counts.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            repo, env = world(Path(tmp), count, ganger)
            table = timed(ganger, repo, env, ["fleet", "status", "big"], args.runs)
            json = timed(ganger, repo, env, ["fleet", "status", "big", "--json"], args.runs)
            status = timed(ganger, repo, env, ["status"], args.runs)
            print(f"{count:>8}  {table:>11.3f}s  {json:>7.3f}s  {status:>7.3f}s")


if __name__ == "__main__":
    main()
