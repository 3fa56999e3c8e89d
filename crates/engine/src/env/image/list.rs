//! `ganger image list`: the images ganger built, read back from their labels.

use crate::base::error::{EngineError, Result};
use ganger_docker::labels;
use serde::Serialize;

/// One of ganger's images.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ImageEntry {
    /// Its name (`repository:tag`), or its id when it has none left.
    pub image: String,
    pub id: String,
    /// The agent (`None` for a base image).
    pub agent: Option<String>,
    pub version: Option<String>,
    pub suite: Option<String>,
    /// The extra Debian packages.
    pub packages: Vec<String>,
    /// Bytes.
    pub size: u64,
}

/// Every image that carries ganger's label, newest first.
pub fn list() -> Result<Vec<ImageEntry>> {
    let docker = super::connect()?;
    let images = docker
        .images_labelled(labels::MANAGED)
        .map_err(EngineError::from)?;
    Ok(images
        .into_iter()
        .map(|image| {
            let label = |key: &str| image.labels.get(key).filter(|v| !v.is_empty()).cloned();
            ImageEntry {
                image: image
                    .tags
                    .first()
                    .cloned()
                    .unwrap_or_else(|| image.id.clone()),
                agent: label(labels::AGENT),
                version: label(labels::AGENT_VERSION),
                suite: label(labels::SUITE),
                packages: label(labels::PACKAGES)
                    .map(|p| p.split(',').map(str::to_owned).collect())
                    .unwrap_or_default(),
                size: image.size,
                id: image.id,
            }
        })
        .collect())
}
