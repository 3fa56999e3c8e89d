//! What the server records, through the handle and through `GET /_fake/requests`.

use std::time::Duration;

use ganger_fake_llm::{
    Answer, AnsweredBy, Conversation, FakeLlm, FakeLlmError, Message, RecordedRequest, Reply, Role,
    Script, TokenUsage,
};
use serde_json::json;

use crate::http_client::{TOOLS, agent, chat, get, post_chat, system, user};

#[test]
fn a_model_request_is_recorded_whole_with_its_headers() {
    let llm = FakeLlm::start(Script::new().text("hi")).unwrap();
    let body = chat(vec![system("rules"), user("hello")], &TOOLS, false);
    let reply = agent(Duration::from_secs(5))
        .post(format!("{}/chat/completions?trace=1", llm.base_url()))
        .header("Authorization", "Bearer sk-secret")
        .header("x-session-id", "ses_123")
        .send_json(&body)
        .unwrap();
    assert_eq!(reply.status(), 200);

    let recorded = llm.requests();
    assert_eq!(recorded.len(), 1);
    let actual = recorded[0].clone();
    assert_eq!(actual.header("authorization"), Some("Bearer sk-secret"));
    assert_eq!(actual.header("X-Session-Id"), Some("ses_123"));
    assert_eq!(
        actual.header("content-type"),
        Some("application/json; charset=utf-8")
    );
    assert!(
        actual
            .headers
            .iter()
            .all(|(name, _)| *name == name.to_lowercase())
    );
    let expected = RecordedRequest {
        index: 0,
        method: "POST".to_owned(),
        path: "/v1/chat/completions".to_owned(),
        query: Some("trace=1".to_owned()),
        headers: actual.headers.clone(),
        body: Some(body),
        body_text: None,
        received_at_ms: actual.received_at_ms,
        elapsed_ms: actual.elapsed_ms,
        protocol: Some("openai-chat".to_owned()),
        conversation: Some(Conversation {
            model: "scripted".to_owned(),
            stream: false,
            messages: vec![
                Message {
                    role: Role::System,
                    text: "rules".to_owned(),
                    tool_calls: vec![],
                },
                Message {
                    role: Role::User,
                    text: "hello".to_owned(),
                    tool_calls: vec![],
                },
            ],
            tools: TOOLS.iter().map(|tool| (*tool).to_owned()).collect(),
        }),
        tools_offered: true,
        answered_by: AnsweredBy::Turn { index: 0 },
        reply: Reply::Answer {
            answer: Answer::Text {
                text: "hi".to_owned(),
            },
            usage: TokenUsage {
                input: 3,
                output: 1,
            },
        },
    };
    assert_eq!(actual, expected);
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    assert!(actual.received_at_ms <= now_ms && actual.received_at_ms + 10_000 > now_ms);
}

#[test]
fn the_inspection_endpoint_returns_the_same_records_and_is_not_recorded_itself() {
    let llm = FakeLlm::start(Script::new().text("a").text("b")).unwrap();
    post_chat(&llm, &chat(vec![user("one")], &TOOLS, true));
    post_chat(&llm, &chat(vec![user("title")], &[], false));
    let root = llm.base_url().trim_end_matches("/v1").to_owned();
    let listed = get(&format!("{root}/_fake/requests"));
    assert_eq!(listed.status, 200);
    let listed: Vec<RecordedRequest> = serde_json::from_str(&listed.body).unwrap();
    assert_eq!(listed, llm.requests());
    assert_eq!(listed.len(), 2);
    let unknown = get(&format!("{root}/_fake/nothing"));
    assert_eq!(unknown.status, 404);
    assert_eq!(llm.requests().len(), 2);
}

#[test]
fn other_paths_and_unreadable_bodies_are_recorded_with_their_errors() {
    let llm = FakeLlm::start(Script::new().text("unused")).unwrap();
    let models = get(&format!("{}/models", llm.base_url()));
    assert_eq!(
        (models.status, models.json()),
        (
            200,
            json!({"object": "list", "data": [{"id": "scripted", "object": "model", "created": 0, "owned_by": "fake-llm"}]})
        )
    );
    let missing = agent(Duration::from_secs(5))
        .post(format!("{}/embeddings", llm.base_url()))
        .send_json(json!({"input": "x"}))
        .unwrap();
    assert_eq!(missing.status(), 404);
    let bad = agent(Duration::from_secs(5))
        .post(format!("{}/chat/completions", llm.base_url()))
        .content_type("application/json")
        .send("not json")
        .unwrap();
    assert_eq!(bad.status(), 400);

    let summary: Vec<(String, AnsweredBy, Reply, Option<String>)> = llm
        .requests()
        .into_iter()
        .map(|r| (r.path, r.answered_by, r.reply, r.body_text))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("/v1/models".to_owned(), AnsweredBy::NotAModelRequest, Reply::ModelList, None),
            (
                "/v1/embeddings".to_owned(),
                AnsweredBy::NotAModelRequest,
                Reply::Error {
                    status: 404,
                    message: "fake-llm: no endpoint POST /v1/embeddings; model requests go to POST /v1/chat/completions".to_owned(),
                },
                None,
            ),
            (
                "/v1/chat/completions".to_owned(),
                AnsweredBy::BadRequest,
                Reply::Error {
                    status: 400,
                    message: "fake-llm: cannot read this openai-chat request: the body is not JSON".to_owned(),
                },
                Some("not json".to_owned()),
            ),
        ]
    );
    let reply = post_chat(&llm, &chat(vec![user("go")], &TOOLS, false));
    assert!(
        reply.body.contains("unused"),
        "errors used up no turn: {}",
        reply.body
    );
}

#[test]
fn waiting_for_requests_returns_them_or_says_how_many_came() {
    let llm = FakeLlm::start(Script::builtin()).unwrap();
    let error = llm
        .wait_for_requests(1, Duration::from_millis(50))
        .unwrap_err();
    assert!(matches!(
        error,
        FakeLlmError::WaitTimedOut {
            wanted: 1,
            got: 0,
            ..
        }
    ));
    assert_eq!(
        error.to_string(),
        "timed out after 50ms waiting for 1 requests; 0 arrived"
    );
    let base = llm.base_url();
    let sender = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        agent(Duration::from_secs(5))
            .post(format!("{base}/chat/completions"))
            .send_json(chat(vec![user("late")], &TOOLS, false))
            .unwrap()
            .status()
    });
    let requests = llm.wait_for_requests(1, Duration::from_secs(5)).unwrap();
    assert_eq!(
        requests[0].conversation.as_ref().unwrap().prompts(),
        vec!["late"]
    );
    assert_eq!(sender.join().unwrap(), 200);
}
