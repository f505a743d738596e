//! QUIC (feature `quic`): ackwise's ACK economy for quinn-proto.
//!
//! - [`AckwiseRenoConfig`] / [`AckwiseReno`]: the sender's Reno with
//!   extended byte counting as a quinn-proto congestion controller, for
//!   any quinn application
//!   (`TransportConfig::congestion_controller_factory`).
//! - [`AckFrequencyPolicy`] and [`PathCache`]: ackwise's ACK strategies
//!   mapped onto QUIC's ACK-frequency extension, and what quinn-proto's
//!   API allows of them (see [`ack_frequency`]).
//! - [`QuicFlowConfig`]: what one emulated QUIC transfer runs, used by
//!   [`emu`](crate::emu) to host quinn-proto endpoints in virtual time
//!   (see `emu::FlowTransport`).

pub mod ack_frequency;
mod congestion;
pub(crate) mod emu_host;
mod tls;

pub use ack_frequency::{AckFrequencyPolicy, CachedPath, PathCache};
pub use congestion::{AckwiseReno, AckwiseRenoConfig};
pub use emu_host::{QuicController, QuicFlowConfig};
pub use tls::{SelfSigned, SERVER_NAME};

use thiserror::Error;

/// Why a QUIC endpoint could not be set up or a transfer failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum QuicError {
    /// The run-time certificate could not be generated.
    #[error("certificate generation failed: {0}")]
    Certificate(String),
    /// rustls refused a configuration.
    #[error("TLS configuration failed: {0}")]
    Tls(String),
    /// quinn-proto refused to open the connection.
    #[error("QUIC connect failed: {0}")]
    Connect(String),
}
