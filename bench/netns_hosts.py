"""Hosts in network namespaces for the benchmarks, as the tests make them
(crates/test-support/src/netns.rs): each host a namespace of its own joined to this machine
by a veth pair on a subnet of its own (this machine .1, the host .2), loopback up, no default
route; every host reaches this machine at one service address (on this machine's loopback,
routed over each host's link). Each subnet gets an `unreachable` route here before any link
is made, so that its traffic never leaves by the default route. `close()` kills every process
in the namespaces and removes namespaces, links, routes and the service address.

Needs root and iproute2 (`available()` says whether both are here).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess


def _ip() -> str:
    for path in ("/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"):
        if os.path.exists(path):
            return path
    return shutil.which("ip") or "ip"


def _run(*args: str, check: bool = True) -> None:
    done = subprocess.run([_ip(), *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


def available() -> bool:
    if os.geteuid() != 0:
        return False
    try:
        return subprocess.run([_ip(), "netns", "list"], capture_output=True).returncode == 0
    except OSError:
        return False


class Hosts:
    """`count` hosts; `service` is the address every one reaches this machine by."""

    def __init__(self, count: int) -> None:
        pid = os.getpid()
        net = 200 + pid % 50
        self.service = f"10.{net}.0.1"
        self.network = f"10.{net}.0.0/16"
        self.namespaces: list[str] = []
        self._subnets: list[str] = []
        self._links: list[str] = []
        _run("addr", "add", f"{self.service}/32", "dev", "lo")
        try:
            for index in range(1, count + 1):
                name, link, inside = f"gb{pid}-{index}", f"gbh{pid}-{index}", f"gbn{pid}-{index}"
                here, address, subnet = f"10.{net}.{index}.1", f"10.{net}.{index}.2", f"10.{net}.{index}.0/24"
                _run("route", "add", "unreachable", subnet, "metric", "4000")
                self._subnets.append(subnet)
                _run("netns", "add", name)
                self.namespaces.append(name)
                _run("link", "add", link, "type", "veth", "peer", "name", inside)
                self._links.append(link)
                _run("link", "set", inside, "netns", name)
                _run("addr", "add", f"{here}/24", "dev", link)
                _run("link", "set", link, "up")
                _run("-n", name, "link", "set", "lo", "up")
                _run("-n", name, "addr", "add", f"{address}/24", "dev", inside)
                _run("-n", name, "link", "set", inside, "up")
                _run("-n", name, "route", "add", f"{self.service}/32", "via", here)
        except BaseException:
            self.close()
            raise

    def command(self, index: int, argv: list[str]) -> list[str]:
        """`argv` run inside host `index` (from 0)."""
        return [_ip(), "netns", "exec", self.namespaces[index], *argv]

    def close(self) -> None:
        for name in self.namespaces:
            pids = subprocess.run([_ip(), "netns", "pids", name], capture_output=True, text=True)
            for pid in pids.stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            _run("netns", "delete", name, check=False)
        for link in self._links:
            _run("link", "delete", link, check=False)
        for subnet in self._subnets:
            _run("route", "del", "unreachable", subnet, check=False)
        _run("addr", "del", f"{self.service}/32", "dev", "lo", check=False)
        self.namespaces, self._links, self._subnets = [], [], []
