//! What ganger knows of an agent before it runs anything: its names, its program, the package
//! and the version it is tested with, the arguments that ask it for its version and models,
//! and the environment and files that change what it offers. One constant per agent, in the
//! agent's folder (`opencode::FACTS`, ...); its adapter hands it out ([`crate::Adapter::facts`])
//! and the adapter's accessors (`name()`, `program()`, ...) read it.

/// The npm package ganger installs an agent from, and the version ganger is tested with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Package {
    /// The package's name on npm (`opencode-ai`).
    pub npm: &'static str,
    /// The version `ganger agents install` installs and the tests run.
    pub tested_version: &'static str,
}

/// A configuration file of the agent's own, where it changes what the agent offers (part of
/// the key of its cached model list).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigFile {
    /// A path relative to the user's home.
    InHome(&'static str),
    /// A path relative to the repository's main checkout.
    InRepo(&'static str),
}

/// The static facts of one agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentFacts {
    /// The name used in `--agent` and `ganger.toml` (`opencode`).
    pub name: &'static str,
    /// The CLI's own name for people (`OpenCode`).
    pub display_name: &'static str,
    /// The program looked up on `PATH` unless `ganger.toml` names another.
    pub program: &'static str,
    /// What ganger installs and tests; `None` for a CLI the user brings (the `command` agent):
    /// no tested version to compare with, no worker image of its own (it runs in the base
    /// image), and its program is the one its settings name.
    pub package: Option<Package>,
    /// The arguments that print the CLI's version.
    pub version_args: &'static [&'static str],
    /// The arguments that list its models, or `None` when the CLI has no catalog (the model is
    /// then reported as unchecked).
    pub models_args: Option<&'static [&'static str]>,
    /// Environment variables that change which models the CLI offers (part of the model cache
    /// key).
    pub config_env: &'static [&'static str],
    /// The environment variable holding inherited agent configuration, if any, which
    /// `ganger.toml`'s configuration is merged over rather than replacing it.
    pub inherited_config_env: Option<&'static str>,
    /// Its own configuration files that change which models it offers.
    pub config_files: &'static [ConfigFile],
}
