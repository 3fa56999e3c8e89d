//! Worker images, built offline (`ganger image build`): a base image made from Debian's
//! packages by mmdebstrap and `docker import`, and per agent a layer holding the tested
//! version of its CLI from ganger's cache. No image is ever pulled. Names record the suite,
//! the agent and its version, and a hash of the recipe (see [`naming`]), so that a round finds
//! its image by name without asking Docker how it was made. The fleet worker image (`--worker`,
//! [`worker`]) puts `ganger worker` itself, git and the agents in one image on such a base.

mod base;
mod build;
mod layer;
mod list;
mod naming;
mod worker;

pub use build::{Built, build, connect};
pub use layer::AGENT_DIR;
pub use list::{ImageEntry, list};
pub use naming::{
    BASE_PACKAGES, RECIPE_VERSION, Recipe, WORKER_PACKAGES, known_agent, worker_image,
};
pub use worker::{WORKER_AGENTS_DIR, WORKER_DIR, build_worker};
