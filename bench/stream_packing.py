#!/usr/bin/env python3
"""Round streams packed on PostgreSQL (issue 44): the streams tables' size after a fleet of N
rounds (default 1000), the old binary (streams kept as rows, chunk by chunk) against the new
(a finished round's streams packed into one gzip object each by its host), in one run.

Each binary drains the same fleet on a database of its own with two `ganger worker`s on this
machine (capacity 4 each); the agent is a `command` agent that prints 60 event lines of the
kind OpenCode prints, 5 ms apart (an agent streams its events as they come, so its host
appends them a line or a few at a time: a chunk row each), the same for every task. After
each drain it reads:

- the size of `streams` and `stream_chunks` (`pg_total_relation_size`, indexes and TOAST
  included) as the drain left them, and again after a plain `VACUUM` (what autovacuum does on
  its own: the space of deleted rows is free for the next rows, and a table's empty tail goes
  back to the file system);
- the live bytes: the chunks' bytes still in rows, and the packed objects' bytes;
- `ganger log t0 --raw` and `ganger log t0` (an old round: the fleet's first task) from each
  store, which must be the same bytes from the rows (old) and from the packed object (new).

Usage: python3 bench/stream_packing.py --old PATH --new PATH [--rounds N]
  (build the old binary from the base commit in a worktree with its own target dir:
   git worktree add /tmp/base BASE && CARGO_TARGET_DIR=/tmp/base-target cargo build -p ganger-cli)
Needs: git, psql, PostgreSQL's binaries (scripts/postgres-cluster), or GANGER_TEST_POSTGRES.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fleet import world  # noqa: E402
from workers import database, psql, server  # noqa: E402

AGENT = r"""#!/bin/bash
cat > /dev/null
for i in $(seq 1 60); do
  echo "{\"type\":\"text\",\"timestamp\":1765000${i}000,\"sessionID\":\"ses_bench\",\"part\":{\"id\":\"prt_0${i}\",\"type\":\"text\",\"text\":\"step $i: reading src/module_$((i % 7)).rs and changing how the parser handles case $i of the grammar\"}}"
  sleep 0.005
done
echo "DONE: ok"
"""

TABLES = "pg_total_relation_size('streams') + pg_total_relation_size('stream_chunks')"


def drain(ganger: Path, root: Path, admin: str, name: str, rounds: int) -> dict:
    # The world of bench/fleet.py (a repository whose agent is root/name/agent.sh), with
    # this bench's agent in place of its own.
    repo, _, env = world(root, name)
    (root / name / "agent.sh").write_text(AGENT)
    url = database(admin, name)
    env["GANGER_STORE"] = url
    file = root / name / "fleet.toml"
    file.write_text('name = "bench"\n' + "".join(
        f'[[task]]\nslug = "t{n}"\nmessage = "hello"\n' for n in range(rounds)))
    quiet = {"cwd": repo, "env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    subprocess.run([str(ganger), "fleet", "submit", str(file)], check=True, **quiet)
    began = time.monotonic()
    procs = [subprocess.Popen([str(ganger), "worker", "--name", f"w{i}", "--capacity", "4"],
                              **quiet) for i in range(2)]
    try:
        while int(psql(url, "SELECT count(*) FROM queue WHERE state <> 'ended'")) > 0:
            if any(p.poll() is not None for p in procs):
                raise SystemExit(f"a worker ended early in {name}")
            time.sleep(0.5)
    finally:
        for p in procs:
            p.kill()
            p.wait()
    elapsed = time.monotonic() - began
    done = int(psql(url, "SELECT count(*) FROM rounds WHERE status = 'done'"))
    assert done == rounds, (name, done)
    packed_column = psql(url, "SELECT count(*) FROM information_schema.columns "
                              "WHERE table_name = 'streams' AND column_name = 'packed'") == "1"
    figures = {
        "drain_s": elapsed,
        "tables": int(psql(url, f"SELECT {TABLES}")),
        "chunk_rows": int(psql(url, "SELECT count(*) FROM stream_chunks")),
        "chunk_bytes": int(psql(url, "SELECT coalesce(sum(length(bytes)), 0) FROM stream_chunks")),
        "packed_bytes": int(psql(url, "SELECT coalesce(sum(length(packed)), 0) FROM streams"))
        if packed_column else 0,
    }
    psql(url, "VACUUM streams, stream_chunks")
    figures["tables_vacuumed"] = int(psql(url, f"SELECT {TABLES}"))
    log = lambda *args: subprocess.run([str(ganger), "log", "t0", *args], cwd=repo, env=env,
                                       check=True, capture_output=True).stdout
    figures["log_raw"], figures["log"] = log("--raw"), log()
    psql(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    subprocess.run(["rm", "-rf", str(root / name)])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--old", type=Path, required=True)
    parser.add_argument("--new", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ganger-bench-packing-") as tmp:
        root = Path(tmp)
        admin = server(root)
        old = drain(args.old.resolve(), root, admin, "packing_old", args.rounds)
        new = drain(args.new.resolve(), root, admin, "packing_new", args.rounds)
    mb = lambda b: f"{b / 1e6:.2f} MB"
    print(f"{args.rounds} rounds of a command agent (60 lines 5 ms apart, "
          f"{len(old['log_raw'])} bytes of stream each), two workers of 4")
    print(f"{'':34}{'old (rows)':>16}{'new (packed)':>16}")
    rows = [
        ("streams tables after the drain", mb(old["tables"]), mb(new["tables"])),
        ("  after VACUUM", mb(old["tables_vacuumed"]), mb(new["tables_vacuumed"])),
        ("  per round after VACUUM", f"{old['tables_vacuumed'] / args.rounds:.0f} B",
         f"{new['tables_vacuumed'] / args.rounds:.0f} B"),
        ("chunk rows", str(old["chunk_rows"]), str(new["chunk_rows"])),
        ("bytes in chunk rows", mb(old["chunk_bytes"]), mb(new["chunk_bytes"])),
        ("bytes in packed objects", mb(old["packed_bytes"]), mb(new["packed_bytes"])),
        ("drain", f"{old['drain_s']:.1f} s", f"{new['drain_s']:.1f} s"),
    ]
    for label, a, b in rows:
        print(f"{label:34}{a:>16}{b:>16}")
    same_raw = old["log_raw"] == new["log_raw"]
    same_log = old["log"] == new["log"]
    print(f"log t0 --raw byte for byte: {'same' if same_raw else 'DIFFERENT'} "
          f"({len(new['log_raw'])} bytes); log t0: {'same' if same_log else 'DIFFERENT'} "
          f"({len(new['log'])} bytes)")
    if not (same_raw and same_log):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
