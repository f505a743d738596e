//! `--transport quic`: the same file transfer over one bidirectional quinn
//! stream, with the strategy's ACK-frequency policy and controller
//! ([`crate::quic`]).
//!
//! Trust: the receiver generates a self-signed certificate when it starts
//! and prints its SHA-256 fingerprint; the sender accepts only a server
//! presenting exactly that certificate (`--quic-cert-sha256`), so nothing
//! depends on a certificate authority and nothing is left unverified. The
//! handshake signature is still checked against the pinned certificate's
//! key by rustls.
//!
//! Strategies: the `quic*` lab names (`quic`, `quic-af-N`, `quic-2w`,
//! `quic-4w`, each optionally `+ackwise-cc`). On sockets a process has no
//! earlier connection to the receiver, so the per-window policies start
//! with a cold path cache: quinn's default spacing.

use super::app::{SendPlan, ServePlan};
use super::error::TransferError;
use super::progress::{Console, StatsSource};
use super::receive::receive_files;
use super::send::{send_files, OutgoingFile};
use super::Summary;
use crate::lab::Strategy;
use crate::quic::{QuicFlowConfig, SelfSigned, SERVER_NAME};
use indicatif::MultiProgress;
use quinn::{Endpoint, RecvStream, SendStream};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use sha2::{Digest, Sha256};
use std::future::Future;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::task::JoinSet;

/// How long the sender waits for the receiver to close the connection
/// after the last verdict, and the receiver for its close to go out.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// SHA-256 of a DER certificate.
pub fn fingerprint(cert: &CertificateDer<'_>) -> [u8; 32] {
    Sha256::digest(cert.as_ref()).into()
}

/// Lower-case hex, as printed by `ackwise recv --transport quic`.
pub fn fingerprint_hex(fp: &[u8; 32]) -> String {
    fp.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses 64 hex digits (colons allowed between bytes).
pub fn parse_fingerprint(text: &str) -> Result<[u8; 32], String> {
    let digits: String = text.chars().filter(|c| *c != ':').collect();
    if digits.len() != 64 || !digits.is_ascii() {
        return Err(format!(
            "`{text}` is not a SHA-256 fingerprint (64 hex digits)"
        ));
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&digits[2 * i..2 * i + 2], 16)
            .map_err(|_| format!("`{text}` is not a SHA-256 fingerprint (64 hex digits)"))?;
    }
    Ok(out)
}

/// The QUIC configuration a `quic*` strategy names on sockets; an error
/// naming the QUIC strategies for any other.
pub fn quic_config(strategy: Strategy) -> Result<QuicFlowConfig, String> {
    let config = strategy.quic_flow_config().ok_or_else(|| {
        format!(
            "--transport quic takes a QUIC strategy (quic, quic-af-N, quic-2w, quic-4w, \
             optionally +ackwise-cc), not `{strategy}`"
        )
    })?;
    Ok(QuicFlowConfig {
        receive_window: 8 << 20,
        ..config
    })
}

/// The emulator's transport settings, with what a real path needs back:
/// path MTU discovery, segmentation offload and an idle timeout.
fn on_sockets(mut t: quinn::TransportConfig, idle: Duration) -> quinn::TransportConfig {
    QuicFlowConfig::on_sockets(&mut t);
    t.max_idle_timeout(quinn::IdleTimeout::try_from(idle).ok());
    t
}

/// One bidirectional quinn stream as one byte stream.
#[derive(Debug)]
pub struct QuicStream {
    send: SendStream,
    recv: RecvStream,
}

impl AsyncRead for QuicStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.recv).poll_read(cx, buf)
    }
}

impl AsyncWrite for QuicStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        AsyncWrite::poll_write(Pin::new(&mut self.send), cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        AsyncWrite::poll_flush(Pin::new(&mut self.send), cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        AsyncWrite::poll_shutdown(Pin::new(&mut self.send), cx)
    }
}

/// quinn keeps its own counters; the transfer shows none.
impl StatsSource for QuicStream {}

/// Accepts exactly one certificate, by its SHA-256; signatures are checked
/// with the provider's algorithms as usual.
/// `None` accepts any certificate (`ackwise perf`, whose data is a fixed
/// pattern, still checking the handshake's signature against it).
#[derive(Debug)]
struct PinnedCertificate {
    sha256: Option<[u8; 32]>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for PinnedCertificate {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if self
            .sha256
            .is_none_or(|pinned| fingerprint(end_entity) == pinned)
        {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::General(
                "the receiver's certificate does not match --quic-cert-sha256".into(),
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

fn client_config(
    sha256: Option<[u8; 32]>,
    transport: quinn::TransportConfig,
) -> Result<quinn::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(PinnedCertificate { sha256, provider }))
        .with_no_client_auth();
    let quic = quinn::crypto::rustls::QuicClientConfig::try_from(tls).map_err(|e| e.to_string())?;
    let mut c = quinn::ClientConfig::new(Arc::new(quic));
    c.transport_config(Arc::new(transport));
    Ok(c)
}

/// `ackwise send --transport quic`: connects to the first address that
/// answers, sends, waits for the receiver to close.
pub(super) async fn run_send_quic(
    plan: &SendPlan,
    files: Vec<OutgoingFile>,
    addrs: &[SocketAddr],
    console: &mut Console,
) -> Result<Summary, TransferError> {
    let failed = |reason: String| TransferError::Connect {
        addr: plan.to.clone(),
        reason,
    };
    let sha256 = plan.quic_cert_sha256.ok_or_else(|| {
        failed("--transport quic needs --quic-cert-sha256 (ackwise recv prints it)".into())
    })?;
    let config = quic_config(plan.strategy).map_err(failed)?;
    let transport = on_sockets(config.sender_transport(), plan.options.idle_timeout);
    let client = client_config(Some(sha256), transport).map_err(failed)?;
    let mut last = failed("no address to try".into());
    for &addr in addrs {
        let local: SocketAddr = if addr.is_ipv4() {
            (Ipv4Addr::UNSPECIFIED, 0).into()
        } else {
            (Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let endpoint = Endpoint::client(local)
            .map_err(|e| failed(format!("cannot open a UDP socket: {e}")))?;
        let connecting = endpoint
            .connect_with(client.clone(), addr, SERVER_NAME)
            .map_err(|e| failed(e.to_string()))?;
        let conn = match tokio::time::timeout(plan.connect_timeout, connecting).await {
            Err(_) => {
                last = TransferError::ConnectTimeout {
                    addr: plan.to.clone(),
                    after: plan.connect_timeout,
                };
                continue;
            }
            Ok(Err(quinn::ConnectionError::VersionMismatch)) => {
                // An ackwise endpoint answers QUIC with version
                // negotiation (see `net::foreign`).
                last = failed(
                    "the receiver does not speak QUIC (it answered with version negotiation): \
                     it runs the ackwise transport; send without --transport quic"
                        .into(),
                );
                continue;
            }
            Ok(Err(e)) => {
                last = failed(e.to_string());
                continue;
            }
            Ok(Ok(conn)) => conn,
        };
        let (send, recv) = conn.open_bi().await.map_err(|e| failed(e.to_string()))?;
        let mut stream = QuicStream { send, recv };
        let result = send_files(&mut stream, files, &plan.options, console).await;
        match &result {
            Ok(_) => {
                let _ = stream.send.finish();
                // The receiver closes once it has read the end of the
                // stream; closing first could cut its last read short.
                let _ = tokio::time::timeout(CLOSE_GRACE, conn.closed()).await;
            }
            Err(_) => conn.close(1u32.into(), b"transfer failed"),
        }
        endpoint.close(0u32.into(), b"");
        let _ = tokio::time::timeout(CLOSE_GRACE, endpoint.wait_idle()).await;
        return result;
    }
    Err(last)
}

/// `ackwise recv --transport quic` with a given identity: serves until
/// `shutdown` completes, each connection's first bidirectional stream
/// carrying one transfer.
pub async fn serve_quic(
    plan: &ServePlan,
    identity: &SelfSigned,
    addr: SocketAddr,
    shutdown: impl Future<Output = ()>,
) -> Result<(), TransferError> {
    let listen_failed = |reason: String| TransferError::Listen {
        addr: plan.listen.clone(),
        reason,
    };
    // The receiver's own transport: its windows and idle timeout; the
    // sender's ACK_FREQUENCY frames set how often it acknowledges.
    let config = QuicFlowConfig {
        receive_window: 8 << 20,
        ..QuicFlowConfig::default()
    };
    let transport = on_sockets(config.receiver_transport(), plan.options.idle_timeout);
    let server = identity
        .server_config(transport)
        .map_err(|e| listen_failed(e.to_string()))?;
    let endpoint = Endpoint::server(server, addr).map_err(|e| listen_failed(e.to_string()))?;
    if plan.console != super::ConsoleMode::Quiet {
        eprintln!(
            "receiving on {} (quic, certificate sha256 {}) into {}; Ctrl-C stops",
            endpoint
                .local_addr()
                .map_or_else(|_| plan.listen.clone(), |a| a.to_string()),
            fingerprint_hex(&fingerprint(&identity.cert)),
            plan.options.out_dir.display()
        );
    }
    let multi = MultiProgress::new();
    let mut tasks = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            incoming = endpoint.accept() => match incoming {
                Some(incoming) => {
                    let options = plan.options.clone();
                    let mode = plan.console;
                    let multi = multi.clone();
                    tasks.spawn(async move {
                        let peer = incoming.remote_address();
                        let mut console = Console::new(mode, peer.to_string()).with_multi(multi);
                        let conn = match incoming.await {
                            Ok(conn) => conn,
                            Err(e) => {
                                console.line(&format!("{peer}: error: {e}"));
                                return;
                            }
                        };
                        let (send, recv) = match conn.accept_bi().await {
                            Ok(s) => s,
                            Err(e) => {
                                console.line(&format!("{peer}: error: {e}"));
                                return;
                            }
                        };
                        let mut stream = QuicStream { send, recv };
                        match receive_files(&mut stream, &options, &mut console).await {
                            Ok(summary) => {
                                if !summary.files.is_empty() && !console.is_quiet() {
                                    console.line(&format!("{peer}: {summary}"));
                                }
                                // The last verdict must reach the sender
                                // before the close discards what is unsent.
                                let _ = stream.send.finish();
                                let _ = tokio::time::timeout(CLOSE_GRACE, stream.send.stopped()).await;
                                conn.close(0u32.into(), b"done");
                            }
                            Err(e) => {
                                console.line(&format!("{peer}: error: {e}"));
                                conn.close(1u32.into(), b"transfer failed");
                            }
                        }
                    });
                }
                None => break,
            },
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
    tasks.shutdown().await;
    endpoint.close(0u32.into(), b"");
    let _ = tokio::time::timeout(CLOSE_GRACE, endpoint.wait_idle()).await;
    Ok(())
}

/// How long an `ackwise perf` QUIC connection may stay silent.
const PERF_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// The client end of `ackwise perf --transport quic`: one quinn endpoint
/// whose connections send with a `quic*` strategy's transport settings.
/// perf moves a fixed pattern, so the client accepts the server's
/// self-signed certificate without a pinned fingerprint (the handshake's
/// signature is still checked against it).
#[derive(Debug)]
pub struct PerfQuicClient {
    endpoint: Endpoint,
    config: quinn::ClientConfig,
}

impl PerfQuicClient {
    /// An endpoint on `local` for connections of `strategy`; an error
    /// naming the QUIC strategies for any other.
    pub fn new(local: SocketAddr, strategy: Strategy) -> Result<PerfQuicClient, String> {
        let config = quic_config(strategy)?;
        let transport = on_sockets(config.sender_transport(), PERF_IDLE_TIMEOUT);
        let config = client_config(None, transport)?;
        let endpoint =
            Endpoint::client(local).map_err(|e| format!("cannot open a UDP socket: {e}"))?;
        Ok(PerfQuicClient { endpoint, config })
    }

    /// One connection to `addr` and its first bidirectional stream.
    pub async fn connect(
        &self,
        addr: SocketAddr,
        timeout: Duration,
    ) -> Result<(QuicStream, quinn::Connection), String> {
        let connecting = self
            .endpoint
            .connect_with(self.config.clone(), addr, SERVER_NAME)
            .map_err(|e| e.to_string())?;
        let conn = match tokio::time::timeout(timeout, connecting).await {
            Err(_) => return Err("timed out".into()),
            Ok(Err(quinn::ConnectionError::VersionMismatch)) => {
                return Err("the server does not speak QUIC (it answered with version \
                     negotiation): it runs the ackwise transport"
                    .into())
            }
            Ok(Err(e)) => return Err(e.to_string()),
            Ok(Ok(conn)) => conn,
        };
        let (send, recv) = conn.open_bi().await.map_err(|e| e.to_string())?;
        Ok((QuicStream { send, recv }, conn))
    }

    /// Closes the endpoint once its connections are done.
    pub async fn close(self) {
        self.endpoint.close(0u32.into(), b"");
        let _ = tokio::time::timeout(CLOSE_GRACE, self.endpoint.wait_idle()).await;
    }
}

/// The server end of `ackwise perf --transport quic` on `addr`, with a
/// certificate generated for it. Its connections use `strategy`'s sending
/// settings (a `quic*` strategy, refused otherwise; none means `quic`): what a
/// `--reverse` run sends with, while as a receiver it acknowledges as each
/// client's ACK_FREQUENCY frames ask.
pub fn perf_quic_server(addr: SocketAddr, strategy: Option<Strategy>) -> Result<Endpoint, String> {
    let config = match strategy {
        Some(s) => quic_config(s)?,
        None => quic_config("quic".parse::<Strategy>().map_err(|e| e.to_string())?)?,
    };
    let transport = on_sockets(config.sender_transport(), PERF_IDLE_TIMEOUT);
    let identity = SelfSigned::generate().map_err(|e| e.to_string())?;
    let server = identity
        .server_config(transport)
        .map_err(|e| e.to_string())?;
    Endpoint::server(server, addr).map_err(|e| e.to_string())
}

/// An incoming perf connection, once its first bidirectional stream is
/// open.
pub async fn perf_quic_accept(
    incoming: quinn::Incoming,
) -> Result<(QuicStream, quinn::Connection), String> {
    let conn = incoming.await.map_err(|e| e.to_string())?;
    let (send, recv) = conn.accept_bi().await.map_err(|e| e.to_string())?;
    Ok((QuicStream { send, recv }, conn))
}
