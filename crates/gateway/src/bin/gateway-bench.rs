//! `gateway-bench`: what the model gateway adds, measured against talking to the upstream
//! directly, in one run (bench/gateway.py runs it and docs/benchmarks.md quotes it).
//!
//! - latency: sequential requests with a kept-alive connection, alternating direct and through
//!   the gateway in blocks, time to the end of the body; p50 and p95 of each and the difference;
//! - first byte: a stream whose upstream sends its first event at once and the rest 20 ms
//!   later; time to the first body byte, direct and through the gateway;
//! - load: N concurrent streaming rounds through one gateway (a child process of this one),
//!   its peak memory and CPU time.
//!
//! The upstream is a small server in this process that answers at once: what is measured is
//! the gateway, not a model.

#![allow(
    clippy::print_stdout,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark prints its table and stops loudly on what it did not expect"
)]

use bytes::Bytes;
use ganger_gateway::{Gateway, GatewayConfig, Grant, Grants, Limits, TlsRoots, Upstream};
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper_util::rt::TokioIo;
use std::io::{BufRead, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

const ANSWER: &str = r#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":3}}"#;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("serve") => serve(&args[2], &args[3]),
        _ => measure(
            args.get(1).and_then(|n| n.parse().ok()).unwrap_or(4000),
            args.get(2).and_then(|n| n.parse().ok()).unwrap_or(100),
        ),
    }
}

/// The upstream: `/stream` answers with server-sent events (the first at once, the rest after
/// `gap` ms, query `gap`), anything else with one JSON answer.
async fn upstream(listener: tokio::net::TcpListener) {
    loop {
        let (stream, _) = listener.accept().await.unwrap();
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(
                |request: http::Request<hyper::body::Incoming>| async move {
                    let gap: u64 = request
                        .uri()
                        .query()
                        .and_then(|q| q.strip_prefix("gap="))
                        .and_then(|g| g.parse().ok())
                        .unwrap_or(0);
                    let streaming = request.uri().path().ends_with("/stream");
                    let _ = request.into_body().collect().await;
                    let response = if streaming {
                        let (tx, rx) = tokio::sync::mpsc::channel::<
                            Result<Frame<Bytes>, std::convert::Infallible>,
                        >(32);
                        tokio::spawn(async move {
                            let event = |text: &str| {
                                Ok(Frame::data(Bytes::from(format!("data: {text}\n\n"))))
                            };
                            let _ = tx
                                .send(event(r#"{"choices":[{"delta":{"content":"first"}}]}"#))
                                .await;
                            for _ in 0..20 {
                                if gap > 0 {
                                    tokio::time::sleep(Duration::from_millis(gap)).await;
                                }
                                let _ = tx
                                    .send(event(r#"{"choices":[{"delta":{"content":" more"}}]}"#))
                                    .await;
                            }
                            let _ = tx.send(event(r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":21}}"#)).await;
                        });
                        let body = StreamBody::new(tokio_stream(rx));
                        http::Response::builder()
                            .header("content-type", "text/event-stream")
                            .body(http_body_util::Either::Left(body))
                            .unwrap()
                    } else {
                        http::Response::builder()
                            .header("content-type", "application/json")
                            .body(http_body_util::Either::Right(Full::new(Bytes::from(
                                ANSWER,
                            ))))
                            .unwrap()
                    };
                    Ok::<_, std::convert::Infallible>(response)
                },
            );
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// An mpsc receiver as a stream of frames.
fn tokio_stream<T>(mut rx: tokio::sync::mpsc::Receiver<T>) -> impl futures_core::Stream<Item = T> {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

/// `serve UPSTREAM KEYFILE`: a gateway for one grant; prints `PORT PLACEHOLDER`, serves until
/// its stdin closes.
fn serve(upstream: &str, key_file: &str) {
    let config = GatewayConfig {
        tcp: Some("127.0.0.1:0".parse().unwrap()),
        unix: None,
        roots: TlsRoots::default(),
        limits: Limits::default(),
        sink: Arc::new(|_| {}),
    };
    let gateway = Gateway::start(config, Grants::new()).unwrap();
    let placeholder = gateway
        .grants()
        .issue(Grant {
            round: "bench#1".into(),
            provider: "bench".into(),
            upstream: Some(Upstream::parse(upstream).unwrap()),
            key_file: Some(key_file.into()),
            budget_tokens: None,
            allow: Vec::new(),
        })
        .unwrap();
    println!("{} {placeholder}", gateway.addr().unwrap().port());
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    while std::io::stdin()
        .lock()
        .read_line(&mut line)
        .is_ok_and(|n| n > 0)
    {}
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn connect(addr: SocketAddr) -> Sender {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    sender
}

/// One request; the time to its first body byte and to its end.
async fn once(sender: &mut Sender, path: &str, placeholder: &str) -> (Duration, Duration) {
    sender.ready().await.unwrap();
    let request = http::Request::post(path)
        .header("host", "bench")
        .header("authorization", format!("Bearer {placeholder}"))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from_static(
            br#"{"model":"bench","messages":[{"role":"user","content":"hi"}]}"#,
        )))
        .unwrap();
    let started = Instant::now();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let mut body = response.into_body();
    let mut first = None;
    while let Some(frame) = body.frame().await {
        let frame = frame.unwrap();
        if first.is_none() && frame.data_ref().is_some_and(|d| !d.is_empty()) {
            first = Some(started.elapsed());
        }
    }
    (first.unwrap_or_default(), started.elapsed())
}

fn percentile(times: &mut [Duration], p: f64) -> f64 {
    times.sort();
    let at = ((times.len() as f64 - 1.0) * p).round() as usize;
    times[at].as_secs_f64() * 1000.0
}

struct Child {
    process: std::process::Child,
    port: u16,
    placeholder: String,
}

#[expect(
    clippy::disallowed_methods,
    reason = "the benchmark's gateway runs as its own process, to measure its memory and CPU alone"
)]
fn spawn_gateway(upstream: &str, key_file: &std::path::Path) -> Child {
    let mut process = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["serve", upstream, &key_file.to_string_lossy()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(process.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let (port, placeholder) = line.trim().split_once(' ').unwrap();
    Child {
        process,
        port: port.parse().unwrap(),
        placeholder: placeholder.to_owned(),
    }
}

/// CPU seconds and peak resident memory (KiB) of `pid`.
fn usage(pid: u32) -> (f64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat.rsplit_once(") ").unwrap().1.split(' ').collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let peak = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
        .unwrap_or(0);
    (ticks / 100.0, peak)
}

fn measure(requests: usize, concurrent: usize) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let upstream_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = upstream_runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let upstream_addr = listener.local_addr().unwrap();
    upstream_runtime.spawn(upstream(listener));
    let dir = std::env::temp_dir().join(format!("gateway-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key_file = dir.join("key");
    std::fs::write(&key_file, "sk-bench-0123456789\n").unwrap();
    let mut child = spawn_gateway(&format!("http://{upstream_addr}"), &key_file);
    let gateway_addr: SocketAddr = format!("127.0.0.1:{}", child.port).parse().unwrap();
    let placeholder = child.placeholder.clone();

    runtime.block_on(async {
        let mut direct = connect(upstream_addr).await;
        let mut through = connect(gateway_addr).await;
        // Warm both paths up.
        for _ in 0..200 {
            once(&mut direct, "/v1/chat/completions", &placeholder).await;
            once(&mut through, "/v1/chat/completions", &placeholder).await;
        }
        let (mut d, mut g) = (Vec::new(), Vec::new());
        for block in 0..requests / 100 {
            for _ in 0..100 {
                if block % 2 == 0 {
                    d.push(
                        once(&mut direct, "/v1/chat/completions", &placeholder)
                            .await
                            .1,
                    );
                } else {
                    g.push(
                        once(&mut through, "/v1/chat/completions", &placeholder)
                            .await
                            .1,
                    );
                }
            }
        }
        let (d50, d95, g50, g95) = (
            percentile(&mut d, 0.5),
            percentile(&mut d, 0.95),
            percentile(&mut g, 0.5),
            percentile(&mut g, 0.95),
        );
        println!(
            "latency, {} requests each (ms)      direct   gateway   added",
            d.len()
        );
        println!(
            "  p50                               {d50:7.3}   {g50:7.3}   {:6.3}",
            g50 - d50
        );
        println!(
            "  p95                               {d95:7.3}   {g95:7.3}   {:6.3}",
            g95 - d95
        );

        let (mut d, mut g) = (Vec::new(), Vec::new());
        for _ in 0..200 {
            d.push(once(&mut direct, "/v1/stream?gap=1", &placeholder).await.0);
            g.push(once(&mut through, "/v1/stream?gap=1", &placeholder).await.0);
        }
        let (d50, g50) = (percentile(&mut d, 0.5), percentile(&mut g, 0.5));
        let (d95, g95) = (percentile(&mut d, 0.95), percentile(&mut g, 0.95));
        println!("first streamed byte, 200 each (ms)  direct   gateway   added");
        println!(
            "  p50                               {d50:7.3}   {g50:7.3}   {:6.3}",
            g50 - d50
        );
        println!(
            "  p95                               {d95:7.3}   {g95:7.3}   {:6.3}",
            g95 - d95
        );
    });

    let (cpu_before, _) = usage(child.process.id());
    let rounds_each = 20;
    let started = Instant::now();
    let load = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    load.block_on(async {
        let mut tasks = Vec::new();
        for _ in 0..concurrent {
            let placeholder = placeholder.clone();
            tasks.push(tokio::spawn(async move {
                let mut sender = connect(gateway_addr).await;
                for _ in 0..rounds_each {
                    once(&mut sender, "/v1/stream?gap=5", &placeholder).await;
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
    });
    let wall = started.elapsed().as_secs_f64();
    let (cpu_after, peak) = usage(child.process.id());
    let streams = concurrent * rounds_each;
    println!(
        "{concurrent} concurrent streams x {rounds_each} (22 events over ~100 ms each): {streams} streams in {wall:.2} s"
    );
    println!(
        "  the gateway: {:.2} CPU-s in all, {:.1} ms of CPU per stream, peak memory {:.1} MiB",
        cpu_after - cpu_before,
        (cpu_after - cpu_before) * 1000.0 / streams as f64,
        peak as f64 / 1024.0
    );
    drop(child.process.stdin.take());
    let _ = child.process.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
