//! Real sockets: a tokio UDP endpoint that runs [`Connection`](crate::connection::Connection)s
//! with real time, async streams over them, and file transfer.
//!
//! Each UDP datagram carries one TCP segment in ackwise's wire format
//! ([`crate::wire`]); connections are told apart by remote address and ports.

pub mod transfer;
