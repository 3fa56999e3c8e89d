//! The agent layer: the tested version of the agent CLI from ganger's cache (installed there
//! with npm when missing), copied whole to `/opt/ganger/agent/` on top of the base image, its
//! programs first on `PATH`.

use super::naming::{Recipe, SYSTEM_PATH};
use crate::base::error::{EngineError, Result};
use crate::base::install;
use ganger_agents::Adapter;
use ganger_docker::{BuildContext, Docker, labels};
use std::collections::BTreeMap;

/// Where the agent's install goes in the image.
pub const AGENT_DIR: &str = "/opt/ganger/agent";
/// The Dockerfile of `base` plus the agent directory of the context.
fn dockerfile(base: &str) -> String {
    format!(
        "FROM {base}\nCOPY agent {AGENT_DIR}\nENV PATH={AGENT_DIR}/node_modules/.bin:{SYSTEM_PATH}\n"
    )
}

/// Builds `adapter`'s image on the base image of `recipe` (which must exist); returns the id.
pub(super) fn build_layer(
    docker: &Docker,
    recipe: &Recipe,
    adapter: &dyn Adapter,
    output: &mut dyn FnMut(&str),
) -> Result<String> {
    install::ensure_installed(adapter)?;
    let base = recipe.base_image();
    let name = recipe.agent_image(adapter.name(), adapter.tested_version());
    let mut context = BuildContext::new();
    context
        .file("Dockerfile", dockerfile(&base))
        .host("agent", install::cached_install_dir(adapter));
    let mut labels = super::base::base_labels(recipe);
    labels.extend(BTreeMap::from([
        (labels::AGENT.to_owned(), adapter.name().to_owned()),
        (
            labels::AGENT_VERSION.to_owned(),
            adapter.tested_version().to_owned(),
        ),
    ]));
    docker
        .build_image(&name, &labels, context, output)
        .map_err(|e| EngineError::environment(format!("docker build of {name} failed"), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_programs_come_first_on_path() {
        let text = dockerfile("ganger-base:trixie-0123abcd");
        assert!(text.starts_with("FROM ganger-base:trixie-0123abcd\n"));
        assert!(text.contains("ENV PATH=/opt/ganger/agent/node_modules/.bin:/usr/local/sbin:"));
    }
}
