//! The fleet worker image (`ganger image build --worker`): `ganger worker` in a container.
//! On the base image with git added ([`WORKER_PACKAGES`], made by mmdebstrap like any base and
//! kept for the next build), the chosen agents' tested CLIs from ganger's cache, each whole
//! in `/opt/ganger/agents/NAME/` with its programs on `PATH`, and the running ganger binary;
//! the entrypoint is `ganger worker`, to which `docker run` appends its arguments. The name,
//! `ganger-worker:VERSION-HASH`, records ganger's version and a hash of the base, the agents
//! and the binary, so that another ganger or another set of agents is another image.

use super::build::{Built, chosen, connect, ensure_base, image_size, remove_stale};
use super::naming::{Recipe, SYSTEM_PATH, WORKER_PACKAGES};
use crate::base::config::Config;
use crate::base::error::{EngineError, Result};
use crate::base::install;
use ganger_agents::Adapter;
use ganger_docker::{BuildContext, Docker, labels};
use sha1::{Digest, Sha1};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Where the agents' installs go in the worker image, one directory each.
pub const WORKER_AGENTS_DIR: &str = "/opt/ganger/agents";
/// The worker's directory in the image, an empty git repository: its state and its clones
/// of fleets' remotes (mount a volume there to keep them).
pub const WORKER_DIR: &str = "/srv/ganger";
/// ganger's version, as the image's tag records it.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// An agent in the image: its name and tested version.
struct Carried {
    adapter: &'static dyn Adapter,
    version: &'static str,
}

/// The worker image's Dockerfile: `base`, then the agents (an unchanged agent's layer is
/// Docker's cached one), then ganger, as `uid:gid`.
fn dockerfile(base: &str, agents: &[&str], uid: u32, gid: u32) -> String {
    let mut text = format!("FROM {base}\n");
    let mut path = String::new();
    for agent in agents {
        text.push_str(&format!(
            "COPY agents/{agent} {WORKER_AGENTS_DIR}/{agent}\n"
        ));
        path.push_str(&format!("{WORKER_AGENTS_DIR}/{agent}/node_modules/.bin:"));
    }
    text.push_str(&format!(
        "COPY ganger /usr/local/bin/ganger\nENV PATH={path}{SYSTEM_PATH}\n\
         COPY --chown={uid}:{gid} worker {WORKER_DIR}\n\
         WORKDIR {WORKER_DIR}\nUSER {uid}:{gid}\n\
         ENTRYPOINT [\"/usr/local/bin/ganger\", \"worker\"]\n"
    ));
    text
}

/// The image's name: ganger's version and a hash of the base's recipe, the agents and the
/// binary's content (`binary` is its SHA-1).
fn image_name(recipe: &Recipe, agents: &[Carried], binary: &str) -> String {
    let mut hasher = Sha1::new();
    hasher.update(format!("base {}\n", recipe.base_image()));
    for agent in agents {
        hasher.update(format!(
            "agent {} {}\n",
            agent.adapter.name(),
            agent.version
        ));
    }
    hasher.update(format!("ganger {binary}\n"));
    let digest = format!("{:x}", hasher.finalize());
    format!("ganger-worker:{VERSION}-{}", &digest[..8])
}

/// The SHA-1 of the file at `path`, in hex.
fn file_digest(path: &Path) -> Result<String> {
    let mut file = std::fs::File::open(path).map_err(|e| EngineError::io("open", path, e))?;
    let mut hasher = Sha1::new();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let read = file
            .read(&mut buffer)
            .map_err(|e| EngineError::io("read", path, e))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(format!("{:x}", hasher.finalize()))
}

/// An empty git repository in ganger's cache, copied in as the worker's directory (`ganger
/// worker` runs in a repository; a volume mounted there starts as a copy of it).
fn worker_repository() -> Result<PathBuf> {
    let dir = install::cache_root()
        .join("worker-image")
        .join("repository");
    std::fs::create_dir_all(&dir).map_err(|e| EngineError::io("create", &dir, e))?;
    ganger_git::Git::new(&dir).run(["init", "-q", "--initial-branch=main"])?;
    Ok(dir)
}

/// The running ganger's binary.
fn running_binary() -> Result<PathBuf> {
    std::env::current_exe()
        .map_err(|e| EngineError::environment("cannot find ganger's own binary to copy in", e))
}

/// Builds the fleet worker image carrying `agents` (their names, or `all`; `command` adds
/// none) unless it is there, or again with `force` (the base with it).
pub fn build_worker(
    config: &Config,
    agents: &[String],
    force: bool,
    progress: &mut dyn FnMut(&str),
) -> Result<Built> {
    let carried: Vec<Carried> = chosen(agents)?
        .into_iter()
        .filter_map(|adapter| {
            let package = adapter.package()?;
            Some(Carried {
                adapter,
                version: package.tested_version,
            })
        })
        .collect();
    let docker = connect()?;
    let recipe = Recipe::from_config(config).with_packages(WORKER_PACKAGES);
    let binary = running_binary()?;
    let name = image_name(&recipe, &carried, &file_digest(&binary)?);
    let started = Instant::now();
    let mut stale = Vec::new();
    let base_built = ensure_base(&docker, &recipe, force, &mut stale, progress)?;
    let existing = docker.image(&name).map_err(EngineError::from)?;
    let built = existing.is_none() || force;
    if built {
        let id = build_layers(&docker, &recipe, &carried, &binary, &name, progress)?;
        if let Some(old) = existing.filter(|old| old.id != id) {
            stale.push(old.id);
        }
    }
    remove_stale(&docker, &stale, progress);
    let size = image_size(&docker, &name);
    Ok(Built {
        agent: "worker".to_owned(),
        version: Some(VERSION.to_owned()),
        image: name,
        base: recipe.base_image(),
        built,
        base_built,
        seconds: started.elapsed().as_secs_f64(),
        size,
    })
}

/// Builds the image `name` on the base of `recipe`; returns its id.
fn build_layers(
    docker: &Docker,
    recipe: &Recipe,
    carried: &[Carried],
    binary: &Path,
    name: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<String> {
    let started = Instant::now();
    progress(&format!("building {name}"));
    let mut context = BuildContext::new();
    let names: Vec<&str> = carried.iter().map(|a| a.adapter.name()).collect();
    context.file(
        "Dockerfile",
        dockerfile(&recipe.base_image(), &names, recipe.uid, recipe.gid),
    );
    for agent in carried {
        install::ensure_installed(agent.adapter)?;
        context.host(
            &format!("agents/{}", agent.adapter.name()),
            install::cached_install_dir(agent.adapter),
        );
    }
    context.host("ganger", binary);
    context.host("worker", worker_repository()?);
    let mut labels = super::base::base_labels(recipe);
    labels.insert(labels::AGENT.to_owned(), "worker".to_owned());
    labels.insert(labels::AGENT_VERSION.to_owned(), VERSION.to_owned());
    let agents: Vec<String> = carried
        .iter()
        .map(|a| format!("{}@{}", a.adapter.name(), a.version))
        .collect();
    labels.insert(labels::AGENTS.to_owned(), agents.join(","));
    let id = docker
        .build_image(name, &labels, context, &mut |line| {
            if line.starts_with("Step ") {
                progress(&format!("  {line}"));
            }
        })
        .map_err(|e| EngineError::environment(format!("docker build of {name} failed"), e))?;
    progress(&format!(
        "built {name} in {:.0} s",
        started.elapsed().as_secs_f64()
    ));
    Ok(id)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test fails loudly")]
    use super::*;

    #[test]
    fn the_agents_come_first_on_path_and_the_entrypoint_is_the_worker() {
        let text = dockerfile(
            "ganger-base:trixie-0123abcd",
            &["first", "second"],
            1000,
            1000,
        );
        assert!(
            text.starts_with("FROM ganger-base:trixie-0123abcd\n"),
            "{text}"
        );
        assert!(
            text.contains("COPY agents/second /opt/ganger/agents/second\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "ENV PATH=/opt/ganger/agents/first/node_modules/.bin:\
                 /opt/ganger/agents/second/node_modules/.bin:/usr/local/sbin:"
            ),
            "{text}"
        );
        assert!(text.contains("USER 1000:1000\n"), "{text}");
        assert!(
            text.contains("COPY --chown=1000:1000 worker /srv/ganger\nWORKDIR /srv/ganger\n"),
            "{text}"
        );
        assert!(
            text.ends_with("ENTRYPOINT [\"/usr/local/bin/ganger\", \"worker\"]\n"),
            "{text}"
        );
    }

    #[test]
    fn the_name_changes_with_the_binary_and_the_agents() {
        let recipe = Recipe::from_config(&Config::default()).with_packages(WORKER_PACKAGES);
        let default = || Carried {
            adapter: ganger_agents::named(ganger_agents::DEFAULT_AGENT).unwrap(),
            version: "1.0.0",
        };
        let one = image_name(&recipe, &[default()], "aa");
        assert!(
            one.starts_with(&format!("ganger-worker:{VERSION}-")),
            "{one}"
        );
        assert_eq!(one, image_name(&recipe, &[default()], "aa"));
        assert_ne!(one, image_name(&recipe, &[default()], "bb"));
        assert_ne!(one, image_name(&recipe, &[], "aa"));
        assert!(recipe.packages.contains(&"git".to_owned()));
    }
}
