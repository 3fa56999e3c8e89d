//! Where the store's password comes from when the connection string holds none, so that URLs
//! need hold none: the one a parent ganger handed this process ([`accept_handed`]), else the
//! file the configuration names (`[store] password_file`, the password alone), else
//! `PGPASSWORD`, else libpq's password file (`passfile=` in the connection string, else
//! `PGPASSFILE`, else `~/.pgpass`): lines `host:port:database:user:password`, `*` matching
//! anything, `\` escaping `:` and `\`, the first matching line winning. As libpq does, a
//! password file that others may read is not used: here that is an error naming the file,
//! not a warning nobody sees.

use super::params::Split;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tokio_postgres::config::Host;

/// The password a parent ganger handed this process (on its stdin, never in its
/// environment), or the one its own `GANGER_STORE` held before it left the environment.
static HANDED: OnceLock<String> = OnceLock::new();
/// `PGPASSWORD`, kept here once it left the process's environment.
static FROM_ENV: OnceLock<String> = OnceLock::new();
/// Every password this process found outside a connection string: what agents print is
/// redacted of them as of a URL's.
static FOUND: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The passwords this process found outside connection strings (a store it opened, or a host
/// it handed one to), for the redaction of what agents print.
pub fn found_passwords() -> Vec<String> {
    FOUND.lock().map(|found| found.clone()).unwrap_or_default()
}

/// Keeps the password a parent ganger handed this process, for every store it opens.
pub fn accept_handed(password: String) {
    let _ = HANDED.set(password);
}

/// Keeps `PGPASSWORD`'s value, read at the start, so that the variable can leave the
/// process's environment (and with it every child's).
pub fn accept_env_password(password: String) {
    let _ = FROM_ENV.set(password);
}

/// Connection string `url` without its password, and the password it held.
pub fn strip_password(url: &str) -> (String, Option<String>) {
    let password = super::params::split(url)
        .rest
        .parse::<tokio_postgres::Config>()
        .ok()
        .and_then(|config| {
            config
                .get_password()
                .map(|password| String::from_utf8_lossy(password).into_owned())
        });
    (super::params::without_password(url), password)
}

/// Why no password could be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PasswordError {
    #[error("cannot read the password file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the password file {} has group or world access; permissions should be u=rw (0600) \
         or less",
        .0.display()
    )]
    Open(PathBuf),
}

/// The password for `config` (which holds none) from the first source that has one, noted
/// for the redaction ([`found_passwords`]).
pub(crate) fn find(
    config: &tokio_postgres::Config,
    split: &Split,
    password_file: Option<&Path>,
) -> Result<Option<String>, PasswordError> {
    let found = look(config, split, password_file)?;
    if let Some(password) = &found
        && let Ok(mut noted) = FOUND.lock()
        && !noted.contains(password)
    {
        noted.push(password.clone());
    }
    Ok(found)
}

fn look(
    config: &tokio_postgres::Config,
    split: &Split,
    password_file: Option<&Path>,
) -> Result<Option<String>, PasswordError> {
    if let Some(handed) = HANDED.get() {
        return Ok(Some(handed.clone()));
    }
    if let Some(path) = password_file {
        let text = read_private(path)?;
        return Ok(Some(text.trim_end_matches(['\n', '\r']).to_owned()));
    }
    let from_env = FROM_ENV
        .get()
        .cloned()
        .or_else(|| std::env::var_os("PGPASSWORD").map(|p| p.to_string_lossy().into_owned()));
    if let Some(password) = from_env.filter(|p| !p.is_empty()) {
        return Ok(Some(password));
    }
    let passfile = match split.get("passfile") {
        Some(named) => Some(PathBuf::from(named)),
        None => std::env::var_os("PGPASSFILE")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".pgpass"))),
    };
    match passfile {
        Some(path) if path.exists() => Ok(from_passfile(&read_private(&path)?, config)),
        _ => Ok(None),
    }
}

/// The text of `path`, refused when others may read or write it.
fn read_private(path: &Path) -> Result<String, PasswordError> {
    let failed = |source| PasswordError::Read {
        path: path.to_owned(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(failed)?;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(PasswordError::Open(path.to_owned()));
    }
    std::fs::read_to_string(path).map_err(failed)
}

/// The password of the first line of a pgpass file that matches where `config` connects.
fn from_passfile(text: &str, config: &tokio_postgres::Config) -> Option<String> {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(host)) => host.clone(),
        // libpq matches a socket connection as `localhost`.
        Some(Host::Unix(_)) | None => "localhost".into(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or_default();
    let database = config.get_dbname().unwrap_or(user);
    let wanted = [host.as_str(), port.as_str(), database, user];
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let fields = fields(line);
            let [h, p, d, u, password] = fields.as_slice() else {
                return None;
            };
            let matches = [h, p, d, u]
                .iter()
                .zip(wanted)
                .all(|(field, want)| field.as_str() == "*" || field.as_str() == want);
            matches.then(|| password.clone())
        })
}

/// A pgpass line's fields: split at `:`, `\` escaping the next character. The password is the
/// rest of the line after the fourth `:`.
fn fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields
                .last_mut()
                .into_iter()
                .for_each(|f| f.extend(chars.next())),
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().into_iter().for_each(|f| f.push(c)),
        }
    }
    fields
}

/// What a process ganger starts is handed to open the same store: the connection string
/// without its password, and the password this process would use (from wherever it found it),
/// which the new process is given apart (on its stdin: never in a URL, an argument or an
/// environment variable, where other users or the agents could read it).
pub fn handoff(url: &str, password_file: Option<&Path>) -> Result<Handoff, crate::StoreError> {
    let split = super::params::split(url);
    let (url_without, written) = strip_password(url);
    let Ok(config) = split.rest.parse::<tokio_postgres::Config>() else {
        return Ok(Handoff {
            url: url_without,
            password: None,
        });
    };
    let password = match written {
        Some(password) => Some(password),
        None => {
            find(&config, &split, password_file).map_err(|source| crate::StoreError::Backend {
                source: Box::new(super::errors::ConnectError {
                    url: super::url::redact(url),
                    source: source.into(),
                }),
            })?
        }
    };
    Ok(Handoff {
        url: url_without,
        password,
    })
}

/// A store as a process ganger starts is handed it ([`handoff`]).
pub struct Handoff {
    /// The connection string, without a password.
    pub url: String,
    /// The password, to be handed apart.
    pub password: Option<String>,
}

impl std::fmt::Debug for Handoff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handoff")
            .field("url", &self.url)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::from_passfile;

    #[test]
    fn the_first_matching_line_of_a_pgpass_file_gives_the_password() {
        let text = "# comment\n\
                    other:5432:*:ganger:not-this\n\
                    db.example:5433:*:ganger:nor-this\n\
                    db.example:5432:state:ganger:pa\\:ss\\\\word\n\
                    *:*:*:*:fallback\n";
        let config = |s: &str| s.parse::<tokio_postgres::Config>().unwrap();
        assert_eq!(
            from_passfile(text, &config("postgres://ganger@db.example/state")).as_deref(),
            Some("pa:ss\\word")
        );
        assert_eq!(
            from_passfile(text, &config("host=db.example user=ganger dbname=x")).as_deref(),
            Some("fallback")
        );
        assert_eq!(
            from_passfile("db:*:*:u:p", &config("host=other user=u")),
            None
        );
    }
}
