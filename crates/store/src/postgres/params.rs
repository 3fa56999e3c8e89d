//! The keys of a connection string that ganger reads itself rather than the client:
//! `sslmode` (libpq has five modes, the client three), `sslrootcert` and `passfile` (the client
//! knows neither). [`split`] takes them out of a URL's query or of the key-value form and leaves
//! the rest as written, for the client to parse as before.

/// The keys [`split`] takes out.
const OWN: [&str; 3] = ["sslmode", "sslrootcert", "passfile"];

/// A connection string without ganger's own keys, and those keys' values (decoded).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Split {
    /// The connection string for the client.
    pub(crate) rest: String,
    /// `sslmode`, `sslrootcert`, `passfile` as given, the last of each winning.
    pub(crate) own: Vec<(String, String)>,
}

impl Split {
    /// The value of `key`, the last given.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.own
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// `text` without ganger's own keys. A text the client could not read either is left whole
/// (the client's error says why).
pub(crate) fn split(text: &str) -> Split {
    let scheme = ["postgres://", "postgresql://"]
        .iter()
        .find(|scheme| text.starts_with(*scheme));
    let split = match scheme {
        Some(scheme) => split_url(text, scheme.len()),
        None => split_key_values(text),
    };
    let mut split = split.unwrap_or_else(|| Split {
        rest: text.to_owned(),
        own: Vec::new(),
    });
    split
        .own
        .splice(0..0, from_environment(|name| std::env::var(name).ok()));
    split
}

/// libpq's variables for TLS, `PGSSLMODE` and `PGSSLROOTCERT`: they count where the connection
/// string names no value of its own (its values come after them, and the last one wins).
fn from_environment(var: impl Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    [("sslmode", "PGSSLMODE"), ("sslrootcert", "PGSSLROOTCERT")]
        .into_iter()
        .filter_map(|(key, name)| {
            let value = var(name).filter(|value| !value.is_empty())?;
            Some((key.to_owned(), value))
        })
        .collect()
}

/// The URL form: the query starts at the first `?` after the user info (which ends at the first
/// `@`, as the client reads it); its parameters are `&`-separated, percent-encoded.
fn split_url(text: &str, scheme_end: usize) -> Option<Split> {
    let after_scheme = &text[scheme_end..];
    let user_end = after_scheme.find('@').map_or(0, |at| at + 1);
    let Some(query_at) = after_scheme[user_end..].find('?') else {
        return Some(Split {
            rest: text.to_owned(),
            own: Vec::new(),
        });
    };
    let query_start = scheme_end + user_end + query_at + 1;
    let mut kept = Vec::new();
    let mut own = Vec::new();
    for param in text[query_start..].split('&') {
        let (key, value) = param.split_once('=')?;
        let key = percent_decode(key)?;
        if OWN.contains(&key.as_str()) {
            own.push((key, percent_decode(value)?));
        } else {
            kept.push(param);
        }
    }
    let mut rest = text[..query_start].to_owned();
    if kept.is_empty() {
        rest.pop();
    } else {
        rest.push_str(&kept.join("&"));
    }
    Some(Split { rest, own })
}

/// `%XX` sequences decoded; `None` when the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// The key-value form: `key = value` pairs apart by white space, a value quoted (`'...'`) or
/// not, `\` escaping the next character in either, as the client reads them.
fn split_key_values(text: &str) -> Option<Split> {
    let mut kept = Vec::new();
    let mut own = Vec::new();
    for (key, value, written) in pairs(text)? {
        if OWN.contains(&key) {
            own.push((key.to_owned(), value));
        } else {
            kept.push(written);
        }
    }
    Some(Split {
        rest: kept.join(" "),
        own,
    })
}

/// The key-value form's pairs: each key, its value (unescaped) and the pair as written.
fn pairs(text: &str) -> Option<Vec<(&str, String, &str)>> {
    let mut pairs = Vec::new();
    let mut at = 0;
    let bytes = text.as_bytes();
    let skip_ws = |at: &mut usize| {
        while *at < bytes.len() && bytes[*at].is_ascii_whitespace() {
            *at += 1;
        }
    };
    loop {
        skip_ws(&mut at);
        if at == bytes.len() {
            return Some(pairs);
        }
        let start = at;
        while at < bytes.len() && !bytes[at].is_ascii_whitespace() && bytes[at] != b'=' {
            at += 1;
        }
        let key = &text[start..at];
        skip_ws(&mut at);
        if bytes.get(at) != Some(&b'=') {
            return None;
        }
        at += 1;
        skip_ws(&mut at);
        let (value, end) = value_at(text, at)?;
        at = end;
        pairs.push((key, value, &text[start..end]));
    }
}

/// The value starting at byte `at` of `text`, unescaped, and where it ends.
fn value_at(text: &str, at: usize) -> Option<(String, usize)> {
    let quoted = text[at..].starts_with('\'');
    let mut value = String::new();
    let mut chars = text[at..].char_indices().skip(usize::from(quoted));
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' if quoted => return Some((value, at + i + 1)),
            c if c.is_whitespace() && !quoted => return Some((value, at + i)),
            '\\' => value.extend(chars.next().map(|(_, next)| next)),
            c => value.push(c),
        }
    }
    // Unterminated quotes, or an empty value: the client refuses those.
    (!quoted && !value.is_empty()).then_some((value, text.len()))
}

/// `text` without its password: a URL's user info keeps its user, a `password` parameter or
/// key goes. What the client cannot read is left whole (it is refused before it is handed).
pub(crate) fn without_password(text: &str) -> String {
    let scheme = ["postgres://", "postgresql://"]
        .iter()
        .find(|scheme| text.starts_with(*scheme));
    let Some(scheme) = scheme else {
        return split_key_values_dropping(text, "password").unwrap_or_else(|| text.to_owned());
    };
    let mut rest = text.to_owned();
    let after_scheme = &text[scheme.len()..];
    if let Some(at) = after_scheme.find('@')
        && let Some(colon) = after_scheme[..at].find(':')
    {
        rest = format!(
            "{}{}{}",
            scheme,
            &after_scheme[..colon],
            &after_scheme[at..]
        );
    }
    let Some((base, query)) = query_of(&rest) else {
        return rest;
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|param| {
            let key = param.split_once('=').map_or(*param, |(key, _)| key);
            percent_decode(key).as_deref() != Some("password")
        })
        .collect();
    if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    }
}

/// A URL's part before its query, and its query (after the user info's first `@`).
fn query_of(url: &str) -> Option<(&str, &str)> {
    let scheme_end = url.find("://")? + 3;
    let user_end = url[scheme_end..].find('@').map_or(0, |at| at + 1);
    let at = scheme_end + user_end + url[scheme_end + user_end..].find('?')?;
    Some((&url[..at], &url[at + 1..]))
}

/// The key-value form without the pairs of `key`.
fn split_key_values_dropping(text: &str, key: &str) -> Option<String> {
    let kept: Vec<&str> = pairs(text)?
        .into_iter()
        .filter(|(found, _, _)| *found != key)
        .map(|(_, _, written)| written)
        .collect();
    Some(kept.join(" "))
}

#[cfg(test)]
mod password_tests {
    use super::without_password;

    #[test]
    fn the_password_is_taken_out_of_every_form_and_the_rest_kept() {
        let cases = [
            (
                "postgres://ganger:s3cret@h:5432/db?sslmode=require",
                "postgres://ganger@h:5432/db?sslmode=require",
            ),
            (
                "postgres://ganger@h/db?password=s3cret&sslmode=require",
                "postgres://ganger@h/db?sslmode=require",
            ),
            (
                "postgres://ganger@h/db?password=s3cret",
                "postgres://ganger@h/db",
            ),
            ("host=h password='s 3' user=ganger", "host=h user=ganger"),
            ("postgres://h/db", "postgres://h/db"),
        ];
        for (text, wanted) in cases {
            assert_eq!(without_password(text), wanted, "{text}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::split;

    fn own(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn a_urls_own_keys_are_taken_out_and_the_rest_is_kept_as_written() {
        let cases = [
            (
                "postgres://u:p@h:5432/db?sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.crt",
                "postgres://u:p@h:5432/db",
                own(&[("sslmode", "verify-full"), ("sslrootcert", "/tmp/ca.crt")]),
            ),
            (
                "postgresql://u@h/db?connect_timeout=5&sslmode=require&application_name=x",
                "postgresql://u@h/db?connect_timeout=5&application_name=x",
                own(&[("sslmode", "require")]),
            ),
            (
                "postgres://u:pa?ss@h/db?passfile=/home/u/.pgpass",
                "postgres://u:pa?ss@h/db",
                own(&[("passfile", "/home/u/.pgpass")]),
            ),
            ("postgres://h/db", "postgres://h/db", own(&[])),
        ];
        for (text, rest, wanted) in cases {
            let split = split(text);
            assert_eq!((split.rest.as_str(), split.own), (rest, wanted), "{text}");
        }
    }

    #[test]
    fn the_key_value_forms_own_keys_are_taken_out_quoted_or_not() {
        let split =
            split("host=h sslmode = verify-ca user=u sslrootcert='/a b/c\\'s.crt' password='x y'");
        assert_eq!(split.rest, "host=h user=u password='x y'");
        assert_eq!(
            split.own,
            own(&[("sslmode", "verify-ca"), ("sslrootcert", "/a b/c's.crt")])
        );
        assert_eq!(split.get("sslmode"), Some("verify-ca"));
        // What the client cannot read is left to it, whole.
        assert_eq!(split_rest("host=h sslmode='open"), "host=h sslmode='open");
    }

    fn split_rest(text: &str) -> String {
        split(text).rest
    }
}

#[cfg(test)]
mod environment_tests {
    use super::from_environment;

    #[test]
    fn libpqs_tls_variables_come_before_the_connection_strings_own_values() {
        let env = |name: &str| match name {
            "PGSSLMODE" => Some("verify-full".to_owned()),
            "PGSSLROOTCERT" => Some(String::new()),
            _ => None,
        };
        assert_eq!(
            from_environment(env),
            vec![("sslmode".to_owned(), "verify-full".to_owned())]
        );
        assert!(from_environment(|_| None).is_empty());
        // A connection string's own value is later in the list: the last one wins.
        let mut split = super::split("postgres://h/db?sslmode=disable");
        split.own.splice(0..0, from_environment(env));
        assert_eq!(split.get("sslmode"), Some("disable"));
        let mut bare = super::split("postgres://h/db");
        bare.own.splice(0..0, from_environment(env));
        assert_eq!(bare.get("sslmode"), Some("verify-full"));
    }
}
