//! The gateway between a client and the scripted model: the placeholder goes in, the real key
//! reaches the model, the answer comes back, and each request is recorded with its tokens.

use crate::common::{REAL_KEY, Setup, chat_body, client};
use ganger_fake_llm::{FakeLlm, Script};
use ganger_gateway::{Limits, TlsRoots};
use std::time::{Duration, Instant};

#[test]
fn a_placeholder_is_swapped_for_the_real_key_and_the_answer_and_its_tokens_come_back() {
    let model = FakeLlm::start(Script::new().text("hello from upstream").repeat(true)).unwrap();
    let setup = Setup::start();
    let placeholder = setup.grant(&model.root_url(), None, &[]);
    assert!(!placeholder.contains(REAL_KEY));
    let url = format!("{}/v1/chat/completions", setup.base());

    let mut response = client()
        .post(&url)
        .header("authorization", &format!("Bearer {placeholder}"))
        .send_json(chat_body())
        .unwrap();
    assert_eq!(response.status(), 200);
    let answer: serde_json::Value = response.body_mut().read_json().unwrap();
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "hello from upstream"
    );

    let seen = model.requests();
    assert_eq!(seen.len(), 1);
    let auth = seen[0].header("authorization").unwrap();
    assert_eq!(
        auth,
        format!("Bearer {REAL_KEY}"),
        "the model got the real key"
    );
    assert!(!format!("{:?}", seen[0].headers).contains(&placeholder));

    let records = setup.records(1);
    let record = &records[0];
    assert_eq!(record.status, 200);
    assert_eq!(record.round.as_deref(), Some("t#1"));
    assert_eq!(record.model.as_deref(), Some("fake-model"));
    assert_eq!(record.path, "/v1/chat/completions");
    assert_eq!(
        record.tokens.input,
        answer["usage"]["prompt_tokens"].as_u64().unwrap()
    );
    assert_eq!(
        record.tokens.output,
        answer["usage"]["completion_tokens"].as_u64().unwrap()
    );
    assert!(record.tokens.total() > 0);
    assert!(record.bytes_up > 0 && record.bytes_down > 0);
    assert!(!serde_json::to_string(record).unwrap().contains(REAL_KEY));
    let spend = setup.gateway.grants().spend(&placeholder).unwrap();
    assert_eq!(spend.tokens(), record.tokens);
}

#[test]
fn gemini_keys_in_the_query_and_anthropic_keys_in_a_header_are_swapped_too() {
    let model = FakeLlm::start(Script::new().text("ok").repeat(true)).unwrap();
    let setup = Setup::start();
    let placeholder = setup.grant(&model.root_url(), None, &[]);
    let gemini = format!(
        "{}/v1beta/models/gemini-fake:generateContent?key={placeholder}",
        setup.base()
    );
    let body = serde_json::json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
    let response = client().post(&gemini).send_json(body).unwrap();
    assert_eq!(response.status(), 200);
    let anthropic = format!("{}/v1/messages", setup.base());
    let body = serde_json::json!({"model": "claude-fake", "max_tokens": 100,
        "messages": [{"role": "user", "content": "hi"}]});
    let response = client()
        .post(&anthropic)
        .header("x-api-key", &placeholder)
        .header("anthropic-version", "2023-06-01")
        .send_json(body)
        .unwrap();
    assert_eq!(response.status(), 200);

    let seen = model.requests();
    assert_eq!(
        seen[0].query.as_deref(),
        Some(format!("key={REAL_KEY}").as_str())
    );
    assert_eq!(seen[1].header("x-api-key"), Some(REAL_KEY));
    let records = setup.records(2);
    assert_eq!(records[0].model.as_deref(), Some("gemini-fake"));
    assert!(
        records[0].tokens.total() > 0,
        "gemini usage counted: {:?}",
        records[0]
    );
    assert_eq!(records[1].model.as_deref(), Some("claude-fake"));
    assert!(
        records[1].tokens.total() > 0,
        "anthropic usage counted: {:?}",
        records[1]
    );
    for record in &records {
        assert!(
            !record.path.contains("key"),
            "no query in the record: {}",
            record.path
        );
    }
}

#[test]
fn a_request_without_a_known_placeholder_is_refused_and_reaches_nothing() {
    let model = FakeLlm::start(Script::new().text("ok").repeat(true)).unwrap();
    let setup = Setup::start();
    let placeholder = setup.grant(&model.root_url(), None, &[]);
    let url = format!("{}/v1/chat/completions", setup.base());
    for auth in [
        format!("Bearer {REAL_KEY}"),
        "Bearer ganger-placeholder-00".to_owned(),
        String::new(),
    ] {
        let mut request = client().post(&url);
        if !auth.is_empty() {
            request = request.header("authorization", &auth);
        }
        let mut response = request.send_json(chat_body()).unwrap();
        assert_eq!(response.status(), 401, "{auth}");
        let text = response.body_mut().read_to_string().unwrap();
        assert!(text.contains("ganger gateway"), "{text}");
    }
    setup.gateway.grants().revoke(&placeholder);
    let response = client()
        .post(&url)
        .header("authorization", &format!("Bearer {placeholder}"))
        .send_json(chat_body())
        .unwrap();
    assert_eq!(
        response.status(),
        401,
        "a revoked placeholder opens nothing"
    );
    assert!(model.requests().is_empty());
    let records = setup.records(4);
    assert_eq!(records.len(), 4);
    assert!(
        records
            .iter()
            .all(|r| r.refused.is_some() && r.status == 401)
    );
}

#[test]
fn a_spent_budget_stops_the_next_request_at_the_gateway() {
    let model = FakeLlm::start(Script::new().text("a long enough answer").repeat(true)).unwrap();
    let setup = Setup::start();
    let placeholder = setup.grant(&model.root_url(), Some(5), &[]);
    let url = format!("{}/v1/chat/completions", setup.base());
    let send = || {
        client()
            .post(&url)
            .header("authorization", &format!("Bearer {placeholder}"))
            .send_json(chat_body())
            .unwrap()
    };
    assert_eq!(send().status(), 200);
    let mut refused = send();
    assert_eq!(refused.status(), 403);
    let text = refused.body_mut().read_to_string().unwrap();
    assert!(text.contains("budget of 5 tokens is spent"), "{text}");
    assert_eq!(model.requests().len(), 1, "the second request never left");
}

#[test]
fn a_429_keeps_the_upstreams_retry_after_in_the_record() {
    let script = Script::new()
        .turn(ganger_fake_llm::Turn::fault(ganger_fake_llm::Fault::Http429).retry_after_ms(3000));
    let model = FakeLlm::start(script).unwrap();
    let setup = Setup::start();
    let placeholder = setup.grant(&model.root_url(), None, &[]);
    let response = client()
        .post(&format!("{}/v1/chat/completions", setup.base()))
        .header("authorization", &format!("Bearer {placeholder}"))
        .send_json(chat_body())
        .unwrap();
    assert_eq!(response.status(), 429);
    let record = &setup.records(1)[0];
    assert_eq!(record.status, 429);
    assert_eq!(record.retry_after_ms, Some(3000), "{record:?}");
}

/// An upstream that takes the request and never answers does not hold the agent: past the
/// response timeout the gateway answers 502 naming the wait, records it, and closes the
/// upstream's connection.
#[test]
fn an_upstream_that_never_answers_is_given_up_on_after_the_response_timeout() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let (closed_tx, closed) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (mut conn, _) = silent.accept().unwrap();
        // Reads the request and whatever follows, answering nothing, until the gateway hangs up.
        let mut buf = [0u8; 4096];
        while std::io::Read::read(&mut conn, &mut buf).is_ok_and(|n| n > 0) {}
        let _ = closed_tx.send(());
    });
    let limits = Limits {
        response_timeout: Duration::from_millis(700),
        ..Limits::default()
    };
    let setup = Setup::start_with_limits(TlsRoots::default(), limits);
    let placeholder = setup.grant(&format!("http://127.0.0.1:{port}"), None, &[]);
    let started = Instant::now();
    let mut response = client()
        .post(&format!("{}/v1/chat/completions", setup.base()))
        .header("authorization", &format!("Bearer {placeholder}"))
        .send_json(chat_body())
        .unwrap();
    let waited = started.elapsed();
    assert_eq!(response.status(), 502);
    let text = response.body_mut().read_to_string().unwrap();
    assert!(text.contains("no response within 0.7 s"), "{text}");
    assert!(waited >= Duration::from_millis(700), "{waited:?}");
    assert!(waited < Duration::from_secs(30), "{waited:?}");
    let records = setup.records(1);
    assert_eq!(records[0].status, 502);
    assert!(
        records[0]
            .refused
            .as_deref()
            .is_some_and(|why| why.contains("no response within")),
        "{:?}",
        records[0]
    );
    closed
        .recv_timeout(Duration::from_secs(10))
        .expect("the gateway closed the silent upstream's connection");
}
