//! DropTail: a FIFO that discards arrivals once it holds its limit.

use super::{LinkQueue, QueuedPacket, Verdict};
use crate::time::Instant;
use rand_core::RngCore;
use std::collections::VecDeque;

/// FIFO with a packet limit and an optional byte limit.
#[derive(Debug)]
pub struct DropTail {
    fifo: VecDeque<QueuedPacket>,
    limit_packets: usize,
    limit_bytes: Option<u64>,
    bytes: u64,
}

impl DropTail {
    /// A queue holding at most `limit_packets` packets and, if given,
    /// `limit_bytes` bytes.
    pub fn new(limit_packets: usize, limit_bytes: Option<u64>) -> DropTail {
        DropTail {
            fifo: VecDeque::with_capacity(limit_packets.min(1 << 16)),
            limit_packets,
            limit_bytes,
            bytes: 0,
        }
    }
}

impl LinkQueue for DropTail {
    fn draws(&self) -> bool {
        false
    }

    fn enqueue(&mut self, _now: Instant, pkt: QueuedPacket, _rng: &mut dyn RngCore) -> Verdict {
        let over_bytes = self
            .limit_bytes
            .is_some_and(|l| self.bytes + u64::from(pkt.bytes) > l);
        if self.fifo.len() >= self.limit_packets || over_bytes {
            return Verdict::Dropped;
        }
        self.bytes += u64::from(pkt.bytes);
        self.fifo.push_back(pkt);
        Verdict::Queued
    }

    fn dequeue(&mut self, _now: Instant) -> Option<QueuedPacket> {
        let p = self.fifo.pop_front()?;
        self.bytes -= u64::from(p.bytes);
        Some(p)
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    fn pkt(id: u32, bytes: u32) -> QueuedPacket {
        QueuedPacket {
            id,
            bytes,
            flow: 0,
            ecn_capable: false,
        }
    }

    #[test]
    fn drops_exactly_when_full() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let mut q = DropTail::new(3, None);
        let now = Instant::ZERO;
        for i in 0..3 {
            assert_eq!(q.enqueue(now, pkt(i, 100), &mut rng), Verdict::Queued);
        }
        assert_eq!(q.enqueue(now, pkt(3, 100), &mut rng), Verdict::Dropped);
        assert_eq!((q.len_packets(), q.len_bytes()), (3, 300));
        assert_eq!(q.dequeue(now).map(|p| p.id), Some(0));
        assert_eq!(q.enqueue(now, pkt(4, 100), &mut rng), Verdict::Queued);
        let ids: Vec<u32> = std::iter::from_fn(|| q.dequeue(now).map(|p| p.id)).collect();
        assert_eq!(ids, vec![1, 2, 4]);
        assert_eq!(q.len_bytes(), 0);
    }

    #[test]
    fn byte_limit_drops_the_packet_that_would_overflow() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let mut q = DropTail::new(100, Some(250));
        let now = Instant::ZERO;
        assert_eq!(q.enqueue(now, pkt(0, 100), &mut rng), Verdict::Queued);
        assert_eq!(q.enqueue(now, pkt(1, 100), &mut rng), Verdict::Queued);
        assert_eq!(q.enqueue(now, pkt(2, 100), &mut rng), Verdict::Dropped);
        assert_eq!(q.enqueue(now, pkt(3, 50), &mut rng), Verdict::Queued);
    }
}
