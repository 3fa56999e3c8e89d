//! Answering a request on a protocol path: record it, let the script pick, render the answer
//! or the fault. Also the model list and unknown paths, which are recorded too.

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;
use serde_json::{Value, json};

use super::{Shared, fault_response, unix_ms, wire_response};
use crate::conversation::{Answer, Conversation, TokenUsage};
use crate::fault::FaultSpec;
use crate::protocol::{self, RenderContext, WireBody, WireProtocol};
use crate::recording::{RecordedRequest, Reply};
use crate::template::fill;
use crate::turn_picker::{Action, AnsweredBy};

/// A request as it arrived, before anything was decided.
#[derive(Debug)]
pub(super) struct Arrival {
    method: String,
    path: String,
    query: Option<String>,
    headers: Vec<(String, String)>,
    body: Option<Value>,
    body_text: Option<String>,
    received_at_ms: u64,
    elapsed_ms: u64,
}

impl Arrival {
    pub(super) fn new(
        shared: &Shared,
        method: Method,
        uri: Uri,
        headers: HeaderMap,
        body: &Bytes,
    ) -> Self {
        let parsed: Option<Value> = serde_json::from_slice(body).ok();
        let body_text = match (&parsed, body.is_empty()) {
            (None, false) => Some(String::from_utf8_lossy(body).into_owned()),
            _ => None,
        };
        Arrival {
            method: method.as_str().to_owned(),
            path: uri.path().to_owned(),
            query: uri.query().map(str::to_owned),
            headers: headers
                .iter()
                .map(|(name, value)| {
                    let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                    (name.as_str().to_owned(), value)
                })
                .collect(),
            body: parsed,
            body_text,
            received_at_ms: unix_ms(),
            elapsed_ms: shared.elapsed_ms(),
        }
    }

    /// The hold a request asked for (`x-fake-delay-ms`).
    fn delay(&self) -> Option<std::time::Duration> {
        self.headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(crate::witness::DELAY_HEADER))
            .and_then(|(_, value)| value.trim().parse::<u64>().ok())
            .map(std::time::Duration::from_millis)
    }

    /// The request read by `protocol`, or why it cannot be.
    fn parsed_by(&self, protocol: &dyn WireProtocol) -> Result<Conversation, String> {
        match &self.body {
            Some(body) => protocol.parse(body),
            None => Err("the body is not JSON".to_owned()),
        }
    }

    fn into_record(
        self,
        index: usize,
        protocol: Option<&dyn WireProtocol>,
        conversation: Option<Conversation>,
        answered_by: AnsweredBy,
        reply: Reply,
    ) -> RecordedRequest {
        RecordedRequest {
            index,
            method: self.method,
            path: self.path,
            query: self.query,
            headers: self.headers,
            body: self.body,
            body_text: self.body_text,
            received_at_ms: self.received_at_ms,
            elapsed_ms: self.elapsed_ms,
            protocol: protocol.map(|protocol| protocol.name().to_owned()),
            tools_offered: conversation
                .as_ref()
                .is_some_and(Conversation::offers_tools),
            conversation,
            answered_by,
            reply,
        }
    }
}

/// What the script decided for a model request.
enum Outcome {
    Answer(Answer),
    Fault(FaultSpec),
}

/// Records the request and answers it.
pub(super) async fn answer(shared: &Shared, arrival: Arrival) -> Response {
    let Some(protocol) = protocol::for_path(&arrival.path) else {
        return not_a_model_request(shared, arrival);
    };
    let conversation = match arrival.parsed_by(protocol) {
        Ok(mut conversation) => {
            if let Some(model) = protocol.model_in_path(&arrival.path) {
                conversation.model = model;
            }
            conversation
        }
        Err(reason) => {
            let message = format!(
                "fake-llm: cannot read this {} request: {reason}",
                protocol.name()
            );
            return bad_request(shared, arrival, protocol, &message);
        }
    };
    let body = arrival.body.clone().unwrap_or(Value::Null);
    let _in_flight = shared.in_flight.enter(&conversation.model);
    let delay = arrival.delay();
    let (index, outcome) = decide(shared, arrival, protocol, &conversation);
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    let usage = match &outcome {
        Outcome::Answer(answer) => TokenUsage::estimate(&conversation, answer),
        Outcome::Fault(_) => TokenUsage::default(),
    };
    let context = RenderContext {
        conversation: &conversation,
        body: &body,
        request_index: index,
        created: unix_ms() / 1000,
        usage,
    };
    match outcome {
        Outcome::Answer(answer) => wire_response::full(200, &[], protocol.render(&answer, context)),
        Outcome::Fault(spec) => fault_response::respond(spec, protocol, context).await,
    }
}

/// Lets the script pick, fills in templates and records the request, all under one lock so
/// that the record's order is the order in which the script answered.
fn decide(
    shared: &Shared,
    arrival: Arrival,
    protocol: &dyn WireProtocol,
    conversation: &Conversation,
) -> (usize, Outcome) {
    let mut ledger = shared.ledger();
    let index = ledger.requests.len();
    let pick = ledger.picker.pick(conversation);
    let outcome = match pick.action {
        Action::Text(template) => Outcome::Answer(Answer::Text {
            text: fill(&template, conversation),
        }),
        Action::Tool { name, arguments } => Outcome::Answer(Answer::ToolCall {
            name,
            arguments,
            call_id: format!("call_fake_{index}"),
        }),
        Action::Fault(spec) => Outcome::Fault(spec),
    };
    let reply = match &outcome {
        Outcome::Answer(answer) => Reply::Answer {
            answer: answer.clone(),
            usage: TokenUsage::estimate(conversation, answer),
        },
        Outcome::Fault(spec) => Reply::Fault { fault: spec.fault },
    };
    let record = arrival.into_record(
        index,
        Some(protocol),
        Some(conversation.clone()),
        pick.by,
        reply,
    );
    shared.record(ledger, record);
    (index, outcome)
}

/// `GET /v1/models` lists the model the agent is configured with, `POST
/// /v1/messages/count_tokens` counts tokens; any other path is a 404.
fn not_a_model_request(shared: &Shared, arrival: Arrival) -> Response {
    if arrival.method == "POST" && arrival.path.trim_end_matches('/') == "/v1/messages/count_tokens"
    {
        return count_tokens(shared, arrival);
    }
    if arrival.method == "GET" && arrival.path.trim_end_matches('/') == "/v1/models" {
        record_alone(
            shared,
            arrival,
            None,
            AnsweredBy::NotAModelRequest,
            Reply::ModelList,
        );
        let list = json!({
            "object": "list",
            "data": [{"id": "scripted", "object": "model", "created": 0, "owned_by": "fake-llm"}],
        });
        return wire_response::full(200, &[], WireBody::Json(list));
    }
    let message = format!(
        "fake-llm: no endpoint {} {}; model requests go to POST /v1/chat/completions",
        arrival.method, arrival.path
    );
    let body = protocol::for_unknown_path(&arrival.path).error_body(404, &message);
    record_alone(
        shared,
        arrival,
        None,
        AnsweredBy::NotAModelRequest,
        error_reply(404, &message),
    );
    wire_response::full(404, &[], WireBody::Json(body))
}

/// Anthropic's token count: the request parsed as a Messages request, its input estimated as
/// for an answer. It uses up no turn.
fn count_tokens(shared: &Shared, arrival: Arrival) -> Response {
    let protocol = &protocol::anthropic::AnthropicMessages;
    let conversation = match arrival.parsed_by(protocol) {
        Ok(conversation) => conversation,
        Err(reason) => {
            let message = format!("fake-llm: cannot count the tokens of this request: {reason}");
            return bad_request(shared, arrival, protocol, &message);
        }
    };
    let (input_tokens, body) = protocol::anthropic::count_tokens(&conversation);
    let ledger = shared.ledger();
    let index = ledger.requests.len();
    let record = arrival.into_record(
        index,
        Some(protocol),
        Some(conversation),
        AnsweredBy::NotAModelRequest,
        Reply::TokenCount { input_tokens },
    );
    shared.record(ledger, record);
    wire_response::full(200, &[], WireBody::Json(body))
}

fn record_alone(
    shared: &Shared,
    arrival: Arrival,
    protocol: Option<&dyn WireProtocol>,
    answered_by: AnsweredBy,
    reply: Reply,
) {
    let ledger = shared.ledger();
    let index = ledger.requests.len();
    let record = arrival.into_record(index, protocol, None, answered_by, reply);
    shared.record(ledger, record);
}

/// Records a request `protocol` cannot read, and answers it 400 in that protocol's shape.
fn bad_request(
    shared: &Shared,
    arrival: Arrival,
    protocol: &dyn WireProtocol,
    message: &str,
) -> Response {
    record_alone(
        shared,
        arrival,
        Some(protocol),
        AnsweredBy::BadRequest,
        error_reply(400, message),
    );
    wire_response::full(400, &[], WireBody::Json(protocol.error_body(400, message)))
}

fn error_reply(status: u16, message: &str) -> Reply {
    Reply::Error {
        status,
        message: message.to_owned(),
    }
}
