//! The base image: a minimal Debian root made by `mmdebstrap --variant=minbase` from the
//! distribution's packages and streamed into `docker import`, with the host's extra CA
//! certificates trusted and the host user's uid given a passwd entry (an agent CLI may fail at
//! start without one: docs/sandboxes.md). No image is pulled.

use super::naming::{BASE_PACKAGES, HOST_CA_DIR, Recipe};
use crate::base::error::{EngineError, Result};
use ganger_docker::{Docker, labels};
use std::collections::{BTreeMap, VecDeque};
use std::io::{self, BufRead, Read};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};

/// The mmdebstrap lines an error shows.
const TAIL: usize = 8;

/// The labels of the base image (worker images inherit them).
pub(super) fn base_labels(recipe: &Recipe) -> BTreeMap<String, String> {
    BTreeMap::from([
        (labels::MANAGED.to_owned(), "1".to_owned()),
        (labels::SUITE.to_owned(), recipe.suite.clone()),
        (labels::PACKAGES.to_owned(), recipe.packages_label()),
    ])
}

/// mmdebstrap's arguments for `recipe`, writing the tar to stdout.
fn mmdebstrap_args(recipe: &Recipe) -> Vec<String> {
    let mut include: Vec<&str> = BASE_PACKAGES.to_vec();
    include.extend(recipe.packages.iter().map(String::as_str));
    let mut args = vec![
        "--variant=minbase".to_owned(),
        "--format=tar".to_owned(),
        "--quiet".to_owned(),
        format!("--include={}", include.join(",")),
    ];
    if !recipe.certificates.is_empty() {
        let mut copy = "copy-in".to_owned();
        for (name, _) in &recipe.certificates {
            copy.push_str(&format!(" {HOST_CA_DIR}/{name}"));
        }
        copy.push_str(&format!(" {HOST_CA_DIR}/"));
        args.push(format!("--customize-hook={copy}"));
        args.push("--customize-hook=chroot \"$1\" update-ca-certificates >/dev/null".to_owned());
    }
    if recipe.uid != 0 {
        let (uid, gid) = (recipe.uid, recipe.gid);
        args.push(format!(
            "--customize-hook=grep -q '^[^:]*:[^:]*:{gid}:' \"$1/etc/group\" \
             || echo 'agent:x:{gid}:' >> \"$1/etc/group\"; \
             grep -q '^[^:]*:[^:]*:{uid}:' \"$1/etc/passwd\" \
             || echo 'agent:x:{uid}:{gid}:ganger agent:/home/agent:/bin/bash' >> \"$1/etc/passwd\"; \
             mkdir -p \"$1/home/agent\" && chown {uid}:{gid} \"$1/home/agent\""
        ));
    }
    args.push(recipe.suite.clone());
    args.push("-".to_owned());
    if let Some(mirror) = &recipe.mirror {
        args.push(mirror.clone());
    }
    args
}

/// mmdebstrap's stdout; at its end, mmdebstrap's exit status, so that a failed run ends the
/// stream with an error (and the import with it) instead of a truncated root.
struct RootStream {
    stdout: ChildStdout,
    child: Child,
    finished: bool,
    failure: Arc<Mutex<Option<String>>>,
}

impl Read for RootStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.stdout.read(buf)?;
        if read == 0 && !self.finished {
            self.finished = true;
            let status = self.child.wait()?;
            if !status.success() {
                let message = format!("mmdebstrap failed ({status})");
                if let Ok(mut failure) = self.failure.lock() {
                    *failure = Some(message.clone());
                }
                return Err(io::Error::other(message));
            }
        }
        Ok(read)
    }
}

impl Drop for RootStream {
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Builds the base image of `recipe` under its name; returns the image's id.
pub(super) fn build_base(docker: &Docker, recipe: &Recipe) -> Result<String> {
    let name = recipe.base_image();
    #[expect(
        clippy::disallowed_methods,
        reason = "mmdebstrap is a build tool, not an agent: its stdout streams into docker import \
                  while it runs, and it is killed and reaped here when the import stops"
    )]
    let mut child = Command::new("mmdebstrap")
        .args(mmdebstrap_args(recipe))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                EngineError::invalid(
                    "mmdebstrap is not installed, and the base image is built with it: run `apt-get install mmdebstrap`",
                )
            } else {
                EngineError::environment("failed to run mmdebstrap", e)
            }
        })?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(EngineError::invalid("mmdebstrap started without its pipes"));
    };
    let tail = std::thread::spawn(move || {
        let mut last: VecDeque<String> = VecDeque::new();
        for line in io::BufReader::new(stderr).lines().map_while(|l| l.ok()) {
            if last.len() == TAIL {
                last.pop_front();
            }
            last.push_back(line);
        }
        last
    });
    let failure = Arc::new(Mutex::new(None));
    let stream = RootStream {
        stdout,
        child,
        finished: false,
        failure: Arc::clone(&failure),
    };
    let imported = docker.import_image(&name, &base_labels(recipe), &[default_path()], stream);
    let tail: Vec<String> = tail.join().map(Vec::from).unwrap_or_default();
    let failed = failure.lock().ok().and_then(|f| f.clone());
    match (imported, failed) {
        (_, Some(message)) => {
            let _ = docker.remove_image(&name);
            Err(EngineError::environment_message(format!(
                "{message} building {name}: {}",
                tail.join(" | ")
            )))
        }
        (Err(error), None) => Err(EngineError::environment(
            format!("docker import of {name} failed"),
            error,
        )),
        (Ok(id), None) => Ok(id),
    }
}

/// The `ENV PATH` every worker image has (agents' programs come first in agent images).
fn default_path() -> String {
    format!("ENV PATH={}", super::naming::SYSTEM_PATH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mmdebstrap_gets_the_packages_the_certificates_and_the_user() {
        let recipe = Recipe {
            suite: "trixie".into(),
            packages: vec!["make".into()],
            mirror: None,
            uid: 1000,
            gid: 1000,
            certificates: vec![("proxy.crt".into(), b"x".to_vec())],
        };
        let args = mmdebstrap_args(&recipe);
        assert!(args.contains(&"--include=ca-certificates,nodejs,bash,ripgrep,make".to_owned()));
        assert!(args.contains(&format!(
            "--customize-hook=copy-in {HOST_CA_DIR}/proxy.crt {HOST_CA_DIR}/"
        )));
        assert!(args.iter().any(|a| a.contains("agent:x:1000:1000:")));
        assert_eq!(&args[args.len() - 2..], ["trixie", "-"]);
    }
}
