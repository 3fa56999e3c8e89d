//! The environment of a sandboxed agent: built from nothing, not from the user's. The user's
//! variables often carry credentials (cloud tokens, registry passwords); a sandboxed agent
//! gets only a short list of harmless ones (locale, terminal, proxies and the certificate
//! bundles the proxies need), its own `HOME`, then `ganger.toml`'s `env` for the agent, the
//! adapter's plan and the keys of this run.

use crate::base::config::Config;
use crate::env::keys::LoadedKey;
use ganger_agents::{Adapter, CommandPlan};
use std::ffi::OsString;
use std::path::Path;

/// Variables passed through from ganger's own environment when set.
const PASSED: [&str; 20] = [
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "USER",
    "LOGNAME",
    "SHELL",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
];
/// The `PATH` of a sandboxed agent when ganger's own has none.
const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The whole environment of a sandboxed agent whose home is `home`, working in `worktree`.
pub(crate) fn sandbox_environment(
    adapter: &dyn Adapter,
    config: &Config,
    plan: &CommandPlan,
    keys: &[LoadedKey],
    home: &Path,
    worktree: &Path,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = PASSED
        .iter()
        .filter_map(|name| Some((OsString::from(name), std::env::var_os(name)?)))
        .collect();
    let path = std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into());
    env.push(("PATH".into(), path));
    env.push(("HOME".into(), home.into()));
    // Agents that take their directory from PWD get the worktree; bwrap's --chdir does not set
    // it.
    env.push(("PWD".into(), worktree.into()));
    env.push(("TERM".into(), "dumb".into()));
    crate::env::agent_env::add_settings(&mut env, adapter, config, plan, keys);
    env
}

/// Whether `name` is one of the variables a sandbox passes through from the user.
#[cfg(test)]
fn passed(name: &str) -> bool {
    PASSED.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_of_the_user_are_not_passed() {
        for name in [
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "OPENAI_API_KEY",
            "HOME",
        ] {
            assert!(!passed(name), "{name}");
        }
        assert!(passed("HTTPS_PROXY"));
    }
}
