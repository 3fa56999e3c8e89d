#!/usr/bin/env python3
"""The dashboard under load: 500 tasks in the table and 20 rounds streaming at once.

A repository with N finished tasks (default 500, run as a fleet of an instant `command`
agent, labelled team=a|b|c), then `ganger serve --listen 127.0.0.1:0` (release build) and
headless Chromium driven over WebDriver (Debian's `chromium` and `chromium-driver`; the
protocol is spoken here with urllib, so nothing needs installing from PyPI). Measured:

- first full table: from the navigation's start to the table showing all N rows
  (performance.now() in the page when the N-th row is in the DOM), over --runs fresh loads;
- event to page: 20 more tasks start, each agent printing a line with its wall-clock time in
  ns every 50 ms for 10 s; the page shows one of them (the task view, its events live) and
  a MutationObserver notes when each line appears; latency = shown - written, p50 and p95,
  over the lines written after the observer was set (the earlier ones are history the page
  loads at once, not events);
  the board table is live meanwhile (the rounds change its rows);
- round end to the table: the page shows the table while those rounds end, and notes when
  each row turns `done`; latency = shown - the round's end as stored;
- the server's memory: the serve process's peak RSS (VmHWM) and its RSS at the end.

Usage: python3 bench/dashboard.py [--tasks N] [--streams S] [--runs R] [--ganger PATH]
Needs: cargo, git, bash, python3, chromium, chromedriver.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The agent: a task whose prompt says "tick" prints its wall-clock time every 50 ms for 10 s;
# any other answers at once.
AGENT = """#!/bin/bash
case "$(cat)" in
  *tick*) for i in $(seq 1 200); do echo "tick $(date +%s%N)"; sleep 0.05; done;;
esac
echo "DONE: task done"
"""


def build() -> Path:
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "ganger-cli"], cwd=REPO, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release"
    return target / "ganger"


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GANGER_")}
    env.update({
        "HOME": str(home), "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b", "USER": "bench",
    })
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebDriver:
    """The few WebDriver commands this needs, over HTTP."""

    def __init__(self, width: int, height: int):
        self.port = free_port()
        self.driver = subprocess.Popen(["chromedriver", f"--port={self.port}"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while True:
            try:
                caps = {"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
                    "binary": "/usr/bin/chromium",
                    "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                             f"--window-size={width},{height}"]}}}}
                self.session = self.call("POST", "/session", caps)["sessionId"]
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)

    def call(self, method: str, path: str, body: dict | None = None):
        data = json.dumps(body or {}).encode() if method == "POST" else None
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as reply:
            return json.loads(reply.read())["value"]

    def goto(self, url: str):
        self.call("POST", f"/session/{self.session}/url", {"url": url})

    def run(self, script: str, asynchronous: bool = False):
        kind = "async" if asynchronous else "sync"
        return self.call("POST", f"/session/{self.session}/execute/{kind}", {"script": script, "args": []})

    def quit(self):
        try:
            self.call("DELETE", f"/session/{self.session}")
        finally:
            self.driver.kill()
            self.driver.wait()


def peak_rss_mb(pid: int) -> tuple[float, float]:
    text = Path(f"/proc/{pid}/status").read_text()
    hwm = int(re.search(r"VmHWM:\s+(\d+)", text).group(1))
    rss = int(re.search(r"VmRSS:\s+(\d+)", text).group(1))
    return hwm / 1024, rss / 1024


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--streams", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ganger", type=Path)
    args = parser.parse_args()
    ganger = args.ganger or build()
    root = Path(tempfile.mkdtemp(prefix="ganger-dashboard-bench-"))
    home, repo = root / "home", root / "repo"
    home.mkdir()
    repo.mkdir()
    env = env_for(home)
    quiet = {"cwd": repo, "env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    subprocess.run(["git", "init", "-q", "-b", "main"], check=True, **quiet)
    (repo / "README.md").write_text("bench\n")
    subprocess.run(["git", "add", "-A"], check=True, **quiet)
    subprocess.run(["git", "commit", "-qm", "init"], check=True, **quiet)
    agent = root / "agent.sh"
    agent.write_text(AGENT)
    agent.chmod(0o755)
    (repo / "ganger.toml").write_text(
        f'[defaults]\nagent = "command"\n\n[agents.command]\nargv = ["{agent}"]\nformat = "text"\n')
    fleet = root / "fleet.toml"
    fleet.write_text('name = "bench"\n[limits]\nglobal = 8\n' + "".join(
        f'[[task]]\nslug = "t{n:03}"\nmessage = "hello"\nlabels = {{ team = "{"abc"[n % 3]}" }}\n'
        for n in range(args.tasks)))
    started = time.time()
    subprocess.run([str(ganger), "fleet", "run", str(fleet)], check=True, **quiet)
    print(f"{args.tasks} tasks made in {time.time() - started:.0f} s")

    serve = subprocess.Popen([str(ganger), "serve", "--listen", "127.0.0.1:0"], cwd=repo, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = ""
    while "dashboard and API at" not in line:
        line = serve.stdout.readline()
        if not line:
            raise SystemExit("serve did not start")
    base = re.search(r"http://[0-9.:]+", line).group(0)
    token = (repo / ".ganger/web/token").read_text().strip()
    browser = WebDriver(1280, 900)
    try:
        # First full table, fresh loads.
        loads = []
        for _ in range(args.runs):
            browser.goto("about:blank")
            browser.goto(f"{base}/#token={token}")
            ms = browser.run(
                f"const done = arguments[arguments.length - 1];"
                f"const check = () => document.querySelectorAll('tr.task-row').length >= {args.tasks}"
                f" ? done(performance.now()) : requestAnimationFrame(check); check();", asynchronous=True)
            loads.append(ms)
        # 20 rounds streaming; the page follows the first in its task view.
        for n in range(args.streams):
            subprocess.run([str(ganger), "start", f"s{n:02}", "--message", "tick", "--detach"],
                           check=True, **quiet)
        browser.goto(f"{base}/#/task/s00")
        browser.run(
            "window.latencies = [];"
            "const since = Date.now();"
            "const seen = new Set();"
            "new MutationObserver(() => {"
            "  const now = Date.now();"
            "  for (const line of document.querySelectorAll('.event-line')) {"
            "    const n = line.dataset.number; if (seen.has(n)) continue; seen.add(n);"
            "    const m = line.textContent.match(/tick (\\d+)/);"
            "    const written = m ? Number(BigInt(m[1]) / 1000000n) : 0;"
            "    if (written >= since) window.latencies.push(now - written);"
            "  }"
            "}).observe(document.body, {childList: true, subtree: true});")
        cpu_before = cpu_seconds(serve.pid)
        time.sleep(8)
        cpu = (cpu_seconds(serve.pid) - cpu_before) / 8 * 100
        latencies = browser.run("return window.latencies;")
        # The table: when each streaming round's end shows as its row's status, against the
        # round's end as the store recorded it.
        browser.goto(f"{base}/#/")
        browser.run(
            "window.shownDone = {};"
            "const mark = () => { const now = Date.now();"
            "  for (const row of document.querySelectorAll('tr.task-row[data-status=done]')) {"
            "    const slug = row.dataset.slug;"
            "    if (slug.startsWith('s') && !(slug in window.shownDone)) window.shownDone[slug] = now; } };"
            "mark(); window.before = Object.keys(window.shownDone);"
            "new MutationObserver(mark).observe(document.body,"
            "  {childList: true, subtree: true, attributes: true, attributeFilter: ['data-status']});")
        deadline = time.time() + 60
        while time.time() < deadline:
            shown = browser.run("return window.shownDone;")
            if len(shown) >= args.streams:
                break
            time.sleep(0.5)
        already = set(browser.run("return window.before;"))
        request = urllib.request.Request(f"{base}/api/rounds", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=60) as reply:
            ends = {r["task"]: r["ended_at"] for r in json.loads(reply.read())["rounds"] if r["task"] in shown}
        table = sorted(shown[slug] - ends[slug] for slug in shown if slug not in already and ends.get(slug))
        hwm, rss = peak_rss_mb(serve.pid)
    finally:
        browser.quit()
        serve.kill()
        serve.wait()
        for n in range(args.streams):
            subprocess.run([str(ganger), "cancel", f"s{n:02}"], **quiet)
    latencies.sort()
    p95 = latencies[int(0.95 * (len(latencies) - 1))] if latencies else float("nan")
    print(f"first full table ({args.tasks} rows), median of {args.runs} loads: {statistics.median(loads):.0f} ms"
          f" (all: {', '.join(f'{x:.0f}' for x in loads)}; target < 1000)")
    print(f"event to page, {len(latencies)} lines with {args.streams} rounds streaming: "
          f"p50 {statistics.median(latencies):.0f} ms, p95 {p95:.0f} ms (target < 250)")
    if table:
        print(f"round end to its row in the table, {len(table)} rounds: median {statistics.median(table):.0f} ms, "
              f"worst {table[-1]:.0f} ms")
    print(f"serve's memory: peak RSS {hwm:.1f} MB, at the end {rss:.1f} MB (target < 100); "
          f"its CPU while {args.streams} rounds stream: {cpu:.0f}% of one core")


if __name__ == "__main__":
    main()
