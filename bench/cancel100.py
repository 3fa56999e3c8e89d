#!/usr/bin/env python3
"""Cancelled rounds leave nothing behind: N rounds (100 by default) of a sleeping agent are
started in the background and cancelled once the agent runs, in each sandbox; then ganger
counts what is left: processes carrying any of the rounds' markers, containers labelled with
the repository, and, after `ganger clean`, worktrees and branches.

The agent is ganger's `command` agent running `sleep 600` (in docker: in the base image).

Usage: python3 bench/cancel100.py [--rounds N] [--sandboxes local,bwrap,docker]
Needs: cargo, git, bwrap, a running Docker daemon with `ganger image build --agent command` done.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def build() -> Path:
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "ganger-cli"], cwd=REPO, check=True)
    return Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release" / "ganger"


def run(argv: list[str], cwd: Path) -> str:
    out = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({out.returncode}):\n{out.stderr}{out.stdout}")
    return out.stdout


def marked(tokens: set[str]) -> int:
    needles = {f"GANGER_ROUND={t}".encode() for t in tokens}
    found = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and needles.intersection(env):
            found += 1
    return found


def containers(repo: Path) -> int:
    out = subprocess.run(["docker", "ps", "-aq", "--filter", f"label=ganger.repo={repo}"],
                         capture_output=True, text=True)
    return len(out.stdout.split()) if out.returncode == 0 else -1


def one_sandbox(ganger: Path, sandbox: str, rounds: int) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"ganger-cancel-{sandbox}-") as tmp:
        repo = Path(tmp) / "site"
        repo.mkdir()
        run(["git", "init", "-q", "-b", "main"], repo)
        (repo / "README.md").write_text("bench\n")
        (repo / "ganger.toml").write_text(
            f'[defaults]\nagent = "command"\ngrace = "2s"\n\n[sandbox]\ndefault = "{sandbox}"\n\n'
            '[agents.command]\nargv = ["/bin/sh", "-c", "sleep 600"]\nformat = "text"\n')
        run(["git", "add", "-A"], repo)
        run(["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "init"], repo)
        run([str(ganger), "init"], repo)
        tokens: set[str] = set()
        started = time.monotonic()
        for n in range(rounds):
            slug = f"c{n}"
            run([str(ganger), "start", slug, "--message", "sleep", "--detach"], repo)
            token = json.loads(run([str(ganger), "status", slug, "--json"], repo))["token"]
            deadline = time.monotonic() + 30
            while not marked({token}) and time.monotonic() < deadline:
                time.sleep(0.05)
            report = json.loads(run([str(ganger), "cancel", slug, "--json"], repo))
            if report["status"] != "cancelled":
                sys.exit(f"{slug}: {report['status']}")
            tokens.add(token)
        took = time.monotonic() - started
        time.sleep(1)
        left = {"processes": marked(tokens), "containers": containers(repo) if sandbox == "docker" else 0}
        run([str(ganger), "clean", "--force"], repo)
        listed = run(["git", "worktree", "list", "--porcelain"], repo).count("worktree ") - 1
        branches = len(run(["git", "branch", "--list", "agent/*"], repo).split())
        strays = [p for p in Path(tmp).iterdir() if p.name.startswith("site-agent-")]
        left.update({"worktrees": listed, "branches": branches, "stray directories": len(strays),
                     "containers after clean": containers(repo) if sandbox == "docker" else 0})
        return {"seconds": took, **left}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--sandboxes", default="local,bwrap,docker")
    args = parser.parse_args()
    ganger = build()
    print(f"{args.rounds} rounds started and cancelled, per sandbox; what is left:")
    for sandbox in args.sandboxes.split(","):
        result = one_sandbox(ganger, sandbox, args.rounds)
        seconds = result.pop("seconds")
        counts = ", ".join(f"{k} {v}" for k, v in result.items())
        print(f"  {sandbox:<7} {seconds:6.1f} s   {counts}")


if __name__ == "__main__":
    main()
