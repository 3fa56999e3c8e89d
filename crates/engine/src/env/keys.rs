//! Provider keys: `--key PROVIDER=FILE` names a file; only its path is stored, and the key is
//! read from it for each run and handed to the agent in its environment
//! (`<PROVIDER>_API_KEY`, or the variable `ganger.toml` maps the provider to). The values read
//! are what the redactor removes from everything ganger writes.

use crate::base::config::Config;
use crate::base::error::{EngineError, Result};
use crate::env::store_location::StoreLocation;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The shortest key ganger accepts: a shorter one could not be told apart from ordinary text
/// when it is removed from logs.
pub const MIN_KEY_LEN: usize = 8;

/// Reads `PROVIDER=FILE` arguments into provider -> absolute path, checking each file now.
pub fn parse_key_args(args: &[String]) -> Result<BTreeMap<String, PathBuf>> {
    let mut keys = BTreeMap::new();
    for arg in args {
        let (provider, file) = arg.split_once('=').ok_or_else(|| {
            EngineError::invalid(format!(
                "--key {arg:?}: write PROVIDER=FILE, e.g. openrouter=~/.config/keys/openrouter"
            ))
        })?;
        let provider = provider.trim();
        if provider.is_empty()
            || !provider
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(EngineError::invalid(format!(
                "--key {arg:?}: the provider must be letters, digits, '-' or '_'"
            )));
        }
        let path = absolute(Path::new(file.trim()))?;
        read_key(provider, &path)?;
        keys.insert(provider.to_owned(), path);
    }
    Ok(keys)
}

fn absolute(path: &Path) -> Result<PathBuf> {
    let expanded = match path.strip_prefix("~") {
        Ok(rest) => std::env::var_os("HOME")
            .map(|home| PathBuf::from(home).join(rest))
            .unwrap_or_else(|| path.to_path_buf()),
        Err(_) => path.to_path_buf(),
    };
    std::path::absolute(&expanded).map_err(|e| EngineError::io("resolve", path, e))
}

/// Reads one key file: the key is its content without surrounding whitespace.
pub fn read_key(provider: &str, path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        EngineError::invalid(format!(
            "cannot read the key file for {provider} ({}): {e}",
            path.display()
        ))
    })?;
    let key = text.trim();
    if key.is_empty() {
        return Err(EngineError::invalid(format!(
            "the key file for {provider} ({}) is empty",
            path.display()
        )));
    }
    if let Some(name) = assigned_name(key) {
        // The value is never printed: only the variable's name.
        return Err(EngineError::invalid(format!(
            "the key file for {provider} ({}) holds an assignment ({name}=...); it must hold the key alone",
            path.display()
        )));
    }
    if key.len() < MIN_KEY_LEN || key.contains('\n') {
        return Err(EngineError::invalid(format!(
            "the key file for {provider} ({}) does not hold one key of at least {MIN_KEY_LEN} characters on one line",
            path.display()
        )));
    }
    Ok(key.to_owned())
}

/// The variable of a shell assignment (`NAME=value`, `export NAME=value`), when that is what
/// a key file holds instead of a key.
fn assigned_name(text: &str) -> Option<&str> {
    let exported = text.strip_prefix("export ");
    let text = exported.unwrap_or(text).trim_start();
    let (name, value) = text.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    // An environment variable's name (upper case, as keys are named; any case after
    // `export`), then a value: a base64 key's `=` padding is not an assignment.
    let named = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && (exported.is_some() || !name.chars().any(|c| c.is_ascii_lowercase()));
    (named && !value.is_empty() && !value.starts_with('=')).then_some(name)
}

/// A key read for one run.
#[derive(Debug, Clone)]
pub struct LoadedKey {
    pub provider: String,
    pub env: String,
    pub value: String,
}

/// Reads every key of a task for one run.
pub fn load_keys(config: &Config, keys: &BTreeMap<String, PathBuf>) -> Result<Vec<LoadedKey>> {
    keys.iter()
        .map(|(provider, path)| {
            Ok(LoadedKey {
                provider: provider.clone(),
                env: config.key_env(provider),
                value: read_key(provider, path)?,
            })
        })
        .collect()
}

/// The shortest store password removed from what agents print: a shorter one would take
/// pieces of ordinary words with it, and is no password a server should accept.
const MIN_STORE_SECRET_LEN: usize = 4;

impl LoadedKey {
    /// A redactor that removes these keys' values, and the password of `store` (which a
    /// repository's `ganger.toml` may name where an agent can read it), from what ganger
    /// writes.
    pub fn redactor(store: &StoreLocation, keys: &[LoadedKey]) -> crate::base::redact::Redactor {
        // The URL's password, and one found elsewhere (a password file, PGPASSWORD, handed).
        let store_secrets = store
            .url()
            .map(|url| {
                let mut secrets = ganger_store::url_secrets(url);
                secrets.extend(ganger_store::found_store_passwords());
                secrets
            })
            .unwrap_or_default();
        crate::base::redact::Redactor::new(
            keys.iter()
                .map(|k| (k.provider.as_str(), k.value.as_str()))
                .chain(
                    store_secrets
                        .iter()
                        .filter(|secret| secret.len() >= MIN_STORE_SECRET_LEN)
                        .map(|secret| ("store", secret.as_str())),
                ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_arguments_are_checked_and_only_paths_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mock.key");
        std::fs::write(&file, "sk-test-1234567890\n").unwrap();
        let keys = parse_key_args(&[format!("mock={}", file.display())]).unwrap();
        assert_eq!(keys.get("mock"), Some(&file));
        assert_eq!(read_key("mock", &file).unwrap(), "sk-test-1234567890");
        assert!(parse_key_args(&["mock".into()]).is_err());
        assert!(parse_key_args(&[format!("a/b={}", file.display())]).is_err());
        assert!(parse_key_args(&["mock=/nonexistent".into()]).is_err());
        std::fs::write(&file, "short").unwrap();
        assert!(parse_key_args(&[format!("mock={}", file.display())]).is_err());
        for assignment in [
            "MOCK_API_KEY=sk-test-1234567890",
            "export K=sk-test-1234567890",
        ] {
            std::fs::write(&file, assignment).unwrap();
            let error = parse_key_args(&[format!("mock={}", file.display())]).unwrap_err();
            assert!(error.message.contains("assignment"), "{error}");
            assert!(!error.message.contains("sk-test"), "{error}");
        }
        // A key with '=' in it (base64 padding) is a key.
        std::fs::write(&file, "c2stdGVzdC0xMjM0NTY3ODkw==").unwrap();
        assert!(parse_key_args(&[format!("mock={}", file.display())]).is_ok());
    }
}
