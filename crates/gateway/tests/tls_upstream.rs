//! The upstream over TLS: the scripted model behind a TLS terminator with a test CA. With the
//! CA named, requests go through and the model gets the real key; with another CA, the agent
//! gets a 502 that names TLS, and nothing reached the model.

use crate::common::{REAL_KEY, Setup, chat_body, client};
use ganger_fake_llm::{FakeLlm, Script};
use ganger_gateway::TlsRoots;
use ganger_test_support::TestCa;

fn roots(dir: &std::path::Path, ca: &TestCa) -> TlsRoots {
    let file = dir.join("ca.pem");
    std::fs::write(&file, &ca.pem).unwrap();
    TlsRoots {
        ca: Some(file),
        without_system: true,
    }
}

#[test]
fn the_upstream_is_reached_over_tls_with_the_named_ca_and_refused_with_another() {
    let model = FakeLlm::start(Script::new().text("over tls").repeat(true)).unwrap();
    let ca = TestCa::new("ganger test ca");
    let port = ca.front(model.addr());
    let upstream = format!("https://localhost:{port}");
    let dir = tempfile::tempdir().unwrap();

    let trusting = Setup::start_with(roots(dir.path(), &ca));
    let placeholder = trusting.grant(&upstream, None, &[]);
    let mut response = client()
        .post(&format!("{}/v1/chat/completions", trusting.base()))
        .header("authorization", &format!("Bearer {placeholder}"))
        .send_json(chat_body())
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response
            .body_mut()
            .read_to_string()
            .unwrap()
            .contains("over tls")
    );
    assert_eq!(
        model.requests()[0].header("authorization"),
        Some(format!("Bearer {REAL_KEY}").as_str())
    );

    let other = TestCa::new("some other ca");
    let other_dir = tempfile::tempdir().unwrap();
    let doubting = Setup::start_with(roots(other_dir.path(), &other));
    let placeholder = doubting.grant(&upstream, None, &[]);
    let mut response = client()
        .post(&format!("{}/v1/chat/completions", doubting.base()))
        .header("authorization", &format!("Bearer {placeholder}"))
        .send_json(chat_body())
        .unwrap();
    assert_eq!(response.status(), 502);
    let text = response.body_mut().read_to_string().unwrap();
    assert!(text.contains("TLS"), "{text}");
    assert_eq!(model.requests().len(), 1, "nothing more reached the model");
}

#[test]
fn a_ca_file_that_is_not_pem_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ca.pem");
    std::fs::write(&file, "not a certificate").unwrap();
    let roots = TlsRoots {
        ca: Some(file),
        without_system: false,
    };
    let error = roots.check().unwrap_err();
    assert!(error.is_invalid());
    assert!(error.to_string().contains("ca.pem"), "{error}");
    let missing = TlsRoots {
        ca: Some(dir.path().join("missing.pem")),
        without_system: false,
    };
    assert!(missing.check().unwrap_err().is_invalid());
}
