#!/usr/bin/env python3
"""Task trees on big repositories (issue 43): how long a start takes to give its agent a tree,
for an earlier build and this one side by side, on generated repositories (400 directories of
250 files of 4 KB for 100,000 files; 120 of 250 for 30,000; committed).

Every round runs the same instant agent, ganger's `command` agent set to
`/bin/sh -c 'echo agent-start $(date +%s%N); cat >/dev/null; echo done'`: it prints the moment
it starts (read back from the round's stream), reads the prompt and exits. Measured, as
medians over interleaved runs (each side first in turn), each run after `sync` and after the
pool's background filler has finished:

  worktree add    `git worktree add -b` alone, in the generated repository
  OLD local|bwrap|docker   `ganger start` of the earlier build (--against), each sandbox
  NEW local|bwrap|docker   this build, `[trees] pool = 0` (a checkout per start, as before)
  POOL local|bwrap|docker  this build, `[trees] pool = 2`: the start takes a ready worktree

  start     the whole `ganger start` (fork to exit), as the shell sees it
  to agent  the fork of `ganger start` to the agent's first line: the tree made and the round
            set up; for the pool, what a user waits for a ready tree (target: under 100 ms)

Every worktree is removed after its run, so each run finds the same repository. Each side
starts its tasks in a clone of its own (git reads every worktree's record while it adds one).

With --at-once N, N local starts are also run at once on one repository (--at-once-files), each
side in a clone of its own: the time until the last ended.

Usage: python3 bench/trees.py --against EARLIER/target/release/ganger [--files 30000,100000]
                              [--runs N] [--no-docker] [--root DIR] [--new BUILT/ganger]
                              [--at-once N] [--at-once-files N]
Needs: cargo, git, bwrap; Docker and `ganger image build`'s base image for the docker rows.
Builds this ganger in release mode first; removes its repositories when done.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
AGENT = 'echo agent-start $(date +%s%N); cat >/dev/null; echo done'
POOL = 2


def build() -> Path:
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "ganger-cli"], cwd=REPO, check=True)
    return Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release" / "ganger"


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"git {' '.join(args)} failed in {cwd}:\n{out.stderr}")
    return out.stdout.strip()


def base_image(ganger: Path) -> str | None:
    out = subprocess.run([str(ganger), "image", "list", "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    for image in json.loads(out.stdout).get("images", []):
        if image.get("agent") in (None, "", "base", "command"):
            return image["image"]
    return None


def generate(root: Path, files: int) -> Path:
    """A committed repository of `files` files of 4 KB in directories of 250."""
    repo = root / f"gen-{files}"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    line = "x" * 63 + "\n"
    for n in range(files):
        folder = repo / f"d{n // 250:03}"
        if n % 250 == 0:
            folder.mkdir()
        (folder / f"f{n % 250:03}.txt").write_text(f"{n}\n" + line * 63)
    git(repo, "add", "-A")
    # No `git gc --auto` in the background: it packs and deletes the loose objects that the
    # sites' clones are hard-linking ("unable to read tree" in a clone).
    git(repo, "config", "gc.auto", "0")
    git(repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", f"{files} files")
    return repo


def site(root: Path, source: Path, name: str, pool: int, image: str | None) -> Path:
    """A clone of `source` with the instant agent configured (ganger.toml, untracked)."""
    path = root / name
    subprocess.run(["git", "clone", "-q", str(source), str(path)], check=True)
    docker = f'\n[sandbox.docker]\nimage = "{image}"\n' if image else ""
    (path / "ganger.toml").write_text(
        f'[defaults]\nagent = "command"\ntimeout = "120s"\n{docker}\n'
        f'[agents.command]\nargv = ["/bin/sh", "-c", "{AGENT}"]\nformat = "text"\n'
        + (f"\n[trees]\npool = {pool}\n" if pool else ""))
    return path


def pool_ready(ganger: Path, path: Path, want: int) -> bool:
    out = subprocess.run([str(ganger), "trees", "--json"], cwd=path, capture_output=True, text=True)
    if out.returncode != 0:
        return False
    ready = sum(b["ready"] for b in json.loads(out.stdout)["bases"])
    busy = (path / ".ganger" / "run" / "trees-fill.again").exists()
    return ready >= want and not busy and not filler_running(path)


def filler_running(path: Path) -> bool:
    needle = f"{path}\0trees\0fill".encode()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if needle in Path(f"/proc/{pid}/cmdline").read_bytes():
                return True
        except OSError:
            pass
    return False


def settle(ganger: Path | None, path: Path | None, want: int = POOL) -> None:
    """The pool's filler done (`want` ready), then the writeback of the last run flushed."""
    if ganger and path:
        deadline = time.time() + 600
        while not pool_ready(ganger, path, want) and time.time() < deadline:
            time.sleep(0.2)
    os.sync()


def timed_start(ganger: Path, path: Path, slug: str, sandbox: str) -> tuple[float, float]:
    """(whole start, fork to the agent's first line) in seconds; the task's tree removed."""
    started_ns = time.time_ns()
    begun = time.perf_counter()
    out = subprocess.run([str(ganger), "start", slug, "--sandbox", sandbox, "--message", "hi"],
                         cwd=path, capture_output=True, text=True)
    took = time.perf_counter() - begun
    if out.returncode != 0:
        sys.exit(f"start {slug} in {path} failed ({out.returncode}):\n{out.stderr}")
    stream = (path / ".ganger" / "tasks" / slug / "round-1.jsonl").read_text()
    agent_ns = int(stream.split("agent-start ")[1].split()[0])
    worktree = path.parent / f"{path.name}-agent-{slug}"
    remove_worktree(path, worktree)
    return took, (agent_ns - started_ns) / 1e9


def remove_worktree(repo: Path, worktree: Path) -> None:
    out = subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=repo,
                         capture_output=True, text=True)
    if out.returncode != 0:
        left = [str(p.relative_to(worktree)) for p in worktree.rglob("*")][:10]
        print(f"note: git worktree remove {worktree.name}: {out.stderr.strip()}; left: {left}", file=sys.stderr)
        shutil.rmtree(worktree, ignore_errors=True)
        git(repo, "worktree", "prune")


def timed_add(path: Path, slug: str) -> float:
    worktree = path.parent / f"{path.name}-wt-{slug}"
    begun = time.perf_counter()
    git(path, "worktree", "add", "-q", "-b", slug, str(worktree), "main")
    took = time.perf_counter() - begun
    remove_worktree(path, worktree)
    return took


def bench_size(root: Path, files: int, old: Path, new: Path, runs: int, image: str | None) -> dict:
    print(f"generating {files} files ...", file=sys.stderr)
    source = generate(root, files)
    sites = {
        "OLD": (old, site(root, source, f"old-{files}", 0, image)),
        "NEW": (new, site(root, source, f"new-{files}", 0, image)),
        "POOL": (new, site(root, source, f"pool-{files}", POOL, image)),
    }
    pool_site = sites["POOL"][1]
    subprocess.run([str(new), "trees", "fill"], cwd=pool_site, check=True, capture_output=True)
    sandboxes = ["local", "bwrap"] + (["docker"] if image else [])
    rows = ["worktree add"] + [f"{side} {sb}" for sb in sandboxes for side in sites]
    start: dict[str, list[float]] = {row: [] for row in rows}
    agent: dict[str, list[float]] = {row: [] for row in rows}
    for i in range(runs):
        order = rows[i % len(rows):] + rows[:i % len(rows)]
        for row in order:
            settle(new, pool_site)
            if row == "worktree add":
                start[row].append(timed_add(source, f"b{i}"))
                continue
            side, sandbox = row.split()
            ganger, path = sites[side]
            took, to_agent = timed_start(ganger, path, f"{sandbox}-{i}", sandbox)
            start[row].append(took)
            agent[row].append(to_agent)
        print(f"  run {i + 1}/{runs} done", file=sys.stderr)
    settle(new, pool_site)
    subprocess.run([str(new), "trees", "drain"], cwd=pool_site, check=True, capture_output=True)
    return {row: (statistics.median(start[row]),
                  statistics.median(agent[row]) if agent[row] else None) for row in rows}


def concurrent(root: Path, files: int, old: Path, new: Path, tasks: int) -> dict[str, float]:
    """`tasks` local starts at once, each side in a clone of its own: the time until the last
    one ended (POOL: with `[trees] pool = tasks`, filled before)."""
    source = root / f"gen-{files}"
    if not source.exists():
        source = generate(root, files)
    sides = {"OLD": (old, site(root, source, f"c-old-{files}", 0, None)),
             "NEW": (new, site(root, source, f"c-new-{files}", 0, None))}
    pool_site = site(root, source, f"c-pool-{files}", tasks, None)
    sides["POOL"] = (new, pool_site)
    subprocess.run([str(new), "trees", "fill"], cwd=pool_site, check=True, capture_output=True)
    took = {}
    for side, (ganger, path) in sides.items():
        settle(new, pool_site if side == "POOL" else None, tasks)
        begun = time.perf_counter()
        running = [subprocess.Popen([str(ganger), "start", f"at-once-{k}", "--message", "hi"], cwd=path,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for k in range(tasks)]
        failed = [p.stderr.read() for p in running if p.wait() != 0]
        took[side] = time.perf_counter() - begun
        if failed:
            sys.exit(f"{side}: {len(failed)} starts failed:\n{failed[0].decode()}")
    settle(new, pool_site, tasks)
    for _, path in sides.values():
        shutil.rmtree(path.parent / path.name, ignore_errors=True)
    return took


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:,.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", type=Path, required=True, help="an earlier release build of ganger")
    parser.add_argument("--files", default="30000,100000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-docker", action="store_true")
    parser.add_argument("--root", type=Path, default=Path("/tmp/ganger-bench-trees"))
    parser.add_argument("--new", type=Path, help="this build's ganger, built already (default: build it)")
    parser.add_argument("--at-once", type=int, default=0, help="also N local starts at once, on --at-once-files")
    parser.add_argument("--at-once-files", type=int, default=30000)
    args = parser.parse_args()
    new = args.new.resolve() if args.new else build()
    image = None if args.no_docker else base_image(new)
    if args.root.exists():
        shutil.rmtree(args.root)
    args.root.mkdir(parents=True)
    try:
        for files in [int(n) for n in args.files.split(",")]:
            figures = bench_size(args.root, files, args.against.resolve(), new, args.runs, image)
            print(f"\n{files:,} files, medians of {args.runs} runs (OLD: {args.against}; "
                  f"POOL: [trees] pool = {POOL})")
            print(f"{'':16} {'start':>10} {'to agent':>10}")
            for row, (took, to_agent) in figures.items():
                print(f"{row:16} {ms(took):>10} {ms(to_agent):>10}")
        if args.at_once:
            took = concurrent(args.root, args.at_once_files, args.against.resolve(), new, args.at_once)
            print(f"\n{args.at_once} local starts at once on {args.at_once_files:,} files, until the last "
                  f"ended (POOL: [trees] pool = {args.at_once}, filled before)")
            for side, seconds in took.items():
                print(f"{side:16} {ms(seconds):>10}")
    finally:
        shutil.rmtree(args.root, ignore_errors=True)


if __name__ == "__main__":
    main()
