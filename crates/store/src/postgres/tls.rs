//! TLS to the server, set up as libpq sets it up from `sslmode` and `sslrootcert`, with rustls
//! (ring's cryptography). `disable` never asks for TLS; `prefer` (the default) uses it when the
//! server offers it; `require` insists on it. None of the three checks the server's certificate,
//! except that `require` checks its chain as `verify-ca` does when a root certificate file is
//! there (given, or libpq's default `~/.postgresql/root.crt`). `verify-ca` checks the chain
//! against the roots, `verify-full` the host name too. `sslrootcert=FILE` names the roots (PEM);
//! `sslrootcert=system` takes the system's trusted roots instead, and then only `verify-full` is
//! allowed (a public CA signs anyone's name). The roots are those named, never more.

use super::params::Split;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_postgres::config::SslMode as ClientMode;
use tokio_postgres_rustls::MakeRustlsConnect;

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// Why TLS could not be set up as asked.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TlsError {
    #[error(
        "invalid value for option `sslmode` (disable, prefer, require, verify-ca or verify-full)"
    )]
    Mode,
    #[error("weak sslmode `{0}` may not be used with sslrootcert=system (use verify-full)")]
    WeakWithSystem(&'static str),
    #[error(
        "TLS: the root certificate file {} does not exist: name one (sslrootcert=FILE), use the \
         system's (sslrootcert=system), or choose a weaker sslmode",
        .0.display()
    )]
    NoRootFile(PathBuf),
    #[error("TLS: cannot read the root certificates in {}: {source}", path.display())]
    RootFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("TLS: the system's trusted root certificates could not be loaded")]
    SystemRoots,
    #[error("TLS: {0}")]
    Setup(#[from] rustls::Error),
}

impl SslMode {
    fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// Where the roots come from.
enum Roots {
    /// None: the certificate is not checked.
    Unchecked,
    File(PathBuf),
    System,
}

/// The mode a connection string asks for, and whether it may be had with its roots: checked
/// without reading any file (a connection string's check is bad input, not the environment's).
pub(crate) fn mode_of(split: &Split) -> Result<SslMode, TlsError> {
    let system = split.get("sslrootcert") == Some("system");
    let mode = match split.get("sslmode") {
        None if system => SslMode::VerifyFull,
        None => SslMode::Prefer,
        Some("disable") => SslMode::Disable,
        Some("prefer") => SslMode::Prefer,
        Some("require") => SslMode::Require,
        Some("verify-ca") => SslMode::VerifyCa,
        Some("verify-full") => SslMode::VerifyFull,
        Some(_) => return Err(TlsError::Mode),
    };
    if system && mode != SslMode::VerifyFull {
        return Err(TlsError::WeakWithSystem(mode.name()));
    }
    Ok(mode)
}

/// How a connection is made: the client's mode (it knows disable, prefer and require; the
/// checks of the two others are the connector's) and the connector.
#[derive(Clone)]
pub(crate) struct Tls {
    pub(crate) mode: ClientMode,
    pub(crate) connector: MakeRustlsConnect,
}

impl Tls {
    /// TLS as the connection string asks for it, its roots read now.
    pub(crate) fn new(split: &Split) -> Result<Tls, TlsError> {
        let mode = mode_of(split)?;
        let roots = roots(mode, split.get("sslrootcert"))?;
        #[expect(
            deprecated,
            reason = "ring has no post-quantum key exchange; aws-lc-rs, which has, needs a \
                      second C library built, and PostgreSQL's OpenSSL offers none either"
        )]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier: Arc<dyn ServerCertVerifier> = match roots {
            Roots::Unchecked => Arc::new(Lenient {
                provider: Arc::clone(&provider),
                chain: None,
            }),
            Roots::File(path) => {
                let store = file_roots(&path)?;
                let full = WebPkiServerVerifier::builder_with_provider(
                    Arc::new(store),
                    Arc::clone(&provider),
                )
                .build()
                .map_err(|e| TlsError::Setup(rustls::Error::General(e.to_string())))?;
                if mode == SslMode::VerifyFull {
                    full
                } else {
                    Arc::new(Lenient {
                        provider: Arc::clone(&provider),
                        chain: Some(full),
                    })
                }
            }
            Roots::System => {
                let store = system_roots()?;
                WebPkiServerVerifier::builder_with_provider(Arc::new(store), Arc::clone(&provider))
                    .build()
                    .map_err(|e| TlsError::Setup(rustls::Error::General(e.to_string())))?
            }
        };
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        let mode = match mode {
            SslMode::Disable => ClientMode::Disable,
            SslMode::Prefer => ClientMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => ClientMode::Require,
        };
        Ok(Tls {
            mode,
            connector: MakeRustlsConnect::new(config),
        })
    }
}

/// The roots `mode` checks the certificate against, `sslrootcert` naming them.
fn roots(mode: SslMode, named: Option<&str>) -> Result<Roots, TlsError> {
    let checks = matches!(mode, SslMode::VerifyCa | SslMode::VerifyFull);
    match named {
        Some("system") => Ok(Roots::System),
        Some(file) if checks || mode == SslMode::Require => Ok(Roots::File(PathBuf::from(file))),
        Some(_) => Ok(Roots::Unchecked),
        None => {
            let default =
                std::env::var_os("HOME").map(|home| Path::new(&home).join(".postgresql/root.crt"));
            match default {
                Some(file) if file.exists() && (checks || mode == SslMode::Require) => {
                    Ok(Roots::File(file))
                }
                Some(file) if checks => Err(TlsError::NoRootFile(file)),
                None if checks => Err(TlsError::NoRootFile("~/.postgresql/root.crt".into())),
                _ => Ok(Roots::Unchecked),
            }
        }
    }
}

/// The certificates of PEM file `path`.
fn file_roots(path: &Path) -> Result<RootCertStore, TlsError> {
    let failed = |source: std::io::Error| TlsError::RootFile {
        path: path.to_owned(),
        source,
    };
    let text = std::fs::read(path).map_err(failed)?;
    let mut store = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&text) {
        let cert = cert.map_err(|e| failed(std::io::Error::other(e.to_string())))?;
        store
            .add(cert)
            .map_err(|e| failed(std::io::Error::other(e.to_string())))?;
    }
    if store.is_empty() {
        return Err(failed(std::io::Error::other("no certificate in it")));
    }
    Ok(store)
}

/// The system's trusted roots.
fn system_roots() -> Result<RootCertStore, TlsError> {
    let loaded = rustls_native_certs::load_native_certs();
    let mut store = RootCertStore::empty();
    let (added, _) = store.add_parsable_certificates(loaded.certs);
    if added == 0 {
        return Err(TlsError::SystemRoots);
    }
    Ok(store)
}

/// The verifier that checks less than `verify-full`: without `chain`, any certificate is
/// taken (`prefer`, `require`); with it (`verify-ca`), the chain up to a root is checked, not
/// the name the certificate is for (webpki checks the name last, once the chain was found
/// good, so its error alone is forgiven). The handshake's signatures are checked either way.
#[derive(Debug)]
struct Lenient {
    provider: Arc<CryptoProvider>,
    chain: Option<Arc<WebPkiServerVerifier>>,
}

impl ServerCertVerifier for Lenient {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::{SslMode, TlsError, mode_of};
    use crate::postgres::params::split;

    #[test]
    fn the_mode_is_libpqs_and_the_system_roots_allow_only_verify_full() {
        let mode = |text: &str| mode_of(&split(text));
        assert_eq!(mode("host=h").unwrap(), SslMode::Prefer);
        assert_eq!(
            mode("postgres://h/d?sslmode=verify-ca").unwrap(),
            SslMode::VerifyCa
        );
        assert_eq!(
            mode("host=h sslrootcert=system").unwrap(),
            SslMode::VerifyFull
        );
        assert!(matches!(
            mode("host=h sslmode=require sslrootcert=system"),
            Err(TlsError::WeakWithSystem("require"))
        ));
        assert!(matches!(mode("host=h sslmode=verify"), Err(TlsError::Mode)));
    }
}
