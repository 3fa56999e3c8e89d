#!/usr/bin/env python3
"""Workers sharing a PostgreSQL store (issue 19): a fleet drained by 1, 2 and 4 `ganger worker`s.

Two fleets, each drained once per worker count in every run (the counts interleaved, so the
shared machine's noise hits each alike):

- N rounds (default 1000) of an instant `command` agent: the rounds per second, ganger's whole
  cost per round ((drain - the agents' own time spread over the slots) / N: worktree, records,
  host process, snapshot, scheduling, everything but the agent), the database's time per
  round (`pg_stat_database.active_time`: time spent executing statements, every process's)
  and its size per round (`pg_database_size` after, less the empty schema's, / N);
- M rounds (default 100) of an agent that sleeps 1 s, where the agent's own time dominates:
  the drain time, and how much faster 2 and 4 workers drain than 1.

Every worker has the same capacity (--capacity, default 2): 4 workers have four times the
slots of one. Each worker is a host of its own: a network namespace joined to this machine by
a veth pair (bench/netns_hosts.py, as the tests make hosts), reaching the database only over
its link; with --no-namespaces (or without root and iproute2, said in the output) they are
processes on this machine reaching it on loopback. Each drain is checked: every task one
round, done.

The server is a private cluster this script makes with scripts/postgres-cluster (fsync off, as
the tests' cluster: figures for the database's own durability are not what this measures),
listening on loopback and on the hosts' service address; or GANGER_TEST_POSTGRES when set
(then the workers run on this machine: another's server does not listen on the hosts' links).

Usage: python3 bench/workers.py [--rounds N] [--sleepy M] [--capacity C] [--runs R]
                                [--workers 1,2,4] [--ganger PATH] [--no-namespaces]
Needs: cargo, git, bash, python3, PostgreSQL's binaries (apt-get install postgresql); root
and iproute2 for the namespaces.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fleet import build, env_for  # noqa: E402
import netns_hosts  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
AGENT = """#!/bin/bash
start=$(date +%s%N)
cat > /dev/null
{sleep}
echo "DONE: ok"
echo "$start $(date +%s%N)" >> {timing}
"""


def psql(url: str, sql: str) -> str:
    out = subprocess.run(["psql", url, "-XAtqc", sql], check=True, capture_output=True, text=True)
    return out.stdout.strip()


def server(tmp: Path) -> str:
    url = os.environ.get("GANGER_TEST_POSTGRES")
    if url:
        return url
    made = subprocess.run([str(REPO / "scripts" / "postgres-cluster"), str(tmp / "pg"), "55439"],
                          check=True, capture_output=True, text=True)
    return made.stdout.strip()


def pg_ctl(tmp: Path, *args: str) -> None:
    pg_bin = sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1]
    # The server started inherits pg_ctl's output: a pipe here would never end.
    subprocess.run(["runuser", "-u", "postgres", "--", str(pg_bin / "pg_ctl"), "-D",
                    str(tmp / "pg" / "data"), "-l", str(tmp / "pg" / "log"), *args], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop(tmp: Path) -> None:
    """Stops the private cluster this script made."""
    pg_ctl(tmp, "stop", "-m", "immediate", "-w")


def listen_also(tmp: Path, hosts: netns_hosts.Hosts) -> None:
    """Has the private cluster listen on the hosts' service address, and let them in."""
    data = tmp / "pg" / "data"
    with open(data / "postgresql.conf", "a") as conf:
        conf.write(f"\nlisten_addresses = '127.0.0.1,{hosts.service}'\n")
    with open(data / "pg_hba.conf", "a") as hba:
        hba.write(f"\nhost all all {hosts.network} scram-sha-256\n")
    pg_ctl(tmp, "restart", "-m", "fast", "-w")


def database(admin: str, name: str) -> str:
    psql(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    psql(admin, f"CREATE DATABASE {name}")
    base, _ = admin.rsplit("/", 1)
    return f"{base}/{name}"


def drain(ganger: Path, root: Path, admin: str, name: str, rounds: int, workers: int,
          capacity: int, sleep: float, hosts: netns_hosts.Hosts | None) -> dict[str, float]:
    repo, home = root / name / "repo", root / name / "home"
    repo.mkdir(parents=True)
    home.mkdir(parents=True)
    env = env_for(home)
    url = database(admin, name)
    env["GANGER_STORE"] = url
    timing = root / name / "timing.txt"
    agent = root / name / "agent.sh"
    agent.write_text(AGENT.format(timing=timing, sleep=f"sleep {sleep}" if sleep else ""))
    agent.chmod(0o755)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, env=env, check=True)
    (repo / "README.md").write_text("bench\n")
    (repo / "ganger.toml").write_text(
        '[defaults]\nagent = "command"\n\n[agents.command]\n'
        f'argv = ["{agent}"]\nformat = "text"\n')
    subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, env=env, check=True)
    file = root / name / "fleet.toml"
    file.write_text('name = "bench"\n' + "".join(
        f'[[task]]\nslug = "t{n}"\nmessage = "hello"\n' for n in range(rounds)))
    quiet = {"cwd": repo, "env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    # The schema is made by the first command; its size is what an empty store takes.
    subprocess.run([str(ganger), "workers"], check=True, **quiet)
    empty = int(psql(url, "SELECT pg_database_size(current_database())"))
    subprocess.run([str(ganger), "fleet", "submit", str(file)], check=True, **quiet)
    active = float(psql(url, "SELECT active_time FROM pg_stat_database WHERE datname = current_database()"))
    began = time.monotonic()
    def worker(i: int) -> subprocess.Popen:
        argv = [str(ganger), "worker", "--name", f"w{i}", "--capacity", str(capacity)]
        if hosts is None:
            return subprocess.Popen(argv, **quiet)
        # The database as the host reaches it: over its link, at the service address.
        there = dict(env, GANGER_STORE=url.replace("@127.0.0.1:", f"@{hosts.service}:"))
        return subprocess.Popen(hosts.command(i, argv), **dict(quiet, env=there))

    procs = [worker(i) for i in range(workers)]
    try:
        while True:
            time.sleep(0.2)
            left = int(psql(url, "SELECT count(*) FROM queue WHERE state <> 'ended'"))
            if left == 0:
                break
            if any(p.poll() is not None for p in procs):
                raise SystemExit(f"a worker ended early in {name}")
        elapsed = time.monotonic() - began
    finally:
        for p in procs:
            p.kill()
            p.wait()
    # Read right away: the statistics collector sends what it has within a second.
    time.sleep(1.0)
    active = float(psql(url, "SELECT active_time FROM pg_stat_database WHERE datname = current_database()")) - active
    size = int(psql(url, "SELECT pg_database_size(current_database())")) - empty
    done = int(psql(url, "SELECT count(*) FROM rounds WHERE status = 'done'"))
    tasks = int(psql(url, "SELECT count(*) FROM tasks"))
    assert (done, tasks) == (rounds, rounds), (name, done, tasks)
    spans = [(int(e) - int(s)) / 1e9 for s, e in (line.split() for line in timing.read_text().splitlines())]
    assert len(spans) == rounds, (name, len(spans))
    slots = workers * capacity
    psql(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    subprocess.run(["rm", "-rf", str(root / name)])
    return {"drain": elapsed, "ideal": sum(spans) / slots, "active_ms": active, "size": size}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--sleepy", type=int, default=100)
    parser.add_argument("--capacity", type=int, default=2)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--ganger", type=Path, help="use this binary instead of building one")
    parser.add_argument("--no-namespaces", action="store_true",
                        help="run the workers as processes on this machine")
    args = parser.parse_args()
    ganger = (args.ganger or build()).resolve()
    counts = [int(w) for w in args.workers.split(",")]
    instant: dict[int, list[dict[str, float]]] = {w: [] for w in counts}
    sleepy: dict[int, list[dict[str, float]]] = {w: [] for w in counts}
    with tempfile.TemporaryDirectory(prefix="ganger-bench-workers-") as tmp:
        root = Path(tmp)
        # The private cluster's server runs as the postgres user: it must reach its directory.
        root.chmod(0o755)
        admin = server(root)
        hosts = None
        if args.no_namespaces:
            where = "processes on this machine (--no-namespaces), the database on loopback"
        elif os.environ.get("GANGER_TEST_POSTGRES"):
            where = "processes on this machine (GANGER_TEST_POSTGRES is another's server)"
        elif not netns_hosts.available():
            where = "processes on this machine (no root or no iproute2 for namespaces)"
        else:
            hosts = netns_hosts.Hosts(max(counts))
            listen_also(root, hosts)
            where = "each in a network namespace of its own, the database over its veth link"
        try:
            for run in range(args.runs):
                for w in counts:
                    instant[w].append(drain(ganger, root, admin, f"bench_i{run}_{w}", args.rounds,
                                            w, args.capacity, 0, hosts))
                    sleepy[w].append(drain(ganger, root, admin, f"bench_s{run}_{w}", args.sleepy,
                                           w, args.capacity, 1, hosts))
        finally:
            if hosts is not None:
                hosts.close()
            if not os.environ.get("GANGER_TEST_POSTGRES"):
                stop(root)

    def med(runs: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    n, m = args.rounds, args.sleepy
    print(f"workers on one PostgreSQL store, capacity {args.capacity} each; medians of {args.runs} "
          f"interleaved run(s) ({os.cpu_count()} cores)")
    print(f"workers: {where}")
    header = "".join(f"{f'{w} worker' + ('s' if w > 1 else ''):>11}" for w in counts)
    print(f"{'measure':52}{header}  target")
    row = lambda label, values, target="": print(f"{label:52}" + "".join(f"{v:11.2f}" for v in values) + f"  {target}")  # noqa: E731
    row(f"{n} instant rounds: drain (s)", [med(instant[w], "drain") for w in counts])
    row("  rounds per second", [n / med(instant[w], "drain") for w in counts])
    row("  ganger per round in all: (drain - ideal) / N (ms)",
        [(med(instant[w], "drain") - med(instant[w], "ideal")) / n * 1000 for w in counts])
    row("  database time per round, every process (ms)", [med(instant[w], "active_ms") / n for w in counts],
        "< 10 ms")
    row("  database size per round (kB)", [med(instant[w], "size") / n / 1024 for w in counts])
    row(f"{m} rounds of an agent sleeping 1 s: drain (s)", [med(sleepy[w], "drain") for w in counts])
    base = med(sleepy[counts[0]], "drain")
    row(f"  faster than {counts[0]} worker (x)", [base / med(sleepy[w], "drain") for w in counts],
        f">= 3x at 4 workers")


if __name__ == "__main__":
    main()
