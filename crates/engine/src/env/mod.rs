//! The environment: the repository and its store, the agents' programs, models and
//! keys, their environment and temporary directories, sandboxes and worker images.

pub(crate) mod agent_env;
pub(crate) mod agent_query;
pub(crate) mod agent_tmp;
pub(crate) mod agent_tmp_sweep;
pub mod agents;
pub mod image;
pub(crate) mod keys;
pub(crate) mod leftovers;
pub(crate) mod machine;
pub(crate) mod models;
pub(crate) mod sandboxing;
pub mod store_location;
pub(crate) mod workspace;
