//! The two-step API the `ganger fake-llm` command uses: bind, learn the address, serve.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use ganger_fake_llm::{BoundServer, FakeLlm, FakeLlmError, Script};

use crate::http_client::{TOOLS, agent, chat, user};

#[test]
fn bind_reports_the_address_before_serving_and_serve_answers_queued_requests() {
    let server = BoundServer::bind(
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        Script::new().text("served"),
    )
    .unwrap();
    let addr = server.local_addr();
    assert_ne!(addr.port(), 0);
    assert_eq!(
        server.base_url(),
        format!("http://127.0.0.1:{}/v1", addr.port())
    );
    let base_url = server.base_url();
    // The client connects before the server serves: the listen queue holds it.
    let client = std::thread::spawn(move || {
        let mut reply = agent(Duration::from_secs(10))
            .post(format!("{base_url}/chat/completions"))
            .send_json(chat(vec![user("go")], &TOOLS, false))
            .unwrap();
        reply.body_mut().read_to_string().unwrap()
    });
    std::thread::sleep(Duration::from_millis(100));
    // `serve` blocks for good; the thread ends with the test process.
    std::thread::spawn(move || server.serve());
    assert!(client.join().unwrap().contains("served"));
}

#[test]
fn binding_a_busy_port_fails_with_the_address() {
    let first = FakeLlm::start(Script::builtin()).unwrap();
    let error = BoundServer::bind(first.addr(), Script::builtin()).unwrap_err();
    assert!(matches!(error, FakeLlmError::Bind { addr, .. } if addr == first.addr()));
    assert_eq!(
        error.to_string(),
        format!("failed to listen on {}", first.addr())
    );
}

#[test]
fn a_bad_script_is_refused_before_binding() {
    let error = FakeLlm::start(
        Script::new()
            .text("x")
            .fault(ganger_fake_llm::Fault::Hang)
            .text("y"),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid script: turns[1]: fault hang has no `times`, so it never ends and the turns \
         after it could never be used; give it `times` or make it the last turn"
    );
}
