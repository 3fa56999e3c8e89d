//! The gateway's listeners and their bounds: loopback TCP and/or a unix socket (the one bound
//! into a sandbox), at most [`Limits::max_connections`] connections at once (more wait in the
//! kernel's backlog), a time limit for a request's headers, a size limit for its body. It runs
//! on its own small runtime, so an embedder that is not async can start it.

use crate::body::Body;
use crate::error::GatewayError;
use crate::grants::Grants;
use crate::pool::Pool;
use crate::record::RecordSink;
use crate::tls::{TlsRoots, client_config};
use crate::upstream::{Upstream, is_loopback_host};
use crate::{forward, proxy, tunnel};
use http::{Method, Request, Response};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Semaphore;

/// The bounds of what the gateway accepts.
#[derive(Debug, Clone)]
pub struct Limits {
    pub max_connections: usize,
    /// Time for a client to send a request's headers.
    pub header_timeout: Duration,
    /// The largest request body forwarded (model requests carry whole conversations).
    pub max_request_bytes: usize,
    /// Time to reach an upstream or a tunnel's target.
    pub connect_timeout: Duration,
    /// Time for an upstream to answer a request's headers (its body then streams for as long
    /// as it takes): as long as the agents' own wait for a model (Claude Code's default API
    /// timeout is 10 minutes), so that an upstream gone silent does not hold a connection, a
    /// task and the round for ever.
    pub response_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 1024,
            header_timeout: Duration::from_secs(10),
            max_request_bytes: 32 << 20,
            connect_timeout: Duration::from_secs(10),
            response_timeout: Duration::from_secs(600),
        }
    }
}

/// How to start a gateway.
#[derive(Clone)]
pub struct GatewayConfig {
    /// A loopback address (port 0: any free one).
    pub tcp: Option<SocketAddr>,
    pub unix: Option<PathBuf>,
    pub roots: TlsRoots,
    pub limits: Limits,
    pub sink: RecordSink,
}

pub(crate) struct State {
    pub grants: Grants,
    pub pool: Pool,
    pub limits: Limits,
    pub sink: RecordSink,
    pub own: Option<SocketAddr>,
}

impl State {
    /// Whether `host:port` is this gateway (an agent sending its model calls through the
    /// proxy reaches the gateway that way).
    pub fn is_self(&self, host: &str, port: u16) -> bool {
        self.own
            .is_some_and(|own| own.port() == port && is_loopback_host(host))
    }
}

/// A running gateway; dropping it stops it.
pub struct Gateway {
    grants: Grants,
    tcp: Option<SocketAddr>,
    unix: Option<PathBuf>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("tcp", &self.tcp)
            .field("unix", &self.unix)
            .finish()
    }
}

impl Gateway {
    /// Binds the listeners and starts serving `grants`.
    pub fn start(config: GatewayConfig, grants: Grants) -> Result<Gateway, GatewayError> {
        if let Some(addr) = config.tcp
            && !addr.ip().is_loopback()
        {
            return Err(GatewayError::Invalid(format!(
                "the gateway listens on loopback only, not {addr}"
            )));
        }
        let tls = client_config(&config.roots)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("ganger-gateway")
            .enable_all()
            .build()
            .map_err(GatewayError::Runtime)?;
        let tcp = config
            .tcp
            .map(|addr| {
                let listener = runtime
                    .block_on(tokio::net::TcpListener::bind(addr))
                    .map_err(|source| listen_error(addr.to_string(), source))?;
                let local = listener
                    .local_addr()
                    .map_err(|source| listen_error(addr.to_string(), source))?;
                Ok::<_, GatewayError>((listener, local))
            })
            .transpose()?;
        let unix = config
            .unix
            .as_ref()
            .map(|path| bind_unix(&runtime, path))
            .transpose()?;
        let state = Arc::new(State {
            grants: grants.clone(),
            pool: Pool::new(
                tls,
                config.limits.connect_timeout,
                config.limits.response_timeout,
            ),
            limits: config.limits.clone(),
            sink: config.sink.clone(),
            own: tcp.as_ref().map(|(_, addr)| *addr),
        });
        let permits = Arc::new(Semaphore::new(config.limits.max_connections));
        let tcp_addr = tcp.as_ref().map(|(_, addr)| *addr);
        if let Some((listener, _)) = tcp {
            runtime.spawn(accept_loop(listener, state.clone(), permits.clone()));
        }
        if let Some(listener) = unix {
            runtime.spawn(accept_loop(listener, state, permits));
        }
        Ok(Gateway {
            grants,
            tcp: tcp_addr,
            unix: config.unix,
            runtime: Some(runtime),
        })
    }

    /// The loopback address it listens on.
    pub fn addr(&self) -> Option<SocketAddr> {
        self.tcp
    }

    pub fn unix_path(&self) -> Option<&std::path::Path> {
        self.unix.as_deref()
    }

    pub fn grants(&self) -> &Grants {
        &self.grants
    }

    /// The base URL an agent is given for `upstream`: this gateway, with the upstream's path.
    pub fn base_url_for(&self, upstream: &Upstream) -> Option<String> {
        self.tcp
            .map(|addr| format!("http://{addr}{}", upstream.path))
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
        if let Some(path) = &self.unix {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn listen_error(at: String, source: std::io::Error) -> GatewayError {
    GatewayError::Listen { at, source }
}

fn bind_unix(
    runtime: &tokio::runtime::Runtime,
    path: &std::path::Path,
) -> Result<tokio::net::UnixListener, GatewayError> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let at = format!("unix:{}", path.display());
    // A socket left by a gateway that died is replaced; any other file is not touched.
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && meta.file_type().is_socket()
    {
        let _ = std::fs::remove_file(path);
    }
    let _guard = runtime.enter();
    let listener =
        tokio::net::UnixListener::bind(path).map_err(|source| listen_error(at.clone(), source))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|source| listen_error(at, source))?;
    Ok(listener)
}

/// A listener the gateway accepts connections on.
trait Listener: Send + 'static {
    type Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    fn next(&self) -> impl std::future::Future<Output = std::io::Result<Self::Stream>> + Send;
}

impl Listener for tokio::net::TcpListener {
    type Stream = tokio::net::TcpStream;
    async fn next(&self) -> std::io::Result<Self::Stream> {
        let (stream, _) = self.accept().await?;
        let _ = stream.set_nodelay(true);
        Ok(stream)
    }
}

impl Listener for tokio::net::UnixListener {
    type Stream = tokio::net::UnixStream;
    async fn next(&self) -> std::io::Result<Self::Stream> {
        Ok(self.accept().await?.0)
    }
}

/// Accepts connections while a permit is free: more wait in the kernel's backlog.
async fn accept_loop<L: Listener>(listener: L, state: Arc<State>, permits: Arc<Semaphore>) {
    loop {
        let Ok(permit) = permits.clone().acquire_owned().await else {
            return;
        };
        let Ok(stream) = listener.next().await else {
            // Out of descriptors, or a connection gone before it was taken: a moment, again.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        tokio::spawn(serve(state.clone(), stream, permit));
    }
}

async fn serve<S>(state: Arc<State>, stream: S, _permit: tokio::sync::OwnedSemaphorePermit)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let header_timeout = state.limits.header_timeout;
    let service = service_fn(move |request: Request<Incoming>| {
        let state = state.clone();
        async move { Ok::<Response<Body>, std::convert::Infallible>(route(state, request).await) }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades()
        .await;
}

async fn route(state: Arc<State>, mut request: Request<Incoming>) -> Response<Body> {
    if request.method() == Method::CONNECT {
        return tunnel::connect(state, request).await;
    }
    // A request in absolute form (`GET http://host/…`) was sent to the gateway as a proxy:
    // one for the gateway itself is a model request like any other.
    let target = request.uri().authority().map(|a| {
        let port = a.port_u16().unwrap_or(80);
        (a.host().trim_matches(['[', ']']).to_owned(), port)
    });
    match target {
        Some((host, port)) if state.is_self(&host, port) => {
            let origin_form = request
                .uri()
                .path_and_query()
                .map_or("/", |p| p.as_str())
                .parse()
                .unwrap_or_default();
            *request.uri_mut() = origin_form;
            forward::forward(state, request).await
        }
        Some(_) => proxy::forward_plain(state, request).await,
        None => forward::forward(state, request).await,
    }
}
