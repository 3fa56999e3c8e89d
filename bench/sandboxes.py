#!/usr/bin/env python3
"""The cost of ganger's sandboxes, side by side in one run.

Every round runs the same instant agent: ganger's `command` agent set to
`/bin/sh -c 'cat >/dev/null; echo done'` (it reads the prompt, answers, exits). Measured, as
medians over interleaved runs so that the shared machine's noise hits each alike:

  local    `ganger fix` of a task in the local sandbox (a whole round: store, snapshots, report)
  bwrap    the same round in the bubblewrap sandbox        target: bwrap - local < 20 ms
  docker   the same round in the docker sandbox (a container through the Engine API)
  docker run --rm   the same image and command through the docker CLI, stdin attached
                                                            target: docker / docker run < 1.2

The docker image is `ganger image build`'s base image (Debian with sh); pass --image to use
another one that has /bin/sh.

Usage: python3 bench/sandboxes.py [--runs N] [--image NAME] [--skip-docker]
Needs: cargo, git, bwrap, a running Docker daemon and an image (unless --skip-docker).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
AGENT = "cat >/dev/null; echo done"


def build() -> Path:
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "ganger-cli"], cwd=REPO, check=True)
    return Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release" / "ganger"


def base_image(ganger: Path) -> str:
    out = subprocess.run([str(ganger), "image", "list", "--json"], capture_output=True, text=True)
    if out.returncode == 0:
        import json
        for image in json.loads(out.stdout).get("images", []):
            if image.get("agent") in (None, "", "base", "command"):
                return image["image"]
    sys.exit("no base image: run `ganger image build --agent command` or pass --image")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def site(root: Path, image: str) -> Path:
    repo = root / "site"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("bench\n")
    toml = f"""[defaults]
agent = "command"
timeout = "60s"

[sandbox.docker]
image = "{image}"

[agents.command]
argv = ["/bin/sh", "-c", "{AGENT}"]
format = "text"
"""
    (repo / "ganger.toml").write_text(toml)
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "init")
    return repo


def timed(argv: list[str], cwd: Path, stdin: bytes | None = None) -> float:
    started = time.perf_counter()
    run = subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True)
    took = time.perf_counter() - started
    if run.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({run.returncode}):\n{run.stderr.decode()}{run.stdout.decode()}")
    return took * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--image")
    parser.add_argument("--skip-docker", action="store_true")
    args = parser.parse_args()
    ganger = build()
    image = None if args.skip_docker else (args.image or base_image(ganger))
    kinds = ["local", "bwrap"] + ([] if args.skip_docker else ["docker"])
    with tempfile.TemporaryDirectory(prefix="ganger-bench-sandboxes-") as tmp:
        repo = site(Path(tmp), image or "none")
        for kind in kinds:
            timed([str(ganger), "start", kind, "--message", "go", "--sandbox", kind], repo)
        times: dict[str, list[float]] = {k: [] for k in kinds}
        if image:
            times["docker run --rm"] = []
        for _ in range(args.runs):
            for kind in kinds:
                times[kind].append(timed([str(ganger), "fix", kind, "--message", "go"], repo))
            if image:
                times["docker run --rm"].append(timed(
                    ["docker", "run", "--rm", "-i", "--network", "host", image, "/bin/sh", "-c", AGENT],
                    repo, stdin=b"go"))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"one round of an instant agent, median of {args.runs} (ms):")
    for kind, value in med.items():
        print(f"  {kind:<16} {value:8.1f}")
    print(f"bwrap overhead over local: {med['bwrap'] - med['local']:.1f} ms (target < 20 ms)")
    if image:
        ratio = med["docker"] / med["docker run --rm"]
        print(f"docker round / docker run --rm: {ratio:.2f}x (target < 1.2x)")


if __name__ == "__main__":
    main()
