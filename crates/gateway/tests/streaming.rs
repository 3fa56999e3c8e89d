//! Streams pass through as they come: the agent reads the upstream's first event before the
//! upstream has sent the rest, and an agent that leaves mid-stream closes the upstream's
//! connection too.

use crate::common::Setup;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

/// An upstream that sends one event, waits for the test's word, then ends the stream with
/// its usage. It reports when its connection is closed by the other side.
fn held_upstream() -> (String, mpsc::Sender<Then>, mpsc::Receiver<&'static str>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (go, wait) = mpsc::channel::<Then>();
    let (tell, heard) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        read_request(&mut stream);
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        stream.write_all(head.as_bytes()).unwrap();
        write_chunk(
            &mut stream,
            "data: {\"type\":\"first\",\"message\":{\"usage\":{\"input_tokens\":40}}}\n\n",
        );
        match wait.recv_timeout(Duration::from_secs(10)) {
            Ok(Then::Finish) => {
                write_chunk(
                    &mut stream,
                    "data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":7}}\n\n",
                );
                stream.write_all(b"0\r\n\r\n").unwrap();
                tell.send("finished").unwrap();
            }
            Ok(Then::ExpectClose) => {
                // The agent has left: the gateway must close this side.
                stream
                    .set_read_timeout(Some(Duration::from_secs(10)))
                    .unwrap();
                let mut byte = [0u8; 1];
                let seen = match stream.read(&mut byte) {
                    Ok(0) => "closed",
                    _ => "still open",
                };
                tell.send(seen).unwrap();
            }
            Err(_) => tell.send("never told").unwrap(),
        }
    });
    (url, go, heard)
}

enum Then {
    Finish,
    ExpectClose,
}

fn read_request(stream: &mut TcpStream) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap();
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).unwrap();
}

fn write_chunk(stream: &mut TcpStream, text: &str) {
    let chunk = format!("{:x}\r\n{text}\r\n", text.len());
    stream.write_all(chunk.as_bytes()).unwrap();
    stream.flush().unwrap();
}

fn open_stream(setup: &Setup, placeholder: &str) -> (TcpStream, BufReader<TcpStream>) {
    let mut agent = TcpStream::connect(setup.gateway.addr().unwrap()).unwrap();
    agent
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let body = "{\"model\":\"m\",\"stream\":true}";
    let request = format!(
        "POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: {placeholder}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    agent.write_all(request.as_bytes()).unwrap();
    let reader = BufReader::new(agent.try_clone().unwrap());
    (agent, reader)
}

fn read_until(reader: &mut BufReader<TcpStream>, needle: &str) -> String {
    let mut seen = String::new();
    while !seen.contains(needle) {
        let mut line = String::new();
        let n = reader
            .read_line(&mut line)
            .expect("the gateway held the stream back");
        assert!(n > 0, "the stream ended before {needle:?}: {seen}");
        seen.push_str(&line);
    }
    seen
}

#[test]
fn the_first_event_reaches_the_agent_before_the_upstream_sends_the_rest() {
    let (url, go, heard) = held_upstream();
    let setup = Setup::start();
    let placeholder = setup.grant(&url, None, &[]);
    let (_agent, mut reader) = open_stream(&setup, &placeholder);
    // The upstream waits for `go`: a gateway that buffered would never show "first".
    let head = read_until(&mut reader, "\"first\"");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    go.send(Then::Finish).unwrap();
    read_until(&mut reader, "output_tokens");
    assert_eq!(
        heard.recv_timeout(Duration::from_secs(15)).unwrap(),
        "finished"
    );
    let record = &setup.records(1)[0];
    assert_eq!((record.tokens.input, record.tokens.output), (40, 7));
    assert!(!record.cut);
}

#[test]
fn an_agent_that_leaves_mid_stream_takes_the_upstream_request_with_it() {
    let (url, go, heard) = held_upstream();
    let setup = Setup::start();
    let placeholder = setup.grant(&url, None, &[]);
    let (agent, mut reader) = open_stream(&setup, &placeholder);
    read_until(&mut reader, "\"first\"");
    drop(reader);
    agent.shutdown(std::net::Shutdown::Both).unwrap();
    drop(agent);
    go.send(Then::ExpectClose).unwrap();
    assert_eq!(
        heard.recv_timeout(Duration::from_secs(15)).unwrap(),
        "closed"
    );
    let record = &setup.records(1)[0];
    assert!(record.cut, "{record:?}");
    assert_eq!(
        record.tokens.input, 40,
        "what was counted before the cut is kept"
    );
}
