//! Configuration: `ganger.toml` in the main checkout (committed, per repository) over
//! `~/.config/ganger/config.toml` (per user), over built-in defaults. Unknown keys are errors,
//! so that a misspelt setting is never silently ignored.

mod checks;
mod duration;
mod fleet;
mod gateway;
mod land;
mod permissions;
pub mod roles;
mod setting;
mod template;
mod trees;

pub use checks::{CheckConfig, DEFAULT_CHECK_TIMEOUT, valid_check_name, validate_checks};

pub use duration::{format_duration, parse_duration};
pub use fleet::{ConflictPolicy, FleetConfig};
pub use ganger_agents::AgentConfig;
pub use gateway::GatewayConfig;
pub use land::{LandConfig, LandMode};
pub use permissions::PermissionRules;
pub(crate) use permissions::permission_rule;
pub use setting::Setting;
pub use template::template;
pub use trees::{DiskSetting, MOST_CACHED, MOST_POOLED, TreesConfig};

use ganger_events::{Network, Permission, SandboxKind};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file name of the repository configuration.
pub const FILE_NAME: &str = "ganger.toml";

/// The whole configuration.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub defaults: Defaults,
    pub worktree: WorktreeConfig,
    /// Environment variable names for provider keys (`openrouter = "OR_KEY"`); a provider not
    /// listed uses `<PROVIDER>_API_KEY`.
    pub keys: BTreeMap<String, String>,
    pub agents: BTreeMap<String, AgentConfig>,
    pub sandbox: SandboxConfig,
    /// Prices by model name, in US dollars per million tokens, for agents that report no
    /// cost of their own.
    pub prices: BTreeMap<String, Price>,
    /// The pipeline's roles by name (`[roles.planner]`, ...) and its settings.
    pub roles: BTreeMap<String, roles::RoleConfig>,
    pub pipeline: roles::PipelineConfig,
    /// The checks run after every round (`[[checks]]`).
    pub checks: Vec<CheckConfig>,
    /// Agents kept warm between rounds (`[warm]`).
    pub warm: WarmConfig,
    /// Tool permissions ganger decides for warm rounds (`[permissions]`).
    pub permissions: PermissionRules,
    /// Where the store is (`[store]`); `GANGER_STORE` and `--store` outrank it.
    pub store: StoreConfig,
    /// How the scheduler treats conflicting tasks (`[fleet]`).
    pub fleet: FleetConfig,
    /// What a landed batch puts on its base (`[land]`).
    pub land: LandConfig,
    /// The model gateway (`[gateway]`).
    pub gateway: gateway::GatewayConfig,
    /// How tasks' trees are made (`[trees]`).
    pub trees: TreesConfig,
}

/// `[store]`: a PostgreSQL store instead of `.ganger/state.db` (docs/postgres.md).
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreConfig {
    /// `postgres://USER:PASSWORD@HOST:PORT/DATABASE`, or `sqlite` (the default). Kept out of a
    /// committed `ganger.toml` when it holds a password: the per-user file or the environment.
    pub url: Option<String>,
    /// A file holding the store's password alone (mode 0600 or less), used when the URL holds
    /// none; relative to the main checkout. `PGPASSWORD`, then libpq's pgpass file, come after.
    pub password_file: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for StoreConfig {
    /// The URL without its password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreConfig")
            .field("url", &self.url.as_deref().map(ganger_store::redact_url))
            .field("password_file", &self.password_file)
            .finish()
    }
}

/// `[warm]`: rounds delivered into a live agent session (docs/warm.md).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WarmConfig {
    /// Whether tasks are warm unless `--cold` or `--warm` says otherwise; unset: as each agent's
    /// adapter says (`warm_by_default`: warm where its warm mode passes the whole conformance
    /// suite). Agents without a warm mode run cold in any case.
    pub default: Option<bool>,
    /// How long a warm agent may sit idle before it is stopped.
    pub idle: DurationSetting,
    /// How many warm agents of the repository may live at once (the least recently used
    /// idle one is stopped to make room for a new one).
    pub max: usize,
    /// The most memory the warm agents may hold together (`"4g"`, `"512m"`): idle ones are
    /// stopped, least recently used first, before a new one starts beyond it. Unset: a
    /// quarter of the machine's memory ([`default_warm_memory`]).
    pub memory: Option<String>,
}

impl WarmConfig {
    /// `memory` in bytes, or its default; `None` only when neither is known (a machine
    /// without `/proc/meminfo`).
    pub fn memory_bytes(&self) -> Option<u64> {
        match self.memory.as_deref() {
            Some(size) => parse_size(size),
            None => default_warm_memory(),
        }
    }
}

/// `[warm] memory` when it is not set: a quarter of the machine's memory (`MemTotal` in
/// `/proc/meminfo`). Eight warm agents of the default CLI (`[warm] max`) hold about 4.8 GB
/// (docs/warm.md): on a machine of 16 GB the default keeps six of them, on one of 8 GB three.
pub fn default_warm_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    quarter_of_total(&meminfo)
}

/// A quarter of `MemTotal` in `meminfo` (`/proc/meminfo`'s text), in bytes.
fn quarter_of_total(meminfo: &str) -> Option<u64> {
    let kb: u64 = meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemTotal:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kb.checked_mul(1024)? / 4)
}

/// `4g`, `512m`, `100k`, `1000` (bytes).
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim().to_ascii_lowercase();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text.as_str(), ""),
    };
    let scale: u64 = match unit.trim_end_matches(['b', 'i']) {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        _ => return None,
    };
    number.parse::<u64>().ok()?.checked_mul(scale)
}

impl Default for WarmConfig {
    fn default() -> Self {
        WarmConfig {
            default: None,
            idle: DurationSetting(Duration::from_secs(10 * 60)),
            max: 8,
            memory: None,
        }
    }
}

/// What a model costs, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// Cached input read; defaults to the input price when not given.
    pub cache_read: Option<f64>,
    /// Cache writes; defaults to the input price when not given.
    pub cache_write: Option<f64>,
}

impl Price {
    /// The cost of these tokens. Input counts exclude cached reads where the agent reports
    /// them apart (every adapter normalizes to that).
    pub fn cost(&self, tokens: &ganger_events::Tokens) -> f64 {
        let per = |count: u64, price: f64| count as f64 * price / 1_000_000.0;
        per(tokens.input, self.input)
            + per(tokens.output + tokens.reasoning, self.output)
            + per(tokens.cache_read, self.cache_read.unwrap_or(self.input))
            + per(tokens.cache_write, self.cache_write.unwrap_or(self.input))
    }
}

/// `defaults.permission`, read once with the file; a misspelt one is named.
fn permission_setting<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<Permission, D::Error> {
    let text = String::deserialize(deserializer)?;
    text.parse()
        .map_err(|reason| serde::de::Error::custom(format!("defaults.permission: {reason}")))
}

/// Defaults for new tasks and rounds.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Defaults {
    pub agent: String,
    /// What agents may do: `write` or `read-only`.
    #[serde(deserialize_with = "permission_setting")]
    pub permission: Permission,
    pub model: Option<String>,
    pub base: String,
    pub timeout: DurationSetting,
    pub stall: DurationSetting,
    pub grace: DurationSetting,
    /// How long a cached model list is trusted.
    pub models_cache: DurationSetting,
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults {
            agent: ganger_agents::DEFAULT_AGENT.into(),
            permission: Permission::Write,
            model: None,
            base: "main".into(),
            timeout: DurationSetting(Duration::from_secs(60 * 60)),
            stall: DurationSetting(Duration::from_secs(10 * 60)),
            grace: DurationSetting(Duration::from_secs(10)),
            models_cache: DurationSetting(Duration::from_secs(24 * 60 * 60)),
        }
    }
}

/// Where task worktrees go and what their branches are called.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorktreeConfig {
    /// Relative to the main checkout; `{repo}` is its directory name, `{slug}` the task's.
    pub path: String,
    pub branch: String,
}

impl Default for WorktreeConfig {
    fn default() -> Self {
        WorktreeConfig {
            path: "../{repo}-agent-{slug}".into(),
            branch: "agent/{slug}".into(),
        }
    }
}

/// Settings of the sandbox.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SandboxConfig {
    /// Where rounds run unless `--sandbox` says otherwise: `local`, `bwrap` or `docker`.
    pub default: Setting<SandboxKind>,
    /// The network of sandboxed rounds unless `--network` says otherwise: `gateway` (no way
    /// out but the round's model gateway: the model, and the hosts of `allow` through its
    /// proxy), `shared` (the host's network) or `none`. With `[gateway] enabled = false`,
    /// `gateway` falls back to `shared`.
    pub network: Setting<Network>,
    /// `HOST:PORT` entries (`*.example.org:443` for every name below) a `gateway` round may
    /// reach through the gateway's proxy besides its model; `--allow` adds to them per task.
    pub allow: Vec<String>,
    /// Give each round a cgroup of its own where the system allows.
    pub cgroup: bool,
    /// Paths inside the worktree the agent may read but not change (bwrap and docker).
    pub read_only: Vec<String>,
    /// Paths under `read_only` ones that stay writable (`--rw` adds to them per task).
    pub rw: Vec<String>,
    pub docker: DockerConfig,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            default: Setting::of(SandboxKind::Local),
            network: Setting::of(Network::Gateway),
            allow: Vec::new(),
            cgroup: true,
            read_only: Vec::new(),
            rw: Vec::new(),
            docker: DockerConfig::default(),
        }
    }
}

/// Settings of the docker sandbox and of worker images.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DockerConfig {
    /// The Docker network a `shared` round joins: `host` reaches a model on loopback.
    pub network: String,
    /// Memory limit of a round's container, e.g. `"4g"`, `"512m"`; unset: none.
    pub memory: Option<String>,
    /// CPUs of a round's container, e.g. `1.5`; unset: no limit.
    pub cpus: Option<f64>,
    /// Most processes in a round's container.
    pub pids: Option<i64>,
    /// The Debian release of worker images (its Node.js must suit the agents: trixie's 20).
    pub suite: String,
    /// Debian packages a project's checks need, added to worker images (`ganger image build`).
    pub packages: Vec<String>,
    /// A Debian mirror for image builds; unset: mmdebstrap's default.
    pub mirror: Option<String>,
    /// A worker image to use instead of the one `ganger image build` names.
    pub image: Option<String>,
}

impl Default for DockerConfig {
    fn default() -> Self {
        DockerConfig {
            network: "host".into(),
            memory: None,
            cpus: None,
            pids: Some(4096),
            suite: "trixie".into(),
            packages: Vec::new(),
            mirror: None,
            image: None,
        }
    }
}

/// A duration written as `90`, `"90s"`, `"10m"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DurationSetting(pub Duration);

impl<'de> Deserialize<'de> for DurationSetting {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DurationVisitor)
    }
}

/// Reads a number of seconds or a text like `"90s"`, and says what it expected otherwise (an
/// untagged enum only said that no variant matched).
struct DurationVisitor;

impl serde::de::Visitor<'_> for DurationVisitor {
    type Value = DurationSetting;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a duration: a number of seconds, or text such as \"90s\", \"10m\" or \"2h\"")
    }

    fn visit_u64<E: serde::de::Error>(self, seconds: u64) -> Result<Self::Value, E> {
        Ok(DurationSetting(Duration::from_secs(seconds)))
    }

    fn visit_i64<E: serde::de::Error>(self, seconds: i64) -> Result<Self::Value, E> {
        u64::try_from(seconds)
            .map(|s| DurationSetting(Duration::from_secs(s)))
            .map_err(|_| E::custom(format!("{seconds} is not a duration: it is negative")))
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Self::Value, E> {
        parse_duration(text).map(DurationSetting).map_err(E::custom)
    }
}

/// A configuration file that could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct ConfigError {
    pub path: PathBuf,
    pub reason: String,
}

/// The per-user configuration file.
pub fn user_config_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(base.join("ganger").join("config.toml"))
}

/// Reads a configuration file as a table, after checking it as a whole configuration from its
/// text, so that an error names its line and key.
fn read_table(path: &Path) -> Result<Option<toml::Table>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(ConfigError {
                path: path.into(),
                reason: e.to_string(),
            });
        }
    };
    let located = |e: toml::de::Error| ConfigError {
        path: path.into(),
        reason: locate(&text, &e),
    };
    let table = text.parse::<toml::Table>().map_err(located)?;
    toml::from_str::<Config>(&text).map_err(located)?;
    Ok(Some(table))
}

/// `line N (KEY): MESSAGE` for an error at a place in `text`, else the message alone.
fn locate(text: &str, error: &toml::de::Error) -> String {
    let message = error.message().trim();
    let Some(span) = error.span() else {
        return message.to_owned();
    };
    let at = span.start.min(text.len());
    let line = text[..at].matches('\n').count() + 1;
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let source = text[start..].lines().next().unwrap_or_default();
    match source.split_once('=') {
        Some((key, _)) if !key.trim().is_empty() && !key.trim_start().starts_with('[') => {
            format!("line {line} ({}): {message}", key.trim())
        }
        _ => format!("line {line}: {message}"),
    }
}

pub(crate) fn merge(base: &mut toml::Table, overlay: toml::Table) {
    for (key, value) in overlay {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(inner)), toml::Value::Table(over)) => merge(inner, over),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

impl Config {
    /// Loads the configuration for the main checkout `main`.
    pub fn load(main: &Path) -> Result<Config, ConfigError> {
        let mut table = toml::Table::new();
        let mut last = main.join(FILE_NAME);
        if let Some(user) = user_config_path()
            && let Some(user_table) = read_table(&user)?
        {
            Self::check(&user, user_table.clone())?;
            merge(&mut table, user_table);
            last = user;
        }
        let repo = main.join(FILE_NAME);
        if let Some(repo_table) = read_table(&repo)? {
            Self::check(&repo, repo_table.clone())?;
            merge(&mut table, repo_table);
            last = repo;
        }
        Self::check(&last, table)
    }

    /// Reads one table as a whole configuration, naming the file on error.
    fn check(path: &Path, table: toml::Table) -> Result<Config, ConfigError> {
        let config = Config::deserialize(toml::Value::Table(table)).map_err(|e| ConfigError {
            path: path.into(),
            reason: e.message().trim().to_owned(),
        })?;
        if let Some(reason) = config.trees.problem() {
            return Err(ConfigError {
                path: path.into(),
                reason,
            });
        }
        for (key, limit) in [
            ("defaults.timeout", config.defaults.timeout),
            ("defaults.stall", config.defaults.stall),
        ] {
            if limit.0.is_zero() {
                return Err(ConfigError {
                    path: path.into(),
                    reason: format!("{key}: a limit of 0 would stop every round at once"),
                });
            }
        }
        if let Some(reason) = config.permissions.problem() {
            return Err(ConfigError {
                path: path.into(),
                reason: format!("permissions: {reason}"),
            });
        }
        if let Some(memory) = &config.warm.memory
            && parse_size(memory).is_none_or(|bytes| bytes == 0)
        {
            return Err(ConfigError {
                path: path.into(),
                reason: format!("warm.memory: {memory:?} is not a size such as \"4g\" or \"512m\""),
            });
        }
        if config.warm.max == 0 || config.warm.idle.0.is_zero() {
            return Err(ConfigError {
                path: path.into(),
                reason: "warm: max and idle must be above 0 (set warm.default = false to keep agents cold)".into(),
            });
        }
        validate_checks(&config.checks).map_err(|reason| ConfigError {
            path: path.into(),
            reason,
        })?;
        roles::check(&config.roles, &config.pipeline).map_err(|reason| ConfigError {
            path: path.into(),
            reason,
        })?;
        Ok(config)
    }

    /// Reads a configuration from text (for tests and `ganger init`'s template check).
    pub fn from_text(text: &str) -> Result<Config, String> {
        toml::from_str(text).map_err(|e| e.message().trim().to_owned())
    }

    /// The settings of `agent` (defaults when it has none).
    pub fn agent(&self, agent: &str) -> AgentConfig {
        self.agents.get(agent).cloned().unwrap_or_default()
    }

    /// The environment variable that carries `provider`'s key.
    pub fn key_env(&self, provider: &str) -> String {
        self.keys.get(provider).cloned().unwrap_or_else(|| {
            let upper: String = provider
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() {
                        c.to_ascii_uppercase()
                    } else {
                        '_'
                    }
                })
                .collect();
            format!("{upper}_API_KEY")
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_read_as_bytes() {
        assert_eq!(super::parse_size("4g"), Some(4 << 30));
        assert_eq!(super::parse_size("512M"), Some(512 << 20));
        assert_eq!(super::parse_size("100kb"), Some(100 << 10));
        assert_eq!(super::parse_size("1000"), Some(1000));
        assert_eq!(super::parse_size("lots"), None);
        assert_eq!(super::parse_size("4x"), None);
    }

    #[test]
    fn warm_memory_is_a_quarter_of_the_machines_unless_set() {
        let meminfo = "MemTotal:       16384000 kB\nMemFree:  1 kB\n";
        assert_eq!(
            super::quarter_of_total(meminfo),
            Some(16_384_000 * 1024 / 4)
        );
        assert_eq!(super::quarter_of_total("MemFree: 1 kB\n"), None);
        let unset = super::WarmConfig::default();
        assert!(unset.memory_bytes().is_some_and(|bytes| bytes > 0));
        assert_eq!(unset.memory_bytes(), super::default_warm_memory());
        let set = super::Config::from_text("[warm]\nmemory = \"512m\"\n").unwrap();
        assert_eq!(set.warm.memory_bytes(), Some(512 << 20));
    }

    use super::*;

    #[test]
    fn the_template_is_a_valid_configuration_equal_to_the_defaults() {
        let from_template = Config::from_text(&template()).unwrap();
        let defaults = Config::default();
        assert_eq!(from_template.defaults.agent, defaults.defaults.agent);
        assert_eq!(from_template.defaults.timeout, defaults.defaults.timeout);
        assert_eq!(from_template.defaults.stall, defaults.defaults.stall);
        assert_eq!(from_template.worktree.path, defaults.worktree.path);
        assert_eq!(from_template.worktree.branch, defaults.worktree.branch);
    }

    #[test]
    fn unknown_keys_and_bad_durations_are_errors_that_name_them() {
        let err = Config::from_text("[defaults]\ntimout = \"5m\"\n").unwrap_err();
        assert!(err.contains("timout"), "{err}");
        let err = Config::from_text("[defaults]\ntimeout = \"5 minutes\"\n").unwrap_err();
        assert!(err.contains("5 minutes"), "{err}");
        let config =
            Config::from_text("[defaults]\nstall = 30\n[keys]\nmock = \"MOCK_TOKEN\"\n").unwrap();
        assert_eq!(config.defaults.stall.0, Duration::from_secs(30));
        assert_eq!(config.key_env("mock"), "MOCK_TOKEN");
        assert_eq!(config.key_env("open-router"), "OPEN_ROUTER_API_KEY");
    }

    /// Issue 39.5: the permission is read into its enum with the file, and a misspelt one is
    /// still named as it was when it was checked after.
    #[test]
    fn the_default_permission_is_read_once_and_a_misspelt_one_is_named() {
        let table = "[defaults]\npermission = \"read-only\"\n".parse().unwrap();
        let config = Config::check(Path::new("x"), table).unwrap();
        assert_eq!(config.defaults.permission, Permission::ReadOnly);
        let table = "[defaults]\npermission = \"all\"\n".parse().unwrap();
        let err = Config::check(Path::new("x"), table).unwrap_err();
        assert_eq!(
            err.reason,
            "defaults.permission: unknown permission \"all\": expected write or read-only"
        );
    }

    #[test]
    fn the_repository_file_overrides_the_user_file_key_by_key() {
        let mut base: toml::Table = "[defaults]\nmodel = \"a/b\"\nbase = \"dev\"\n"
            .parse()
            .unwrap();
        merge(&mut base, "[defaults]\nmodel = \"c/d\"\n".parse().unwrap());
        let config = Config::check(Path::new("x"), base).unwrap();
        assert_eq!(config.defaults.model.as_deref(), Some("c/d"));
        assert_eq!(config.defaults.base, "dev");
    }
}
