//! Worker images, built offline (`ganger image build`): a base image made from Debian's
//! packages by mmdebstrap and `docker import`, and per agent a layer holding the tested
//! version of its CLI from ganger's cache. No image is ever pulled. Names record the suite,
//! the agent and its version, and a hash of the recipe (see [`naming`]), so that a round finds
//! its image by name without asking Docker how it was made.

mod base;
mod build;
mod layer;
mod list;
mod naming;

pub use build::{Built, build, connect};
pub use layer::AGENT_DIR;
pub use list::{ImageEntry, list};
pub use naming::{BASE_PACKAGES, RECIPE_VERSION, Recipe, known_agent, worker_image};
