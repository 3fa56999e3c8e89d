//! Test hosts in network namespaces: each is a namespace of its own, joined to this machine by
//! a veth pair on a subnet of its own (this machine `.1`, the host `.2`), with loopback up and
//! no default route: it reaches only this machine, at its address on that link or at the
//! service address every host reaches it by (on this machine's loopback, routed over each
//! host's link), so that one URL names a server for all of them. Before
//! any link is made, each subnet gets an `unreachable` route here, so that a link taken down
//! (`cut`) never sends the subnet's traffic out of the default route. Dropped: every process
//! in each namespace is killed, and the namespaces, links and routes go. Needs root and `ip`
//! (iproute2): without them a test says so and passes, except under `CI=true`.

use std::ffi::OsStr;
use std::process::Command;

/// Hosts made by one test.
#[derive(Debug)]
pub struct TestHosts {
    hosts: Vec<TestHost>,
    /// The address every host reaches this machine by.
    pub service: String,
    /// The network of the service address and every host's subnet (CIDR).
    pub network: String,
}

/// One host: a namespace, its link and its addresses.
#[derive(Debug)]
pub struct TestHost {
    /// The namespace's name.
    pub namespace: String,
    /// This machine's address on the host's link (what the host reaches).
    pub here: String,
    /// The host's own address.
    pub address: String,
    subnet: String,
    /// This machine's end of the veth pair.
    link: String,
}

/// The `ip` program, found where iproute2 puts it (a test's PATH may leave out sbin).
fn ip_program() -> &'static str {
    ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .unwrap_or("ip")
}

fn ip(args: &[&str]) -> Result<(), String> {
    let output = Command::new(ip_program())
        .args(args)
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

fn must(args: &[&str]) {
    if let Err(e) = ip(args) {
        panic!("{e}");
    }
}

impl TestHosts {
    /// `count` hosts; `None` (with a note) where namespaces cannot be made, outside CI.
    pub fn new(count: usize) -> Option<TestHosts> {
        let root = std::fs::read_to_string("/proc/self/status")
            .map(|s| s.lines().any(|l| l.starts_with("Uid:\t0\t")))
            .unwrap_or(false);
        if !root || ip(&["netns", "list"]).is_err() {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "network namespaces need root and iproute2, which CI has (.ci/run)"
            );
            #[expect(clippy::print_stderr, reason = "a skipped test says why")]
            {
                eprintln!("note: no root or no `ip`: skipping this test of hosts in namespaces");
            }
            return None;
        }
        sweep_stale();
        // Names and subnets of this process's own, so that two test runs never meet.
        let pid = std::process::id();
        let net = 100 + pid % 100;
        let mut made = TestHosts {
            hosts: Vec::new(),
            service: format!("10.{net}.0.1"),
            network: format!("10.{net}.0.0/16"),
        };
        must(&["addr", "add", &format!("{}/32", made.service), "dev", "lo"]);
        for index in 1..=count {
            let tag = format!("{pid}-{index}");
            let host = TestHost {
                namespace: format!("gt{tag}"),
                here: format!("10.{net}.{index}.1"),
                address: format!("10.{net}.{index}.2"),
                subnet: format!("10.{net}.{index}.0/24"),
                link: format!("gh{tag}"),
            };
            let inside = format!("gn{tag}");
            // The fallback route first: a cut link must never route the subnet elsewhere.
            must(&[
                "route",
                "add",
                "unreachable",
                &host.subnet,
                "metric",
                "4000",
            ]);
            made.hosts.push(host);
            let host = made.hosts.last().unwrap_or_else(|| unreachable!());
            must(&["netns", "add", &host.namespace]);
            must(&[
                "link", "add", &host.link, "type", "veth", "peer", "name", &inside,
            ]);
            must(&["link", "set", &inside, "netns", &host.namespace]);
            must(&[
                "addr",
                "add",
                &format!("{}/24", host.here),
                "dev",
                &host.link,
            ]);
            must(&["link", "set", &host.link, "up"]);
            let ns = |args: &[&str]| {
                let mut all = vec!["-n", host.namespace.as_str()];
                all.extend_from_slice(args);
                must(&all);
            };
            ns(&["link", "set", "lo", "up"]);
            ns(&[
                "addr",
                "add",
                &format!("{}/24", host.address),
                "dev",
                &inside,
            ]);
            ns(&["link", "set", &inside, "up"]);
            ns(&[
                "route",
                "add",
                &format!("{}/32", made.service),
                "via",
                &host.here,
            ]);
        }
        Some(made)
    }

    /// Host `index` (from 0).
    pub fn host(&self, index: usize) -> &TestHost {
        &self.hosts[index]
    }

    /// Every host.
    pub fn all(&self) -> &[TestHost] {
        &self.hosts
    }
}

impl TestHost {
    /// `program` to run inside the host's namespace (`ip netns exec`).
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new(ip_program());
        command
            .args(["netns", "exec", &self.namespace])
            .arg(program);
        command
    }

    /// Takes the link down: the host is cut off.
    pub fn cut(&self) {
        must(&["link", "set", &self.link, "down"]);
    }

    /// Brings the link back up.
    pub fn restore(&self) {
        must(&["link", "set", &self.link, "up"]);
    }

    /// The processes in the host's namespace.
    pub fn pids(&self) -> Vec<u32> {
        let output = Command::new(ip_program())
            .args(["netns", "pids", &self.namespace])
            .output();
        output
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .split_whitespace()
                    .filter_map(|pid| pid.parse().ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Each process in the namespace with its command line.
    pub fn processes(&self) -> Vec<(u32, String)> {
        self.pids()
            .into_iter()
            .filter_map(|pid| {
                let line = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
                let line = String::from_utf8_lossy(&line).replace('\0', " ");
                Some((pid, line.trim().to_owned()))
            })
            .collect()
    }

    /// Kills its processes, and removes its namespace, link and fallback route.
    fn remove(&self) {
        self.kill_all();
        let _ = ip(&["netns", "del", &self.namespace]);
        let _ = ip(&["link", "del", &self.link]);
        let _ = ip(&[
            "route",
            "del",
            "unreachable",
            &self.subnet,
            "metric",
            "4000",
        ]);
    }

    /// Kills every process in the namespace at once (SIGKILL), as a machine that dies.
    pub fn kill_all(&self) {
        for _ in 0..5 {
            let pids = self.pids();
            if pids.is_empty() {
                return;
            }
            for pid in pids {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .output();
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

/// Removes what a test killed before it could clean up left (a run stopped at its time
/// limit): the namespaces of test processes no longer alive, their links, routes and
/// service addresses.
fn sweep_stale() {
    let Ok(listing) = Command::new(ip_program()).args(["netns", "list"]).output() else {
        return;
    };
    for line in String::from_utf8_lossy(&listing.stdout).lines() {
        let Some(name) = line.split_whitespace().next() else {
            continue;
        };
        let Some((pid, index)) = name
            .strip_prefix("gt")
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, index)| Some((pid.parse::<u32>().ok()?, index.parse::<u32>().ok()?)))
        else {
            continue;
        };
        if std::path::Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let net = 100 + pid % 100;
        let host = TestHost {
            namespace: name.to_owned(),
            here: String::new(),
            address: String::new(),
            subnet: format!("10.{net}.{index}.0/24"),
            link: format!("gh{pid}-{index}"),
        };
        host.remove();
        let _ = ip(&["addr", "del", &format!("10.{net}.0.1/32"), "dev", "lo"]);
    }
}

impl Drop for TestHosts {
    fn drop(&mut self) {
        for host in &self.hosts {
            host.remove();
        }
        let _ = ip(&["addr", "del", &format!("{}/32", self.service), "dev", "lo"]);
    }
}
