//! `ganger image build`: the base image when it is missing, then each agent's layer when it is
//! missing; `force` builds both again and removes the images they replace (when no container
//! uses them).

use super::naming::{Recipe, known_agent};
use super::{base, layer};
use crate::base::config::Config;
use crate::base::error::{EngineError, Result};
use ganger_docker::Docker;
use serde::Serialize;
use std::time::Instant;

/// What `build` did for one agent.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Built {
    pub agent: String,
    /// The agent's version in the image (`None` for the `command` agent's base image).
    pub version: Option<String>,
    pub image: String,
    pub base: String,
    /// Whether this call built the image (`false`: it was there).
    pub built: bool,
    /// Whether this call built the base image for it.
    pub base_built: bool,
    /// Seconds this agent's image took, base included.
    pub seconds: f64,
    /// The image's size in bytes.
    pub size: u64,
}

/// Connects to Docker, or says which socket does not answer.
pub fn connect() -> Result<Docker> {
    Docker::connect().map_err(EngineError::from)
}

/// Builds the base image of `recipe` when it is missing, or when `force`; the image it
/// replaces goes to `stale`. Returns whether it built one.
pub(super) fn ensure_base(
    docker: &Docker,
    recipe: &Recipe,
    force: bool,
    stale: &mut Vec<String>,
    progress: &mut dyn FnMut(&str),
) -> Result<bool> {
    let started = Instant::now();
    let base_name = recipe.base_image();
    let existing = docker.image(&base_name).map_err(EngineError::from)?;
    if existing.is_some() && !force {
        return Ok(false);
    }
    progress(&format!(
        "building {base_name} with mmdebstrap ({} packages; about a minute)",
        recipe.suite
    ));
    let id = base::build_base(docker, recipe)?;
    if let Some(old) = existing.filter(|old| old.id != id) {
        stale.push(old.id);
    }
    progress(&format!(
        "built {base_name} in {:.0} s",
        started.elapsed().as_secs_f64()
    ));
    Ok(true)
}

/// Removes the images in `stale`, last first (an image before the base it stands on), each
/// only when no container uses it.
pub(super) fn remove_stale(docker: &Docker, stale: &[String], progress: &mut dyn FnMut(&str)) {
    for id in stale.iter().rev() {
        if docker.remove_image(id).is_ok() {
            progress(&format!("removed the replaced image {id}"));
        }
    }
}

/// The size in bytes of the image `name` (0 when Docker does not say).
pub(super) fn image_size(docker: &Docker, name: &str) -> u64 {
    docker
        .image(name)
        .ok()
        .flatten()
        .map(|i| i.size)
        .unwrap_or_default()
}

/// The agents `names` stands for: `all` is every agent CLI ganger installs; unknown names
/// are errors.
pub(super) fn chosen(names: &[String]) -> Result<Vec<&'static dyn ganger_agents::Adapter>> {
    if names.iter().any(|n| n == "all") {
        return Ok(ganger_agents::adapters().to_vec());
    }
    names.iter().map(|name| known_agent(name)).collect()
}

/// Builds the worker images of `agents` (their names, or `all`) that are missing, or all
/// of them with `force`. `progress` receives a line per step.
pub fn build(
    config: &Config,
    agents: &[String],
    force: bool,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Built>> {
    let chosen = chosen(agents)?;
    if config.sandbox.docker.image.is_some() {
        progress("note: ganger.toml names sandbox.docker.image, which rounds use instead");
    }
    let docker = connect()?;
    let recipe = Recipe::from_config(config);
    let base_name = recipe.base_image();
    let mut stale = Vec::new();
    let mut base_done = false;
    let mut results = Vec::new();
    for adapter in chosen {
        let started = Instant::now();
        let base_built = ensure_base(&docker, &recipe, force && !base_done, &mut stale, progress)?;
        base_done = true;
        let (image, version, built) = match adapter.package() {
            // A CLI ganger does not install runs in the base image.
            None => (base_name.clone(), None, base_built),
            Some(package) => {
                let name = recipe.agent_image(adapter.name(), package.tested_version);
                let existing = docker
                    .image(&name)
                    .map_err(|e| EngineError::invalid(e.to_string()))?;
                let built = existing.is_none() || force;
                if built {
                    let layer_started = Instant::now();
                    progress(&format!("building {name}"));
                    // The builder's steps, not its intermediate containers.
                    let id = layer::build_layer(&docker, &recipe, adapter, &mut |line| {
                        if line.starts_with("Step ") {
                            progress(&format!("  {line}"));
                        }
                    })?;
                    if let Some(old) = existing.filter(|old| old.id != id) {
                        stale.push(old.id);
                    }
                    progress(&format!(
                        "built {name} in {:.0} s",
                        layer_started.elapsed().as_secs_f64()
                    ));
                }
                (name, Some(package.tested_version.to_owned()), built)
            }
        };
        let size = image_size(&docker, &image);
        results.push(Built {
            agent: adapter.name().to_owned(),
            version,
            image,
            base: base_name.clone(),
            built,
            base_built,
            seconds: started.elapsed().as_secs_f64(),
            size,
        });
    }
    // Agent images first: an old base cannot go while an image on it is there.
    remove_stale(&docker, &stale, progress);
    Ok(results)
}
