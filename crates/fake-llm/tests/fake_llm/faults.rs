//! Scripted faults as an agent sees them on the wire.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use ganger_fake_llm::{AnsweredBy, FakeLlm, Fault, FaultSpec, Reply, Script, Turn};
use serde_json::{Value, json};

use crate::http_client::{TOOLS, chat, post_chat, try_post, user};

fn error_body(message: &str, kind: &str, code: Value) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

#[test]
fn http_faults_send_openai_error_bodies_then_the_script_goes_on() {
    let cases = [
        (
            Fault::Http401,
            401,
            error_body(
                "fake-llm: scripted fault http-401 (HTTP 401)",
                "invalid_request_error",
                json!("invalid_api_key"),
            ),
        ),
        (
            Fault::Http429,
            429,
            error_body(
                "fake-llm: scripted fault http-429 (HTTP 429)",
                "requests",
                json!("rate_limit_exceeded"),
            ),
        ),
        (
            Fault::Http500,
            500,
            error_body(
                "fake-llm: scripted fault http-500 (HTTP 500)",
                "server_error",
                Value::Null,
            ),
        ),
    ];
    for (fault, status, body) in cases {
        let llm = FakeLlm::start(Script::new().fault_times(fault, 2).text("recovered")).unwrap();
        let request = chat(vec![user("go")], &TOOLS, true);
        for _ in 0..2 {
            let reply = post_chat(&llm, &request);
            assert_eq!(
                (reply.status, reply.json()),
                (status, body.clone()),
                "{fault}"
            );
            assert_eq!(reply.content_type, "application/json");
            assert_eq!(reply.header("retry-after-ms"), None);
        }
        let reply = post_chat(&llm, &request);
        assert_eq!(reply.status, 200);
        assert_eq!(reply.streamed_text(), "recovered", "{fault}");
        let replies: Vec<Reply> = llm.requests().into_iter().map(|r| r.reply).collect();
        assert_eq!(
            &replies[..2],
            &[Reply::Fault { fault }, Reply::Fault { fault }]
        );
    }
}

#[test]
fn retry_after_ms_sends_both_retry_headers() {
    let llm = FakeLlm::start(
        Script::new()
            .turn(Turn::fault(Fault::Http429).times(1).retry_after_ms(1500))
            .turn(Turn::fault(Fault::Http500).times(1).retry_after_ms(0))
            .text("ok"),
    )
    .unwrap();
    let request = chat(vec![user("go")], &TOOLS, false);
    let headers = |reply: &crate::http_client::HttpReply| {
        (
            reply.status,
            reply.header("retry-after-ms").map(str::to_owned),
            reply.header("retry-after").map(str::to_owned),
        )
    };
    assert_eq!(
        headers(&post_chat(&llm, &request)),
        (429, Some("1500".to_owned()), Some("2".to_owned()))
    );
    assert_eq!(
        headers(&post_chat(&llm, &request)),
        (500, Some("0".to_owned()), Some("0".to_owned()))
    );
    assert_eq!(headers(&post_chat(&llm, &request)), (200, None, None));
}

#[test]
fn a_fault_without_times_is_permanent() {
    let llm = FakeLlm::start(Script::new().text("first").fault(Fault::Http500)).unwrap();
    let request = chat(vec![user("go")], &TOOLS, false);
    let statuses: Vec<u16> = (0..4).map(|_| post_chat(&llm, &request).status).collect();
    assert_eq!(statuses, vec![200, 500, 500, 500]);
}

#[test]
fn a_server_wide_fault_hits_every_tool_request_but_not_side_requests() {
    let script =
        Script::builtin().fault_every_request(FaultSpec::new(Fault::Http500).retry_after_ms(0));
    let llm = FakeLlm::start(script).unwrap();
    let tool_request = chat(vec![user("go")], &TOOLS, false);
    let title_request = chat(vec![user("go")], &[], false);
    let statuses = [
        post_chat(&llm, &tool_request).status,
        post_chat(&llm, &title_request).status,
        post_chat(&llm, &tool_request).status,
    ];
    assert_eq!(statuses, [500, 200, 500]);
    let by: Vec<AnsweredBy> = llm.requests().into_iter().map(|r| r.answered_by).collect();
    assert_eq!(
        by,
        vec![
            AnsweredBy::ServerFault,
            AnsweredBy::Default,
            AnsweredBy::ServerFault
        ]
    );
}

#[test]
fn a_hang_is_recorded_never_answered_and_does_not_block_other_requests() {
    let llm = FakeLlm::start(
        Script::new()
            .fault_times(Fault::Hang, 1)
            .text("after the hang"),
    )
    .unwrap();
    let request = chat(vec![user("go")], &TOOLS, true);
    let started = Instant::now();
    let hung = try_post(
        &llm,
        "/chat/completions",
        &request,
        Duration::from_millis(300),
    );
    assert!(hung.is_err(), "a hang must not be answered: {hung:?}");
    assert!(started.elapsed() >= Duration::from_millis(300));
    let recorded = llm.wait_for_requests(1, Duration::from_secs(5)).unwrap();
    assert_eq!(recorded[0].reply, Reply::Fault { fault: Fault::Hang });
    assert_eq!(post_chat(&llm, &request).streamed_text(), "after the hang");
}

#[test]
fn dropping_the_server_ends_a_hanging_request_promptly() {
    let llm = FakeLlm::start(Script::new().fault(Fault::Hang)).unwrap();
    let addr = llm.addr();
    let client = std::thread::spawn(move || raw_post(addr, &chat(vec![user("go")], &TOOLS, true)));
    llm.wait_for_requests(1, Duration::from_secs(5)).unwrap();
    let started = Instant::now();
    drop(llm);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "drop took {:?}",
        started.elapsed()
    );
    let (head, _) = client.join().unwrap();
    assert_eq!(
        head, "",
        "the client saw the connection close without an answer"
    );
}

/// Sends one request over a raw connection and reads until the server closes it; returns the
/// response head and the raw body bytes (still chunk-encoded).
fn raw_post(addr: std::net::SocketAddr, body: &Value) -> (String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let body = body.to_string();
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut received = Vec::new();
    let mut buffer = [0; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(read) => received.extend_from_slice(&buffer[..read]),
        }
    }
    let text = String::from_utf8(received).unwrap();
    match text.split_once("\r\n\r\n") {
        Some((head, body)) => (head.to_owned(), body.to_owned()),
        None => (text, String::new()),
    }
}

#[test]
fn a_cut_stream_sends_the_first_chunks_and_closes_without_finishing() {
    let llm = FakeLlm::start(Script::new().fault_times(Fault::Cut, 1).text("whole")).unwrap();
    let (head, body) = raw_post(llm.addr(), &chat(vec![user("go")], &TOOLS, true));
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    assert!(head.contains("transfer-encoding: chunked"), "{head}");
    // The cut text streams in 4 pieces: role, 4 pieces, finish, usage, [DONE] = 8 events, of
    // which the first 4 arrive.
    let events: Vec<&str> = body.matches("data: ").collect();
    assert_eq!(events.len(), 4, "{body}");
    assert!(body.contains(r#""delta":{"role":"assistant"}"#), "{body}");
    assert!(!body.contains("finish_reason\":\"stop"), "{body}");
    assert!(!body.contains("[DONE]"), "{body}");
    assert!(
        !body.ends_with("0\r\n\r\n"),
        "the chunked body must not be terminated: {body:?}"
    );
    let reply = post_chat(&llm, &chat(vec![user("go")], &TOOLS, true));
    assert_eq!(
        reply.streamed_text(),
        "whole",
        "the script went on after the cut"
    );
}

#[test]
fn a_cut_json_answer_promises_more_bytes_than_it_sends() {
    let llm = FakeLlm::start(Script::new().fault(Fault::Cut)).unwrap();
    let (head, body) = raw_post(llm.addr(), &chat(vec![user("go")], &TOOLS, false));
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    let promised: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length: "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(body.len(), promised / 2, "{body}");
    assert!(body.starts_with("{\""), "{body}");
    assert!(serde_json::from_str::<Value>(&body).is_err());
}

#[test]
fn garbage_is_a_200_whose_data_is_not_json() {
    let llm = FakeLlm::start(Script::new().fault(Fault::Garbage)).unwrap();
    let streamed = post_chat(&llm, &chat(vec![user("go")], &TOOLS, true));
    assert_eq!(
        (streamed.status, streamed.content_type.as_str()),
        (200, "text/event-stream")
    );
    let data = streamed.sse_data();
    assert_eq!(data.len(), 2, "{}", streamed.body);
    assert!(
        data.iter()
            .all(|data| serde_json::from_str::<Value>(data).is_err() && data != "[DONE]")
    );
    let whole = post_chat(&llm, &chat(vec![user("go")], &TOOLS, false));
    assert_eq!(
        (whole.status, whole.content_type.as_str()),
        (200, "application/json")
    );
    assert!(
        serde_json::from_str::<Value>(&whole.body).is_err(),
        "{}",
        whole.body
    );
}
