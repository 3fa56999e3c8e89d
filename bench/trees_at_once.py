#!/usr/bin/env python3
"""Task trees on 100,000 files (issue 43), on an XFS file system with reflink that the script
makes (a sparse image, `mkfs.xfs -m reflink=1`, loop-mounted; needs root): how a task's tree is
made, side by side in one run, with the generated repository of bench/trees.py (400 directories
of 250 files of 4 KB, committed), or with --repo-from a real one: a source tarball (committed
once into a cached bare repository, bench/trees_repo.py) or a git repository's `main`.

One start at a time (medians of --runs, interleaved, each after `sync`):

  worktree add   `[trees]` off: the start runs `git worktree add` (today's way)
  pool           `[trees] pool = 1`, filled: the start takes a ready worktree
  reflink        `[trees] max = 1`, the base cached: the start copies the cached tree by reflink
  bwrap add      `--sandbox bwrap`, `[trees]` off: a checkout, as a sandboxed start makes today
  bwrap overlay  `--sandbox bwrap`, `[trees] max = 1`, the base cached: the overlay (root only)
  bwrap fuse     the same run by an unprivileged user (uid 65534, `setpriv`): the overlay
                 mounted by fuse-overlayfs, the cached tree's stamp read at each start (no seal)
  docker add / docker overlay   the same in Docker (with the `command` agent's base image)

  to tree    the fork of `ganger start` to its `worktree: created` line (the tree is ready)
  to agent   the fork of `ganger start` to the instant agent's first line (a ready tree and
             the round set up)
  disk       what the file system's used blocks grew by for the task (`statvfs`, after `sync`);
             for the pool, after its background filler made the next tree (that is what the
             task cost); the agent appends a line to 10 files (the first 10 plain files in
             git's order: d000/f000.txt to f009.txt in the generated repository)
  diff       `ganger diff SLUG` after the round (a snapshot of the tree, then the diff)
  snapshot   the fork of `ganger fix SLUG` to its agent's first line: a second round's
             snapshot of the tree before it (after the first round's 10-file change) and its
             set-up; the same set-up without the snapshot is `to agent` less `to tree`

Then --tasks starts at once (default 20), each side in a clone of its own, from a fresh state
(--at-once names the sides; the default leaves out `today`, whose 20 checkouts need 9.5 GB):

  today      `[trees]` off: every start runs `git worktree add` (one at a time per repository)
  trees      `[trees] max = 1`, the cache empty: the first start checks out the cached tree,
             every start copies it by reflink
  overlay    `[trees] max = 1`, `--sandbox bwrap`, the cache empty: the first start checks out
             the cached tree, every start mounts an overlay on it
  made       the same with the cached tree made first (`ganger trees fill`, timed apart)
  fuse       `overlay` run by an unprivileged user: overlays mounted by fuse-overlayfs

  total      until the last start ended
  disk       what the file system's used blocks grew by

The one-at-a-time sites' pools and cached trees are drained before the starts at once (disk).
The load average is printed at the start and the end.

Usage: python3 bench/trees_at_once.py --ganger target/release/ganger [--files 100000]
                                      [--repo-from TARBALL_OR_GIT_REPOSITORY]
                                      [--tasks 20] [--runs 3] [--image-gb 20]
                                      [--at-once trees,overlay] [--no-docker]
                                      [--sides "worktree add,bwrap add,bwrap overlay"]
Removes its repositories, unmounts and removes its image when done (not --repo-from's cache).
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
import trees_repo  # noqa: E402  (bench/trees_repo.py: a real repository, the files to change)


def used(mount: Path) -> int:
    s = os.statvfs(mount)
    return (s.f_blocks - s.f_bfree) * s.f_frsize


def synced_used(mount: Path) -> int:
    os.sync()
    return used(mount)


# The sites whose ganger runs as an unprivileged user, and that user's HOME.
USER = (65534, 65534)
user_sites: set[Path] = set()
user_home: Path | None = None


def ganger_cmd(ganger: Path, path: Path) -> list[str]:
    """How ganger is run for the site at `path`: as the user for a user's site."""
    if path not in user_sites:
        return [str(ganger)]
    return ["setpriv", f"--reuid={USER[0]}", f"--regid={USER[1]}", "--clear-groups", "--",
            "env", f"HOME={user_home}", str(ganger)]


def give_to_user(path: Path) -> None:
    """The site at `path` made a user's: its files (and the folder its worktrees go to, which
    is its own) given to USER, its ganger run as USER."""
    subprocess.run(["chown", "-R", f"{USER[0]}:{USER[1]}", str(path.parent)], check=True)
    user_sites.add(path)


def site(root: Path, source: Path, name: str, trees_toml: str, image: str | None = None) -> Path:
    """bench/trees.py's site, its main checkout left empty (tasks never read it; the disk is
    tight: nine checkouts of 100,000 files would take 4 GB)."""
    path = root / name
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(source), str(path)], check=True)
    subprocess.run(["git", "read-tree", "HEAD"], cwd=path, check=True)
    subprocess.run(["git", "update-index", "--skip-worktree", "--stdin"], cwd=path, check=True,
                   input=subprocess.run(["git", "ls-files"], cwd=path, check=True,
                                        capture_output=True).stdout)
    docker = f'\n[sandbox.docker]\nimage = "{image}"\n' if image else ""
    (path / "ganger.toml").write_text(
        f'[defaults]\nagent = "command"\ntimeout = "120s"\n{docker}\n'
        f'[agents.command]\nargv = ["/bin/sh", "-c", "{agent_line}"]\nformat = "text"\n')
    with (path / "ganger.toml").open("a") as toml:
        toml.write(f"\n[trees]\n{trees_toml}\n" if trees_toml else "")
    return path


# bench/trees.py's instant agent, changing 10 files (for the diff after it): `agent(paths)`.
agent_line = ""


def agent(paths: list[str]) -> str:
    return ("echo agent-start $(date +%s%N); cat >/dev/null; "
            f"for f in {' '.join(paths)}; do echo changed >> $f; done; echo done")


def remove_tree(ganger: Path, path: Path, slug: str) -> None:
    """The task's tree gone: an overlay by `ganger clean --force` (git would delete through the
    mount), any other by `git worktree remove`."""
    worktree = path.parent / f"{path.name}-agent-{slug}"
    if path in user_sites or os.path.ismount(worktree):
        subprocess.run(ganger_cmd(ganger, path) + ["clean", "--force", slug], cwd=path,
                       capture_output=True)
    if worktree.exists():
        trees.remove_worktree(path, worktree)


def timed(ganger: Path, path: Path, slug: str, sandbox: str) -> tuple[float, float, str]:
    """(fork to the `worktree: created` line, fork to the agent's first line, that line)."""
    started_ns = time.time_ns()
    start = subprocess.Popen(ganger_cmd(ganger, path) + ["start", slug, "--sandbox", sandbox,
                                                         "--message", "hi"],
                             cwd=path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tree_ns, line, printed = None, "", []
    for out in start.stdout:
        printed.append(out)
        if tree_ns is None and out.startswith("worktree: created"):
            tree_ns, line = time.time_ns(), out.strip()
    err = start.stderr.read()
    if start.wait() != 0 or tree_ns is None:
        sys.exit(f"start {slug} failed ({start.returncode}):\n{''.join(printed)}\n{err}")
    stream = (path / ".ganger" / "tasks" / slug / "round-1.jsonl").read_text()
    agent_ns = int(stream.split("agent-start ")[1].split()[0])
    return (tree_ns - started_ns) / 1e9, (agent_ns - started_ns) / 1e9, line


def timed_fix(ganger: Path, path: Path, slug: str) -> float:
    """The fork of `ganger fix SLUG` to its agent's first line (the snapshot before round 2)."""
    started_ns = time.time_ns()
    out = subprocess.run(ganger_cmd(ganger, path) + ["fix", slug, "--message", "again"], cwd=path,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"fix {slug} failed ({out.returncode}):\n{out.stderr}")
    stream = (path / ".ganger" / "tasks" / slug / "round-2.jsonl").read_text()
    agent_ns = int(stream.split("agent-start ")[1].split()[0])
    return (agent_ns - started_ns) / 1e9


def timed_diff(ganger: Path, path: Path, slug: str) -> float:
    """`ganger diff` of the task after its round changed 10 files (a snapshot of the tree)."""
    begun = time.perf_counter()
    out = subprocess.run(ganger_cmd(ganger, path) + ["diff", slug], cwd=path, capture_output=True,
                         text=True)
    took = time.perf_counter() - begun
    if out.returncode != 0 or out.stdout.count("diff --git") != 10:
        sys.exit(f"diff {slug} ({out.returncode}): {out.stdout[:300]}\n{out.stderr}")
    return took


def singles(root: Path, source: Path, ganger: Path, runs: int, mount: Path, image: str | None,
            only: list[str]) -> dict:
    sides = {
        "worktree add": (site(root, source, "one-add", ""), "local"),
        "pool": (site(root, source, "one-pool", "pool = 1"), "local"),
        "reflink": (site(root, source, "one-reflink", "max = 1"), "local"),
        "bwrap add": (site(root, source, "one-bwrap-add", ""), "bwrap"),
        "bwrap overlay": (site(root, source, "one-bwrap-overlay", "max = 1"), "bwrap"),
        "bwrap fuse": (site(root, source, "as-user/one-bwrap-fuse", "max = 1"), "bwrap"),
    }
    if image:
        sides["docker add"] = (site(root, source, "one-docker-add", "", image), "docker")
        sides["docker overlay"] = (site(root, source, "one-docker-overlay", "max = 1", image), "docker")
    if only:
        sides = {side: sides[side] for side in only if side in sides}
    if "bwrap fuse" in sides:
        give_to_user(sides["bwrap fuse"][0])
    for side in ("pool", "reflink", "bwrap overlay", "bwrap fuse", "docker overlay"):
        if side in sides:
            path = sides[side][0]
            subprocess.run(ganger_cmd(ganger, path) + ["trees", "fill"], cwd=path, check=True,
                           capture_output=True)
    figures: dict[str, list[tuple[float, float, int, float, float]]] = {side: [] for side in sides}
    names = list(sides)
    pool = sides["pool"][0] if "pool" in sides else None
    for i in range(runs):
        for side in names[i % len(names):] + names[:i % len(names)]:
            path, sandbox = sides[side]
            trees.settle(ganger, pool, 1)
            before = synced_used(mount)
            slug = f"{side.replace(' ', '-')}-{i}"
            to_tree, to_agent, line = timed(ganger, path, slug, sandbox)
            if ("overlay" in side or "fuse" in side) and "an overlay" not in line:
                sys.exit(f"{side}: the start made no overlay: {line}")
            trees.settle(ganger, pool, 1)
            disk = synced_used(mount) - before
            diff = timed_diff(ganger, path, slug)
            figures[side].append((to_tree, to_agent, disk, diff, timed_fix(ganger, path, slug)))
            remove_tree(ganger, path, slug)
        print(f"  run {i + 1}/{runs} done", file=sys.stderr)
    trees.settle(ganger, pool, 1)
    for path, _ in sides.values():  # the cached trees and the pool's: disk for the starts at once
        subprocess.run(ganger_cmd(ganger, path) + ["trees", "drain"], cwd=path, check=True,
                       capture_output=True)
    return {side: tuple(statistics.median(f[k] for f in got) for k in range(5))
            for side, got in figures.items()}


def at_once(root: Path, source: Path, ganger: Path, tasks: int, mount: Path, which: list[str]) -> dict:
    kinds = {"today": ("", "local"), "trees": ("max = 1", "local"), "overlay": ("max = 1", "bwrap"),
             "made": ("max = 1", "bwrap"), "fuse": ("max = 1", "bwrap")}
    figures = {}
    for side in which:
        trees_toml, sandbox = kinds[side]
        path = site(root, source, f"as-user/many-{side}" if side == "fuse" else f"many-{side}",
                    trees_toml)
        if side == "fuse":
            give_to_user(path)
        made = None
        if side == "made":  # the cached tree made first, its time apart
            os.sync()
            begun = time.perf_counter()
            subprocess.run([str(ganger), "trees", "fill"], cwd=path, check=True, capture_output=True)
            made = time.perf_counter() - begun
        before = synced_used(mount)
        begun = time.perf_counter()
        running = [subprocess.Popen(ganger_cmd(ganger, path) + ["start", f"many-{k}", "--sandbox",
                                                                 sandbox, "--message", "hi"], cwd=path,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for k in range(tasks)]
        failed = [p.stderr.read() for p in running if p.wait() != 0]
        took = time.perf_counter() - begun
        if failed:
            sys.exit(f"{side}: {len(failed)} starts failed:\n{failed[0].decode()}")
        figures[side] = (took, synced_used(mount) - before, made)
        print(f"  {side}: {tasks} at once done", file=sys.stderr)
        for k in range(tasks):
            remove_tree(ganger, path, f"many-{k}")
    return figures


def load() -> str:
    return " ".join(f"{n:.2f}" for n in os.getloadavg())


def mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ganger", type=Path, required=True, help="a release build of this ganger")
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--repo-from", type=Path, help="a source tarball or a git repository (its main) "
                        "instead of the generated files")
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--image-gb", type=int, default=20)
    parser.add_argument("--at-once", default="trees,overlay", help="today,trees,overlay,made,fuse")
    parser.add_argument("--no-docker", action="store_true")
    parser.add_argument("--sides", default="", help="the one-at-a-time sides to run (default: all)")
    args = parser.parse_args()
    ganger = args.ganger.resolve()
    holder = Path(tempfile.mkdtemp(prefix="ganger-bench-xfs-"))
    image, mount = holder / "xfs.img", holder / "mnt"
    mount.mkdir()
    with image.open("wb") as f:
        f.truncate(args.image_gb << 30)
    subprocess.run(["mkfs.xfs", "-q", "-m", "reflink=1", str(image)], check=True)
    subprocess.run(["mount", "-o", "loop", str(image), str(mount)], check=True)
    # The user's side goes through these.
    os.chmod(holder, 0o755)
    os.chmod(mount, 0o755)
    global user_home
    user_home = holder / "home-user"
    user_home.mkdir()
    os.chown(user_home, *USER)
    global agent_line
    started_load = load()
    print(f"load average at the start: {started_load}", file=sys.stderr)
    try:
        if args.repo_from:
            cached = trees_repo.committed(args.repo_from.resolve())
            source = mount / "real.git"
            subprocess.run(["git", "clone", "-q", "--bare", str(cached), str(source)], check=True)
            entries, size = trees_repo.tree_size(source)
            what = f"{args.repo_from.name} ({entries:,} entries, {size / 1e6:,.0f} MB)"
        else:
            print(f"generating {args.files} files ...", file=sys.stderr)
            source = trees.generate(mount, args.files)
            # The commit of 100,000 files starts `git gc --auto` in the background, which packs and
            # deletes the loose objects a clone would be copying: wait for it.
            while (source / ".git" / "gc.pid").exists():
                time.sleep(1)
            what = f"{args.files:,} files"
        changed = trees_repo.changed_files(source)
        agent_line = agent(changed)
        print(f"the agent changes {', '.join(changed)}", file=sys.stderr)
        image = None if args.no_docker else trees.base_image(ganger)
        only = [s.strip() for s in args.sides.split(",") if s.strip()]
        one = singles(mount, source, ganger, args.runs, mount, image, only)
        many = at_once(mount, source, ganger, args.tasks, mount, [s for s in args.at_once.split(",") if s])
        print(f"\n{what} on XFS (reflink=1), one start at a time, medians of {args.runs}")
        print(f"{'':14} {'to tree':>10} {'to agent':>10} {'disk':>12} {'diff':>10} {'snapshot':>10}")
        for side, (to_tree, to_agent, disk, diff, fix) in one.items():
            print(f"{side:14} {trees.ms(to_tree):>10} {trees.ms(to_agent):>10} {mb(disk):>12}"
                  f" {trees.ms(diff):>10} {trees.ms(fix):>10}")
        print(f"\n{args.tasks} starts at once on {what}, from a fresh state")
        print(f"{'':14} {'total':>10} {'disk':>12}")
        for side, (took, disk, made) in many.items():
            print(f"{side:14} {trees.ms(took):>10} {mb(disk):>12}"
                  + (f"   (the cached tree made first in {trees.ms(made)}, not counted)" if made else ""))
        print(f"\nload average at the start: {started_load}; at the end: {load()}")
    finally:
        subprocess.run(["umount", "-l", str(mount)])
        shutil.rmtree(holder, ignore_errors=True)


if __name__ == "__main__":
    main()
