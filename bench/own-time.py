#!/usr/bin/env python3
"""What `ganger start` spends itself, apart from its `git worktree add` and its agent.

Runs `ganger start` N times in SITE under `strace --seccomp-bpf -f -e trace=execve,exit_group`
and takes, per start, the whole command minus the wall time of the `git worktree add` process
and of the agent's process (found by their argv), from strace's timestamps. Unlike
bench/compare.py's difference of two commands, the checkout's own noise (a second of disk
writes at 30,000 files on a shared machine) does not enter the figure; strace itself adds
15-20 ms per start here (a small repository's start measures about 28 ms this way against
8-13 ms in compare.py). Needs strace.

Usage: python3 bench/own-time.py GANGER SITE N [AGENT_ARGV_MARK]
  SITE is a repository configured for a fake agent (bench/compare.py's sites are); the agent
  is found by AGENT_ARGV_MARK in its argv (default: fake-opencode).
"""

import re
import statistics
import subprocess
import sys
import tempfile


def own_time(ganger: str, site: str, slug: str, mark: str) -> float:
    with tempfile.NamedTemporaryFile(suffix=".strace") as trace:
        subprocess.run(["strace", "--seccomp-bpf", "-f", "-ttt", "-e", "trace=execve,exit_group",
                        "-o", trace.name, ganger, "start", slug, "--message", "hello"],
                       cwd=site, stdout=subprocess.DEVNULL, check=True)
        lines = open(trace.name).read().splitlines()
    stamp = lambda line: float(line.split()[1])  # noqa: E731
    spans: dict[str, list] = {}
    for line in lines:
        pid = line.split()[0]
        if "execve(" in line and "resumed" not in line and pid not in spans:
            spans[pid] = [stamp(line), None, line]
        elif ("exit_group" in line or "+++ exited" in line) and pid in spans:
            spans[pid][1] = stamp(line)
    worktree = next(s for s in spans.values() if re.search(r'"worktree", "add"', s[2]))
    agent = next(s for s in spans.values() if mark in s[2] and '"run"' in s[2])
    whole = stamp(lines[-1]) - stamp(lines[0])
    return whole - (worktree[1] - worktree[0]) - (agent[1] - agent[0])


def main() -> None:
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    ganger, site, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    mark = sys.argv[4] if len(sys.argv) > 4 else "fake-opencode"
    times = [own_time(ganger, site, f"own-{n}-{id(site)}", mark) * 1000 for n in range(runs)]
    print("ganger's own time per start (ms):", " ".join(f"{t:.1f}" for t in sorted(times)),
          f"median {statistics.median(times):.1f}")


if __name__ == "__main__":
    main()
