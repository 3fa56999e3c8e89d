#!/usr/bin/env python3
"""Task trees on 100,000 files (issue 43), on an XFS file system with reflink that the script
makes (a sparse image, `mkfs.xfs -m reflink=1`, loop-mounted; needs root): how a task's tree is
made, side by side in one run, with the generated repository of bench/trees.py (400 directories
of 250 files of 4 KB, committed).

One start at a time (medians of --runs, interleaved, each after `sync`):

  worktree add   `[trees]` off: the start runs `git worktree add` (today's way)
  pool           `[trees] pool = 1`, filled: the start takes a ready worktree
  reflink        `[trees] max = 1`, the base cached: the start copies the cached tree by reflink

  to agent   the fork of `ganger start` to the instant agent's first line (a ready tree and
             the round set up)
  disk       what the file system's used blocks grew by for the task (`statvfs`, after `sync`);
             for the pool, after its background filler made the next tree (that is what the
             task cost)

Then --tasks starts at once (default 20), each side in a clone of its own, from a fresh state:

  today      `[trees]` off: every start runs `git worktree add` (one at a time per repository)
  trees      `[trees] max = 1`, the cache empty: the first start checks out the cached tree,
             every start copies it by reflink

  total      until the last start ended
  disk       what the file system's used blocks grew by

Usage: python3 bench/trees_at_once.py --ganger target/release/ganger [--files 100000]
                                      [--tasks 20] [--runs 3] [--image-gb 20]
Removes its repositories, unmounts and removes its image when done.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import trees  # noqa: E402  (bench/trees.py: the generator, the timed start, the pool's settling)


def used(mount: Path) -> int:
    s = os.statvfs(mount)
    return (s.f_blocks - s.f_bfree) * s.f_frsize


def synced_used(mount: Path) -> int:
    os.sync()
    return used(mount)


def site(root: Path, source: Path, name: str, trees_toml: str) -> Path:
    path = trees.site(root, source, name, 0, None)
    with (path / "ganger.toml").open("a") as toml:
        toml.write(f"\n[trees]\n{trees_toml}\n" if trees_toml else "")
    return path


def singles(root: Path, source: Path, ganger: Path, runs: int, mount: Path) -> dict:
    sides = {
        "worktree add": site(root, source, "one-add", ""),
        "pool": site(root, source, "one-pool", "pool = 1"),
        "reflink": site(root, source, "one-reflink", "max = 1"),
    }
    for path in (sides["pool"], sides["reflink"]):
        subprocess.run([str(ganger), "trees", "fill"], cwd=path, check=True, capture_output=True)
    agent: dict[str, list[float]] = {side: [] for side in sides}
    disk: dict[str, list[int]] = {side: [] for side in sides}
    names = list(sides)
    for i in range(runs):
        for side in names[i % 3:] + names[:i % 3]:
            path = sides[side]
            trees.settle(ganger, sides["pool"], 1)
            before = synced_used(mount)
            slug = f"{side.split()[0]}-{i}"
            worktree = path.parent / f"{path.name}-agent-{slug}"
            started_ns = time.time_ns()
            out = subprocess.run([str(ganger), "start", slug, "--message", "hi"], cwd=path,
                                 capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"start {slug} failed ({out.returncode}):\n{out.stderr}")
            stream = (path / ".ganger" / "tasks" / slug / "round-1.jsonl").read_text()
            agent[side].append((int(stream.split("agent-start ")[1].split()[0]) - started_ns) / 1e9)
            trees.settle(ganger, sides["pool"], 1)
            disk[side].append(synced_used(mount) - before)
            trees.remove_worktree(path, worktree)
        print(f"  run {i + 1}/{runs} done", file=sys.stderr)
    return {side: (statistics.median(agent[side]), statistics.median(disk[side])) for side in sides}


def at_once(root: Path, source: Path, ganger: Path, tasks: int, mount: Path) -> dict:
    sides = {"today": site(root, source, "many-today", ""),
             "trees": site(root, source, "many-trees", "max = 1")}
    figures = {}
    for side, path in sides.items():
        before = synced_used(mount)
        begun = time.perf_counter()
        running = [subprocess.Popen([str(ganger), "start", f"many-{k}", "--message", "hi"], cwd=path,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for k in range(tasks)]
        failed = [p.stderr.read() for p in running if p.wait() != 0]
        took = time.perf_counter() - begun
        if failed:
            sys.exit(f"{side}: {len(failed)} starts failed:\n{failed[0].decode()}")
        figures[side] = (took, synced_used(mount) - before)
        print(f"  {side}: {tasks} at once done", file=sys.stderr)
        for k in range(tasks):
            trees.remove_worktree(path, path.parent / f"{path.name}-agent-many-{k}")
    return figures


def mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ganger", type=Path, required=True, help="a release build of this ganger")
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--image-gb", type=int, default=20)
    args = parser.parse_args()
    ganger = args.ganger.resolve()
    holder = Path(tempfile.mkdtemp(prefix="ganger-bench-xfs-"))
    image, mount = holder / "xfs.img", holder / "mnt"
    mount.mkdir()
    with image.open("wb") as f:
        f.truncate(args.image_gb << 30)
    subprocess.run(["mkfs.xfs", "-q", "-m", "reflink=1", str(image)], check=True)
    subprocess.run(["mount", "-o", "loop", str(image), str(mount)], check=True)
    try:
        print(f"generating {args.files} files ...", file=sys.stderr)
        source = trees.generate(mount, args.files)
        # The commit of 100,000 files starts `git gc --auto` in the background, which packs and
        # deletes the loose objects a clone would be copying: wait for it.
        while (source / ".git" / "gc.pid").exists():
            time.sleep(1)
        one = singles(mount, source, ganger, args.runs, mount)
        many = at_once(mount, source, ganger, args.tasks, mount)
        print(f"\n{args.files:,} files on XFS (reflink=1), one start at a time, medians of {args.runs}")
        print(f"{'':14} {'to agent':>10} {'disk':>12}")
        for side, (to_agent, disk) in one.items():
            print(f"{side:14} {trees.ms(to_agent):>10} {mb(disk):>12}")
        print(f"\n{args.tasks} starts at once on {args.files:,} files, from a fresh state")
        print(f"{'':14} {'total':>10} {'disk':>12}")
        for side, (took, disk) in many.items():
            print(f"{side:14} {trees.ms(took):>10} {mb(disk):>12}")
    finally:
        subprocess.run(["umount", "-l", str(mount)])
        shutil.rmtree(holder, ignore_errors=True)


if __name__ == "__main__":
    main()
