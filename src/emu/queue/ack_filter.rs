//! The emulator's face of [`AckBuffer`]: a [`LinkQueue`] whose packets
//! carry their pure-ACK content, so a reverse link can run paper 000's
//! ACK filtering with any of its service orders and drop policies,
//! optionally behind a RED gate (paper 002: ACK filtering on a RED/ECN
//! queue, whose marks drive ACK congestion control).

use super::{LinkQueue, QueuedPacket, RedGate, Verdict};
use crate::ack_path::{AckBuffer, AckBufferConfig, Admission, Entry, Gate, PureAck, Removal};
use crate::time::Instant;
use rand_core::RngCore;

/// A link queue that filters ACKs. See [`AckBuffer`].
#[derive(Debug)]
pub struct AckFilterQueue {
    buffer: AckBuffer<QueuedPacket>,
    red: Option<RedGate>,
}

impl AckFilterQueue {
    /// An empty queue with these settings; with `red`, a RED gate decides
    /// (drop, mark or admit) for every packet that is not filtered into an
    /// older ACK's place.
    pub fn new(config: AckBufferConfig, red: Option<RedGate>) -> AckFilterQueue {
        AckFilterQueue {
            buffer: AckBuffer::new(config),
            red,
        }
    }

    /// The buffer inside, for its counters and rates.
    pub fn buffer(&self) -> &AckBuffer<QueuedPacket> {
        &self.buffer
    }
}

impl LinkQueue for AckFilterQueue {
    fn enqueue(&mut self, now: Instant, pkt: QueuedPacket, rng: &mut dyn RngCore) -> Verdict {
        self.enqueue_ack(now, pkt, None, rng)
    }

    fn wants_acks(&self) -> bool {
        true
    }

    fn serves_in_arrival_order(&self) -> bool {
        false
    }

    fn enqueue_ack(
        &mut self,
        now: Instant,
        pkt: QueuedPacket,
        ack: Option<PureAck>,
        rng: &mut dyn RngCore,
    ) -> Verdict {
        let entry = Entry {
            item: pkt,
            bytes: pkt.bytes,
            flow: pkt.flow,
            ack,
        };
        let red = &mut self.red;
        let gate = |queued: usize| match red {
            None => Gate::Admit,
            Some(g) => match g.admit(now, queued, pkt.ecn_capable, rng) {
                Verdict::Queued => Gate::Admit,
                Verdict::Marked => Gate::Mark,
                Verdict::Dropped => Gate::Drop,
            },
        };
        match self.buffer.enqueue_gated(now, entry, gate) {
            Admission::Queued | Admission::Replaced => Verdict::Queued,
            Admission::Marked => Verdict::Marked,
            Admission::Dropped => Verdict::Dropped,
        }
    }

    fn take_removed(&mut self) -> Option<(QueuedPacket, Removal)> {
        self.buffer.take_removed()
    }

    fn dequeue(&mut self, now: Instant) -> Option<QueuedPacket> {
        let pkt = self.buffer.dequeue(now)?.item;
        if let (Some(red), 0) = (&mut self.red, self.buffer.len_packets()) {
            red.on_empty(now);
        }
        Some(pkt)
    }

    fn len_packets(&self) -> usize {
        self.buffer.len_packets()
    }

    fn len_bytes(&self) -> u64 {
        self.buffer.len_bytes()
    }
}
