//! Errors of the socket layer, and how a connection's end maps onto
//! `std::io::Error` for the stream traits.

use crate::connection::{CloseReason, ConfigError};
use std::io;
use std::net::SocketAddr;
use std::time::Duration;
use thiserror::Error;

/// Why [`Endpoint::connect`](super::Endpoint::connect) failed.
#[derive(Debug, Error)]
pub enum NetError {
    /// The peer answered the SYN with a reset, or its host reported that
    /// nothing listens on the port (ICMP port unreachable).
    #[error("connection to {remote} refused")]
    ConnectionRefused {
        /// Where we tried to connect.
        remote: SocketAddr,
    },
    /// No SYN-ACK came back within the connect timeout (or the core gave
    /// up retransmitting the SYN first).
    #[error("connection to {remote} timed out after {after:?}")]
    TimedOut {
        /// Where we tried to connect.
        remote: SocketAddr,
        /// How long we waited.
        after: Duration,
    },
    /// The endpoint was closed before the handshake completed.
    #[error("endpoint closed")]
    EndpointClosed,
    /// Every local port towards this remote address is taken.
    #[error("no free local port towards {remote}")]
    NoFreePort {
        /// Where we tried to connect.
        remote: SocketAddr,
    },
    /// The address cannot be reached from this endpoint's socket (port 0,
    /// an unspecified address, or IPv6 from an IPv4 socket).
    #[error("cannot connect to {remote}: {problem}")]
    InvalidRemote {
        /// Where we tried to connect.
        remote: SocketAddr,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The segment size cannot fit a UDP datagram.
    #[error("segment size {mss} bytes does not fit a UDP datagram (at most {max})")]
    SegmentTooLarge {
        /// The configured `mss`.
        mss: u16,
        /// [`MAX_MSS`](super::MAX_MSS).
        max: u16,
    },
    /// The connection configuration cannot work.
    #[error("invalid connection config: {0}")]
    Config(#[from] ConfigError),
    /// The handshake ended otherwise (for example aborted locally).
    #[error("connection to {remote} failed: {reason}")]
    Closed {
        /// Where we tried to connect.
        remote: SocketAddr,
        /// What the connection reported.
        reason: CloseReason,
    },
}

impl From<NetError> for io::Error {
    fn from(e: NetError) -> io::Error {
        let kind = match &e {
            NetError::ConnectionRefused { .. } => io::ErrorKind::ConnectionRefused,
            NetError::TimedOut { .. } => io::ErrorKind::TimedOut,
            NetError::EndpointClosed => io::ErrorKind::NotConnected,
            NetError::NoFreePort { .. } => io::ErrorKind::AddrInUse,
            NetError::InvalidRemote { .. } => io::ErrorKind::InvalidInput,
            NetError::Config(_) | NetError::SegmentTooLarge { .. } => io::ErrorKind::InvalidInput,
            NetError::Closed { reason, .. } => return close_error(*reason),
        };
        io::Error::new(kind, e)
    }
}

/// The error a stream operation reports once its connection has ended for
/// `reason` (never called for a normal close, which reads as end of file).
pub(crate) fn close_error(reason: CloseReason) -> io::Error {
    let kind = match reason {
        CloseReason::Reset | CloseReason::Evicted => io::ErrorKind::ConnectionReset,
        CloseReason::TimedOut => io::ErrorKind::TimedOut,
        CloseReason::Aborted | CloseReason::PeerMisbehaved => io::ErrorKind::ConnectionAborted,
        CloseReason::Refused | CloseReason::NonceRequired => io::ErrorKind::ConnectionRefused,
        CloseReason::Normal => io::ErrorKind::BrokenPipe,
    };
    io::Error::new(kind, reason)
}

/// The error a stream operation reports once its endpoint has shut down.
pub(crate) fn endpoint_closed() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "endpoint closed")
}
