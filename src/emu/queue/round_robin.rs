//! Per-flow round robin: one FIFO per flow, non-empty FIFOs served one
//! packet each in turn, a packet limit shared by all of them. This is the
//! per-connection scheduling paper 000 (Barakat & Altman, sec. 5) pairs with
//! ACK filtering; when the shared buffer is full the arriving packet is
//! dropped, which is "drop from the arriving flow".

use super::{LinkQueue, QueuedPacket, Verdict};
use crate::time::Instant;
use rand_core::RngCore;
use std::collections::{HashMap, VecDeque};

/// Round robin over per-flow FIFOs.
#[derive(Debug)]
pub struct RoundRobin {
    limit_packets: usize,
    /// Flow id -> index into `fifos`; slots are kept once created so that
    /// steady state allocates nothing.
    slots: HashMap<u32, usize>,
    fifos: Vec<VecDeque<QueuedPacket>>,
    /// Slots with packets, in service order.
    active: VecDeque<usize>,
    packets: usize,
    bytes: u64,
}

impl RoundRobin {
    /// A scheduler holding at most `limit_packets` packets in total.
    pub fn new(limit_packets: usize) -> RoundRobin {
        RoundRobin {
            limit_packets,
            slots: HashMap::new(),
            fifos: Vec::new(),
            active: VecDeque::new(),
            packets: 0,
            bytes: 0,
        }
    }

    /// Packets waiting from `flow`.
    pub fn len_flow(&self, flow: u32) -> usize {
        self.slots.get(&flow).map_or(0, |&s| self.fifos[s].len())
    }
}

impl LinkQueue for RoundRobin {
    fn serves_in_arrival_order(&self) -> bool {
        false
    }

    fn draws(&self) -> bool {
        false
    }

    fn enqueue(&mut self, _now: Instant, pkt: QueuedPacket, _rng: &mut dyn RngCore) -> Verdict {
        if self.packets >= self.limit_packets {
            return Verdict::Dropped;
        }
        let next = self.fifos.len();
        let slot = *self.slots.entry(pkt.flow).or_insert(next);
        if slot == next {
            self.fifos.push(VecDeque::new());
        }
        let fifo = &mut self.fifos[slot];
        if fifo.is_empty() {
            self.active.push_back(slot);
        }
        fifo.push_back(pkt);
        self.packets += 1;
        self.bytes += u64::from(pkt.bytes);
        Verdict::Queued
    }

    fn dequeue(&mut self, _now: Instant) -> Option<QueuedPacket> {
        let slot = self.active.pop_front()?;
        let fifo = &mut self.fifos[slot];
        let p = fifo.pop_front()?;
        if !fifo.is_empty() {
            self.active.push_back(slot);
        }
        self.packets -= 1;
        self.bytes -= u64::from(p.bytes);
        Some(p)
    }

    fn len_packets(&self) -> usize {
        self.packets
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

    fn pkt(id: u32, flow: u32) -> QueuedPacket {
        QueuedPacket {
            id,
            bytes: 40,
            flow,
            ecn_capable: false,
        }
    }

    #[test]
    fn alternates_between_flows() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let mut q = RoundRobin::new(100);
        let now = Instant::ZERO;
        // Flow 7 floods first, flow 3 arrives later with fewer packets.
        for i in 0..5 {
            q.enqueue(now, pkt(i, 7), &mut rng);
        }
        for i in 10..12 {
            q.enqueue(now, pkt(i, 3), &mut rng);
        }
        let order: Vec<u32> = std::iter::from_fn(|| q.dequeue(now).map(|p| p.flow)).collect();
        assert_eq!(order, vec![7, 3, 7, 3, 7, 7, 7]);
        assert_eq!((q.len_packets(), q.len_bytes()), (0, 0));
    }

    #[test]
    fn shared_limit_drops_the_arrival() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let mut q = RoundRobin::new(3);
        let now = Instant::ZERO;
        for i in 0..3 {
            assert_eq!(q.enqueue(now, pkt(i, 1), &mut rng), Verdict::Queued);
        }
        assert_eq!(q.enqueue(now, pkt(3, 2), &mut rng), Verdict::Dropped);
        assert_eq!(q.len_flow(1), 3);
        assert_eq!(q.len_flow(2), 0);
    }
}
