#!/usr/bin/env python3
"""What the look for killed hosts' temporary directories (issue 38.16) costs `start` and
`status`, this build against an earlier one, side by side in the same interleaved runs.

Since then, `start` and the reaper (`status`) read ganger's temporary directory once per process
for the agents' directories (`ganger-r*`) whose host was killed, and remove them. Both sides
run with TMPDIR a directory holding ENTRIES unrelated files, OLD directories `ganger-r*` of an
older ganger (not marked: never removed) and LIVE ones marked and held by a live process (this
script holds their locks: never removed either), so that every run finds the same directory.
Each side works in a repository of its own with the command agent (`sh`, instant); a side's
figure is the median of its runs, and the difference is the median of each run's difference.

  start    `ganger start SLUG --message hello` of an instant round
  status   `ganger status` of the repository's task table

Usage: python3 bench/tmp_sweep.py --against EARLIER/target/release/ganger [--runs N]
                                  [--entries N] [--old N] [--live N]
Needs: cargo, git, python3; builds ganger in release mode first.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare import REPO, in_turn, run  # noqa: E402

TOML = '[defaults]\nagent = "command"\n\n[agents.command]\nargv = ["sh", "-c", "cat >/dev/null; echo \'DONE: ok\'"]\nformat = "text"\n'


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def build() -> Path:
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "ganger-cli"], cwd=REPO, check=True)
    return Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release" / "ganger"


def fill_tmp(tmp: Path, entries: int, old: int, live: int) -> list[int]:
    """The temporary directory both sides run with; returns the descriptors holding the live
    directories' locks (kept open for the whole run)."""
    for n in range(entries):
        (tmp / f"unrelated-{n:05}").write_text("x")
    for n in range(old):
        (tmp / f"ganger-r{n:012x}-1-0").mkdir(mode=0o700)
    held = []
    for n in range(live):
        directory = tmp / f"ganger-r{n:012x}-2-0"
        directory.mkdir(mode=0o700)
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.chmod(directory, 0o1700)  # marked as held, as ganger marks it
        held.append(fd)
    return held


def repository(root: Path, side: str) -> Path:
    repo = root / f"repo-{side}"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "ganger.toml").write_text(TOML)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "init"],
                   cwd=repo, check=True)
    return repo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, required=True, help="an earlier ganger release build")
    parser.add_argument("--this", type=Path,
                        help="this build's binary, instead of building it (both sides copied beside each other "
                             "then: where a binary lies changed its time by a millisecond)")
    parser.add_argument("--runs", type=int, default=31)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--old", type=int, default=50)
    parser.add_argument("--live", type=int, default=20)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="ganger-bench-sweep-"))
    # Both binaries from one directory: with the same binary on both sides, the side run from
    # the repository's target/ came out 1.1 to 1.3 ms slower per start and 0.5 ms per status
    # than the copy under /tmp (two runs of 101, 2026-12-06).
    gangers = {"ganger": root / "ganger", "earlier": root / "earlier"}
    shutil.copy2(args.this.resolve() if args.this else build(), gangers["ganger"])
    shutil.copy2(args.against.resolve(), gangers["earlier"])
    try:
        tmp = root / "tmp"
        tmp.mkdir()
        held = fill_tmp(tmp, args.entries, args.old, args.live)
        env = dict(os.environ, TMPDIR=str(tmp), GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b",
                   GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
        repos = {side: repository(root, side) for side in gangers}
        for side, ganger in gangers.items():
            run([str(ganger), "start", "warm-up", "--message", "hello"], repos[side], env)
        times: dict[str, dict[str, list[float]]] = {c: {s: [] for s in gangers} for c in ["start", "status"]}
        for i in range(args.runs):
            for side in in_turn(list(gangers), i):
                ganger, repo = str(gangers[side]), repos[side]
                times["start"][side].append(run([ganger, "start", f"t{i}", "--message", "hello"], repo, env))
                times["status"][side].append(run([ganger, "status"], repo, env))
        left = sorted(p.name for p in tmp.iterdir() if p.name.startswith("ganger-r"))
        assert len(left) == args.old + args.live, f"the directories changed: {len(left)} left"
        for fd in held:
            os.close(fd)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"TMPDIR with {args.entries} unrelated entries, {args.old} unmarked and {args.live} live "
          f"ganger-r* directories; medians of {args.runs} interleaved runs ({os.cpu_count()} cores); "
          f"earlier: {args.against}")
    print(f"{'command':<10} {'ganger':>10} {'earlier':>10} {'difference':>11}")
    for command, by_side in times.items():
        difference = statistics.median(a - b for a, b in zip(by_side["ganger"], by_side["earlier"]))
        print(f"{command:<10} {ms(statistics.median(by_side['ganger'])):>10} "
              f"{ms(statistics.median(by_side['earlier'])):>10} {ms(difference):>11}")


if __name__ == "__main__":
    main()
