//! In-network ACK management: components that sit on a reverse-path
//! queue and decide which pure ACKs may be removed (paper 000's ACK
//! filtering, paper 001's ACK delay control). They work on parsed
//! segments and know nothing of the emulator's event loop, so the same
//! code can serve the emulator's queues and a relay over real sockets.
//!
//! So far: [`classify`] (which segments are pure ACKs, and when a newer
//! ACK of a flow may stand in for an older one). The rate measurement the
//! delayed filters need is [`TswRate`](crate::estimators::TswRate).

pub mod classify;

pub use classify::{may_replace, PureAck};
