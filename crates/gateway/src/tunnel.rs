//! `CONNECT host:port`: the rest of a round's network. The round is named by its placeholder
//! in `Proxy-Authorization` (the proxy URL ganger gives the agent carries it); the target must
//! be on the round's allow-list or be the gateway itself (an agent that sends its model calls
//! through the proxy too). The target is reached before the agent hears `200`, and the bytes
//! both ways are recorded when the tunnel closes.

use crate::body::{Body, full};
use crate::record::RequestRecord;
use crate::server::State;
use crate::upstream::split_host_port;
use base64::Engine;
use http::{HeaderValue, Request, Response, StatusCode, header};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::sync::Arc;
use std::time::Instant;
use tokio::net::TcpStream;

pub(crate) async fn connect(state: Arc<State>, mut request: Request<Incoming>) -> Response<Body> {
    let started = Instant::now();
    let target = request.uri().authority().map(|a| a.as_str().to_owned());
    let mut record = RequestRecord::arrived(
        "connect",
        "CONNECT".to_owned(),
        target.clone().unwrap_or_default(),
        String::new(),
    );
    let Some((host, port)) = target.as_deref().and_then(|t| split_host_port(t, 0)) else {
        return state.refuse(
            record,
            started,
            StatusCode::BAD_REQUEST,
            "CONNECT needs HOST:PORT",
        );
    };
    let entry = match placeholder(&request) {
        Some(placeholder) => state.grants.find(&placeholder),
        None => state.grants.fallback(),
    };
    let Some(entry) = entry else {
        let mut response = state.refuse(
            record,
            started,
            StatusCode::PROXY_AUTHENTICATION_REQUIRED,
            "the proxy needs the round's placeholder as its password",
        );
        response.headers_mut().insert(
            header::PROXY_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"ganger\""),
        );
        return response;
    };
    record.round = Some(entry.grant.round.clone());
    record.provider = Some(entry.grant.provider.clone());
    let allowed = state.is_self(&host, port)
        || entry
            .grant
            .allow
            .iter()
            .any(|entry| entry.admits(&host, port));
    if !allowed {
        let why = format!("{host}:{port} is not on the round's allow-list");
        return state.refuse(record, started, StatusCode::FORBIDDEN, &why);
    }
    let reached = tokio::time::timeout(
        state.limits.connect_timeout,
        TcpStream::connect((host.as_str(), port)),
    )
    .await;
    let mut remote = match reached {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => {
            let why = format!("{host}:{port} cannot be reached: {e}");
            return state.refuse(record, started, StatusCode::BAD_GATEWAY, &why);
        }
        Err(_) => {
            let why = format!("{host}:{port} did not answer in time");
            return state.refuse(record, started, StatusCode::GATEWAY_TIMEOUT, &why);
        }
    };
    record.status = 200;
    record.headers_ms = started.elapsed().as_secs_f64() * 1000.0;
    let upgrade = hyper::upgrade::on(&mut request);
    let sink = state.sink.clone();
    tokio::spawn(async move {
        let mut cut = true;
        if let Ok(upgraded) = upgrade.await {
            let mut agent = TokioIo::new(upgraded);
            if let Ok((up, down)) = tokio::io::copy_bidirectional(&mut agent, &mut remote).await {
                record.bytes_up = up;
                record.bytes_down = down;
                cut = false;
            }
        }
        record.cut = cut;
        record.total_ms = started.elapsed().as_secs_f64() * 1000.0;
        sink(record);
    });
    Response::new(full(""))
}

/// The placeholder in `Proxy-Authorization: Basic base64(user:placeholder)`.
pub(crate) fn placeholder(request: &Request<Incoming>) -> Option<String> {
    let value = request
        .headers()
        .get(header::PROXY_AUTHORIZATION)?
        .to_str()
        .ok()?;
    let encoded = value
        .strip_prefix("Basic ")
        .or_else(|| value.strip_prefix("basic "))?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (_, password) = text.split_once(':')?;
    Some(password.to_owned())
}
