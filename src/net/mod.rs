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
//! of header; it must fit the path: on loopback anything up to the
//! 64 KiB datagram limit works, on an Ethernet path keep
//! `mss + 60 + 28 <= 1500` (e.g. `mss = 1400`), since the socket does not
//! fragment.

mod clock;
mod driver;
mod endpoint;
mod error;
mod shared;
mod stats;
mod stream;
pub mod transfer;

pub use endpoint::{Endpoint, EndpointConfig};
pub use error::NetError;
pub use stats::EndpointStats;
pub use stream::{AckProbe, OwnedReadHalf, OwnedWriteHalf, Stream};
