#!/usr/bin/env python3
"""How soon the MCP server's `watch` tool answers after a round ends.

One `ganger mcp` (the commander `bench`) in a throwaway repository whose agent is ganger's
`command` agent: a shell that sleeps, writes the time it ends to `.agent-ended` in its worktree
(nanoseconds), and exits. For each of N rounds the script calls the `start` tool (the round runs
detached), then the `watch` tool, which blocks until the commander's journal has the round's
end; the latency is the moment the watch answer is read minus the moment the agent ended. It
covers everything between: the round host settling the round (its snapshot, changed files,
checks, the journal entry) and the watch noticing the entry. Rounds are acknowledged as they go.

Usage: python3 bench/mcp_watch.py [--rounds N] [--ganger PATH]
Prints each latency and then the median, p95 and max in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
AGENT = "sleep 0.3; date +%s%N > .agent-ended; echo 'DONE: ok'"


def build() -> Path:
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "ganger-cli"], cwd=REPO, check=True)
    return Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release" / "ganger"


class Mcp:
    def __init__(self, ganger: Path, repo: Path, env: dict[str, str]):
        self.proc = subprocess.Popen([str(ganger), "mcp", "--as", "bench"], cwd=repo, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.next_id = 1
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        ident = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                sys.exit("ganger mcp closed its output")
            message = json.loads(line)
            if message.get("id") == ident:
                return message

    def call(self, tool: str, arguments: dict) -> dict:
        result = self.request("tools/call", {"name": tool, "arguments": arguments})["result"]
        if result.get("isError"):
            sys.exit(f"{tool} failed: {result['content'][0]['text']}")
        return result["structuredContent"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--ganger", type=Path)
    args = parser.parse_args()
    ganger = args.ganger or build()
    with tempfile.TemporaryDirectory(prefix="ganger-bench-watch-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        env = dict(os.environ, HOME=tmp, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1",
                   GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.invalid",
                   GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.invalid")
        env.pop("GANGER_COMMANDER", None)
        for argv in (["git", "init", "-q", "-b", "main"], ["git", "commit", "-q", "--allow-empty", "-m", "init"]):
            subprocess.run(argv, cwd=repo, env=env, check=True)
        (repo / "ganger.toml").write_text(
            "[agents.command]\n"
            f"argv = [\"sh\", \"-c\", {json.dumps(AGENT)}]\n"
            "format = \"text\"\n")
        mcp = Mcp(ganger, repo, env)
        latencies = []
        for i in range(args.rounds):
            slug = f"w{i}"
            mcp.call("start", {"slug": slug, "brief": "go", "agent": "command"})
            while True:
                page = mcp.call("watch", {"timeout_seconds": 60})
                answered = time.time_ns()
                ends = [e for e in page["entries"] if e["task"] == slug and e["kind"] == "round-finished"]
                if page["entries"]:
                    mcp.call("ack", {"upto": page["entries"][-1]["id"]})
                if ends:
                    break
            report = mcp.call("report", {"slug": slug})
            ended = int((Path(report["worktree"]) / ".agent-ended").read_text().strip())
            latency = (answered - ended) / 1e6
            latencies.append(latency)
            print(f"{slug}: {report['status']}, watch answered {latency:.1f} ms after the agent ended")
        mcp.close()
    latencies.sort()
    p95 = latencies[min(len(latencies) - 1, round(0.95 * (len(latencies) - 1)))]
    print(f"{len(latencies)} rounds: median {statistics.median(latencies):.1f} ms, "
          f"p95 {p95:.1f} ms, max {latencies[-1]:.1f} ms")


if __name__ == "__main__":
    main()
