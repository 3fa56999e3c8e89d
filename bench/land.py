#!/usr/bin/env python3
"""The merge queue (`ganger land`) against landing one by one, and the cost of conflict
prediction at a round's end, in one run (issue 41's benchmarks).

1. queue vs one by one. Two fresh repositories, each with the same 50 tasks of the `command`
   agent, all green (each task's round passed its checks). The check (`sleep S; sh check.sh`,
   S = 0.2 s by default, so that check runs dominate both sides alike) sources `api.sh` into
   every `mods/*.sh`. 45 good tasks each add a mod that calls the api's `greet`; 5 culprits
   (every tenth task, from the sixth) each add a file `api.d/cN.sh` that the api sources and
   that makes `greet` fail ("renamed"): alone no mod calls it, so each passes its checks on the
   base; combined with any good task the check fails.
     queue       `ganger land` of all 50 in one command (queue order = task order), then
                 `ganger land --run` (batch size: ganger's default, printed).
     one by one  for each task in the same order: `ganger merge SLUG` (a merge commit on
                 main), then the same check command on main's checkout; if it fails,
                 `git revert -m 1 --no-edit HEAD` (the broken merge stays in main's history,
                 as on a shared branch nothing is rewritten; the revert's tree is the previous,
                 green one and is not checked again).
   For each side: the check runs (the queue's runs of the checks plus its retries of a failing
   check, printed apart), the wall time, and the broken base commits: every commit main gained
   (`git rev-list START..main`, task commits included) checked out in a worktree of its own and
   `sh check.sh` run there; the count that fail. Target: 0 for the queue.

2. prediction's cost per round's end. Three fresh repositories with no checks: `one` holds one
   open task, `shared` 50 open tasks that each change a file of their own and one shared file
   on lines of their own (every pair shares a path, so every other task is merged in memory
   with `git merge-tree`, and none conflicts), `disjoint` 50 tasks that change only files of
   their own (the path filter skips every pair). In each, `ganger fix t01` (a round of the
   `command` agent appending a line to t01's own file) is timed; the three are interleaved and
   the medians taken. The prediction's cost with 50 open tasks is `shared` minus `one` (there
   is no switch to turn prediction off: a round with one open task predicts against the base
   only, which has not moved). Target: under 50 ms. To see where the time goes it also times
   t01's 49 pairs merged by one `git merge-tree` process each, as prediction runs them,
   against the same 49 merges through one `git merge-tree --stdin`.

   With --old (a ganger built from an earlier commit), each round's end is timed with both
   binaries on the same repositories, taking turns, and printed side by side.

Usage: python3 bench/land.py [--ganger PATH] [--old PATH] [--only land|prediction] [--tasks N]
                             [--culprits K] [--check-sleep S] [--runs N] [--fix-runs N]
Needs: git, sh, python3; without --ganger, cargo (builds ganger in release mode first).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHECK = """set -e
. ./api.sh
for f in mods/*.sh; do
  [ -e "$f" ] || continue
  sh -c ". ./api.sh; . ./$f" >/dev/null || { echo "FAIL: $f"; exit 1; }
done
echo ok
"""

API = """greet() { echo "hello $1"; }
for f in api.d/*.sh; do [ -e "$f" ] || continue; . "./$f"; done
"""

CULPRIT = "greet() { echo 'greet() was renamed to salute()' >&2; return 1; }"


class Repo:
    """A fresh git repository on `main` with a private HOME, and ganger run inside it."""

    def __init__(self, root: Path, name: str, ganger: Path):
        self.path = root / name / "repo"
        self.home = root / name / "home"
        self.path.mkdir(parents=True)
        self.home.mkdir()
        (root / name / "tmp").mkdir()
        self.ganger = ganger
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith("GANGER_") and k not in ("GIT_DIR", "GIT_WORK_TREE", "NO_COLOR")}
        self.env.update(HOME=str(self.home), TMPDIR=str(root / name / "tmp"),
                        XDG_CONFIG_HOME=str(self.home / ".config"), XDG_DATA_HOME=str(self.home / ".local/share"),
                        XDG_STATE_HOME=str(self.home / ".local/state"), XDG_CACHE_HOME=str(self.home / ".cache"),
                        GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1",
                        GIT_AUTHOR_NAME="Bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
                        GIT_COMMITTER_NAME="Bench", GIT_COMMITTER_EMAIL="bench@example.invalid", LC_ALL="C")
        self.git("init", "-q", "-b", "main")

    def run(self, cmd: list[str], cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run(cmd, cwd=cwd or self.path, env=self.env, stdin=subprocess.DEVNULL,
                                capture_output=True, text=True, check=False)
        if check and result.returncode != 0:
            sys.exit(f"failed ({result.returncode}): {' '.join(cmd)}\n{result.stdout}{result.stderr}")
        return result

    def git(self, *args: str) -> str:
        return self.run(["git", *args]).stdout.strip()

    def g(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return self.run([str(self.ganger), *args], check=check)

    def write(self, relative: str, text: str) -> None:
        path = self.path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def command_agent(self, checks: str) -> None:
        """The `command` agent runs its prompt's last line (a fix round's prompt has ganger's
        words before the message) as a shell script in the task's worktree."""
        script = json.dumps("eval \"$(tail -n 1)\"")
        self.write("ganger.toml", '[defaults]\nagent = "command"\n\n[agents.command]\n'
                   f'argv = ["sh", "-c", {script}]\nformat = "text"\n' + checks)
        self.write(".gitignore", "ganger.toml\n")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


# 1. The queue against landing one by one.

def land_repo(root: Path, name: str, ganger: Path, tasks: list[tuple[str, bool]], check_cmd: str) -> Repo:
    repo = Repo(root, name, ganger)
    repo.command_agent(f'\n[[checks]]\nname = "tests"\ncommand = {json.dumps(check_cmd)}\n')
    repo.write("api.sh", API)
    repo.write("check.sh", CHECK)
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "an api and its check")
    for slug, culprit in tasks:
        script = (f"mkdir -p api.d; echo {json.dumps(CULPRIT)} > api.d/{slug}.sh" if culprit
                  else f"mkdir -p mods; echo 'greet {slug}' > mods/{slug}.sh")
        repo.g("start", slug, "--message", script)
    return repo


def broken_commits(repo: Repo, since: str) -> tuple[int, int]:
    """Every commit main gained since `since`, checked out alone: (how many, how many fail)."""
    commits = repo.git("rev-list", f"{since}..main").split()
    broken = 0
    for n, commit in enumerate(commits):
        at = repo.path.parent / f"at-{n}"
        repo.git("worktree", "add", "-q", "--detach", str(at), commit)
        if repo.run(["sh", "check.sh"], cwd=at, check=False).returncode != 0:
            broken += 1
        repo.git("worktree", "remove", "--force", str(at))
    return len(commits), broken


def by_queue(repo: Repo, slugs: list[str]) -> dict:
    start_head = repo.git("rev-parse", "main")
    began = time.perf_counter()
    repo.g("land", *slugs)
    ran = repo.g("land", "--run", "--json")
    wall = time.perf_counter() - began
    report = json.loads(ran.stdout)
    batches = report["batches"]
    landed = sum(len(b["landed"]) for b in batches)
    returned = [r["task"] for b in batches for r in b["returned"]]
    commits, broken = broken_commits(repo, start_head)
    return {"wall": wall, "runs": sum(b["check_runs"] for b in batches),
            "retries": sum(b.get("retries", 0) for b in batches), "batches": len(batches),
            "landed": landed, "returned": returned, "commits": commits, "broken": broken,
            "progress": ran.stderr}


def one_by_one(repo: Repo, slugs: list[str], check_cmd: str) -> dict:
    start_head = repo.git("rev-parse", "main")
    runs = 0
    reverted = []
    began = time.perf_counter()
    for slug in slugs:
        repo.g("merge", slug)
        runs += 1
        if repo.run(["sh", "-c", check_cmd], check=False).returncode != 0:
            repo.git("revert", "-m", "1", "--no-edit", "HEAD")
            reverted.append(slug)
    wall = time.perf_counter() - began
    if repo.git("status", "--porcelain", "--untracked-files=no"):
        sys.exit("one by one: main's checkout is not clean after merging")
    commits, broken = broken_commits(repo, start_head)
    return {"wall": wall, "runs": runs, "retries": 0, "landed": len(slugs) - len(reverted),
            "returned": reverted, "commits": commits, "broken": broken}


def bench_land(root: Path, ganger: Path, count: int, culprits: int, sleep: float, runs: int) -> list[dict]:
    step = count // culprits
    tasks = [(f"c{n // step + 1}" if n % step == step // 2 else f"g{n + 1:02}", n % step == step // 2)
             for n in range(count)]
    slugs = [slug for slug, _ in tasks]
    check_cmd = f"sleep {sleep}; sh check.sh"
    results = []
    for i in range(runs):
        setup = time.perf_counter()
        queue_repo = land_repo(root, f"queue-{i}", ganger, tasks, check_cmd)
        single_repo = land_repo(root, f"single-{i}", ganger, tasks, check_cmd)
        print(f"run {i + 1}: 2 x {count} tasks started in {time.perf_counter() - setup:.0f} s", file=sys.stderr)
        # Each run takes turns going first.
        order = ["queue", "single"] if i % 2 == 0 else ["single", "queue"]
        result = {}
        for side in order:
            result[side] = (by_queue(queue_repo, slugs) if side == "queue"
                            else one_by_one(single_repo, slugs, check_cmd))
        results.append(result)
        shutil.rmtree(root / f"queue-{i}", ignore_errors=True)
        shutil.rmtree(root / f"single-{i}", ignore_errors=True)
    return results


# 2. Conflict prediction's cost per round's end.

def prediction_repo(root: Path, name: str, ganger: Path, count: int, shared: bool) -> Repo:
    repo = Repo(root, name, ganger)
    repo.command_agent("")
    # A line of its own for each task, four lines apart: git merges changes to lines that
    # have unchanged lines between them.
    repo.write("shared.txt", "".join(f"line {n}\n" for n in range(1, 4 * count + 10)))
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "a shared file")
    for n in range(1, count + 1):
        slug = f"t{n:02}"
        script = f"mkdir -p own; echo {slug} > own/{slug}.txt"
        if shared:
            script += f"; sed -i '{4 * n}s/.*/{slug} was here/' shared.txt"
        repo.g("start", slug, "--message", script)
    status = repo.g("status").stdout
    if "conflict" in status:
        sys.exit(f"{name}: the tasks were meant not to conflict:\n{status}")
    return repo


def merge_tree_time(repo: Repo, count: int, runs: int) -> dict[str, float]:
    """Where the time goes: t01's snapshot merged with each other task's (`refs/ganger/SLUG/
    round-1`) by one `git merge-tree` each, as prediction runs them, against all the pairs
    through one `git merge-tree --stdin`. Medians of `runs`."""
    flags = ["--write-tree", "--name-only", "--no-messages", "-z"]
    mine = "refs/ganger/t01/round-1"
    others = [f"refs/ganger/t{n:02}/round-1" for n in range(2, count + 1)]
    each, batched = [], []
    for _ in range(runs):
        began = time.perf_counter()
        for other in others:
            repo.run(["git", "merge-tree", *flags, mine, other])
        each.append(time.perf_counter() - began)
        began = time.perf_counter()
        lines = "".join(f"{mine} {other}\n" for other in others)
        subprocess.run(["git", "merge-tree", "--stdin", "--name-only", "--no-messages", "-z"], cwd=repo.path,
                       env=repo.env, input=lines, capture_output=True, text=True, check=True)
        batched.append(time.perf_counter() - began)
    return {"each": statistics.median(each), "stdin": statistics.median(batched)}


def bench_prediction(root: Path, binaries: dict[str, Path], count: int, runs: int) -> tuple[dict, dict]:
    """Medians of `runs` rounds' ends by each binary (`binaries`: label to path) in each of the
    three repositories, the binaries and the repositories taking turns going first."""
    first = next(iter(binaries.values()))
    repos = {"one": prediction_repo(root, "pred-one", first, 1, True),
             "shared": prediction_repo(root, "pred-shared", first, count, True),
             "disjoint": prediction_repo(root, "pred-disjoint", first, count, False)}
    times: dict[tuple[str, str], list[float]] = {(b, side): [] for b in binaries for side in repos}
    sides, labels = list(repos), list(binaries)
    for i in range(runs):
        shift = i % len(sides)
        for side in sides[shift:] + sides[:shift]:
            turn = i % len(labels)
            for label in labels[turn:] + labels[:turn]:
                repos[side].ganger = binaries[label]
                began = time.perf_counter()
                repos[side].g("fix", "t01", "--message", f"echo {i} {label} >> own/t01.txt")
                times[(label, side)].append(time.perf_counter() - began)
    status = repos["shared"].g("status").stdout
    if "conflict" in status:
        sys.exit(f"shared: a conflict was reported:\n{status}")
    medians = {key: statistics.median(values) for key, values in times.items()}
    return medians, merge_tree_time(repos["shared"], count, 5)


def build() -> Path:
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "ganger-cli"], cwd=REPO, check=True)
    return Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release" / "ganger"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ganger", type=Path, help="the ganger binary (default: build this checkout's)")
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--culprits", type=int, default=5)
    parser.add_argument("--check-sleep", type=float, default=0.2)
    parser.add_argument("--runs", type=int, default=1, help="runs of the 50-task landing (each side once per run)")
    parser.add_argument("--fix-runs", type=int, default=15, help="interleaved fix rounds per repository")
    parser.add_argument("--old", type=Path, help="a ganger built from the base commit: its prediction is "
                        "timed beside --ganger's, on the same repositories")
    parser.add_argument("--only", choices=["land", "prediction"], help="run one of the two parts")
    args = parser.parse_args()
    ganger = args.ganger.resolve() if args.ganger else build()
    binaries = {"new": ganger} | ({"old": args.old.resolve()} if args.old else {})
    root = Path(tempfile.mkdtemp(prefix="ganger-bench-land-"))
    try:
        land = (bench_land(root, ganger, args.tasks, args.culprits, args.check_sleep, args.runs)
                if args.only != "prediction" else None)
        prediction, merges = (bench_prediction(root, binaries, args.tasks, args.fix_runs)
                              if args.only != "land" else (None, None))
    finally:
        shutil.rmtree(root, ignore_errors=True)

    for label, path in binaries.items():
        version = subprocess.run([str(path), "--version"], capture_output=True, text=True).stdout.strip()
        print(f"{label}: {version} ({path})")
    print(f"{os.cpu_count()} cores")
    if land is not None:
        print_land(args, land)
    if prediction is not None:
        print_prediction(args, binaries, prediction, merges)


def print_land(args: argparse.Namespace, land: list[dict]) -> None:
    first = land[0]["queue"]
    batch_line = next((line for line in first["progress"].splitlines() if ": batch 1 on " in line), "")
    print(f"\n1. {args.tasks} green tasks, {args.culprits} culprits; check = `sleep {args.check_sleep}; sh check.sh`; "
          f"{args.runs} run(s), median wall time")
    print(f"   queue: `ganger land` all, then `ganger land --run` (default batch size: {len(batch_line.split(': ')[-1].split(', '))}, "
          f"the first batch's tasks)")
    print("   one by one: `ganger merge`, the check on main, `git revert -m 1` of a red merge")
    sides = {"queue": "ganger land", "single": "one by one"}
    print(f"   {'':<28} {'ganger land':>14} {'one by one':>14}  target")
    row = lambda name, f, target="": print(  # noqa: E731
        f"   {name:<28} " + " ".join(f"{f(s):>14}" for s in sides) + f"  {target}")
    med = lambda side, key: statistics.median(r[side][key] for r in land)  # noqa: E731
    row("check runs", lambda s: f"{med(s, 'runs'):.0f}")
    row("  + retries of a red check", lambda s: f"{med(s, 'retries'):.0f}")
    row("wall time", lambda s: f"{med(s, 'wall'):.1f} s")
    row("  each run", lambda s: ", ".join(f"{r[s]['wall']:.1f}" for r in land))
    row("tasks landed", lambda s: f"{med(s, 'landed'):.0f}")
    row("new commits on main", lambda s: f"{med(s, 'commits'):.0f}")
    row("broken base commits", lambda s: f"{max(r[s]['broken'] for r in land)}", "0 for the queue: "
        + ("met" if all(r["queue"]["broken"] == 0 for r in land) else "MISSED"))
    print(f"   queue: {first['batches']} batches; sent back: {', '.join(first['returned'])}")
    print(f"   one by one: reverted: {', '.join(land[0]['single']['returned'])}")


def print_prediction(args: argparse.Namespace, binaries: dict[str, Path], prediction: dict, merges: dict) -> None:
    print(f"\n2. a round's end (`ganger fix t01`, the command agent, no checks); medians of {args.fix_runs} "
          "interleaved rounds of each binary in each repository")
    labels = list(binaries)
    print(f"   {'':<52}" + "".join(f"{label:>22}" for label in labels))
    rows = [("1 open task", "one"), (f"{args.tasks} open tasks, own files only (no pair merged)", "disjoint"),
            (f"{args.tasks} open tasks, one shared file (every pair merged)", "shared")]
    for name, side in rows:
        print(f"   {name:<52}" + "".join(f"{ms(prediction[(label, side)]):>22}" for label in labels))
    costs = {label: prediction[(label, "shared")] - prediction[(label, "one")] for label in labels}
    print(f"   {'prediction (shared minus 1 open task)':<52}" + "".join(f"{ms(costs[label]):>22}" for label in labels))
    print(f"   target < 50 ms with {args.tasks} open tasks: " + ", ".join(
        f"{label} " + ("met" if costs[label] < 0.05 else "MISSED") for label in labels))
    print(f"   git alone: the {args.tasks - 1} pairs by one `git merge-tree` each: {ms(merges['each'])}; "
          f"all through one `git merge-tree --stdin`: {ms(merges['stdin'])}")


if __name__ == "__main__":
    main()
