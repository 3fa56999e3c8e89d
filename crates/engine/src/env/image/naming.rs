//! What a worker image is made of, and its name. The base image is `ganger-base:SUITE-HASH`
//! and an agent's image `ganger-AGENT:VERSION-HASH`, where the hash covers everything that
//! goes into the base: the recipe's version, the suite, the sorted extra packages, the host
//! user's uid and gid (its passwd entry) and the host's extra CA certificates. Naming needs no
//! Docker: a round computes the name and finds the image there, or says how to build it.

use crate::base::config::Config;
use crate::base::error::{EngineError, Result};
use sha1::{Digest, Sha1};
use std::path::Path;

/// Bump when what goes into an image changes, so that old images are not used.
pub const RECIPE_VERSION: u32 = 1;

/// The packages every worker image has: HTTPS roots, Node.js (for the CLIs that need it), a
/// shell for the agents' shell tools and ripgrep for their search tools.
pub const BASE_PACKAGES: &[&str] = &["ca-certificates", "nodejs", "bash", "ripgrep"];

/// What the fleet worker image adds to the base: git for the worker's clones and worktrees,
/// and ssh for remotes reached over it.
pub const WORKER_PACKAGES: &[&str] = &["git", "openssh-client"];

/// Where the host keeps the extra CA certificates it trusts (a TLS-intercepting proxy's).
pub const HOST_CA_DIR: &str = "/usr/local/share/ca-certificates";

/// Everything the base image is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipe {
    pub suite: String,
    /// The extra packages, sorted, without duplicates or base packages.
    pub packages: Vec<String>,
    pub mirror: Option<String>,
    pub uid: u32,
    pub gid: u32,
    /// The host's extra CA certificates: file name and content.
    pub certificates: Vec<(String, Vec<u8>)>,
}

impl Recipe {
    /// The recipe `config` asks for on this host.
    pub fn from_config(config: &Config) -> Recipe {
        let docker = &config.sandbox.docker;
        let mut packages: Vec<String> = docker
            .packages
            .iter()
            .map(|p| p.trim().to_owned())
            .filter(|p| !p.is_empty() && !BASE_PACKAGES.contains(&p.as_str()))
            .collect();
        packages.sort();
        packages.dedup();
        Recipe {
            suite: docker.suite.clone(),
            packages,
            mirror: docker.mirror.clone(),
            uid: rustix::process::getuid().as_raw(),
            gid: rustix::process::getgid().as_raw(),
            certificates: host_certificates(Path::new(HOST_CA_DIR)),
        }
    }

    /// This recipe with `extra` packages besides its own (sorted, without duplicates).
    pub fn with_packages(&self, extra: &[&str]) -> Recipe {
        let mut recipe = self.clone();
        recipe
            .packages
            .extend(extra.iter().map(|p| (*p).to_owned()));
        recipe.packages.sort();
        recipe.packages.dedup();
        recipe
    }

    /// Eight hex digits of the hash of what goes into the base image.
    pub fn hash8(&self) -> String {
        let mut hasher = Sha1::new();
        hasher.update(format!("recipe {RECIPE_VERSION}\n"));
        hasher.update(format!("suite {}\n", self.suite));
        for package in &self.packages {
            hasher.update(format!("package {package}\n"));
        }
        hasher.update(format!("user {}:{}\n", self.uid, self.gid));
        for (name, content) in &self.certificates {
            hasher.update(format!("certificate {name} {}\n", content.len()));
            hasher.update(content);
        }
        let digest = format!("{:x}", hasher.finalize());
        digest[..8].to_owned()
    }

    /// The base image's name.
    pub fn base_image(&self) -> String {
        format!("ganger-base:{}-{}", self.suite, self.hash8())
    }

    /// The name of `agent`'s image at `version` on this base.
    pub fn agent_image(&self, agent: &str, version: &str) -> String {
        format!("ganger-{agent}:{version}-{}", self.hash8())
    }

    /// The extra packages as the label records them: comma-separated.
    pub fn packages_label(&self) -> String {
        self.packages.join(",")
    }
}

/// The `*.crt` files directly in `dir`, by name.
fn host_certificates(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(String, Vec<u8>)> = entries
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".crt") {
                return None;
            }
            std::fs::read(entry.path())
                .ok()
                .map(|content| (name, content))
        })
        .collect();
    found.sort();
    found
}

/// The agent `name`'s adapter; an unknown name is an error that lists the known ones.
pub fn known_agent(name: &str) -> Result<&'static dyn ganger_agents::Adapter> {
    ganger_agents::named(name).map_err(|unknown| EngineError::invalid(unknown.to_string()))
}

/// The worker image a round of `agent` runs in: the configured `image` if there is one, else
/// the name `ganger image build` gives it (the base image for an agent ganger does not
/// install: its settings name its program). No Docker call: whether the image exists is the
/// caller's question.
pub fn worker_image(config: &Config, agent: &str) -> Result<String> {
    if let Some(image) = &config.sandbox.docker.image {
        return Ok(image.clone());
    }
    let adapter = known_agent(agent)?;
    let recipe = Recipe::from_config(config);
    Ok(match adapter.package() {
        Some(package) => recipe.agent_image(adapter.name(), package.tested_version),
        None => recipe.base_image(),
    })
}

/// Debian's default `PATH`.
pub(super) const SYSTEM_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test fails loudly")]
    use super::*;

    fn recipe(packages: &[&str]) -> Recipe {
        let mut config = Config::default();
        config.sandbox.docker.packages = packages.iter().map(|p| p.to_string()).collect();
        Recipe::from_config(&config)
    }

    #[test]
    fn the_package_order_and_duplicates_do_not_change_the_name() {
        assert_eq!(
            recipe(&["make", "python3"]).base_image(),
            recipe(&["python3", "make", "make", "nodejs"]).base_image()
        );
        assert_ne!(
            recipe(&["make"]).base_image(),
            recipe(&["make", "python3"]).base_image()
        );
    }

    #[test]
    fn names_record_the_suite_the_agent_and_its_version() {
        let config = Config::default();
        let base = Recipe::from_config(&config).base_image();
        assert!(base.starts_with("ganger-base:trixie-"), "{base}");
        for name in ganger_agents::names() {
            let image = worker_image(&config, name).unwrap();
            match ganger_agents::named(name).unwrap().package() {
                Some(package) => {
                    let prefix = format!("ganger-{name}:{}-", package.tested_version);
                    assert!(image.starts_with(&prefix), "{image}");
                    assert_eq!(image.rsplit('-').next(), base.rsplit('-').next());
                }
                // A CLI ganger does not install runs in the base image.
                None => assert_eq!(image, base),
            }
        }
    }

    #[test]
    fn the_configured_image_wins_and_an_unknown_agent_is_an_error() {
        let mut config = Config::default();
        assert!(worker_image(&config, "nosuch").is_err());
        config.sandbox.docker.image = Some("mine:1".into());
        assert_eq!(
            worker_image(&config, ganger_agents::DEFAULT_AGENT).unwrap(),
            "mine:1"
        );
    }
}
