//! Self-signed certificates generated at run time, and the quinn-proto
//! client and server configurations that trust them.
//!
//! Ed25519 keys and a fixed serial number keep the certificate, and so
//! the handshake's packet sizes, the same length on every run: ECDSA
//! signatures are DER integers whose encoded length varies by a byte or
//! two with the random nonce, which would shift every later packet of an
//! emulated run by nanoseconds of serialisation time.

use super::QuicError;
use quinn_proto::{ClientConfig, ServerConfig, TransportConfig};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::sync::Arc;

/// The name the generated certificate is issued for and clients expect.
pub const SERVER_NAME: &str = "ackwise.test";

/// A freshly generated self-signed certificate and its private key.
#[derive(Debug)]
pub struct SelfSigned {
    /// The certificate, DER.
    pub cert: CertificateDer<'static>,
    /// Its PKCS #8 private key, DER.
    pub key: PrivatePkcs8KeyDer<'static>,
}

impl SelfSigned {
    /// Generates an Ed25519 key and a certificate for [`SERVER_NAME`].
    pub fn generate() -> Result<SelfSigned, QuicError> {
        let tls = |e: rcgen::Error| QuicError::Certificate(e.to_string());
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).map_err(tls)?;
        let mut params =
            rcgen::CertificateParams::new(vec![SERVER_NAME.to_string()]).map_err(tls)?;
        params.serial_number = Some(rcgen::SerialNumber::from(1u64));
        let cert = params.self_signed(&key).map_err(tls)?;
        Ok(SelfSigned {
            cert: cert.der().clone(),
            key: PrivatePkcs8KeyDer::from(key.serialize_der()),
        })
    }

    /// A server configuration presenting this certificate, with `transport`.
    pub fn server_config(&self, transport: TransportConfig) -> Result<ServerConfig, QuicError> {
        let mut c = ServerConfig::with_single_cert(
            vec![self.cert.clone()],
            PrivateKeyDer::Pkcs8(self.key.clone_key()),
        )
        .map_err(|e| QuicError::Tls(e.to_string()))?;
        c.transport_config(Arc::new(transport));
        Ok(c)
    }

    /// A client configuration trusting only this certificate, with
    /// `transport`.
    pub fn client_config(&self, transport: TransportConfig) -> Result<ClientConfig, QuicError> {
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(self.cert.clone())
            .map_err(|e| QuicError::Tls(e.to_string()))?;
        let mut c = ClientConfig::with_root_certificates(Arc::new(roots))
            .map_err(|e| QuicError::Tls(e.to_string()))?;
        c.transport_config(Arc::new(transport));
        Ok(c)
    }
}
