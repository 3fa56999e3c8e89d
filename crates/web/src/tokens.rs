//! Who may do what: every API request carries a token (`Authorization: Bearer TOKEN`), and
//! the token names a commander and what it may do (read, or read and act). `serve` writes
//! its owner's token to `.ganger/web/token` (made with mode 0600; refused when others can
//! read it) and reads more from `.ganger/web/tokens.toml` when it exists (same rule):
//!
//! ```toml
//! [[token]]
//! commander = "alice"        # requests with this token act as alice
//! secret = "a long random string, 24 characters or more"
//! access = "write"           # or "read": a viewer
//! ```
//!
//! Secrets are compared in constant time and never printed, logged or sent back. A secret
//! with spaces around it is refused: HTTP drops the spaces around a header's value, so no
//! request could ever match it.

use std::io::Read;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// What a token lets its holder do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// Look: every GET.
    Read,
    /// Look and act: start, fix, cancel, approve, reject, merge, transfer.
    Write,
}

/// A token's holder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub commander: String,
    pub access: Access,
}

/// The shortest secret `tokens.toml` takes.
const MIN_SECRET: usize = 24;

/// Every token the server knows.
pub struct Tokens {
    entries: Vec<(Vec<u8>, Grant)>,
    /// How many came from `tokens.toml` (configured on purpose).
    pub configured: usize,
    /// Where the owner's token is.
    pub owner_token_file: PathBuf,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secrets.
        f.debug_struct("Tokens")
            .field("count", &self.entries.len())
            .field("configured", &self.configured)
            .finish()
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenFile {
    #[serde(default)]
    token: Vec<TokenEntry>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenEntry {
    commander: String,
    secret: String,
    access: Access,
}

impl Tokens {
    /// The owner's token (made when missing) and the configured ones, from `web_dir`
    /// (`.ganger/web`); `owner` is the commander `serve` runs as.
    pub fn load(web_dir: &Path, owner: &str) -> Result<Tokens, String> {
        std::fs::create_dir_all(web_dir)
            .map_err(|e| format!("cannot create {}: {e}", web_dir.display()))?;
        let owner_token_file = web_dir.join("token");
        let secret = owner_token(&owner_token_file)?;
        let mut entries = vec![(
            secret.into_bytes(),
            Grant {
                commander: owner.to_owned(),
                access: Access::Write,
            },
        )];
        let configured_file = web_dir.join("tokens.toml");
        let mut configured = 0;
        if configured_file.exists() {
            let text = read_private(&configured_file)?;
            let file: TokenFile = toml::from_str(&text)
                .map_err(|e| format!("{}: {}", configured_file.display(), e.message()))?;
            for (i, entry) in file.token.into_iter().enumerate() {
                let at = format!("{} token {}", configured_file.display(), i + 1);
                ganger_engine::check_commander_name(&entry.commander)
                    .map_err(|e| format!("{at}: {e}"))?;
                if entry.secret.trim() != entry.secret {
                    return Err(format!(
                        "{at}: the secret has spaces around it, which no request can send \
                         (HTTP drops them): remove them"
                    ));
                }
                if entry.secret.len() < MIN_SECRET {
                    return Err(format!(
                        "{at}: the secret is shorter than {MIN_SECRET} characters"
                    ));
                }
                if entries.iter().any(|(s, _)| *s == entry.secret.as_bytes()) {
                    return Err(format!("{at}: the secret is used by another token"));
                }
                entries.push((
                    entry.secret.into_bytes(),
                    Grant {
                        commander: entry.commander,
                        access: entry.access,
                    },
                ));
                configured += 1;
            }
        }
        Ok(Tokens {
            entries,
            configured,
            owner_token_file,
        })
    }

    /// Who holds `secret`, if anyone (every entry is compared, each in constant time).
    pub fn grant(&self, secret: &[u8]) -> Option<&Grant> {
        let mut found = None;
        for (known, grant) in &self.entries {
            if constant_time_eq(known, secret) {
                found = Some(grant);
            }
        }
        found
    }

    /// Every commander some token acts as.
    pub fn commanders(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .entries
            .iter()
            .map(|(_, g)| g.commander.clone())
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A file's text, refused when anyone but its owner may read it.
fn read_private(path: &Path) -> Result<String, String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "{} can be read by others than its owner; `chmod 600` it",
            path.display()
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The owner's token: read, or made (32 random bytes as hex, mode 0600) when missing.
fn owner_token(path: &Path) -> Result<String, String> {
    if path.exists() {
        let text = read_private(path)?;
        let token = text.trim().to_owned();
        if token.len() < MIN_SECRET {
            return Err(format!(
                "{} holds no token; remove it to make a new one",
                path.display()
            ));
        }
        return Ok(token);
    }
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    std::io::Write::write_all(&mut file, format!("{token}\n").as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_token_is_made_private_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let web = dir.path().join("web");
        let tokens = Tokens::load(&web, "alice").unwrap();
        let file = web.join("token");
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let secret = std::fs::read_to_string(&file).unwrap();
        let grant = tokens.grant(secret.trim().as_bytes()).unwrap();
        assert_eq!(
            grant,
            &Grant {
                commander: "alice".into(),
                access: Access::Write
            }
        );
        assert!(tokens.grant(b"nope").is_none());
        let again = Tokens::load(&web, "alice").unwrap();
        assert!(again.grant(secret.trim().as_bytes()).is_some());
    }

    #[test]
    fn a_token_file_others_can_read_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let web = dir.path().join("web");
        Tokens::load(&web, "alice").unwrap();
        let file = web.join("tokens.toml");
        std::fs::write(
            &file,
            "[[token]]\ncommander = \"bob\"\nsecret = \"bbbbbbbbbbbbbbbbbbbbbbbbbbbb\"\naccess = \"read\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = Tokens::load(&web, "alice").unwrap_err();
        assert!(error.contains("chmod 600"), "{error}");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let tokens = Tokens::load(&web, "alice").unwrap();
        assert_eq!(tokens.configured, 1);
        assert_eq!(
            tokens
                .grant(b"bbbbbbbbbbbbbbbbbbbbbbbbbbbb")
                .unwrap()
                .access,
            Access::Read
        );
    }

    #[test]
    fn a_secret_with_spaces_around_it_is_refused_without_being_echoed() {
        let dir = tempfile::tempdir().unwrap();
        let web = dir.path().join("web");
        std::fs::create_dir_all(&web).unwrap();
        let file = web.join("tokens.toml");
        for secret in [
            " bbbbbbbbbbbbbbbbbbbbbbbbbbbb",
            "bbbbbbbbbbbbbbbbbbbbbbbbbbbb\t",
        ] {
            std::fs::write(
                &file,
                format!("[[token]]\ncommander = \"bob\"\nsecret = {secret:?}\naccess = \"read\"\n"),
            )
            .unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
            let error = Tokens::load(&web, "alice").unwrap_err();
            assert!(
                error.contains("token 1: the secret has spaces around it"),
                "{error}"
            );
            assert!(!error.contains("bbbb"), "{error}");
        }
    }

    #[test]
    fn a_short_secret_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let web = dir.path().join("web");
        std::fs::create_dir_all(&web).unwrap();
        let file = web.join("tokens.toml");
        std::fs::write(
            &file,
            "[[token]]\ncommander = \"bob\"\nsecret = \"short\"\naccess = \"read\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let error = Tokens::load(&web, "alice").unwrap_err();
        assert!(error.contains("shorter than 24"), "{error}");
    }
}
