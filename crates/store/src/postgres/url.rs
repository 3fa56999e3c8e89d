//! A database URL as it may be shown: [`redact`] hides the password wherever a connection
//! string can carry one (the URL's user info, a `password` query parameter, a `password=`
//! key of the key-value form), so that errors and logs can name the database they mean
//! without giving its password away.

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

/// The URL form: `postgres://user:password@host:port/db?password=...`.
fn redact_url(url: &str, scheme_end: usize) -> String {
    let (before_query, query) = match url.find('?') {
        Some(at) => (&url[..at], Some(&url[at + 1..])),
        None => (url, None),
    };
    let rest = &before_query[scheme_end..];
    // The user info ends at the last `@` (a password may hold an unescaped `@` or `/`).
    let mut shown = url[..scheme_end].to_owned();
    match rest.rfind('@') {
        Some(at) => {
            let (user_info, host) = (&rest[..at], &rest[at..]);
            match user_info.find(':') {
                Some(colon) => {
                    shown.push_str(&user_info[..colon]);
                    shown.push(':');
                    shown.push_str(HIDDEN);
                }
                None => shown.push_str(user_info),
            }
            shown.push_str(host);
        }
        None => shown.push_str(rest),
    }
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
    use super::redact;

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
        ];
        let shown: Vec<String> = cases.iter().map(|(url, _)| redact(url)).collect();
        let wanted: Vec<&str> = cases.iter().map(|(_, shown)| *shown).collect();
        assert_eq!(shown, wanted);
    }
}
