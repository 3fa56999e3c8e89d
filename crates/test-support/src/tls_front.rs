//! A TLS server in front of a plain one, with a test CA made on the spot: the scripted model
//! "over TLS" for the model gateway's tests.

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::net::SocketAddr;
use std::sync::Arc;

/// A certificate authority made for one test.
pub struct TestCa {
    /// The CA's certificate, PEM.
    pub pem: String,
    cert: rcgen::Certificate,
    key: rcgen::KeyPair,
}

impl TestCa {
    /// A new CA named `name`.
    pub fn new(name: &str) -> TestCa {
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

    /// Serves TLS for `localhost` on a free loopback port, with a certificate this CA signed,
    /// relaying each connection to `plain`. Returns the port; it serves until the process ends.
    pub fn front(&self, plain: SocketAddr) -> u16 {
        let key = rcgen::KeyPair::generate().unwrap();
        let params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        let cert = params.signed_by(&key, &self.cert, &self.key).unwrap();
        #[expect(deprecated, reason = "ring, as ganger's own TLS uses")]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
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
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                loop {
                    let Ok((tcp, _)) = listener.accept().await else {
                        return;
                    };
                    let acceptor = acceptor.clone();
                    tokio::spawn(async move {
                        let Ok(mut tls) = acceptor.accept(tcp).await else {
                            return;
                        };
                        let Ok(mut inner) = tokio::net::TcpStream::connect(plain).await else {
                            return;
                        };
                        let _ = tokio::io::copy_bidirectional(&mut tls, &mut inner).await;
                    });
                }
            });
        });
        port
    }
}
