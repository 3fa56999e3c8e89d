//! A database URL as it may be shown: [`redact`] hides the password wherever a connection
//! string can carry one (the URL's user info, a `password` query parameter, a `password=`
//! key of the key-value form), so that errors and logs can name the database they mean
//! without giving its password away. [`check`] tells whether a text is a connection string
//! without echoing it, and [`secrets`] gives the password in the forms a text may hold it, for
//! the redaction of what agents print.

/// What a hidden password is shown as.
const HIDDEN: &str = "***";

/// `url` with its password replaced by `***`.
pub fn redact(url: &str) -> String {
    let scheme_end = ["postgres://", "postgresql://"]
        .iter()
        .find(|scheme| url.starts_with(*scheme))
        .map(|scheme| scheme.len());
    match scheme_end {
        Some(scheme_end) => redact_url(url, scheme_end),
        None => redact_key_values(url),
    }
}

/// Whether `text` is a connection string the client can use (a `postgres://` URL or libpq's
/// `key=value` form); the reason it is not, naming no value of it (a key at most).
pub fn check(text: &str) -> Result<(), String> {
    let split = super::params::split(text);
    match split.rest.parse::<postgres::Config>() {
        Ok(_) => super::tls::mode_of(&split)
            .map(|_| ())
            .map_err(|why| why.to_string()),
        Err(error) => {
            // The client says what it could not read in its error's source ("invalid value
            // for option `port`"): keys and positions, never values; shown through the
            // redaction all the same.
            let reason = match std::error::Error::source(&error) {
                Some(source) => source.to_string(),
                None => error.to_string(),
            };
            Err(redact(&reason))
        }
    }
}

/// The password of connection string `text` in each form a text may hold it: as written (a
/// URL's percent-encoded user info, a quoted value) and as the server gets it. Empty when it
/// names none.
pub fn secrets(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    if let Ok(config) = super::params::split(text).rest.parse::<postgres::Config>()
        && let Some(password) = config.get_password()
    {
        found.push(String::from_utf8_lossy(password).into_owned());
    }
    let shown = redact(text);
    // What the redaction hid is the password as written: the text between the parts it kept.
    found.extend(hidden_parts(text, &shown));
    found.retain(|secret| !secret.is_empty());
    found.sort();
    found.dedup();
    found
}

/// The stretches of `text` that `shown` (its redaction) replaced with [`HIDDEN`].
fn hidden_parts(text: &str, shown: &str) -> Vec<String> {
    let pieces: Vec<&str> = shown.split(HIDDEN).collect();
    let mut parts = Vec::new();
    let mut at = 0;
    for (i, piece) in pieces.iter().enumerate() {
        if i == 0 {
            if !text.starts_with(piece) {
                return Vec::new();
            }
            at = piece.len();
            continue;
        }
        // The hidden part ends where the next kept piece begins (the last piece is the end).
        let end = if i == pieces.len() - 1 {
            text.len().checked_sub(piece.len())
        } else if piece.is_empty() {
            Some(at)
        } else {
            text[at..].find(piece).map(|found| at + found)
        };
        let Some(end) = end.filter(|end| *end >= at) else {
            return Vec::new();
        };
        parts.push(text[at..end].to_owned());
        at = end + piece.len();
    }
    parts
}

/// The URL form: `postgres://user:password@host:port/db?password=...`. The user info ends at
/// the last `@` of the whole URL: the client takes the first (a password may hold `?` or `/`
/// unescaped), libpq the last before a `/`; hiding up to the last hides the password as either
/// reads it, and hides nothing else but a host or database name that holds an `@` itself.
fn redact_url(url: &str, scheme_end: usize) -> String {
    let rest = &url[scheme_end..];
    let mut shown = url[..scheme_end].to_owned();
    let after_user_info = match rest.rfind('@') {
        Some(at) => {
            let user_info = &rest[..at];
            match user_info.find(':') {
                Some(colon) => {
                    shown.push_str(&user_info[..colon]);
                    shown.push(':');
                    shown.push_str(HIDDEN);
                }
                None => shown.push_str(user_info),
            }
            shown.push('@');
            &rest[at + 1..]
        }
        None => rest,
    };
    let (before_query, query) = match after_user_info.find('?') {
        Some(at) => (&after_user_info[..at], Some(&after_user_info[at + 1..])),
        None => (after_user_info, None),
    };
    shown.push_str(before_query);
    if let Some(query) = query {
        shown.push('?');
        let params: Vec<String> = query
            .split('&')
            .map(|param| match param.split_once('=') {
                Some((key, _)) if key.eq_ignore_ascii_case("password") => {
                    format!("{key}={HIDDEN}")
                }
                _ => param.to_owned(),
            })
            .collect();
        shown.push_str(&params.join("&"));
    }
    shown
}

/// The key-value form: `host=... user=... password=secret` (a value may be quoted).
fn redact_key_values(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = find_password_key(rest) {
        let value_start = at + rest[at..].find('=').map_or(0, |eq| eq + 1);
        shown.push_str(&rest[..value_start]);
        let value = rest[value_start..].trim_start();
        let skipped = rest[value_start..].len() - value.len();
        shown.push_str(&rest[value_start..value_start + skipped]);
        let value_len = if let Some(quoted) = value.strip_prefix('\'') {
            // A quoted value ends at the next quote that is not escaped.
            let mut end = quoted.len();
            let mut escaped = false;
            for (i, c) in quoted.char_indices() {
                match c {
                    '\\' if !escaped => escaped = true,
                    '\'' if !escaped => {
                        end = i + 1;
                        break;
                    }
                    _ => escaped = false,
                }
            }
            1 + end
        } else {
            value.find(char::is_whitespace).unwrap_or(value.len())
        };
        shown.push_str(HIDDEN);
        rest = &rest[value_start + skipped + value_len..];
    }
    shown.push_str(rest);
    shown
}

/// Where the next `password` key (followed by `=`) starts, at a word boundary.
fn find_password_key(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find("password") {
        let at = from + found;
        let boundary = at == 0 || lower.as_bytes()[at - 1].is_ascii_whitespace();
        let after = lower[at + "password".len()..].trim_start();
        if boundary && after.starts_with('=') {
            return Some(at);
        }
        from = at + "password".len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{check, redact, secrets};

    #[test]
    fn the_password_is_hidden_in_every_form_and_the_rest_is_kept() {
        let cases = [
            (
                "postgres://ganger:s3cret@127.0.0.1:5432/postgres",
                "postgres://ganger:***@127.0.0.1:5432/postgres",
            ),
            (
                "postgresql://ganger:p@ss/w:rd@db.example:5432/state?sslmode=disable",
                "postgresql://ganger:***@db.example:5432/state?sslmode=disable",
            ),
            (
                "postgres://ganger@localhost/state?password=s3cret&connect_timeout=5",
                "postgres://ganger@localhost/state?password=***&connect_timeout=5",
            ),
            (
                "postgres://localhost:5432/state",
                "postgres://localhost:5432/state",
            ),
            (
                "host=localhost user=ganger password=s3cret dbname=state",
                "host=localhost user=ganger password=*** dbname=state",
            ),
            (
                "host=localhost password = 's3 \\' cret' dbname=state",
                "host=localhost password = *** dbname=state",
            ),
            ("host=localhost user=ganger", "host=localhost user=ganger"),
            // A password may hold `?`, `/` and `@` unescaped: the client reads it whole.
            (
                "postgres://ganger:pa?ss/w@rd@db.example:5432/state?sslmode=disable",
                "postgres://ganger:***@db.example:5432/state?sslmode=disable",
            ),
            (
                "postgres://ganger:x?password=no@h/db",
                "postgres://ganger:***@h/db",
            ),
        ];
        let shown: Vec<String> = cases.iter().map(|(url, _)| redact(url)).collect();
        let wanted: Vec<&str> = cases.iter().map(|(_, shown)| *shown).collect();
        assert_eq!(shown, wanted);
    }

    #[test]
    fn a_password_with_a_question_mark_is_the_password_the_client_reads() {
        let url = "postgres://ganger:hunter?2secret@127.0.0.1:1/db";
        let shown = redact(url);
        assert!(
            !shown.contains("hunter") && !shown.contains("2secret"),
            "{shown}"
        );
        assert_eq!(shown, "postgres://ganger:***@127.0.0.1:1/db");
        let config: postgres::Config = url.parse().unwrap();
        assert_eq!(config.get_password(), Some(&b"hunter?2secret"[..]));
        assert_eq!(secrets(url), ["hunter?2secret"]);
    }

    #[test]
    fn the_secrets_are_the_password_as_written_and_as_decoded() {
        assert_eq!(
            secrets("postgres://u:p%40ss%3Fword@h/db"),
            ["p%40ss%3Fword", "p@ss?word"]
        );
        assert_eq!(
            secrets("host=h user=u password='s3 \\' cret' dbname=d"),
            ["'s3 \\' cret'", "s3 ' cret"]
        );
        assert_eq!(
            secrets("postgres://u@h/db?password=qu3ry-secret"),
            ["qu3ry-secret"]
        );
        assert!(secrets("postgres://u@h/db").is_empty());
    }

    #[test]
    fn a_text_that_is_no_connection_string_is_refused_without_its_values() {
        assert!(check("postgres://u:p@h:5432/db").is_ok());
        assert!(check("host=h user=u password=hunter2secret dbname=d").is_ok());
        for bad in [
            "host=h password='hunter2secret",
            "host=h port=hunter2secret",
            "postgres://u:hunter2secret@h:notaport/db",
        ] {
            let why = check(bad).unwrap_err();
            assert!(!why.contains("hunter2secret"), "{bad}: {why}");
            assert!(!why.is_empty());
        }
    }
}
