//! TLS to upstreams with rustls: the system's roots, plus a CA file for private endpoints
//! (`[gateway] ca`).

use crate::error::GatewayError;
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Which certificates an upstream's may chain to.
#[derive(Debug, Clone, Default)]
pub struct TlsRoots {
    /// Also trust the certificates of this PEM file.
    pub ca: Option<PathBuf>,
    /// Leave the system's roots out (tests, and endpoints that only a private CA signs).
    pub without_system: bool,
}

impl TlsRoots {
    /// Checks the CA file now, so that a bad one is the caller's error before anything starts.
    pub fn check(&self) -> Result<(), GatewayError> {
        self.ca.as_deref().map(file_roots).transpose().map(drop)
    }
}

pub(crate) fn client_config(roots: &TlsRoots) -> Result<Arc<rustls::ClientConfig>, GatewayError> {
    let mut store = RootCertStore::empty();
    if !roots.without_system {
        store.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    }
    if let Some(file) = &roots.ca {
        for cert in file_roots(file)? {
            store.add(cert).map_err(|e| ca_error(file, e.to_string()))?;
        }
    }
    #[expect(
        deprecated,
        reason = "ring has no post-quantum key exchange; aws-lc-rs, which has, needs a second \
                  C library built; the store's TLS makes the same choice"
    )]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| GatewayError::Invalid(format!("TLS: {e}")))?
        .with_root_certificates(store)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn file_roots(path: &Path) -> Result<Vec<CertificateDer<'static>>, GatewayError> {
    let text = std::fs::read(path).map_err(|e| ca_error(path, e.to_string()))?;
    let certs = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ca_error(path, format!("not PEM certificates ({e})")))?;
    if certs.is_empty() {
        return Err(ca_error(path, "no certificate in it".to_owned()));
    }
    Ok(certs)
}

fn ca_error(path: &Path, reason: String) -> GatewayError {
    GatewayError::CaFile {
        path: path.to_owned(),
        reason,
    }
}
