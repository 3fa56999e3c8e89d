//! A model request: its placeholder found and checked against the round's grant and budget,
//! the real key read from its file and put in its place, and the request sent upstream; the
//! response comes back as it streams.

use crate::body::{Body, refusal};
use crate::credentials;
use crate::grants::Entry;
use crate::metered::{Metered, Pending};
use crate::pool::Outgoing;
use crate::record::RequestRecord;
use crate::server::State;
use crate::usage::UsageScanner;
use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use std::sync::Arc;
use std::time::Instant;

/// Headers that belong to one hop, never forwarded. `accept-encoding` is dropped too, so that
/// the response's usage can be read on the way.
pub(crate) const HOP_HEADERS: [&str; 10] = [
    "connection",
    "keep-alive",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
    "accept-encoding",
];

pub(crate) async fn forward(state: Arc<State>, request: Request<Incoming>) -> Response<Body> {
    let started = Instant::now();
    let (parts, body) = request.into_parts();
    let mut record = RequestRecord::arrived(
        "model",
        parts.method.to_string(),
        String::new(),
        parts.uri.path().to_owned(),
    );
    record.model = model_in_path(parts.uri.path());
    let entry = match credentials::find(&parts.headers, &parts.uri) {
        Ok(Some(placeholder)) => state
            .grants
            .find(&placeholder)
            .map(|e| (Some(placeholder), e)),
        // No placeholder: the round's own credentials, in a gateway that serves one round.
        Ok(None) => state.grants.fallback().map(|e| (None, e)),
        Err(why) => return state.refuse(record, started, StatusCode::UNAUTHORIZED, why),
    };
    let Some((placeholder, entry)) = entry else {
        let why = "the request carries no key this gateway issued (or its round has ended)";
        return state.refuse(record, started, StatusCode::UNAUTHORIZED, why);
    };
    record.round = Some(entry.grant.round.clone());
    record.provider = Some(entry.grant.provider.clone());
    let Some(upstream) = entry.grant.upstream.clone() else {
        let why = "the round's agent has no model endpoint this gateway knows";
        return state.refuse(record, started, StatusCode::BAD_GATEWAY, why);
    };
    record.host = upstream.origin();
    if let Some(budget) = entry.grant.budget_tokens {
        let spent = entry.spend.tokens().total();
        if spent >= budget {
            let why = format!("the round's budget of {budget} tokens is spent ({spent} counted)");
            return state.refuse(record, started, StatusCode::FORBIDDEN, &why);
        }
    }
    let bytes = match Limited::new(body, state.limits.max_request_bytes)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(_) => {
            let why = format!("a request over {} bytes", state.limits.max_request_bytes);
            return state.refuse(record, started, StatusCode::PAYLOAD_TOO_LARGE, &why);
        }
    };
    record.bytes_up = bytes.len() as u64;
    record.model = record.model.or_else(|| model_in_body(&bytes));
    let outgoing = match outgoing(parts, bytes, &entry, &upstream, placeholder.as_deref()) {
        Ok(outgoing) => outgoing,
        Err(why) => return state.refuse(record, started, StatusCode::BAD_GATEWAY, &why),
    };
    entry.spend.count_request();
    let response = match state.pool.send(&upstream, &outgoing).await {
        Ok(response) => response,
        Err(why) => {
            let why = format!("the upstream cannot be reached: {why}");
            return state.refuse(record, started, StatusCode::BAD_GATEWAY, &why);
        }
    };
    respond(&state, record, started, &entry, response)
}

/// The request as it goes upstream: the key in the placeholder's place (a request under a
/// keyless grant keeps the credentials it came with), this hop's headers gone, `Host` the
/// upstream's.
fn outgoing(
    parts: http::request::Parts,
    body: Bytes,
    entry: &Entry,
    upstream: &crate::upstream::Upstream,
    placeholder: Option<&str>,
) -> Result<Outgoing, String> {
    let grant = &entry.grant;
    let mut headers = parts.headers;
    for name in HOP_HEADERS {
        headers.remove(name);
    }
    let uri = match (&grant.key_file, placeholder) {
        (Some(key_file), Some(placeholder)) => {
            let key = std::fs::read_to_string(key_file).map_err(|e| {
                format!(
                    "the key file for {} ({}) cannot be read: {e}",
                    grant.provider,
                    key_file.display()
                )
            })?;
            credentials::swap(&mut headers, &parts.uri, placeholder, key.trim())?
        }
        _ => parts.uri,
    };
    let host = HeaderValue::from_str(&upstream.host_header()).map_err(|e| e.to_string())?;
    headers.insert(header::HOST, host);
    Ok(Outgoing {
        method: parts.method,
        uri,
        headers,
        body,
    })
}

fn respond(
    state: &State,
    mut record: RequestRecord,
    started: Instant,
    entry: &Entry,
    response: Response<Incoming>,
) -> Response<Body> {
    let (mut parts, body) = response.into_parts();
    record.status = parts.status.as_u16();
    record.headers_ms = started.elapsed().as_secs_f64() * 1000.0;
    if matches!(parts.status.as_u16(), 429 | 503) {
        record.retry_after_ms = retry_after_ms(&parts.headers);
    }
    for name in ["connection", "keep-alive", "transfer-encoding", "upgrade"] {
        parts.headers.remove(name);
    }
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let pending = Pending {
        scanner: UsageScanner::new(content_type),
        record,
        started,
        spend: entry.spend.clone(),
        sink: state.sink.clone(),
    };
    let body = Metered::new(body, pending);
    Response::from_parts(parts, http_body_util::BodyExt::boxed_unsync(body))
}

impl State {
    /// The gateway's own answer, recorded: nothing was sent upstream.
    pub(crate) fn refuse(
        &self,
        mut record: RequestRecord,
        started: Instant,
        status: StatusCode,
        why: &str,
    ) -> Response<Body> {
        record.status = status.as_u16();
        record.refused = Some(why.to_owned());
        record.headers_ms = started.elapsed().as_secs_f64() * 1000.0;
        record.total_ms = record.headers_ms;
        (self.sink)(record);
        refusal(status, why)
    }
}

/// How long the upstream asks to wait: `retry-after-ms` (OpenAI's), else `retry-after` in
/// seconds (a date is not read).
fn retry_after_ms(headers: &http::HeaderMap) -> Option<u64> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        return Some(ms.max(0.0) as u64);
    }
    let seconds = text("retry-after")?.trim().parse::<f64>().ok()?;
    Some((seconds.max(0.0) * 1000.0) as u64)
}

/// Gemini names the model in the path: `/v1beta/models/NAME:streamGenerateContent`.
fn model_in_path(path: &str) -> Option<String> {
    let (_, rest) = path.split_once("/models/")?;
    let name = rest.split([':', '/']).next()?;
    (!name.is_empty()).then(|| name.to_owned())
}

fn model_in_body(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Named {
        model: String,
    }
    serde_json::from_slice::<Named>(body).ok().map(|n| n.model)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_model_is_read_from_the_path_or_the_body() {
        assert_eq!(
            super::model_in_path("/v1beta/models/gemini-x:streamGenerateContent").as_deref(),
            Some("gemini-x")
        );
        assert_eq!(super::model_in_path("/v1/messages"), None);
        assert_eq!(
            super::model_in_body(br#"{"stream":true,"model":"m-1","messages":[]}"#).as_deref(),
            Some("m-1")
        );
        assert_eq!(super::model_in_body(b"[]"), None);
    }
}
