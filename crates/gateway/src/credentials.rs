//! Where an agent's request carries its key, and the swap of the placeholder for the real
//! one: `authorization: Bearer …` (OpenAI-style, OpenCode, Codex, Qwen Code), `x-api-key`
//! (Anthropic), `x-goog-api-key` or the `key` query parameter (Gemini), `api-key` (Azure).

use crate::grants::is_placeholder;
use http::{HeaderName, HeaderValue, Uri};

const KEY_HEADERS: [&str; 4] = ["authorization", "x-api-key", "x-goog-api-key", "api-key"];

/// The one placeholder a request carries; `Err` when it carries two different ones.
pub(crate) fn find(headers: &http::HeaderMap, uri: &Uri) -> Result<Option<String>, &'static str> {
    let mut found: Option<String> = None;
    let mut saw = |candidate: &str| -> Result<(), &'static str> {
        if !is_placeholder(candidate) {
            return Ok(());
        }
        match &found {
            Some(other) if other != candidate => Err("two different placeholder keys"),
            _ => {
                found = Some(candidate.to_owned());
                Ok(())
            }
        }
    };
    for name in KEY_HEADERS {
        for value in headers.get_all(name) {
            let Ok(text) = value.to_str() else { continue };
            let text = text.trim();
            let token = text
                .strip_prefix("Bearer ")
                .or_else(|| text.strip_prefix("bearer "))
                .unwrap_or(text);
            saw(token.trim())?;
        }
    }
    for (name, value) in query_pairs(uri) {
        if name == "key" {
            saw(value)?;
        }
    }
    Ok(found)
}

/// Puts `key` wherever `placeholder` was, in the headers and the query.
pub(crate) fn swap(
    headers: &mut http::HeaderMap,
    uri: &Uri,
    placeholder: &str,
    key: &str,
) -> Result<Uri, String> {
    for name in KEY_HEADERS {
        let name = HeaderName::from_static(name);
        let values: Vec<HeaderValue> = headers.get_all(&name).iter().cloned().collect();
        if !values.iter().any(|v| {
            v.as_bytes()
                .windows(placeholder.len())
                .any(|w| w == placeholder.as_bytes())
        }) {
            continue;
        }
        headers.remove(&name);
        for value in values {
            let text = value.to_str().unwrap_or_default().replace(placeholder, key);
            let mut value = HeaderValue::from_str(&text)
                .map_err(|_| "the key file's key cannot go in a header".to_owned())?;
            value.set_sensitive(true);
            headers.append(&name, value);
        }
    }
    let path = uri.path();
    let Some(query) = uri.query() else {
        return path.parse::<Uri>().map_err(|e| e.to_string());
    };
    let query: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some(("key", value)) if value == placeholder => format!("key={}", percent_encode(key)),
            _ => pair.to_owned(),
        })
        .collect();
    Uri::from_maybe_shared(format!("{path}?{}", query.join("&"))).map_err(|e| e.to_string())
}

fn query_pairs(uri: &Uri) -> impl Iterator<Item = (&str, &str)> {
    uri.query()
        .unwrap_or_default()
        .split('&')
        .filter_map(|pair| pair.split_once('='))
}

fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PH: &str = "ganger-placeholder-0123456789abcdef";

    #[test]
    fn the_placeholder_is_found_in_every_place_agents_put_keys_and_swapped_there() {
        for (name, value) in [
            ("authorization", format!("Bearer {PH}")),
            ("x-api-key", PH.to_owned()),
            ("x-goog-api-key", PH.to_owned()),
        ] {
            let mut headers = http::HeaderMap::new();
            headers.insert(HeaderName::from_static(name), value.parse().unwrap());
            let uri: Uri = "/v1/messages".parse().unwrap();
            assert_eq!(find(&headers, &uri).unwrap().as_deref(), Some(PH), "{name}");
            let uri = swap(&mut headers, &uri, PH, "sk-real/key").unwrap();
            let sent = headers.get(name).unwrap().to_str().unwrap();
            assert!(
                sent.ends_with("sk-real/key") && !sent.contains(PH),
                "{name}: {sent}"
            );
            assert_eq!(uri, "/v1/messages");
        }
        let uri: Uri = format!("/v1beta/models/m:streamGenerateContent?alt=sse&key={PH}")
            .parse()
            .unwrap();
        let mut headers = http::HeaderMap::new();
        assert_eq!(find(&headers, &uri).unwrap().as_deref(), Some(PH));
        let swapped = swap(&mut headers, &uri, PH, "AIza/real+").unwrap();
        assert_eq!(swapped.query(), Some("alt=sse&key=AIza%2Freal%2B"));
    }

    #[test]
    fn a_request_without_a_placeholder_or_with_two_is_told_apart() {
        let mut headers = http::HeaderMap::new();
        headers.insert("authorization", "Bearer sk-real".parse().unwrap());
        let uri: Uri = "/v1/chat/completions".parse().unwrap();
        assert_eq!(find(&headers, &uri).unwrap(), None);
        headers.insert("x-api-key", PH.parse().unwrap());
        headers.insert("authorization", format!("Bearer {PH}x").parse().unwrap());
        assert!(find(&headers, &uri).is_err());
    }
}
