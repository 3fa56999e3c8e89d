#!/usr/bin/env python3
"""Where a `start` of an instant round spends its time, phase by phase, for ganger and an
earlier build side by side: the kernel's process tracepoints (`sched_process_exec`, `_fork`,
`_exit`, recorded system-wide by `perf record`) mark when ganger starts, when it starts git,
the agent and the snapshot's `git add`, and when each ends, at a cost of microseconds (strace
costs both sides milliseconds and hides what differs). Each side starts its tasks in a site
of its own, as bench/compare.py sets them up (the seed's site, the stand-in `opencode`),
interleaved; every figure is a median.

  exec           the shell's fork to ganger's exec: the binary mapped
  before git     ganger's exec to its first git (`worktree add`): loading the binary,
                 arguments, configuration, the store, admission, the round's record and claim
  worktree       the first git's exec to the agent's exec: `git worktree add` and the setup
                 of the round (its temporary directory, its cgroup, the command)
  agent          the agent's exec to its exit (the stand-in: the same on both sides)
  to snapshot    the agent's exit to the snapshot's `git add`
  snapshot       the snapshot's `git add`
  to exit        its end to ganger's exit: the snapshot's objects, the store, the report
  exit           ganger's exit to its parent's SIGCHLD: its memory unmapped
  whole          the fork to the SIGCHLD, as the shell that started ganger sees it

Usage: python3 bench/start_phases.py --against EARLIER/target/release/ganger [--runs N]
Needs: perf (linux-perf) and root, as for `perf record -a`; builds ganger in release mode first.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare import REPO, Site, build, in_turn, run  # noqa: E402

EVENTS = "sched:sched_process_exec,sched:sched_process_fork,sched:sched_process_exit,signal:signal_generate"
LINE = re.compile(r"\s*(\S+)\s+(\d+)\s+([\d.]+):\s+\w+:(\w+):\s+(.*)")
PHASES = [
    ("exec", "fork", "exec"),
    ("before git", "exec", "git"),
    ("worktree", "git", "agent"),
    ("agent", "agent", "agent_end"),
    ("to snapshot", "agent_end", "add"),
    ("snapshot", "add", "add_end"),
    ("to exit", "add_end", "end"),
    ("exit", "end", "reaped"),
    ("whole", "fork", "reaped"),
]


def marks_of(events: list[tuple[str, int, float, str, str]], binary: str) -> list[dict[str, float]]:
    """The moments of each `start` of `binary` in the recorded process events (those of its
    own process tree only: the record is system-wide)."""
    found = []
    for i, (_comm, pid, at, kind, rest) in enumerate(events):
        if kind != "sched_process_exec" or f"filename={binary} " not in rest + " ":
            continue
        marks = {"exec": at}
        for _comm, _other, when, what, detail in reversed(events[:i]):
            if what == "sched_process_fork" and f"child_pid={pid}" in detail.split():
                marks["fork"] = when
                break
        family, agent_pid, add_pid = {pid}, None, None
        for _comm, other, when, what, detail in events[i + 1:]:
            if what == "sched_process_fork":
                parent = int(detail.split(" pid=")[1].split()[0])
                if parent in family:
                    family.add(int(detail.split("child_pid=")[1].split()[0]))
                continue
            if other not in family:
                continue
            if what == "sched_process_exec":
                program = detail.split("filename=")[1].split()[0]
                if program.endswith("/git") and "git" not in marks:
                    marks["git"] = when
                elif program.endswith("/git") and "agent_end" in marks and "add" not in marks:
                    marks["add"], add_pid = when, other
                elif "git" in marks and agent_pid is None and not program.endswith("/git"):
                    marks["agent"], agent_pid = when, other
            elif what == "sched_process_exit" and "group_dead=true" in detail:
                if other == agent_pid and "agent_end" not in marks:
                    marks["agent_end"] = when
                elif other == add_pid and "add_end" not in marks:
                    marks["add_end"] = when
                elif other == pid:
                    marks["end"] = when
            elif what == "signal_generate" and other == pid and "end" in marks and "sig=17 " in detail:
                # SIGCHLD to the parent: the process is gone, its memory unmapped.
                marks["reaped"] = when
                break
        if all(key in marks for _, start, stop in PHASES for key in (start, stop)):
            found.append(marks)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, required=True,
                        help="an earlier ganger release build, measured beside this one")
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--seed-dir", type=Path, default=REPO.parent / "shared" / "anchors" / "delegate",
                        help="the seed's site maker (default: ../shared/anchors/delegate)")
    args = parser.parse_args()
    if shutil.which("perf") is None:
        sys.exit("perf is not installed (apt-get install linux-perf)")
    ganger, _bench = build()
    sides = {"ganger": ganger.resolve(), "earlier": args.against.resolve()}
    root = Path(tempfile.mkdtemp(prefix="ganger-phases-"))
    try:
        sites = {side: Site(root, args.seed_dir, f"site-{side}") for side in sides}
        # The first start lists the stand-in's models into each side's cache.
        for side, binary in sides.items():
            run([str(binary), "start", "warm-up", "--message", "hello"], sites[side].path)
        script = root / "starts.sh"
        script.write_text("set -e\n" + "".join(
            f"(cd {sites[side].path} && {sides[side]} start p-{side}-{n} --message hello >/dev/null)\n"
            for n in range(args.runs) for side in in_turn(list(sides), n)))
        data = root / "perf.data"
        subprocess.run(["perf", "record", "-q", "-a", "-e", EVENTS, "-o", str(data), "--", "bash", str(script)],
                       check=True, stderr=subprocess.DEVNULL)
        text = subprocess.run(["perf", "script", "-i", str(data), "-F", "comm,pid,time,event,trace"],
                              capture_output=True, text=True, check=True).stdout
    finally:
        shutil.rmtree(root, ignore_errors=True)
    events = [(m.group(1), int(m.group(2)), float(m.group(3)), m.group(4), m.group(5))
              for m in map(LINE.match, text.splitlines()) if m]
    marks = {side: marks_of(events, str(binary)) for side, binary in sides.items()}
    print(f"start of an instant round, phase by phase: medians of {args.runs} interleaved starts "
          f"(found {len(marks['ganger'])} / {len(marks['earlier'])}); earlier: {sides['earlier']}")
    print(f"{'phase':<14} {'ganger':>10} {'earlier':>10} {'difference':>11}")
    for name, start, stop in PHASES:
        medians = {side: statistics.median((m[stop] - m[start]) * 1000 for m in found)
                   for side, found in marks.items()}
        print(f"{name:<14} {medians['ganger']:>7.2f} ms {medians['earlier']:>7.2f} ms "
              f"{medians['ganger'] - medians['earlier']:>+8.2f} ms")


if __name__ == "__main__":
    main()
