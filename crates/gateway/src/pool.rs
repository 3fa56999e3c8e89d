//! Connections to upstreams, kept open between requests: a request takes an idle one that is
//! ready, or opens a new one (TCP, then TLS for `https`). A pooled connection the upstream
//! closed meanwhile is retried once on a fresh one, since nothing of the request reached it.

use crate::upstream::Upstream;
use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpStream;

type Sender = SendRequest<Full<Bytes>>;

/// A request ready to go upstream, which can be sent again on a fresh connection.
pub(crate) struct Outgoing {
    pub method: http::Method,
    pub uri: http::Uri,
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

impl Outgoing {
    fn build(&self) -> Request<Full<Bytes>> {
        let mut request = Request::new(Full::new(self.body.clone()));
        *request.method_mut() = self.method.clone();
        *request.uri_mut() = self.uri.clone();
        *request.headers_mut() = self.headers.clone();
        request
    }
}

/// The most connections kept per upstream.
const MAX_KEPT: usize = 256;

pub(crate) struct Pool {
    tls: Arc<rustls::ClientConfig>,
    connect_timeout: Duration,
    response_timeout: Duration,
    kept: Mutex<HashMap<String, Vec<Sender>>>,
}

impl Pool {
    pub fn new(
        tls: Arc<rustls::ClientConfig>,
        connect_timeout: Duration,
        response_timeout: Duration,
    ) -> Pool {
        Pool {
            tls,
            connect_timeout,
            response_timeout,
            kept: Mutex::new(HashMap::new()),
        }
    }

    /// Sends `request` (origin-form URI, headers already rewritten) to `upstream`.
    pub async fn send(
        &self,
        upstream: &Upstream,
        request: &Outgoing,
    ) -> Result<http::Response<Incoming>, String> {
        let origin = upstream.origin();
        if let Some(mut sender) = self.take(&origin) {
            match self
                .answered(&origin, sender.send_request(request.build()))
                .await?
            {
                Ok(response) => {
                    self.keep(&origin, sender);
                    return Ok(response);
                }
                // Closed by the upstream while idle: nothing was processed; once more, fresh.
                Err(e) if e.is_canceled() || e.is_incomplete_message() || e.is_closed() => {}
                Err(e) => return Err(format!("{origin}: {e}")),
            }
        }
        let mut sender = self.open(upstream).await?;
        let response = self
            .answered(&origin, sender.send_request(request.build()))
            .await?
            .map_err(|e| format!("{origin}: {e}"))?;
        self.keep(&origin, sender);
        Ok(response)
    }

    /// A request's response headers, or the refusal of an upstream that sent none within
    /// the response timeout (dropping the request closes its connection).
    async fn answered<T>(
        &self,
        origin: &str,
        sent: impl std::future::Future<Output = T>,
    ) -> Result<T, String> {
        tokio::time::timeout(self.response_timeout, sent)
            .await
            .map_err(|_| {
                format!(
                    "{origin}: no response within {} s",
                    self.response_timeout.as_secs_f64()
                )
            })
    }

    fn take(&self, origin: &str) -> Option<Sender> {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let senders = kept.get_mut(origin)?;
        senders.retain(|s| !s.is_closed());
        let ready = senders.iter().position(|s| s.is_ready())?;
        Some(senders.swap_remove(ready))
    }

    /// Keeps a connection whose response is under way: it is ready again once its body ends.
    fn keep(&self, origin: &str, sender: Sender) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let senders = kept.entry(origin.to_owned()).or_default();
        if senders.len() < MAX_KEPT {
            senders.push(sender);
        }
    }

    async fn open(&self, upstream: &Upstream) -> Result<Sender, String> {
        let origin = upstream.origin();
        let tcp = tokio::time::timeout(
            self.connect_timeout,
            TcpStream::connect((upstream.host.as_str(), upstream.port)),
        )
        .await
        .map_err(|_| format!("{origin}: no connection within {:?}", self.connect_timeout))?
        .map_err(|e| format!("{origin}: {e}"))?;
        let _ = tcp.set_nodelay(true);
        if !upstream.tls {
            return handshake(TokioIo::new(tcp), &origin).await;
        }
        let name = rustls::pki_types::ServerName::try_from(upstream.host.clone())
            .map_err(|e| format!("{origin}: {e}"))?;
        let stream = tokio_rustls::TlsConnector::from(self.tls.clone())
            .connect(name, tcp)
            .await
            .map_err(|e| format!("{origin}: TLS: {e}"))?;
        handshake(TokioIo::new(stream), &origin).await
    }
}

async fn handshake<T>(io: TokioIo<T>, origin: &str) -> Result<Sender, String>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = http1::handshake(io)
        .await
        .map_err(|e| format!("{origin}: {e}"))?;
    tokio::spawn(async move {
        // Ends when the upstream closes or the sender is dropped; its error is the request's.
        let _ = connection.await;
    });
    Ok(sender)
}
