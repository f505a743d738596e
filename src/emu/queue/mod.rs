//! Queues at link inputs, behind one small trait so that links, middlebox
//! hooks and tests see them alike.
//!
//! - [`DropTail`]: FIFO with a packet limit and an optional byte limit
//!   (ns-2's `DropTail`, the papers' default router: paper 004 sec. 4.2).
//! - [`Red`]: Random Early Detection (Floyd & Jacobson 1993) with the gentle
//!   variant and optional ECN marking (RFC 3168), as ns-2 implements it.
//! - [`RoundRobin`]: one FIFO per flow served in turn, the per-connection
//!   scheduling of paper 000 (Barakat & Altman, sec. 5).
//! - [`AckFilterQueue`]: paper 000's reverse buffer with ACK filtering
//!   ([`crate::ack_path::AckBuffer`]); it reads each packet's pure-ACK
//!   content and may remove packets it already accepted.
//!
//! A queue holds only [`QueuedPacket`] descriptors (an index into the
//! simulator's packet pool plus what the discipline needs to know), so no
//! packet bytes move and nothing is allocated per packet once the internal
//! ring buffers have grown to their working size.

mod ack_filter;
mod droptail;
mod red;
mod round_robin;

pub use ack_filter::AckFilterQueue;
pub use droptail::DropTail;
pub use red::{Red, RedGate, RedParams};
pub use round_robin::RoundRobin;

use crate::ack_path::{AckBufferConfig, PureAck, Removal};
use crate::time::Instant;
use rand_core::RngCore;
use std::fmt::Debug;

/// What a queue needs to know about a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueuedPacket {
    /// Opaque handle (the simulator's packet pool index).
    pub id: u32,
    /// Size on the link, bytes (segment plus per-packet overhead).
    pub bytes: u32,
    /// Flow or traffic class, for per-flow disciplines.
    pub flow: u32,
    /// The packet's IP header says ECN-capable transport (ECT).
    pub ecn_capable: bool,
}

/// What happened to an arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Stored unchanged.
    Queued,
    /// Stored with Congestion Experienced set (RFC 3168) instead of dropped.
    Marked,
    /// Discarded; the queue did not keep it.
    Dropped,
}

/// A queueing discipline at a link input.
pub trait LinkQueue: Debug {
    /// Offers `pkt` at `now`; random choices come from `rng`.
    fn enqueue(&mut self, now: Instant, pkt: QueuedPacket, rng: &mut dyn RngCore) -> Verdict;
    /// Takes the next packet to transmit.
    fn dequeue(&mut self, now: Instant) -> Option<QueuedPacket>;
    /// Packets waiting.
    fn len_packets(&self) -> usize;
    /// Bytes waiting (on-link sizes).
    fn len_bytes(&self) -> u64;
    /// Whether the queue may draw from the `rng` it is given. The
    /// simulator keys each packet's draws by the packet ([`crate::emu`]'s
    /// common random numbers) only on links where something draws; a queue
    /// that never does says so and spares it the work.
    fn draws(&self) -> bool {
        true
    }
    /// Whether the queue reads pure ACKs: the simulator then parses each
    /// arriving packet and calls [`enqueue_ack`](Self::enqueue_ack).
    fn wants_acks(&self) -> bool {
        false
    }
    /// [`enqueue`](Self::enqueue) with the packet's pure-ACK content
    /// (`None` for data, control segments and cross traffic).
    fn enqueue_ack(
        &mut self,
        now: Instant,
        pkt: QueuedPacket,
        _ack: Option<PureAck>,
        rng: &mut dyn RngCore,
    ) -> Verdict {
        self.enqueue(now, pkt, rng)
    }
    /// Whether the queue sends packets in the order they arrived (DropTail,
    /// RED). A relay that keeps the order beside the queue relies on it;
    /// per-flow and filtering queues choose their own order.
    fn serves_in_arrival_order(&self) -> bool {
        true
    }
    /// A packet the queue accepted earlier and has since removed without
    /// sending it (ACK filtering, a drop policy that evicts), with the
    /// reason. The simulator collects these after every enqueue.
    fn take_removed(&mut self) -> Option<(QueuedPacket, Removal)> {
        None
    }
}

/// Which discipline a link uses, as plain data.
#[derive(Debug, Clone, PartialEq)]
pub enum QueueSpec {
    /// FIFO dropping arrivals when full.
    DropTail {
        /// Most packets waiting (the packet in transmission is not counted,
        /// as in ns-2).
        limit_packets: usize,
        /// Most bytes waiting, if limited.
        limit_bytes: Option<u64>,
    },
    /// Random Early Detection.
    Red(RedParams),
    /// Per-flow round robin with a shared packet limit.
    RoundRobin {
        /// Most packets waiting over all flows.
        limit_packets: usize,
    },
    /// Paper 000's reverse buffer with ACK filtering; its `capacity_bps`
    /// is taken from the link's rate when built.
    AckFilter {
        /// The buffer's settings.
        config: AckBufferConfig,
        /// A RED gate in front of it (paper 002), if any.
        red: Option<RedParams>,
    },
}

impl QueueSpec {
    /// A DropTail queue of `limit_packets` packets and no byte limit.
    pub fn drop_tail(limit_packets: usize) -> QueueSpec {
        QueueSpec::DropTail {
            limit_packets,
            limit_bytes: None,
        }
    }

    /// Checks the parameters; the error names the problem.
    pub fn validate(&self) -> Result<(), &'static str> {
        match self {
            QueueSpec::DropTail {
                limit_packets,
                limit_bytes,
            } => {
                if *limit_packets == 0 || *limit_bytes == Some(0) {
                    return Err("queue limit must be at least one packet / byte");
                }
            }
            QueueSpec::RoundRobin { limit_packets } => {
                if *limit_packets == 0 {
                    return Err("queue limit must be at least one packet");
                }
            }
            QueueSpec::Red(p) => p.validate()?,
            QueueSpec::AckFilter { config: c, red } => {
                if let Some(r) = red {
                    r.validate()?;
                }
                if c.limit_packets == 0 {
                    return Err("queue limit must be at least one packet");
                }
                if let crate::ack_path::Filter::Static { delta: 0 } = c.filter {
                    return Err("ACK filtering threshold delta must be at least 1");
                }
            }
        }
        Ok(())
    }

    /// Builds the queue for a link of `rate_bps` (RED uses it for its idle
    /// correction). Call [`validate`](Self::validate) first.
    pub fn build(&self, rate_bps: u64) -> Box<dyn LinkQueue> {
        match self {
            QueueSpec::DropTail {
                limit_packets,
                limit_bytes,
            } => Box::new(DropTail::new(*limit_packets, *limit_bytes)),
            QueueSpec::Red(p) => Box::new(Red::new(p.clone(), rate_bps)),
            QueueSpec::RoundRobin { limit_packets } => Box::new(RoundRobin::new(*limit_packets)),
            QueueSpec::AckFilter { config, red } => Box::new(AckFilterQueue::new(
                AckBufferConfig {
                    capacity_bps: rate_bps,
                    ..*config
                },
                red.as_ref().map(|r| RedGate::new(r.clone(), rate_bps)),
            )),
        }
    }
}

/// A uniform draw in [0, 1) with 53 random bits.
pub(crate) fn uniform(rng: &mut dyn RngCore) -> f64 {
    unit(rng.next_u64())
}

/// The top 53 of 64 random bits as a uniform draw in [0, 1).
pub(crate) fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}
