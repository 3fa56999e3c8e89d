#!/usr/bin/env python3
"""ganger's own machine time per round of a fleet drained by 1, 2 and 4 workers (issue 44).

A fleet of N one-round tasks (default 1000, --rounds) of an instant `command` agent (a bash
script that reads the prompt and says `DONE: ok`), drained by W `ganger worker`s (default
1,2,4, each --capacity 2) sharing a PostgreSQL store: the private cluster of the tests
(`scripts/postgres-cluster /tmp/ganger-ci-postgres 55432`, fsync off) or --postgres URL, a
database of its own per drain. For each binary given (--ganger, and --old to compare a build of
another commit side by side, the drains interleaved) and each mode (--modes, default cold: `[warm]
default = false`, or `warm`: `true`), it prints:

- wall: from the workers' start to the queue drained (every item ended), and rounds/s;
- ganger CPU per round: the CPU time (user + system) of every process of the workers' process
  trees, the detached round hosts and the git commands ganger runs included, less the agents'
  own, read from a cpuacct cgroup the workers start in (the agent script moves itself into a
  sibling cgroup as its first command, so only its bash start-up before that line counts as
  ganger's). `total` is the drain's whole CPU time divided by N; `median` is the median of
  the per-round figures of one-second windows (CPU spent in the window / rounds that ended in
  it), which leaves out the start-up and the tail. Of the total: `worker`, the worker
  processes themselves (their threads; /proc/PID/stat); `git`, the git commands (a `git` first
  on the workers' PATH moves itself into a cgroup of its own and execs the real one); `hosts`,
  the rest: the round hosts (`ganger host`, a process per round);
- agent: the agents' own CPU per round, left out of ganger's (for scale);
- store: PostgreSQL's time executing statements per round (`pg_stat_database.active_time`), the
  transactions ganger ran per round (`xact_commit + xact_rollback`, a statement alone being
  one), and
  the connections ganger opened per round (`sessions`, less this script's own psql ones; with
  --tasks the `ganger fix --queue` clients' are in it too, one a round; each costs a TLS
  handshake, TLS being on in the tests' cluster, and a SCRAM login);

The `command` agent has no warm mode, so with it `--modes warm` (`[warm] default = true`)
measures only what asking for warm costs when ganger then runs the round cold. `--agent opencode`
runs an instant `opencode` instead (OPENCODE below, bash builtins only, in the agents' cgroup like
the command agent): cold, `opencode run --format json` printing one step that says `DONE: ok`;
kept warm, `opencode acp` answering ACP's initialize, session/new, session/load and
session/prompt (one message chunk `DONE: ok`, then `end_turn`), so that `--modes cold,warm`
measures warm against cold. A warm agent serves its task's later rounds, so `--tasks T` makes T
tasks of rounds/T rounds each: each task's next round is queued (`ganger fix SLUG --queue`, as a
supervisor sends one, run from outside ganger's cgroup) once its last one has ended, and warm
keeps up to T agents (`[warm] max`). Without --tasks every task has one round.

Every drain is checked: every task one round, done. Needs root (a cpuacct cgroup under
/sys/fs/cgroup/cpuacct), git, bash, psql, and a release build:
`cargo build --release -p ganger-cli` (--ganger target/release/ganger).

Usage: python3 bench/fleet_workers.py --ganger PATH [--old PATH] [--rounds N] [--workers 1,2,4]
                                      [--capacity C] [--modes cold[,warm]] [--postgres URL]
                                      [--agent command|opencode] [--tasks T]
                                      [--fs tmp[,journal]]

--fs journal runs each drain also on a fresh ext4 with a journal that the script makes on a
loop device (root): this machine's own root is an ext4 without one, where creating a file
costs more the more the machine deleted lately (docs/benchmarks.md, "The aim met").
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fleet import env_for  # noqa: E402
from workers import database, psql  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CPUACCT = Path("/sys/fs/cgroup/cpuacct")
# The transactions of a drain's database (a statement alone is one).
XACTS = ("SELECT xact_commit + xact_rollback FROM pg_stat_database "
         "WHERE datname = current_database()")
GIT = """#!/bin/sh
echo $$ > {cgroup}/cgroup.procs
exec {real} "$@"
"""
# The same as a small C program, when a C compiler is there: a shell's start (what runs before
# it has moved itself) is about half a millisecond of CPU counted as ganger's, twice a round.
GIT_C = r"""#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {{
  (void)argc;
  int fd = open("{cgroup}/cgroup.procs", O_WRONLY);
  if (fd >= 0) {{
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    if (write(fd, pid, (size_t)n) < 0) {{ }}
    close(fd);
  }}
  argv[0] = (char *)"{real}";
  execv("{real}", argv);
  return 127;
}}
"""
AGENT = """#!/bin/bash
echo $$ > {cgroup}/cgroup.procs
echo start >> {starts}
cat > /dev/null
echo "DONE: ok"
"""

# The `opencode` of --agent opencode: bash builtins only, as AGENT.
OPENCODE = r"""#!/bin/bash
# An instant `opencode` for the benchmark: `run --format json` (cold) prints one step that says
# `DONE: ok`; `acp` (kept warm) answers ACP's initialize, session/new, session/load and
# session/prompt (one agent_message_chunk `DONE: ok`, then end_turn) on stdin and stdout.
# Bash builtins only. It moves itself into the agents' cgroup first.
echo $$ > {cgroup}/cgroup.procs
echo "${{1:-}}" >> {starts}
case "${{1:-}}" in
  --version) echo 1.18.33; exit 0 ;;
  run) ;;
  acp)
    n=0
    reply() {{ printf '{{"jsonrpc":"2.0","id":%s,"result":%s}}\n' "$1" "$2"; }}
    while IFS= read -r line; do
      id=; method=; session=
      [[ $line =~ \"id\":([0-9]+) ]] && id=${{BASH_REMATCH[1]}}
      [[ $line =~ \"method\":\"([^\"]+)\" ]] && method=${{BASH_REMATCH[1]}}
      [[ $line =~ \"sessionId\":\"([^\"]+)\" ]] && session=${{BASH_REMATCH[1]}}
      case $method in
        initialize) reply "$id" '{{"protocolVersion":1,"agentCapabilities":{{"loadSession":true}},"authMethods":[]}}' ;;
        session/new) n=$((n + 1)); reply "$id" "{{\"sessionId\":\"ses_$$_$n\"}}" ;;
        session/load) reply "$id" '{{}}' ;;
        session/prompt)
          printf '{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"%s","update":{{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{{"type":"text","text":"DONE: ok"}}}}}}}}\n' "$session"
          reply "$id" '{{"stopReason":"end_turn","usage":{{"inputTokens":10,"outputTokens":2,"totalTokens":12}}}}' ;;
        '') ;;
        *) [ -z "$id" ] || printf '{{"jsonrpc":"2.0","id":%s,"error":{{"code":-32601,"message":"no %s"}}}}\n' "$id" "$method" ;;
      esac
    done
    exit 0 ;;
  *) echo "instant opencode: unknown command ${{1:-}}" >&2; exit 2 ;;
esac
shift
session=
while [ $# -gt 0 ]; do
  case "$1" in
    --session) session=$2; shift 2 ;;
    --format|--title|--model|-m) shift 2 ;;
    *) shift ;;
  esac
done
IFS= read -r -d '' _ || true
[ -n "$session" ] || session="ses_$$_$RANDOM"
t=${{EPOCHREALTIME/./}}; t=${{t:0:13}}
p="\"sessionID\":\"$session\",\"messageID\":\"msg_$$\""
printf '{{"type":"step_start","timestamp":%s,"sessionID":"%s","part":{{"id":"prt_1",%s,"type":"step-start"}}}}\n' "$t" "$session" "$p"
printf '{{"type":"text","timestamp":%s,"sessionID":"%s","part":{{"id":"prt_2",%s,"type":"text","text":"DONE: ok","time":{{"start":%s,"end":%s}}}}}}\n' "$t" "$session" "$p" "$t" "$t"
printf '{{"type":"step_finish","timestamp":%s,"sessionID":"%s","part":{{"id":"prt_3",%s,"type":"step-finish","reason":"stop","cost":0,"tokens":{{"input":10,"output":2,"reasoning":0,"cache":{{"read":0,"write":0}}}}}}}}\n' "$t" "$session" "$p"
"""


class Cgroups:
    """A cpuacct cgroup for ganger's processes, and siblings for its git's and the agents'."""

    def __init__(self, name: str):
        self.root = CPUACCT / name
        self.ganger, self.git = self.root / "ganger", self.root / "git"
        self.agent = self.root / "agent"
        for group in (self.root, self.ganger, self.git, self.agent):
            group.mkdir()

    @staticmethod
    def usage_ns(group: Path) -> int:
        return int((group / "cpuacct.usage").read_text())

    def kill_left(self) -> None:
        """Kills what is left in the cgroups (round hosts, warm agents this drain started)."""
        for group in (self.ganger, self.git, self.agent):
            for pid in (group / "cgroup.procs").read_text().split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def remove(self) -> None:
        deadline = time.monotonic() + 30
        for group in (self.ganger, self.git, self.agent, self.root):
            while True:
                try:
                    group.rmdir()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    self.kill_left()
                    time.sleep(0.2)


def own_cpu_ms(pid: int) -> float:
    """The CPU time of process `pid` itself (all its threads), not of its children."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def git_wrapper(path: Path, cgroup: Path, real: str) -> None:
    """A `git` that moves itself into `cgroup` and runs the real one: compiled (static, else
    dynamic) when a C compiler is there, else a shell script."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cc = shutil.which("cc")
    if cc:
        source = path.with_suffix(".c")
        source.write_text(GIT_C.format(cgroup=cgroup, real=real))
        for static in (["-static"], []):
            built = subprocess.run([cc, "-O2", *static, "-o", str(path), str(source)],
                                   capture_output=True)
            if built.returncode == 0:
                return
    path.write_text(GIT.format(cgroup=cgroup, real=real))
    path.chmod(0o755)


def drain(ganger: Path, root: Path, admin: str, name: str, rounds: int, workers: int,
          capacity: int, warm: bool, agent_name: str, tasks: int) -> dict[str, float]:
    here = root / name
    repo, home = here / "repo", here / "home"
    repo.mkdir(parents=True)
    home.mkdir(parents=True)
    env = env_for(home)
    # The agents' temporary folders (ganger makes one a round) on the same file system.
    env["TMPDIR"] = str(root)
    url = database(admin, name)
    env["GANGER_STORE"] = url
    groups = Cgroups(f"ganger-bench-{os.getpid()}-{name}")
    try:
        agent = here / ("opencode" if agent_name == "opencode" else "agent.sh")
        starts = here / "agent-starts"
        agent.write_text((OPENCODE if agent_name == "opencode" else AGENT).format(
            cgroup=groups.agent, starts=starts))
        agent.chmod(0o755)
        git_wrapper(here / "bin" / "git", groups.git, shutil.which("git"))
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, env=env, check=True)
        (repo / "README.md").write_text("bench\n")
        # Every task keeps its warm agent between its rounds when the tasks are few; one-round
        # tasks have nothing to keep it for.
        keep = tasks if tasks < rounds else workers * capacity
        warm_table = f"default = true\nmax = {keep}\n" if warm else "default = false\n"
        agents = (f'[agents.opencode]\ncommand = "{agent}"\n' if agent_name == "opencode" else
                  f'[agents.command]\nargv = ["{agent}"]\nformat = "text"\n')
        (repo / "ganger.toml").write_text(
            f'[defaults]\nagent = "{agent_name}"\n\n{agents}\n[warm]\n{warm_table}')
        subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
        subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, env=env, check=True)
        file = here / "fleet.toml"
        file.write_text('name = "bench"\n' + "".join(
            f'[[task]]\nslug = "t{n}"\nmessage = "hello"\n' for n in range(tasks)))
        quiet = {"cwd": repo, "env": env, "stdout": subprocess.DEVNULL,
                 "stderr": subprocess.DEVNULL}
        subprocess.run([str(ganger), "fleet", "submit", str(file)], check=True, **quiet)
        quiet_fix = dict(quiet)
        quiet["env"] = dict(env, PATH=f"{here / 'bin'}:{env['PATH']}")
        active = float(psql(url, "SELECT active_time FROM pg_stat_database "
                                 "WHERE datname = current_database()"))
        sessions = int(psql(url, "SELECT sessions FROM pg_stat_database "
                                 "WHERE datname = current_database()"))
        xacts = int(psql(url, XACTS))
        # Each worker joins ganger's cgroup before it is ganger: all it starts is counted.
        join = f'echo $$ > {groups.ganger}/cgroup.procs && exec "$@"'
        cpu0, agent0 = groups.usage_ns(groups.ganger), groups.usage_ns(groups.agent)
        git0 = groups.usage_ns(groups.git)
        cpu0 += git0
        began = time.monotonic()
        log = open(here / "workers.log", "wb")
        procs = [subprocess.Popen(["sh", "-c", join, "sh", str(ganger), "worker", "--name",
                                   f"w{i}", "--capacity", str(capacity)],
                                  **dict(quiet, stderr=log))
                 for i in range(workers)]
        windows: list[float] = []
        # A task of several rounds: its next round is queued (`ganger fix --queue`, as a
        # supervisor sends one, from outside ganger's cgroup) once its last one has ended.
        asked = {f"t{n}": 1 for n in range(tasks)}
        fixes = ThreadPoolExecutor(max_workers=min(tasks, 8))
        pending: list = []
        polls = 0
        try:
            last = (began, cpu0, 0)
            while True:
                time.sleep(0.2)
                polls += 1 + (tasks < rounds)
                for fix in [f for f in pending if f.done()]:
                    fix.result()
                    pending.remove(fix)
                if tasks < rounds:
                    per_slug = psql(url, "SELECT slug, count(*) FROM queue WHERE state = 'ended' "
                                         "GROUP BY slug")
                    for row in per_slug.split():
                        slug, count = row.split("|")
                        if int(count) == asked[slug] and asked[slug] < rounds // tasks:
                            asked[slug] += 1
                            pending.append(fixes.submit(
                                subprocess.run, [str(ganger), "fix", slug, "--queue", "--message",
                                                 "hello"], check=True, **quiet_fix))
                ended = int(psql(url, "SELECT count(*) FROM queue WHERE state = 'ended'"))
                now = time.monotonic()
                cpu = groups.usage_ns(groups.ganger) + groups.usage_ns(groups.git)
                if now - last[0] >= 1.0 and ended > last[2]:
                    windows.append((cpu - last[1]) / 1e6 / (ended - last[2]))
                    last = (now, cpu, ended)
                if ended == tasks * (rounds // tasks):
                    break
                if any(p.poll() is not None for p in procs):
                    raise SystemExit(f"a worker ended early in {name}: "
                                     f"{(here / 'workers.log').read_text()[-2000:]}")
                if now - began > 3600:
                    raise SystemExit(f"{name} did not drain within an hour")
            elapsed = time.monotonic() - began
            git_ms = (groups.usage_ns(groups.git) - git0) / 1e6
            cpu_ms = (groups.usage_ns(groups.ganger) - cpu0) / 1e6 + git_ms
            agent_ms = (groups.usage_ns(groups.agent) - agent0) / 1e6
            worker_ms = sum(own_cpu_ms(p.pid) for p in procs)
        finally:
            fixes.shutdown(cancel_futures=True)
            for p in procs:
                p.kill()
                p.wait()
            groups.kill_left()
        time.sleep(1.0)  # the statistics collector sends what it has within a second
        active = float(psql(url, "SELECT active_time FROM pg_stat_database "
                                 "WHERE datname = current_database()")) - active
        # Less this script's own psql sessions (one a poll, two at the start and end).
        sessions = int(psql(url, "SELECT sessions FROM pg_stat_database "
                                 "WHERE datname = current_database()")) - sessions - polls - 2
        # Less this script's own (one a poll; the few around the drain are within the noise).
        xacts = int(psql(url, XACTS)) - xacts - polls
        done = int(psql(url, "SELECT count(*) FROM rounds WHERE status = 'done'"))
        made = int(psql(url, "SELECT count(*) FROM tasks"))
        assert (done, made) == (tasks * (rounds // tasks), tasks), (name, done, made)
        started = starts.read_text().split() if starts.exists() else []
        return {"wall": elapsed, "cpu_ms": cpu_ms,
                "agent_starts": len([s for s in started if s != "--version"]),
                "median_ms": statistics.median(windows) if windows else cpu_ms / rounds,
                "store_ms": active, "agent_ms": agent_ms, "sessions": sessions,
                "worker_ms": worker_ms, "git_ms": git_ms, "xacts": xacts}
    finally:
        groups.remove()
        psql(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        subprocess.run(["rm", "-rf", str(here)], check=False)


@contextlib.contextmanager
def journaled_ext4():
    """A fresh ext4 with a journal (mkfs.ext4's default) on a sparse image and a loop device,
    as a production machine's disk would be: the file system of this benchmark's machine is an
    ext4 without a journal, where creating a file scans past every inode deleted in the last
    minutes (ext4's `recently_deleted()`, checked only without a journal), so that its cost
    grows with what the whole machine deleted lately (docs/benchmarks.md)."""
    # Short paths: a warm keeper's socket goes under TMPDIR, and builds before 2026-12-07
    # failed on one whose path did not fit a socket address.
    place = Path(tempfile.mkdtemp(prefix="gbe-", dir="/var/tmp"))
    image, mount = place / "fs.img", place / "m"
    mount.mkdir()
    subprocess.run(["truncate", "-s", "8G", str(image)], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True)
    subprocess.run(["mount", "-o", "loop", str(image), str(mount)], check=True)
    try:
        (mount / "tmp").mkdir(mode=0o1777)
        yield mount / "tmp"
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
        shutil.rmtree(place, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ganger", type=Path, required=True)
    parser.add_argument("--old", type=Path, help="a build of another commit, side by side")
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--capacity", type=int, default=2)
    parser.add_argument("--modes", default="cold")
    parser.add_argument("--agent", choices=["command", "opencode"], default="command")
    parser.add_argument("--tasks", type=int, help="tasks of rounds/tasks rounds each (default: "
                        "--rounds, one round each)")
    parser.add_argument("--postgres", help="the server's URL (default: the tests' cluster)")
    parser.add_argument("--fs", default="tmp",
                        help="where each drain's repository, state and temporary files live: "
                             "tmp (the temporary directory, TMPDIR), journal (a fresh ext4 "
                             "with a journal this script makes on a loop device), or both, "
                             "comma-separated, side by side")
    args = parser.parse_args()
    if not os.access(CPUACCT, os.W_OK):
        sys.exit(f"{CPUACCT} is not writable: ganger's CPU time is read from a cgroup there")
    admin = args.postgres or subprocess.run(
        [str(REPO / "scripts" / "postgres-cluster"), "/tmp/ganger-ci-postgres", "55432"],
        check=True, capture_output=True, text=True).stdout.strip()
    builds = {"new": args.ganger.resolve()}
    if args.old:
        builds = {"old": args.old.resolve(), **builds}
    counts = [int(w) for w in args.workers.split(",")]
    modes = args.modes.split(",")
    places = args.fs.split(",")
    if not set(places) <= {"tmp", "journal"}:
        sys.exit(f"--fs {args.fs}: each of tmp, journal")
    results: dict[tuple[str, str, str, int], dict[str, float]] = {}
    with contextlib.ExitStack() as stack:
        roots = {}
        for place in places:
            base = stack.enter_context(journaled_ext4()) if place == "journal" else None
            prefix = "ganger-bench-fleet-workers-" if base is None else "gfw-"
            roots[place] = Path(stack.enter_context(tempfile.TemporaryDirectory(
                prefix=prefix, dir=base)))
        for workers in counts:
            for mode in modes:
                for place, root in roots.items():
                    for label, ganger in builds.items():
                        name = f"bench_fw_{label}_{mode}_{workers}_{place}"
                        print(f"draining {args.rounds} rounds: {label}, {mode}, {workers} "
                              f"worker(s), on {place}", file=sys.stderr, flush=True)
                        results[(label, place, mode, workers)] = drain(
                            ganger, root, admin, name, args.rounds, workers, args.capacity,
                            mode == "warm", args.agent, args.tasks or args.rounds)
    tasks = args.tasks or args.rounds
    n = tasks * (args.rounds // tasks)
    print(f"{n} rounds ({tasks} tasks) of an instant {args.agent} agent; workers of capacity "
          f"{args.capacity}; "
          f"PostgreSQL at {admin.rsplit('@', 1)[-1]}")
    print(f"{'build':5} {'fs':7} {'mode':5} {'workers':>7} {'wall s':>8} {'rounds/s':>9} "
          f"{'cpu ms/round median':>20} {'total':>7} {'cpu s':>7} {'worker':>7} {'hosts':>7} {'git':>7} "
          f"{'store ms/round':>15} {'xacts/round':>12} {'conns/round':>12} {'agent ms/round':>15} {'agent starts':>13}")
    for (label, place, mode, workers), r in results.items():
        print(f"{label:5} {place:7} {mode:5} {workers:7d} {r['wall']:8.1f} {n / r['wall']:9.1f} "
              f"{r['median_ms']:20.1f} {r['cpu_ms'] / n:7.1f} {r['cpu_ms'] / 1000:7.1f} "
              f"{r['worker_ms'] / n:7.1f} {(r['cpu_ms'] - r['worker_ms'] - r['git_ms']) / n:7.1f} "
              f"{r['git_ms'] / n:7.1f} {r['store_ms'] / n:15.2f} {r['xacts'] / n:12.1f} {r['sessions'] / n:12.2f} "
              f"{r['agent_ms'] / n:15.1f} "
              f"{r['agent_starts']:13d}")
    print(json.dumps({"/".join(map(str, k)): v for k, v in results.items()}), file=sys.stderr)


if __name__ == "__main__":
    main()
