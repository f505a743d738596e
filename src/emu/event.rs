//! The event queue: one binary heap ordered by virtual time, with a serial
//! number breaking ties so that events scheduled for the same instant run in
//! the order they were scheduled. That tie-break is what makes a run
//! reproducible bit for bit (a heap alone gives no order among equal
//! keys).

use crate::time::Instant;

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

#[derive(Debug, Clone, Copy)]
struct Entry {
    at: Instant,
    serial: u64,
    event: Event,
}

impl Entry {
    /// Time then serial as one number, the order of the pair: one wide
    /// comparison per step of the heap instead of two with a branch.
    /// Serials are unique, so no two entries have the same key.
    #[inline]
    fn key(&self) -> u128 {
        (u128::from(self.at.as_nanos()) << 64) | u128::from(self.serial)
    }
}

/// A deterministic priority queue of events.
///
/// A binary min-heap on [`Entry::key`], written out rather than
/// `std::collections::BinaryHeap`: that one stores a pushed entry and
/// reads it straight back to sift it up (and likewise the entry it moves
/// to the root on a pop), a wide load of fresh narrow stores that the
/// processor cannot forward, on every event. Here the entry being placed
/// stays in registers until its slot is found. Keys are unique, so the
/// order of pops is the keys' order whatever the heap's layout.
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    heap: Vec<Entry>,
    serial: u64,
}

impl EventQueue {
    pub(crate) fn push(&mut self, at: Instant, event: Event) {
        self.serial += 1;
        let entry = Entry {
            at,
            serial: self.serial,
            event,
        };
        let key = entry.key();
        // Sift up from the new last slot: parents with a later key move
        // down one level, and the entry lands where its parent is earlier.
        let mut hole = self.heap.len();
        self.heap.push(entry);
        while hole > 0 {
            let parent = (hole - 1) / 2;
            if self.heap[parent].key() < key {
                break;
            }
            self.heap[hole] = self.heap[parent];
            hole = parent;
        }
        self.heap[hole] = entry;
    }

    pub(crate) fn pop(&mut self) -> Option<(Instant, Event)> {
        let last = self.heap.pop()?;
        let Some(&first) = self.heap.first() else {
            return Some((last.at, last.event));
        };
        // The last entry fills the root's place: sift it down, the earlier
        // child moving up one level each step.
        let key = last.key();
        let len = self.heap.len();
        let mut hole = 0;
        loop {
            let mut child = 2 * hole + 1;
            if child >= len {
                break;
            }
            if child + 1 < len && self.heap[child + 1].key() < self.heap[child].key() {
                child += 1;
            }
            if key < self.heap[child].key() {
                break;
            }
            self.heap[hole] = self.heap[child];
            hole = child;
        }
        self.heap[hole] = last;
        Some((first.at, first.event))
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
