//! TLS for the stream and the collector's HTTP port (`docs/STREAMING.md`): the PEM loading
//! and the `rustls` configurations both ends share. The collector serves a certificate
//! (`h5prov collect --tls-cert --tls-key`); the connector (`stream_tls_ca=`) and
//! `h5prov top --tls-ca` trust only the CA (or self-signed certificate) they are given,
//! and verify the collector before they send anything. Errors name the file.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use std::path::Path;
use std::sync::Arc;

pub use rustls;

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{}: not a PEM certificate file: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "{}: no PEM certificate (-----BEGIN CERTIFICATE-----) in it",
            path.display()
        ));
    }
    Ok(certs)
}

/// The collector's TLS configuration: the certificate chain in `cert` and its private key
/// in `key` (PEM files).
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, String> {
    let chain = certs(cert)?;
    let key_der = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("{}: not a PEM private key file: {e}", key.display()))?;
    ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map(Arc::new)
        .map_err(|e| {
            format!(
                "{} with {}: not a usable certificate and key: {e}",
                cert.display(),
                key.display()
            )
        })
}

/// A client's TLS configuration trusting only the certificates in `ca` (PEM: a CA, or the
/// collector's self-signed certificate).
pub fn client_config(ca: &Path) -> Result<Arc<ClientConfig>, String> {
    let mut roots = RootCertStore::empty();
    for c in certs(ca)? {
        roots
            .add(c)
            .map_err(|e| format!("{}: not a usable CA certificate: {e}", ca.display()))?;
    }
    Ok(Arc::new(
        ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth(),
    ))
}

/// The name a client verifies the collector's certificate against: the host of `addr`
/// (`HOST:PORT`, `[V6]:PORT`), an IP address or a DNS name.
pub fn server_name(addr: &str) -> Result<ServerName<'static>, String> {
    let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(host.to_string()).map_err(|e| {
        format!("{addr}: no host name to verify the collector's certificate against: {e}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_pem_files_are_named() {
        let dir = std::env::temp_dir().join(format!("h5prov-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let junk = dir.join("junk.pem");
        std::fs::write(&junk, "not PEM\n").unwrap();
        let missing = dir.join("missing.pem");
        for f in [&junk, &missing] {
            let e = client_config(f).unwrap_err();
            assert!(e.contains(&*f.to_string_lossy()), "{e}");
            let e = server_config(f, &junk).unwrap_err();
            assert!(e.contains(&*f.to_string_lossy()), "{e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_name_verified_is_the_host_of_the_address() {
        assert_eq!(server_name("127.0.0.1:9099").unwrap().to_str(), "127.0.0.1");
        assert_eq!(server_name("[::1]:9099").unwrap().to_str(), "::1");
        assert_eq!(
            server_name("collector.example:9099").unwrap().to_str(),
            "collector.example"
        );
        assert!(server_name("bad host:1")
            .unwrap_err()
            .contains("bad host:1"));
    }
}
