//! Turn matching across a two-round session, as OpenCode drives it: a title request without
//! tools, round 1 (prompt, tool call, tool result, text), round 2 in the same session.

use ganger_fake_llm::{AnsweredBy, FakeLlm, Reply, Script, Turn};
use serde_json::json;

use crate::http_client::{
    TOOLS, assistant, assistant_call, chat, post_chat, system, tool_result, user,
};

fn two_round_script() -> Script {
    Script::new()
        .default_answer("A title")
        .turn(
            Turn::tool(
                "write",
                json!({"filePath": "hello.txt", "content": "hello\n"}),
            )
            .when("(?i)create"),
        )
        .text("Done round 1. {{history}}")
        .turn(
            Turn::tool(
                "edit",
                json!({"filePath": "hello.txt", "oldString": "hello", "newString": "hi"}),
            )
            .when("(?i)edit"),
        )
        .text("Done round 2. {{history}}")
}

fn answer_text(reply: &crate::http_client::HttpReply) -> String {
    reply.json()["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn tool_called(reply: &crate::http_client::HttpReply) -> (String, String) {
    let call = &reply.json()["choices"][0]["message"]["tool_calls"][0];
    (
        call["function"]["name"].as_str().unwrap().to_owned(),
        call["id"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn two_rounds_in_one_session_with_title_requests_in_between() {
    let llm = FakeLlm::start(two_round_script()).unwrap();
    let write_args = json!({"filePath": "hello.txt", "content": "hello\n"});
    let edit_args = json!({"filePath": "hello.txt", "oldString": "hello", "newString": "hi"});

    let title = post_chat(
        &llm,
        &chat(
            vec![system("title"), user("Please create hello.txt")],
            &[],
            false,
        ),
    );
    assert_eq!(answer_text(&title), "A title");

    let mut history = vec![system("you are opencode"), user("Please create hello.txt")];
    let call = post_chat(&llm, &chat(history.clone(), &TOOLS, false));
    assert_eq!(
        tool_called(&call),
        ("write".to_owned(), "call_fake_1".to_owned())
    );

    history.push(assistant_call("write", "call_fake_1", &write_args));
    history.push(tool_result("call_fake_1", "Wrote file successfully."));
    let done = post_chat(&llm, &chat(history.clone(), &TOOLS, false));
    assert_eq!(
        answer_text(&done),
        "Done round 1. history: 4 messages, 1 tool result, prompts: [Please create hello.txt]"
    );

    history.push(assistant(&answer_text(&done)));
    history.push(user("Now edit hello.txt"));
    let title_again = post_chat(
        &llm,
        &chat(vec![system("title"), user("Now edit hello.txt")], &[], true),
    );
    assert_eq!(title_again.status, 200);
    let call = post_chat(&llm, &chat(history.clone(), &TOOLS, false));
    assert_eq!(
        tool_called(&call),
        ("edit".to_owned(), "call_fake_4".to_owned())
    );

    history.push(assistant_call("edit", "call_fake_4", &edit_args));
    history.push(tool_result("call_fake_4", "Edit applied successfully."));
    let done = post_chat(&llm, &chat(history.clone(), &TOOLS, false));
    assert_eq!(
        answer_text(&done),
        "Done round 2. history: 8 messages, 2 tool results, prompts: [Please create hello.txt | Now edit hello.txt]"
    );

    let extra = post_chat(&llm, &chat(history, &TOOLS, false));
    assert_eq!(
        answer_text(&extra),
        "fake-llm: the script is exhausted: all 4 turns are used, so there is no scripted answer for this request."
    );

    let answered: Vec<(AnsweredBy, bool)> = llm
        .requests()
        .into_iter()
        .map(|request| (request.answered_by, request.tools_offered))
        .collect();
    assert_eq!(
        answered,
        vec![
            (AnsweredBy::Default, false),
            (AnsweredBy::Turn { index: 0 }, true),
            (AnsweredBy::Turn { index: 1 }, true),
            (AnsweredBy::Default, false),
            (AnsweredBy::Turn { index: 2 }, true),
            (AnsweredBy::Turn { index: 3 }, true),
            (AnsweredBy::ScriptExhausted, true),
        ]
    );
}

#[test]
fn a_round_two_prompt_that_matches_no_pattern_gets_an_explanation_and_uses_nothing() {
    let llm = FakeLlm::start(two_round_script()).unwrap();
    let mut history = vec![user("create it")];
    post_chat(&llm, &chat(history.clone(), &TOOLS, false));
    history.push(assistant_call("write", "call_fake_0", &json!({})));
    history.push(tool_result("call_fake_0", "ok"));
    post_chat(&llm, &chat(history.clone(), &TOOLS, false));
    history.push(assistant("Done round 1."));
    history.push(user("now rename it"));
    let reply = post_chat(&llm, &chat(history.clone(), &TOOLS, false));
    assert_eq!(
        answer_text(&reply),
        "fake-llm: no scripted turn for this request: the next turn (turns[2]) waits for a prompt \
         matching \"(?i)edit\", and the prompt was \"now rename it\"."
    );
    history.pop();
    history.push(user("then edit it"));
    let reply = post_chat(&llm, &chat(history, &TOOLS, false));
    assert_eq!(tool_called(&reply).0, "edit");
    let last = llm.requests().pop().unwrap();
    assert_eq!(last.answered_by, AnsweredBy::Turn { index: 2 });
    assert!(matches!(last.reply, Reply::Answer { .. }));
}

#[test]
fn requests_without_tools_never_use_up_turns_even_in_a_stream() {
    let llm = FakeLlm::start(
        Script::new()
            .default_answer("Title for {{prompt}}")
            .text("real answer"),
    )
    .unwrap();
    for _ in 0..3 {
        let reply = post_chat(&llm, &chat(vec![user("fix the bug")], &[], true));
        assert_eq!(reply.streamed_text(), "Title for fix the bug");
    }
    let reply = post_chat(&llm, &chat(vec![user("fix the bug")], &TOOLS, false));
    assert_eq!(answer_text(&reply), "real answer");
}

#[test]
fn the_builtin_script_answers_every_prompt_with_the_history() {
    let llm = FakeLlm::start(Script::builtin()).unwrap();
    let mut history = vec![user("one")];
    for expected in [
        "history: 1 message, 0 tool results, prompts: [one]",
        "history: 3 messages, 0 tool results, prompts: [one | two]",
    ] {
        let reply = post_chat(&llm, &chat(history.clone(), &TOOLS, false));
        let text = answer_text(&reply);
        assert_eq!(
            text,
            format!("Dry run: fake-llm answered without a model. {expected}")
        );
        history.push(assistant(&text));
        history.push(user("two"));
    }
}
