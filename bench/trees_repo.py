"""A real repository for bench/trees_at_once.py (issue 43): a source tarball (a Debian
`*.orig.tar.xz`, a crate's `.crate`, an npm `.tgz`, ...) committed once into a bare git
repository kept in a cache folder (default /var/tmp/ganger-bench-repos), or a git repository
given as it is; and the 10 files the benchmark's agent changes in either.

The commit is the tarball's files as they are: `git add -A -f`, so the tree's own .gitignore
files leave nothing out; one commit on `main` with fixed names and dates, packed without deltas
(a clone into the benchmark's file system copies one file)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

CACHE = Path(os.environ.get("GANGER_BENCH_REPOS", "/var/tmp/ganger-bench-repos"))
SAFE = re.compile(r"^[A-Za-z0-9_/+-][A-Za-z0-9._/+-]*$")


def git(*args: str, cwd: Path | None = None, env: dict | None = None) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                         env={**os.environ, **(env or {})})
    if out.returncode != 0:
        sys.exit(f"git {' '.join(args[:3])} failed: {out.stderr.strip()}")
    return out.stdout


def committed(source: Path) -> Path:
    """A git repository holding `source` on `main`: `source` itself when it is one, else the
    cached commit of the tarball (made the first time)."""
    if source.is_dir():
        if subprocess.run(["git", "-C", str(source), "rev-parse", "--verify", "-q", "main^{commit}"],
                          capture_output=True).returncode != 0:
            sys.exit(f"--repo-from {source}: not a git repository with a `main` branch")
        return source
    if not tarfile.is_tarfile(source):
        sys.exit(f"--repo-from {source}: neither a git repository nor a tarball")
    name = re.sub(r"\.(tar\.[a-z0-9]+|tgz|crate|tar)$", "", source.name)
    repo = CACHE / f"{name}.git"
    if (repo / "ganger-bench-done").exists():
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    unpacked = CACHE / f"{name}.unpacked"
    shutil.rmtree(unpacked, ignore_errors=True)
    unpacked.mkdir(parents=True)
    print(f"committing {source.name} into {repo} (once) ...", file=sys.stderr)
    subprocess.run(["tar", "-xf", str(source), "-C", str(unpacked)], check=True)
    top = list(unpacked.iterdir())
    tree = top[0] if len(top) == 1 and top[0].is_dir() else unpacked
    git("init", "-q", "--bare", "-b", "main", str(repo))
    env = {"GIT_DIR": str(repo), "GIT_WORK_TREE": str(tree), "GIT_AUTHOR_NAME": "bench",
           "GIT_AUTHOR_EMAIL": "bench@localhost", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@localhost", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    git("config", "gc.auto", "0", env=env)
    git("add", "-A", "-f", env=env)
    git("commit", "-q", "-m", source.name, env=env)
    git("-c", "pack.window=0", "repack", "-a", "-d", "-q", env=env)
    (repo / "index").unlink(missing_ok=True)
    shutil.rmtree(unpacked)
    (repo / "ganger-bench-done").write_text(f"{source}\n")
    return repo


def changed_files(repo: Path, count: int = 10) -> list[str]:
    """The first `count` regular files on `main` (git's order) with no hidden path component
    and a name the agent's shell line can carry as it is: d000/f000.txt to d000/f009.txt in
    bench/trees.py's generated repository."""
    picked = []
    listing = subprocess.Popen(["git", "-C", str(repo), "ls-tree", "-r", "main"], stdout=subprocess.PIPE, text=True)
    for line in listing.stdout:
        meta, path = line.rstrip("\n").split("\t", 1)
        if meta.split()[0] == "100644" and SAFE.match(path) and "/." not in f"/{path}":
            picked.append(path)
            if len(picked) == count:
                break
    listing.kill()
    listing.wait()
    if len(picked) < count:
        sys.exit(f"{repo}: fewer than {count} plain files on main")
    return picked


def tree_size(repo: Path) -> tuple[int, int]:
    """(entries, bytes) of `main`'s tree."""
    entries = size = 0
    for line in git("-C", str(repo), "ls-tree", "-r", "-l", "main").splitlines():
        entries += 1
        field = line.split("\t", 1)[0].split()[3]
        size += int(field) if field.isdigit() else 0
    return entries, size
