//! The upstream over TLS: the scripted model behind a TLS terminator with a test CA. With the
//! CA named, requests go through and the model gets the real key; with another CA, the agent
//! gets a 502 that names TLS, and nothing reached the model.

use crate::common::{REAL_KEY, Setup, chat_body, client};
use ganger_fake_llm::{FakeLlm, Script};
use ganger_gateway::TlsRoots;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::sync::Arc;

struct TestCa {
    pem: String,
    cert: rcgen::Certificate,
    key: rcgen::KeyPair,
}

fn test_ca(name: &str) -> TestCa {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    let cert = params.self_signed(&key).unwrap();
    TestCa {
        pem: cert.pem(),
        cert,
        key,
    }
}

/// A TLS server for `localhost`, signed by `ca`, relaying to `plain` (the scripted model).
/// Returns its port; it runs until the test ends.
fn tls_front(ca: &TestCa, plain: std::net::SocketAddr) -> u16 {
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    let cert = params.signed_by(&key, &ca.cert, &ca.key).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        #[allow(deprecated)]
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![CertificateDer::from(cert.der().to_vec())],
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
    )
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let (tcp, _) = listener.accept().await.unwrap();
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let mut inner = tokio::net::TcpStream::connect(plain).await.unwrap();
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut inner).await;
                });
            }
        });
    });
    port
}

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
    let ca = test_ca("ganger test ca");
    let port = tls_front(&ca, model.addr());
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

    let other = test_ca("some other ca");
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
