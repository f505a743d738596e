//! The event queue: one binary heap ordered by virtual time, with a serial
//! number breaking ties so that events scheduled for the same instant run in
//! the order they were scheduled. That tie-break is what makes a run
//! reproducible bit for bit (`BinaryHeap` alone gives no order among equal
//! keys).

use crate::time::Instant;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Index of a packet slot in the packet pool.
pub(crate) type PacketIdx = u32;

/// What happens at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// The oldest packet in a link's delay line reaches the far end and
    /// moves on to the next hop (a link, or its destination host).
    LinkExit(u32),
    /// A link finished serialising its current packet.
    TxDone(u32),
    /// A shared medium is free: serve the next member link's frame.
    MediumFree(u32),
    /// A delayed packet is offered to a link queue again, past the hook.
    Reoffer(PacketIdx),
    /// A connection timer may be due (flow, server side?).
    Timer(u32, bool),
    /// A flow's client opens its connection.
    FlowStart(u32),
    /// A cross-traffic source sends a packet or changes phase.
    Cross(u32),
    /// Take a time-series sample.
    Sample,
    /// The measurement window opens: counters restart from here.
    MeasureStart,
}

#[derive(Debug)]
struct Entry {
    at: Instant,
    serial: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.serial == other.serial
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Entry {
    /// Time then serial as one number, the order of the pair: one wide
    /// comparison per step of the heap instead of two with a branch.
    #[inline]
    fn key(&self) -> u128 {
        (u128::from(self.at.as_nanos()) << 64) | u128::from(self.serial)
    }
}
impl Ord for Entry {
    /// Reversed so that the max-heap pops the earliest event first.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// A deterministic priority queue of events.
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    heap: BinaryHeap<Entry>,
    serial: u64,
}

impl EventQueue {
    pub(crate) fn push(&mut self, at: Instant, event: Event) {
        self.serial += 1;
        self.heap.push(Entry {
            at,
            serial: self.serial,
            event,
        });
    }

    pub(crate) fn pop(&mut self) -> Option<(Instant, Event)> {
        self.heap.pop().map(|e| (e.at, e.event))
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_then_fifo_among_equals() {
        let mut q = EventQueue::default();
        q.push(Instant::from_millis(5), Event::Sample);
        q.push(Instant::from_millis(1), Event::TxDone(1));
        q.push(Instant::from_millis(1), Event::TxDone(2));
        q.push(Instant::from_millis(1), Event::TxDone(0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (Instant::from_millis(1), Event::TxDone(1)),
                (Instant::from_millis(1), Event::TxDone(2)),
                (Instant::from_millis(1), Event::TxDone(0)),
                (Instant::from_millis(5), Event::Sample),
            ]
        );
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn pops_in_time_then_push_order_under_any_interleaving() {
        use rand_chacha::ChaCha8Rng;
        use rand_core::{RngCore, SeedableRng};
        for seed in 0..20u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut q = EventQueue::default();
            // The reference: every pending (time, push number), kept sorted.
            let mut pending: Vec<(u64, u32)> = Vec::new();
            let mut pushed = 0u32;
            for _ in 0..5_000 {
                if rng.next_u32() % 3 != 0 || pending.is_empty() {
                    // Few distinct times, so ties are common.
                    let at = u64::from(rng.next_u32() % 64);
                    q.push(Instant::from_nanos(at), Event::TxDone(pushed));
                    pending.push((at, pushed));
                    pushed += 1;
                } else {
                    pending.sort_unstable();
                    let (at, n) = pending.remove(0);
                    assert_eq!(
                        q.pop(),
                        Some((Instant::from_nanos(at), Event::TxDone(n))),
                        "seed {seed}"
                    );
                }
            }
            pending.sort_unstable();
            for (at, n) in pending {
                assert_eq!(q.pop(), Some((Instant::from_nanos(at), Event::TxDone(n))));
            }
            assert_eq!(q.pop(), None);
        }
    }
}
