//! Real sockets: a tokio UDP endpoint that runs [`Connection`](crate::connection::Connection)s
//! with real time, async streams over them, and file transfer
//! ([`transfer`]).
//!
//! Each UDP datagram carries one TCP segment in ackwise's wire format
//! ([`crate::wire`]), or several of equal size when the kernel batches them
//! (GSO on send, GRO on receive); connections are told apart by the remote
//! socket address and the port pair in the TCP header. An [`Endpoint`]
//! opens connections with [`Endpoint::connect`] and accepts them with
//! [`Endpoint::accept`]; each is a [`Stream`] implementing tokio's
//! `AsyncRead` and `AsyncWrite`.
//!
//! The segment size is the connection's `Config::mss` plus up to 60 bytes
//! of header; it must fit the path: on loopback anything up to
//! [`MAX_MSS`] (a whole UDP datagram) works, and larger values are
//! refused; on an Ethernet path keep `mss + 60 + 28 <= 1500` (e.g.
//! `mss = 1400`), since the socket does not fragment.

pub(crate) mod capture;
mod clock;
mod driver;
mod endpoint;
mod error;
pub mod foreign;
mod gather;
mod half_open;
pub mod kernel_tcp;
#[cfg(feature = "lab")]
pub mod perf;
pub mod pmtu;
mod shared;
mod stats;
mod stream;
#[cfg(feature = "lab")]
pub mod transfer;

pub use endpoint::{Endpoint, EndpointConfig};

/// The largest UDP payload an IPv4 datagram carries (65 535 bytes less 20
/// of IPv4 and 8 of UDP header); IPv6 allows slightly more without jumbo
/// frames, so this bounds both.
pub const MAX_UDP_PAYLOAD_BYTES: usize = 65_507;

/// The most TCP header ackwise puts in front of a segment's payload
/// (20 bytes plus 40 of options).
pub const MAX_TCP_HEADER_BYTES: usize = 60;

/// The largest `Config::mss` a connection on real sockets can use: a
/// full segment with the most header must fit one UDP datagram, since the
/// socket does not fragment. Larger values are refused with
/// [`NetError::SegmentTooLarge`] rather than stalling on datagrams the
/// kernel will not send.
pub const MAX_MSS: u16 = (MAX_UDP_PAYLOAD_BYTES - MAX_TCP_HEADER_BYTES) as u16;
/// How late this endpoint's timers may wake a connection: tokio's timer
/// wheel ticks every millisecond, and a wake-up also waits for the driver
/// task to be scheduled. A paced connection's `PacingConfig::burst` is
/// raised to this, so that it keeps its rate however coarse the timer
/// (quinn's pacer uses the same 2 ms quantum); so is a spreading one's
/// `Config::ack_spreading_burst`, whose default is this tick.
pub const PACING_TIMER_TICK: std::time::Duration = crate::sender::spread::DEFAULT_BURST;
pub use error::NetError;
pub use stats::EndpointStats;
pub use stream::{AckProbe, OwnedReadHalf, OwnedWriteHalf, Stream};
