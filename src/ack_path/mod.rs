//! In-network ACK management: components that sit on a reverse-path
//! queue and decide which pure ACKs may be removed or held back (paper
//! 000's ACK filtering, paper 001's ACK delay control). They work on
//! parsed segments and know nothing of the emulator's event loop, so the
//! same code serves the emulator's queues and the relay over real
//! sockets.
//!
//! - [`classify`]: which segments are pure ACKs, and when a newer ACK of
//!   a flow may stand in for an older one;
//! - [`filter`]: the filtering algorithms (classic, static threshold,
//!   delayed, per-connection delayed) and the optimum threshold of
//!   paper 000 eq. 1;
//! - [`buffer`]: the reverse buffer that runs a filter with FIFO or
//!   round-robin service and a drop policy;
//! - [`delay_control`]: the ACK shaper of paper 001.
//!
//! The rate measurement the delayed filters use is
//! [`TswRate`](crate::estimators::TswRate).
//!
//! # Example
//!
//! Classic filtering keeps one ACK per connection: the second ACK takes
//! the first one's place.
//!
//! ```
//! use ackwise::ack_path::{AckBuffer, AckBufferConfig, Admission, Entry, Filter, PureAck, Service};
//! use ackwise::time::Instant;
//! use ackwise::wire::{SackBlocks, SeqNum};
//! use std::time::Duration;
//!
//! let config = AckBufferConfig::paper_000(
//!     Filter::Classic, Service::Fifo, 100, 100_000, Duration::from_millis(200));
//! let mut buffer = AckBuffer::new(config);
//! let ack = |n| Some(PureAck { src_port: 80, dst_port: 4000, ack: SeqNum(n), sack: SackBlocks::new() });
//! let now = Instant::ZERO;
//! assert_eq!(buffer.enqueue(now, Entry { item: "first", bytes: 40, flow: 0, ack: ack(1000) }), Admission::Queued);
//! assert_eq!(buffer.enqueue(now, Entry { item: "second", bytes: 40, flow: 0, ack: ack(2000) }), Admission::Replaced);
//! assert_eq!(buffer.len_packets(), 1);
//! assert_eq!(buffer.dequeue(now).unwrap().item, "second");
//! ```

pub mod buffer;
pub mod classify;
pub mod delay_control;
pub mod filter;

pub use buffer::{
    AckBuffer, AckBufferConfig, AckBufferCounters, Admission, DropPolicy, Entry, Gate, Removal,
    Service,
};
pub use classify::{may_replace, PureAck};
pub use delay_control::{DelayControl, DelayControlConfig};
pub use filter::{optimum_delta, Filter};
