//! `GET http://host:port/path` sent to the gateway as a proxy: a tool's plain-http request
//! (curl, a package manager) in a round whose only way out is the gateway. Like a tunnel, the
//! target must be on the round's allow-list; an allowed request is sent on as it came (no key
//! is swapped in), and its record is kind `proxy`. `https` goes through `CONNECT` instead.

use crate::body::Body;
use crate::forward::HOP_HEADERS;
use crate::grants::{Entry, Spend};
use crate::metered::{Metered, Pending};
use crate::pool::Outgoing;
use crate::record::RequestRecord;
use crate::server::State;
use crate::upstream::{Upstream, split_host_port};
use crate::usage::UsageScanner;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use std::sync::Arc;
use std::time::Instant;

/// The round a proxy request belongs to: the placeholder in `Proxy-Authorization`, else the
/// gateway's fallback grant.
pub(crate) fn entry_of(state: &State, request: &Request<Incoming>) -> Option<Arc<Entry>> {
    match crate::tunnel::placeholder(request) {
        Some(placeholder) => state.grants.find(&placeholder),
        None => state.grants.fallback(),
    }
}

pub(crate) async fn forward_plain(state: Arc<State>, request: Request<Incoming>) -> Response<Body> {
    let started = Instant::now();
    let target = request
        .uri()
        .authority()
        .map(|a| a.as_str().to_owned())
        .unwrap_or_default();
    let record = RequestRecord::arrived(
        "proxy",
        request.method().to_string(),
        target.clone(),
        request.uri().path().to_owned(),
    );
    if request.uri().scheme_str() != Some("http") {
        let why = "only http:// is proxied this way; https goes through CONNECT";
        return state.refuse(record, started, StatusCode::BAD_REQUEST, why);
    }
    let Some((host, port)) = split_host_port(&target, 80) else {
        return state.refuse(record, started, StatusCode::BAD_REQUEST, "no HOST[:PORT]");
    };
    let Some(entry) = entry_of(&state, &request) else {
        let why = "the proxy needs the round's placeholder as its password";
        return state.refuse(
            record,
            started,
            StatusCode::PROXY_AUTHENTICATION_REQUIRED,
            why,
        );
    };
    let mut record = record;
    record.round = Some(entry.grant.round.clone());
    record.provider = Some(entry.grant.provider.clone());
    if !entry.grant.allow.iter().any(|e| e.admits(&host, port)) {
        let why = format!("{host}:{port} is not on the round's allow-list");
        return state.refuse(record, started, StatusCode::FORBIDDEN, &why);
    }
    let (parts, body) = request.into_parts();
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
    let upstream = Upstream {
        tls: false,
        host: host.clone(),
        port,
        path: String::new(),
    };
    let mut headers = parts.headers;
    for name in HOP_HEADERS {
        headers.remove(name);
    }
    if let Ok(value) = HeaderValue::from_str(&upstream.host_header()) {
        headers.insert(header::HOST, value);
    }
    let uri = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .parse()
        .unwrap_or_default();
    let outgoing = Outgoing {
        method: parts.method,
        uri,
        headers,
        body: bytes,
    };
    let response = match state.pool.send(&upstream, &outgoing).await {
        Ok(response) => response,
        Err(why) => {
            let why = format!("{host}:{port} cannot be reached: {why}");
            return state.refuse(record, started, StatusCode::BAD_GATEWAY, &why);
        }
    };
    let (mut parts, body) = response.into_parts();
    record.status = parts.status.as_u16();
    record.headers_ms = started.elapsed().as_secs_f64() * 1000.0;
    for name in ["connection", "keep-alive", "transfer-encoding", "upgrade"] {
        parts.headers.remove(name);
    }
    let pending = Pending {
        // Not a model's answer: nothing in it counts toward the round's tokens.
        scanner: UsageScanner::new(None),
        record,
        started,
        spend: Arc::new(Spend::default()),
        sink: state.sink.clone(),
    };
    Response::from_parts(parts, Metered::new(body, pending).boxed_unsync())
}
