#!/usr/bin/env python3
"""A race of 5 attempts with an instant model, beside plain tasks, side by side in one run.

Every round runs the same instant agent: ganger's `command` agent set to a script whose
behaviour is chosen by `{model}` (as in the README's race): an attempt reads its prompt, writes
one line to greeting.txt and answers; the judge (`[roles.judge]`, the same script with the model
`judge`) answers on one line `WINNER: A (first)` (a command's answer is its last line). Every
task and attempt runs the check `--check true`. Measured, as medians over interleaved runs (each
measurement in a fresh git repository, the sides taking turns to go first) so that the shared
machine's noise hits each alike:

  agent       the agent script run by hand on the same prompt (what an attempt's agent costs)
  plain       one `ganger start` of a task, in the foreground (a whole round: worktree, store,
              agent, snapshot, check, report)
  plain x5    5 `ganger start` of 5 tasks at once, in the foreground; wall time until all 5 ended
  plain x5 detached
              the same 5 tasks started as a race starts them: `start --detach` one after
              another, then `ganger wait` on each; wall time
  race fg     `ganger race --attempts command:w*5 --first-green`: 5 attempts, nothing judged;
              wall time                                   target: race fg / plain x5 < 1.10
              (it starts its attempts one by one, looking between two starts, and one that
              passed ends the race: the number it started is printed beside)
  race        `ganger race --attempts command:w*5`: all 5 pass, so the tournament judges each of
              the 10 pairs twice (20 judgements); wall time, split by the lines the race prints
              as it goes (each timed as it arrives) into its attempts (to the last "passed its
              checks") and its judging (from there to the last verdict); for both races, the
              time to the last "started as" line and to the first "passed its checks" line

From these: ganger's own time per attempt ((race fg - agent) / the attempts it started) beside
one plain task's (plain - agent), and the judging time per judgement beside one plain task (a
judgement is a round of a task of its own); and the judged race's attempts phase (all 5 run to
their checks) over plain x5: the race's overhead with nothing ended early.

With `--old PATH` (an earlier build), the two races are run with it too, in the same
interleaved runs, and printed beside this build's: the change measured in one run.

Usage: python3 bench/race.py [--runs N] [--ganger PATH] [--old PATH]
Needs: git, python3; without --ganger, cargo (builds ganger-cli in release mode first).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ATTEMPTS = 5
MESSAGE = "Write a greeting to greeting.txt"
# `$1` is the model: `judge` answers on one line, anything else is an attempt.
SCRIPT = ("[ \"$1\" = judge ] && { cat >/dev/null; echo 'WINNER: A (first)'; exit 0; }; "
          "cat >/dev/null; echo hello > greeting.txt; echo done")
SIDES = ["plain", "plain x5", "plain x5 detached", "race fg", "race"]
OLD_SIDES = ["old race fg", "old race"]


def build() -> Path:
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "ganger-cli"], cwd=REPO, check=True)
    return Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release" / "ganger"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def site(root: Path, name: str) -> Path:
    """A fresh repository in a directory of its own (the worktrees go beside it)."""
    parent = root / name
    parent.mkdir()
    repo = parent / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("bench\n")
    (repo / "ganger.toml").write_text(
        '[defaults]\nagent = "command"\ntimeout = "60s"\n\n[agents.command]\n'
        f'argv = ["sh", "-c", {json.dumps(SCRIPT)}, "sh", "{{model}}"]\nformat = "text"\n\n'
        '[roles.judge]\nagent = "command"\nmodel = "judge"\n')
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "init")
    return repo


def fail(argv: list[str], code: int, out: str) -> None:
    sys.exit(f"{' '.join(argv)} failed ({code}):\n{out}")


def timed(argv: list[str], cwd: Path, stdin: str | None = None) -> float:
    started = time.perf_counter()
    run = subprocess.run(argv, cwd=cwd, input=stdin, text=True, capture_output=True)
    took = time.perf_counter() - started
    if run.returncode != 0:
        fail(argv, run.returncode, run.stderr + run.stdout)
    return took


def start(ganger: Path, slug: str) -> list[str]:
    return [str(ganger), "start", slug, "--message", MESSAGE, "--model", "w", "--check", "true"]


def parallel(argvs: list[list[str]], cwd: Path) -> float:
    """Runs the commands at once; the wall time until the last one ended."""
    started = time.perf_counter()
    procs = [subprocess.Popen(a, cwd=cwd, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
             for a in argvs]
    outs = [p.communicate()[0] for p in procs]
    took = time.perf_counter() - started
    for argv, proc, out in zip(argvs, procs, outs):
        if proc.returncode != 0:
            fail(argv, proc.returncode, out)
    return took


def race(ganger: Path, slug: str, cwd: Path, first_green: bool) -> dict[str, float]:
    """Runs a race in the foreground, timing each line of its output as it arrives."""
    argv = [str(ganger), "race", slug, "--message", MESSAGE, "--attempts", f"command:w*{ATTEMPTS}",
            "--check", "true"] + (["--first-green"] if first_green else [])
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout
    lines: list[tuple[float, str]] = []
    for line in proc.stdout:
        lines.append((time.perf_counter() - started, line.rstrip("\n")))
    proc.wait()
    took = time.perf_counter() - started
    out = "\n".join(text for _, text in lines)
    if proc.returncode != 0:
        fail(argv, proc.returncode, out)
    started_lines = [at for at, text in lines if re.search(r"attempt \d+ \(.*\) started as ", text)]
    passed = [at for at, text in lines if re.search(r"attempt \d+ passed its checks", text)]
    verdicts = [at for at, text in lines if re.search(rf"{re.escape(slug)}\.j\d+v\d+: WINNER ", text)]
    want = 0 if first_green else ATTEMPTS * (ATTEMPTS - 1)
    if not passed or len(verdicts) != want:
        sys.exit(f"{' '.join(argv)}: {len(passed)} passed, {len(verdicts)} verdicts (want {want}):\n{out}")
    attempts = max(passed)
    judging = max(verdicts) - attempts if verdicts else 0.0
    return {"wall": took, "attempts": attempts, "judging": judging, "passed": min(passed),
            "started": max(started_lines, default=0.0), "count": float(len(started_lines))}


def agent_by_hand(root: Path) -> float:
    """The agent script on its own, in a scratch directory."""
    scratch = root / "scratch"
    scratch.mkdir(exist_ok=True)
    return timed(["sh", "-c", SCRIPT, "sh", "w"], scratch, stdin=MESSAGE)


def in_turn(sides: list[str], run: int) -> list[str]:
    """`sides` in the order of run number `run`: each goes first in turn."""
    shift = run % len(sides)
    return sides[shift:] + sides[:shift]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--ganger", type=Path, help="the ganger binary (default: build target/release/ganger)")
    parser.add_argument("--old", type=Path, help="an earlier ganger binary, whose races are measured beside")
    args = parser.parse_args()
    ganger = args.ganger.resolve() if args.ganger else build()
    old = args.old.resolve() if args.old else None
    sides = SIDES + (OLD_SIDES if old else [])
    phases = ["race fg started", "race fg passed", "race fg count", "race started", "race attempts",
              "race judging"]
    times: dict[str, list[float]] = {k: [] for k in ["agent", *sides, *phases]}
    root = Path(tempfile.mkdtemp(prefix="ganger-bench-race-"))
    try:
        for i in range(args.runs):
            for side in in_turn(sides, i):
                name = f"{side.replace(' ', '-')}-{i}"
                repo = site(root, name)
                if side == "plain":
                    times["agent"].append(agent_by_hand(root))
                    times[side].append(timed(start(ganger, "t"), repo))
                elif side == "plain x5":
                    times[side].append(parallel([start(ganger, f"t{n}") for n in range(1, ATTEMPTS + 1)], repo))
                elif side == "plain x5 detached":
                    started = time.perf_counter()
                    for n in range(1, ATTEMPTS + 1):
                        timed([*start(ganger, f"t{n}"), "--detach"], repo)
                    for n in range(1, ATTEMPTS + 1):
                        timed([str(ganger), "wait", f"t{n}"], repo)
                    times[side].append(time.perf_counter() - started)
                elif side in OLD_SIDES:
                    assert old
                    times[side].append(race(old, "r", repo, first_green=side == "old race fg")["wall"])
                elif side == "race fg":
                    fg = race(ganger, "r", repo, first_green=True)
                    times[side].append(fg["wall"])
                    for phase in ["started", "passed", "count"]:
                        times[f"race fg {phase}"].append(fg[phase])
                else:
                    judged = race(ganger, "r", repo, first_green=False)
                    times[side].append(judged["wall"])
                    times["race attempts"].append(judged["attempts"])
                    times["race started"].append(judged["started"])
                    times["race judging"].append(judged["judging"])
                shutil.rmtree(repo.parent, ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    judgements = ATTEMPTS * (ATTEMPTS - 1)
    print(f"a race of {ATTEMPTS} attempts of an instant agent (the `command` agent), median of {args.runs} "
          f"interleaved runs ({os.cpu_count()} cores); ganger: {ganger}")
    rows = [
        ("agent by hand", med["agent"]),
        ("plain: one `start`", med["plain"]),
        (f"plain x{ATTEMPTS}: {ATTEMPTS} `start` at once", med["plain x5"]),
        (f"plain x{ATTEMPTS} detached, then `wait` each", med["plain x5 detached"]),
        (f"race --first-green, {ATTEMPTS} attempts", med["race fg"]),
        ("  its last attempt started", med["race fg started"]),
        ("  its first attempt passed", med["race fg passed"]),
        (f"race, {ATTEMPTS} attempts judged", med["race"]),
        ("  its last attempt started", med["race started"]),
        ("  of which its attempts (to the last passed)", med["race attempts"]),
        (f"  of which judging ({judgements} judgements)", med["race judging"]),
    ]
    for name, value in rows:
        print(f"  {name:<42} {ms(value):>10}")
    print(f"race --first-green started {statistics.median(times['race fg count']):.0f} of its {ATTEMPTS} attempts "
          f"(median; per run {[int(c) for c in times['race fg count']]}): one that passed ends the race")
    per_attempt = statistics.median((w - med["agent"]) / max(c, 1.0)
                                    for w, c in zip(times["race fg"], times["race fg count"]))
    print(f"ganger's own time per attempt started (race --first-green - agent) / attempts started: "
          f"{ms(per_attempt)}; one plain task's (plain - agent): {ms(med['plain'] - med['agent'])}")
    print(f"judging per judgement: {ms(med['race judging'] / judgements)}; one plain task: {ms(med['plain'])}")
    ratios = [r / p for r, p in zip(times["race fg"], times["plain x5"])]
    ratio = med["race fg"] / med["plain x5"]
    print(f"race --first-green / plain x{ATTEMPTS}: {ratio:.2f}x of the medians, {statistics.median(ratios):.2f}x "
          f"the median of each run's ratio (target < 1.10: {'met' if ratio < 1.10 else 'NOT met'})")
    all_run = [a / p for a, p in zip(times["race attempts"], times["plain x5"])]
    print(f"race, judged: its {ATTEMPTS} attempts, all run to their checks (to the last passed) / plain "
          f"x{ATTEMPTS}: {statistics.median(all_run):.2f}x the median of each run's ratio")
    if old:
        print(f"the earlier build ({old}), in the same runs:")
        for name, new_side, old_side in [("race --first-green", "race fg", "old race fg"),
                                         ("race, judged", "race", "old race")]:
            print(f"  {name:<42} {ms(med[old_side]):>10} then, {ms(med[new_side]):>10} now")
        old_ratio = med["old race fg"] / med["plain x5"]
        print(f"  race --first-green / plain x{ATTEMPTS} with the earlier build: {old_ratio:.2f}x of the medians")


if __name__ == "__main__":
    main()
