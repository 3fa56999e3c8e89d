//! Where a repository's store is: the SQLite file in `.ganger/` (the default), or a PostgreSQL
//! server the user named (`--store`, else `GANGER_STORE`: the front end reads them, [`named`])
//! or, below it, `[store] url` in the configuration. The processes ganger starts of itself (a
//! detached round host, a warm host) are handed the store in their `GANGER_STORE`
//! ([`StoreLocation::handed`]), never on a command line, and without its password: the
//! password (wherever this process found it: the URL, `[store] password_file`, `PGPASSWORD`,
//! a pgpass file) is the first line of the new process's stdin, which it reads first
//! ([`accept_handed_password`], told so by `GANGER_STORE_PASSWORD=stdin`). A URL is never
//! shown with its password: errors and `Debug` name it through the store's redaction.

use crate::base::error::{EngineError, Result};
use std::ffi::{OsStr, OsString};

/// The variable naming the store (`postgres://...`, or `sqlite` for the default).
pub const STORE_ENV: &str = "GANGER_STORE";
/// Set to `stdin` when the store's password is the first line of this process's stdin.
pub const PASSWORD_ENV: &str = "GANGER_STORE_PASSWORD";

/// What a process ganger starts of itself is handed to open the same store.
#[derive(Debug, Default)]
pub struct Handed {
    /// Its environment's additions: the store without a password, and whether one comes.
    pub env: Vec<(OsString, OsString)>,
    /// The password's line, first on its stdin; empty when there is none.
    password_line: Vec<u8>,
}

impl Handed {
    /// The new process's stdin: the password's line, then `input`.
    pub fn input(&self, input: &[u8]) -> Vec<u8> {
        let mut all = self.password_line.clone();
        all.extend_from_slice(input);
        all
    }
}

/// Takes the store's password out of this process's environment before anything runs:
/// `PGPASSWORD`, and the password of the URL in `GANGER_STORE` (unless `--store` names the
/// store: `store_flag`), are kept in memory, where the store finds them, so that no process
/// ganger starts (a round's host, git, an agent, a check) inherits them.
///
/// # Safety
///
/// It changes the environment: no other thread may run (call it first thing in `main`).
pub unsafe fn withhold_store_secrets(store_flag: bool) {
    if let Some(password) = std::env::var_os("PGPASSWORD") {
        ganger_store::accept_env_password(password.to_string_lossy().into_owned());
        // SAFETY: the caller runs no other thread.
        unsafe { std::env::remove_var("PGPASSWORD") };
    }
    let named = std::env::var(STORE_ENV).ok();
    if let Some(named) = named.filter(|_| !store_flag)
        && let (without, Some(password)) = ganger_store::strip_password(&named)
    {
        ganger_store::accept_handed_password(password);
        // SAFETY: as above.
        unsafe { std::env::set_var(STORE_ENV, without) };
    }
}

/// Reads the password a parent ganger handed this process on its stdin (when its
/// environment says one comes), once, for every store it opens. Called at the front end's
/// edge, before anything else reads stdin.
pub fn accept_handed_password() -> Result<()> {
    static TAKEN: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    if std::env::var_os(PASSWORD_ENV).as_deref() != Some(OsStr::new("stdin"))
        || TAKEN.get().is_some()
    {
        return Ok(());
    }
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::stdin().lock(), &mut line)
        .map_err(|e| EngineError::environment("cannot read the store's password on stdin", e))?;
    let _ = TAKEN.set(());
    ganger_store::accept_handed_password(line.trim_end_matches('\n').to_owned());
    Ok(())
}

/// Where the store is.
#[derive(Clone, PartialEq, Eq, Default)]
pub enum StoreLocation {
    /// `state.db` in the main checkout's `.ganger/`.
    #[default]
    Local,
    /// A PostgreSQL database, by its URL.
    Postgres(String),
}

impl std::fmt::Debug for StoreLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreLocation::Local => f.write_str("Local"),
            StoreLocation::Postgres(url) => f
                .debug_tuple("Postgres")
                .field(&ganger_store::redact_url(url))
                .finish(),
        }
    }
}

impl StoreLocation {
    /// The store the user `named` ([`named`]), else `configured` (`[store] url`), else the
    /// local one.
    pub fn resolve(
        named: Option<StoreLocation>,
        configured: Option<&str>,
    ) -> Result<StoreLocation> {
        match (named, configured) {
            (Some(named), _) => Ok(named),
            (None, Some(value)) => parse("store.url in the configuration", value),
            (None, None) => Ok(StoreLocation::Local),
        }
    }

    /// What a process ganger starts of itself is handed to find the same store: its
    /// `GANGER_STORE` in its environment (never on a command line, where every user of the
    /// machine sees it) without a password, and the password on its stdin ([`Handed`]).
    /// `password_file` is the configuration's.
    pub fn handed(&self, password_file: Option<&std::path::Path>) -> Result<Handed> {
        let url = match self {
            StoreLocation::Local => {
                return Ok(Handed {
                    env: vec![(STORE_ENV.into(), "sqlite".into())],
                    password_line: Vec::new(),
                });
            }
            StoreLocation::Postgres(url) => url,
        };
        let handoff = ganger_store::pg_handoff(url, password_file).map_err(|error| {
            EngineError::environment(
                format!(
                    "failed to find the password of the store at {}",
                    ganger_store::redact_url(url)
                ),
                error,
            )
        })?;
        let mut env = vec![(STORE_ENV.into(), handoff.url.into())];
        let mut password_line = Vec::new();
        if let Some(password) = handoff.password {
            if password.contains('\n') {
                return Err(EngineError::invalid(
                    "the store's password holds a line break: it cannot be handed to a round's host",
                ));
            }
            env.push((PASSWORD_ENV.into(), "stdin".into()));
            password_line = format!("{password}\n").into_bytes();
        }
        Ok(Handed { env, password_line })
    }

    /// The URL, for a networked store.
    pub fn url(&self) -> Option<&str> {
        match self {
            StoreLocation::Local => None,
            StoreLocation::Postgres(url) => Some(url),
        }
    }
}

/// The store the user named: `flag` (`--store`), else `env` (the value of `GANGER_STORE`; an
/// empty one names none); `None` when neither does. Read once, at the front end's edge.
pub fn named(flag: Option<&str>, env: Option<&OsStr>) -> Result<Option<StoreLocation>> {
    if let Some(flag) = flag {
        return parse("--store", flag).map(Some);
    }
    match env.map(OsStr::to_str) {
        None => Ok(None),
        Some(Some(value)) if value.trim().is_empty() => Ok(None),
        Some(Some(value)) => parse(STORE_ENV, value).map(Some),
        Some(None) => Err(EngineError::invalid(format!(
            "{STORE_ENV} is not valid UTF-8"
        ))),
    }
}

/// Reads a store's name as `source` gave it: `sqlite`, a `postgres://` URL, or libpq's
/// `key=value` form (`host=db.example user=ganger password=...`). No refusal echoes the text:
/// whatever follows its first word may be a password.
pub fn parse(source: &str, value: &str) -> Result<StoreLocation> {
    let value = value.trim();
    if value == "sqlite" {
        return Ok(StoreLocation::Local);
    }
    let url = value.starts_with("postgres://") || value.starts_with("postgresql://");
    if url || is_key_value(value) {
        return match ganger_store::check_url(value) {
            Ok(()) => Ok(StoreLocation::Postgres(value.to_owned())),
            Err(why) => Err(EngineError::invalid(format!(
                "{source}: not a store: {why} in the PostgreSQL connection string"
            ))),
        };
    }
    // Only the part before the first `:` is shown: the rest of a misspelt URL may hold a
    // password the redaction does not recognize.
    let shown = value
        .split([':', ' ', '='])
        .next()
        .unwrap_or_default()
        .chars()
        .take(20)
        .collect::<String>();
    Err(EngineError::invalid(format!(
        "{source}: not a store (it starts with {shown:?}): give postgres://USER:PASSWORD@HOST:PORT/DATABASE, \
         host=HOST user=USER password=PASSWORD dbname=DATABASE, or sqlite"
    )))
}

/// Whether `text` begins as libpq's key-value form does: a key, then `=`.
fn is_key_value(text: &str) -> bool {
    let key_end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    key_end > 0
        && text[..key_end].starts_with(|c: char| c.is_ascii_alphabetic())
        && text[key_end..].trim_start().starts_with('=')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_outranks_the_variable_which_outranks_the_configuration() {
        let pg = |db: &str| StoreLocation::Postgres(format!("postgres://h/{db}"));
        let env = OsStr::new("postgres://h/env");
        assert_eq!(
            named(Some("postgres://h/flag"), Some(env)).unwrap(),
            Some(pg("flag"))
        );
        assert_eq!(
            named(Some("sqlite"), Some(env)).unwrap(),
            Some(StoreLocation::Local)
        );
        assert_eq!(named(None, Some(env)).unwrap(), Some(pg("env")));
        assert_eq!(named(None, Some(OsStr::new(" "))).unwrap(), None);
        assert_eq!(named(None, None).unwrap(), None);
        let refused = named(None, Some(OsStr::new("mysql://h"))).unwrap_err();
        assert!(refused.message.starts_with("GANGER_STORE:"), "{refused:?}");
        let configured = Some("postgres://h/conf");
        assert_eq!(
            StoreLocation::resolve(Some(pg("env")), configured).unwrap(),
            pg("env")
        );
        assert_eq!(
            StoreLocation::resolve(None, configured).unwrap(),
            pg("conf")
        );
        assert_eq!(
            StoreLocation::resolve(None, None).unwrap(),
            StoreLocation::Local
        );
        let handed = StoreLocation::Postgres("postgres://u:s3cret@h/x".into())
            .handed(None)
            .unwrap();
        assert_eq!(
            handed.env,
            [
                ("GANGER_STORE".into(), "postgres://u@h/x".into()),
                ("GANGER_STORE_PASSWORD".into(), "stdin".into())
            ]
        );
        assert_eq!(handed.input(b"prompt"), b"s3cret\nprompt");
        let local = StoreLocation::Local.handed(None).unwrap();
        assert_eq!(local.env, [("GANGER_STORE".into(), "sqlite".into())]);
        assert_eq!(local.input(b"prompt"), b"prompt");
    }

    #[test]
    fn urls_and_sqlite_are_read_and_anything_else_is_refused_without_its_password() {
        assert_eq!(
            parse("x", " postgres://u:p@127.0.0.1:5/db ").unwrap(),
            StoreLocation::Postgres("postgres://u:p@127.0.0.1:5/db".into())
        );
        assert_eq!(
            parse("x", "postgresql://h/db").unwrap().url(),
            Some("postgresql://h/db")
        );
        assert_eq!(parse("x", "sqlite").unwrap(), StoreLocation::Local);
        let key_value = "host=127.0.0.1 port=5 user=u password=hunter2secret dbname=db";
        assert_eq!(
            parse("x", key_value).unwrap(),
            StoreLocation::Postgres(key_value.into())
        );

        let refused = parse("GANGER_STORE", "postgress://u:secret@h/db").unwrap_err();
        assert!(refused.message.contains("GANGER_STORE"), "{refused:?}");
        assert!(refused.message.contains("\"postgress\""), "{refused:?}");
        assert!(!refused.message.contains("secret"), "{refused:?}");
        for (text, why) in [
            ("host=h port=hunter2secret", "port"),
            ("postgres://u:hunter2secret@h:notaport/db", "port"),
        ] {
            let refused = parse("--store", text).unwrap_err();
            assert!(refused.message.contains(why), "{refused:?}");
            assert!(!refused.message.contains("hunter2secret"), "{refused:?}");
        }
        let shown = format!(
            "{:?}",
            StoreLocation::Postgres("postgres://u:secret@h/db".into())
        );
        assert!(
            !shown.contains("secret") && shown.contains("u:***@h/db"),
            "{shown}"
        );
    }
}
