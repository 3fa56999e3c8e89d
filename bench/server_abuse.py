#!/usr/bin/env python3
"""`ganger serve --listen` under load and abuse (issue 38, items 5-8), an earlier build and this
one side by side in one run.

Each scenario runs against each build in turn, in a fresh repository of its own (the command
agent, a shell script), with `serve` under `prlimit --nofile=N` (default 1024, the usual soft
limit) so that descriptors run out where they would on a user's machine. What is measured of
serve: its descriptors, threads, memory (VmRSS, and VmHWM, the peak), its CPU over a window (%
of one core, from /proc/PID/stat), and `GET /api/tasks` latency (median of a few requests,
"timeout" past 10 s).

  slowloris    N connections that send the start of a request's headers and never its end,
               re-opened when the server closes them; meanwhile a start is queued with the CLI
               (is it delivered?) and /api/tasks is asked
  mcp          N sessions of /mcp, each subscribing to a resource and then ended (DELETE /mcp);
               then serve idles
  events       N clients of a finished task's event stream (GET /api/tasks/SLUG/events), each
               reading the round and then idle; then they leave (descriptors of state.db after)
  diffs        N concurrent `GET /api/tasks/SLUG/diff` of a task that wrote a text file of
               about M MB; and the MCP `diff` tool (`ganger mcp` on stdio) paging P pages of
               100 KB through the same patch

Usage: python3 bench/server_abuse.py --old OLD/target/release/ganger [--new PATH]
         [--nofile 1024] [--slow 1100] [--subscriptions 1500] [--clients 200]
         [--diffs 4] [--diff-mb 145] [--pages 20] [--only slowloris,mcp,events,diffs]
Without --new, builds this checkout in release mode. Needs: python3, git, prlimit (util-linux).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TICKS = os.sysconf("SC_CLK_TCK")


def build() -> Path:
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "ganger-cli"], cwd=REPO, check=True)
    return Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release" / "ganger"


# ---------------------------------------------------------------- a process seen from /proc

def status_field(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    except OSError:
        return 0.0


def descriptors(pid: int, target: str | None = None) -> int:
    try:
        entries = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return 0
    if target is None:
        return len(entries)
    count = 0
    for entry in entries:
        try:
            if os.readlink(f"/proc/{pid}/fd/{entry}").startswith(target):
                count += 1
        except OSError:
            pass
    return count


# ---------------------------------------------------------------- a repository and its serve

AGENT = "cat >/dev/null; echo working; {extra} echo 'DONE: ok'"


class Site:
    """A throwaway repository whose agent is a shell script, and `ganger serve` in it."""

    def __init__(self, ganger: Path, root: Path, extra: str = ""):
        self.ganger = ganger
        self.root = root
        self.repo = root / "repo"
        self.repo.mkdir(parents=True)
        self.env = dict(os.environ, HOME=str(root / "home"), GIT_CONFIG_GLOBAL="/dev/null",
                        GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.invalid",
                        GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.invalid", TMPDIR=str(root))
        (root / "home").mkdir()
        self.git("init", "-q", "-b", "main")
        (self.repo / "README.md").write_text("bench\n")
        script = AGENT.format(extra=extra)
        (self.repo / "ganger.toml").write_text(
            '[defaults]\nagent = "command"\n\n[agents.command]\n'
            f"argv = [\"sh\", \"-c\", {json.dumps(script)}]\nformat = \"text\"\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "init")
        self.serve: subprocess.Popen | None = None
        self.base = ""
        self.token = ""

    def git(self, *args: str) -> None:
        subprocess.run(["git", *args], cwd=self.repo, env=self.env, check=True,
                       stdout=subprocess.DEVNULL)

    def ganger_run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.ganger), *args], cwd=self.repo, env=self.env, text=True,
                              capture_output=True, check=check, timeout=600)

    def start(self, nofile: int) -> None:
        self.serve = subprocess.Popen(
            ["prlimit", f"--nofile={nofile}:{nofile}", "--", str(self.ganger), "serve",
             "--listen", "127.0.0.1:0"],
            cwd=self.repo, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.serve.stdout is not None
        for line in self.serve.stdout:
            if "dashboard and API at http://" in line:
                self.base = line.split("http://")[1].split("/")[0]
                break
        else:
            sys.exit(f"serve did not start: {self.serve.stderr.read() if self.serve.stderr else ''}")
        threading.Thread(target=lambda: self.serve.stdout.read(), daemon=True).start()
        self.token = (self.repo / ".ganger/web/token").read_text().strip()
        time.sleep(0.5)

    @property
    def pid(self) -> int:
        assert self.serve is not None
        return self.serve.pid

    def stop(self) -> None:
        if self.serve:
            self.serve.kill()
            self.serve.wait()

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
                timeout: float = 10.0) -> tuple[int, dict, bytes]:
        host, port = self.base.rsplit(":", 1)
        connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
        try:
            all_headers = {"Authorization": f"Bearer {self.token}"}
            all_headers.update(headers or {})
            connection.request(method, path, body=body, headers=all_headers)
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def latency(self, tries: int = 5) -> str:
        """The median latency of GET /api/tasks, or how many timed out."""
        times, failed = [], 0
        for _ in range(tries):
            start = time.perf_counter()
            try:
                status, _, _ = self.request("GET", "/api/tasks")
                if status != 200:
                    failed += 1
                    continue
                times.append(time.perf_counter() - start)
            except (OSError, http.client.HTTPException):
                failed += 1
        if not times:
            return f"failed {failed}/{tries}"
        text = f"{statistics.median(times) * 1000:.0f} ms"
        return text + (f" ({failed} failed)" if failed else "")

    def measure(self, window: float) -> dict[str, str]:
        """serve's figures now, its CPU over `window` seconds."""
        before = cpu_seconds(self.pid)
        time.sleep(window)
        cpu = (cpu_seconds(self.pid) - before) / window * 100
        return {
            "descriptors": str(descriptors(self.pid)),
            "threads": str(status_field(self.pid, "Threads")),
            "CPU (% of a core)": f"{cpu:.0f}%",
            "RSS": f"{status_field(self.pid, 'VmRSS') / 1024:.0f} MB",
            "/api/tasks latency": self.latency(),
        }


# ---------------------------------------------------------------- scenarios

def slowloris(site: Site, args) -> dict[str, str]:
    site.start(args.nofile)
    stop = threading.Event()
    host, port = site.base.rsplit(":", 1)
    held: list[socket.socket | None] = [None] * args.slow

    def open_one() -> socket.socket | None:
        try:
            s = socket.create_connection((host, int(port)), timeout=2)
            s.sendall(b"GET /api/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            s.setblocking(False)
            return s
        except OSError:
            return None

    def attack() -> None:
        while not stop.is_set():
            for i, s in enumerate(held):
                gone = s is None
                if s is not None:
                    try:
                        # Closed (b""), or answered (a timeout or a refusal): either way gone.
                        s.recv(512)
                        gone = True
                    except BlockingIOError:
                        gone = False
                    except OSError:
                        gone = True
                if gone:
                    if s is not None:
                        s.close()
                    held[i] = open_one()
                if stop.is_set():
                    break
            time.sleep(0.2)

    thread = threading.Thread(target=attack, daemon=True)
    thread.start()
    time.sleep(3)
    queued_at = time.perf_counter()
    site.ganger_run("start", "queued", "--message", "go", "--queue", check=False)
    figures = site.measure(5)
    delivered = "no (60 s)"
    while time.perf_counter() - queued_at < 60:
        status = site.ganger_run("status", "queued", "--json", check=False)
        if '"done"' in status.stdout:
            delivered = f"yes, {time.perf_counter() - queued_at:.1f} s"
            break
        time.sleep(0.5)
    figures["queued round delivered"] = delivered
    figures["connections the client holds"] = str(sum(1 for s in held if s is not None))
    stop.set()
    thread.join()
    for s in held:
        if s is not None:
            s.close()
    site.stop()
    return figures


def mcp_post(site: Site, message: dict, session: str | None) -> tuple[int, str | None]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        headers.update({"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-06-18"})
    status, response_headers, _ = site.request("POST", "/mcp", json.dumps(message).encode(), headers,
                                              timeout=60)
    lowered = {k.lower(): v for k, v in response_headers.items()}
    return status, lowered.get("mcp-session-id")


def mcp(site: Site, args) -> dict[str, str]:
    site.ganger_run("start", "one", "--message", "go")
    site.start(args.nofile)
    idle = site.measure(3)
    started = time.perf_counter()

    def one(i: int) -> None:
        try:
            _, session = mcp_post(site, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"}}}, None)
            if not session:
                return
            mcp_post(site, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
            uri = ["ganger://tasks", "ganger://journal", "ganger://tasks/one"][i % 3]
            mcp_post(site, {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
                            "params": {"uri": uri}}, session)
            site.request("DELETE", "/mcp", None, {"Mcp-Session-Id": session,
                                                   "MCP-Protocol-Version": "2025-06-18"}, timeout=60)
        except (OSError, http.client.HTTPException):
            pass

    run_all(one, args.subscriptions, workers=16)
    setup = time.perf_counter() - started
    time.sleep(2)
    figures = site.measure(5)
    figures["CPU before the sessions"] = idle["CPU (% of a core)"]
    figures["/api/tasks latency before"] = idle["/api/tasks latency"]
    figures["time to open, subscribe, end them"] = f"{setup:.1f} s"
    site.stop()
    return figures


def run_all(work, count: int, workers: int) -> None:
    next_index = [0]
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                i = next_index[0]
                next_index[0] += 1
            if i >= count:
                return
            work(i)

    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def events(site: Site, args) -> dict[str, str]:
    site.ganger_run("start", "done", "--message", "go")
    site.start(args.nofile)
    host, port = site.base.rsplit(":", 1)
    idle = site.measure(2)
    clients: list[socket.socket] = []

    def open_client() -> socket.socket | None:
        s = socket.create_connection((host, int(port)), timeout=30)
        s.sendall(f"GET /api/tasks/done/events HTTP/1.1\r\nHost: {site.base}\r\n"
                  f"Authorization: Bearer {site.token}\r\nAccept: text/event-stream\r\n\r\n".encode())
        seen = b""
        # The round's report as the feed reaches it and as it ended.
        while seen.count(b"event: round") < 2:
            chunk = s.recv(65536)
            if not chunk:
                return None
            seen += chunk
        return s

    for _ in range(args.clients):
        client = open_client()
        if client is not None:
            clients.append(client)
    time.sleep(1)
    figures = site.measure(5)
    store = str((site.repo / ".ganger/state.db").resolve())
    figures["descriptors of state.db, clients idle"] = str(descriptors(site.pid, store))
    figures["clients that got the round"] = str(len(clients))
    figures["threads before the clients"] = idle["threads"]
    for client in clients:
        client.close()
    time.sleep(2)
    figures["descriptors of state.db, clients gone"] = str(descriptors(site.pid, store))
    figures["threads, clients gone"] = str(status_field(site.pid, "Threads"))
    site.stop()
    return figures


def diffs(site: Site, args) -> dict[str, str]:
    site.ganger_run("start", "big", "--message", "go")
    site.start(args.nofile)
    size = (site.root / "repo-agent-big" / "big.txt").stat().st_size
    before_hwm = status_field(site.pid, "VmHWM")
    totals: list[int] = []
    errors: list[str] = []
    peak_threads = [0]
    done = threading.Event()

    def watch_threads() -> None:
        while not done.is_set():
            peak_threads[0] = max(peak_threads[0], status_field(site.pid, "Threads"))
            time.sleep(0.05)

    def one(_: int) -> None:
        host, port = site.base.rsplit(":", 1)
        connection = http.client.HTTPConnection(host, int(port), timeout=600)
        try:
            connection.request("GET", "/api/tasks/big/diff", headers={"Authorization": f"Bearer {site.token}"})
            response = connection.getresponse()
            total = 0
            while True:
                chunk = response.read(1 << 16)
                if not chunk:
                    break
                total += len(chunk)
            totals.append(total)
            if response.status != 200:
                errors.append(str(response.status))
        except (OSError, http.client.HTTPException) as e:
            errors.append(str(e))
        finally:
            connection.close()

    watcher = threading.Thread(target=watch_threads, daemon=True)
    watcher.start()
    cpu_before = cpu_seconds(site.pid)
    started = time.perf_counter()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(args.diffs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.perf_counter() - started
    cpu = cpu_seconds(site.pid) - cpu_before
    done.set()
    figures = {
        "file": f"{size / 1e6:.0f} MB",
        "patch bytes each client read": f"{statistics.median(totals) / 1e6:.0f} MB" if totals else "none",
        "peak RSS (VmHWM) of serve": f"{status_field(site.pid, 'VmHWM') / 1024:.0f} MB "
                                     f"(from {before_hwm / 1024:.0f})",
        "peak threads": str(peak_threads[0]),
        "time for the diffs": f"{took:.1f} s",
        "serve's CPU for them": f"{cpu:.1f} s",
        "descriptors after": str(descriptors(site.pid)),
    }
    if errors:
        figures["errors"] = ", ".join(errors[:3])
    site.stop()
    # The MCP tool, paging through round 1's patch.
    mcp_process = subprocess.Popen([str(site.ganger), "mcp", "--as", "bench"], cwd=site.repo, env=site.env,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(message: dict) -> dict:
        assert mcp_process.stdin and mcp_process.stdout
        mcp_process.stdin.write(json.dumps(message) + "\n")
        mcp_process.stdin.flush()
        while True:
            line = mcp_process.stdout.readline()
            answer = json.loads(line)
            if answer.get("id") == message.get("id"):
                return answer

    ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    assert mcp_process.stdin
    mcp_process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    mcp_process.stdin.flush()
    offset = 0
    started = time.perf_counter()
    for page in range(args.pages):
        answer = ask({"jsonrpc": "2.0", "id": page + 1, "method": "tools/call", "params": {
            "name": "diff", "arguments": {"slug": "big", "round": 1, "offset": offset, "limit": 100000}}})
        content = answer["result"]["structuredContent"]
        offset = content.get("next_offset") or 0
    paged = time.perf_counter() - started
    figures[f"MCP diff: {args.pages} pages of 100 KB"] = f"{paged:.1f} s"
    figures["MCP server's peak RSS"] = f"{status_field(mcp_process.pid, 'VmHWM') / 1024:.0f} MB"
    mcp_process.kill()
    mcp_process.wait()
    return figures


def seq_lines(size: int) -> int:
    """How many lines `seq 1 N` writes in about `size` bytes."""
    lines, digits = 0, 1
    while size > 0:
        numbers = 9 * 10 ** (digits - 1)
        take = min(numbers, size // (digits + 1))
        lines += take
        size -= take * (digits + 1)
        if take < numbers:
            break
        digits += 1
    return lines


SCENARIOS = {
    "slowloris": (slowloris, ""),
    "mcp": (mcp, ""),
    "events": (events, ""),
    "diffs": (diffs, "seq 1 {lines} > big.txt;"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", type=Path, required=True, help="the earlier build's ganger")
    parser.add_argument("--new", type=Path, help="this build's ganger (default: built here, release)")
    parser.add_argument("--nofile", type=int, default=1024, help="serve's limit of open files")
    parser.add_argument("--slow", type=int, default=1100, help="slow connections")
    parser.add_argument("--subscriptions", type=int, default=1500, help="MCP sessions, one subscription each")
    parser.add_argument("--clients", type=int, default=200, help="event-stream clients")
    parser.add_argument("--diffs", type=int, default=4, help="concurrent diffs")
    parser.add_argument("--diff-mb", type=float, default=145, help="size of the file the diffs show")
    parser.add_argument("--pages", type=int, default=20, help="MCP diff pages")
    parser.add_argument("--only", default=",".join(SCENARIOS), help="scenarios, comma-separated")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, args.slow + 1000)), hard))
    builds = {"old": args.old.resolve(), "new": (args.new or build()).resolve()}
    lines = seq_lines(int(args.diff_mb * 1e6))
    results: dict[str, dict[str, dict[str, str]]] = {}
    for name in args.only.split(","):
        scenario, extra = SCENARIOS[name]
        results[name] = {}
        # The sides take turns going first.
        order = ["old", "new"] if len(results) % 2 else ["new", "old"]
        for side in order:
            root = Path(tempfile.mkdtemp(prefix=f"ganger-abuse-{name}-{side}-"))
            try:
                site = Site(builds[side], root, extra.format(lines=lines))
                print(f"{name}: {side} ...", file=sys.stderr, flush=True)
                results[name][side] = scenario(site, args)
            finally:
                shutil.rmtree(root, ignore_errors=True)
    print(f"\nbench/server_abuse.py: old {builds['old']}, new {builds['new']}; serve under "
          f"prlimit --nofile={args.nofile}; {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    counts = {"slowloris": f"{args.slow} slow connections", "mcp": f"{args.subscriptions} subscriptions of ended MCP sessions",
              "events": f"{args.clients} idle clients of a finished task's events",
              "diffs": f"{args.diffs} concurrent diffs of a {args.diff_mb:.0f} MB file"}
    for name, sides in results.items():
        print(f"\n{counts[name]}")
        print(f"| {'measure':<42} | {'old':<24} | {'new':<24} |")
        print(f"|{'-' * 44}|{'-' * 26}|{'-' * 26}|")
        keys = list(dict.fromkeys([*sides.get("old", {}), *sides.get("new", {})]))
        for key in keys:
            print(f"| {key:<42} | {sides.get('old', {}).get(key, ''):<24} | {sides.get('new', {}).get(key, ''):<24} |")


if __name__ == "__main__":
    main()
