//! The reverse buffer of paper 000: a packet queue at the input of a slow
//! channel that filters pure ACKs ([`Filter`]), serves connections first
//! come first served or in round robin ([`Service`], sec. 4.1), and picks
//! a victim when full ([`DropPolicy`], sec. 4.2).
//!
//! The buffer is generic over what it stores (`T`: the emulator's packet
//! handle, the relay's datagram), so it knows nothing of the emulator's
//! event loop or of sockets. The caller classifies each packet
//! ([`PureAck::from_segment`]) and names its connection with a `u32`;
//! entries the buffer removes after accepting them come back through
//! [`AckBuffer::take_removed`], so the caller can free them and count
//! them.

use super::classify::PureAck;
use super::filter::{redundant, static_victim, Filter, MaybeAck};
use crate::estimators::TswRate;
use crate::time::Instant;
use alloc::collections::{BTreeMap, VecDeque};
use alloc::vec::Vec;
use core::time::Duration;

/// How the buffer chooses the next packet to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// First come, first served over all connections.
    Fifo,
    /// One packet per connection in turn (sec. 4.1: isolates connections
    /// whose ACKs are filtered from those whose bursts are absorbed).
    RoundRobin,
}

/// Which packet a full buffer gives up (paper 000 sec. 4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropPolicy {
    /// The arriving packet.
    DropTail,
    /// The oldest packet of the connection with the longest queue (Longest
    /// Queue Drop); the arriving packet is then queued.
    LongestQueueOldest,
    /// The oldest packet of the connection whose ACK rate at the output is
    /// highest; the arriving packet is then queued.
    HighestRateOldest,
}

/// A reverse buffer's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AckBufferConfig {
    /// The filtering algorithm.
    pub filter: Filter,
    /// The service order.
    pub service: Service,
    /// The drop policy while no ACK is being filtered.
    pub drop: DropPolicy,
    /// The drop policy while the delayed filters are filtering (sec. 4.2
    /// uses drop-tail then for the single-flow delayed filter).
    pub drop_while_filtering: DropPolicy,
    /// Most packets queued.
    pub limit_packets: usize,
    /// The channel's rate, bits per second (the delayed filters compare
    /// measured rates with it).
    pub capacity_bps: u64,
    /// The TSW estimators' window (of the order of the RTT, sec. 3.1).
    pub rate_window: Duration,
    /// A connection whose ACK rate falls below this fraction of the
    /// capacity, with nothing queued, stops counting as active
    /// ([`Filter::PerFlowDelayed`]).
    pub idle_fraction: f64,
}

impl AckBufferConfig {
    /// Paper 000's pairing of filter, service and drop policy (sec. 4.2):
    /// drop-tail for no filtering and classic filtering, Longest Queue
    /// Drop for the single-flow delayed filter while it is not filtering,
    /// the highest-rate connection's oldest ACK for per-connection delayed
    /// filtering. Static filtering uses drop-tail.
    pub fn paper_000(
        filter: Filter,
        service: Service,
        limit_packets: usize,
        capacity_bps: u64,
        rate_window: Duration,
    ) -> AckBufferConfig {
        let (drop, drop_while_filtering) = match filter {
            Filter::None | Filter::Classic | Filter::Static { .. } => {
                (DropPolicy::DropTail, DropPolicy::DropTail)
            }
            Filter::Delayed { .. } => (DropPolicy::LongestQueueOldest, DropPolicy::DropTail),
            Filter::PerFlowDelayed { .. } => {
                (DropPolicy::HighestRateOldest, DropPolicy::HighestRateOldest)
            }
        };
        AckBufferConfig {
            filter,
            service,
            drop,
            drop_while_filtering,
            limit_packets,
            capacity_bps,
            rate_window,
            idle_fraction: 0.01,
        }
    }
}

/// One packet in the buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry<T> {
    /// What the caller stores.
    pub item: T,
    /// Size on the channel, bytes.
    pub bytes: u32,
    /// The connection it belongs to.
    pub flow: u32,
    /// Its pure-ACK content, `None` for anything else (never filtered).
    pub ack: Option<PureAck>,
}

/// Why an accepted entry left the buffer without being sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// A newer ACK of its connection made it redundant.
    Filtered,
    /// The drop policy chose it to make room.
    Dropped,
}

/// What happened to an arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Queued at the end of its connection's queue.
    Queued,
    /// Queued at the end of its connection's queue, and the admission
    /// gate asked for a Congestion Experienced mark.
    Marked,
    /// Queued in the place of an older ACK it made redundant.
    Replaced,
    /// Not queued: the buffer was full and the policy is drop-tail.
    Dropped,
}

/// What an admission gate (an AQM such as RED in front of the buffer)
/// decides for a packet that would take a new place in the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Let it in.
    Admit,
    /// Let it in with Congestion Experienced set.
    Mark,
    /// Drop it.
    Drop,
}

/// Counters since the buffer was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AckBufferCounters {
    /// ACKs erased by filtering.
    pub filtered: u64,
    /// Packets dropped (arriving or queued).
    pub dropped: u64,
}

#[derive(Debug)]
struct Slot<T> {
    /// Arrival order; a replacing ACK keeps the order of the one it
    /// replaced, which is what "queued at its place" means.
    order: u64,
    entry: Entry<T>,
}

impl<T> MaybeAck for Slot<T> {
    fn pure_ack(&self) -> Option<&PureAck> {
        self.entry.ack.as_ref()
    }
}

#[derive(Debug)]
struct FlowState<T> {
    queue: VecDeque<Slot<T>>,
    rate: TswRate,
}

/// The reverse buffer. See the module documentation.
#[derive(Debug)]
pub struct AckBuffer<T> {
    config: AckBufferConfig,
    // Ordered so that every choice among connections is deterministic.
    flows: BTreeMap<u32, FlowState<T>>,
    channel_rate: TswRate,
    next_order: u64,
    len_packets: usize,
    len_bytes: u64,
    /// Round robin: the connection served last.
    last_served: Option<u32>,
    removed: VecDeque<(T, Removal)>,
    /// Scratch for the indices a filter picks, kept so that arrivals do
    /// not allocate.
    victims: Vec<usize>,
    counters: AckBufferCounters,
}

impl<T> AckBuffer<T> {
    /// An empty buffer.
    pub fn new(config: AckBufferConfig) -> AckBuffer<T> {
        AckBuffer {
            config,
            flows: BTreeMap::new(),
            channel_rate: TswRate::new(config.rate_window),
            next_order: 0,
            len_packets: 0,
            len_bytes: 0,
            last_served: None,
            removed: VecDeque::new(),
            victims: Vec::new(),
            counters: AckBufferCounters::default(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &AckBufferConfig {
        &self.config
    }

    /// Packets queued.
    pub fn len_packets(&self) -> usize {
        self.len_packets
    }

    /// Bytes queued.
    pub fn len_bytes(&self) -> u64 {
        self.len_bytes
    }

    /// Packets queued for `flow`.
    pub fn flow_len(&self, flow: u32) -> usize {
        self.flows.get(&flow).map_or(0, |f| f.queue.len())
    }

    /// Connections the buffer tracks (queued packets or a recent rate).
    pub fn active_flows(&self) -> usize {
        self.flows.len()
    }

    /// The channel's measured utilization at `now` (fraction of the
    /// capacity, from departures).
    pub fn utilization(&self, now: Instant) -> f64 {
        self.channel_rate.utilization(now, self.config.capacity_bps)
    }

    /// Counters so far.
    pub fn counters(&self) -> AckBufferCounters {
        self.counters
    }

    /// The queued entries in the order they will be sent if nothing else
    /// arrives (FIFO service), for inspection.
    pub fn entries(&self) -> Vec<&Entry<T>> {
        let mut slots: Vec<&Slot<T>> = self.flows.values().flat_map(|f| &f.queue).collect();
        slots.sort_by_key(|s| s.order);
        slots.into_iter().map(|s| &s.entry).collect()
    }

    /// Next entry removed after being accepted, with the reason.
    pub fn take_removed(&mut self) -> Option<(T, Removal)> {
        self.removed.pop_front()
    }

    /// Offers `entry` at `now`.
    pub fn enqueue(&mut self, now: Instant, entry: Entry<T>) -> Admission {
        self.enqueue_gated(now, entry, |_| Gate::Admit)
    }

    /// Offers `entry` at `now`; if it is not filtered into an older ACK's
    /// place, `gate` decides from the number of packets queued whether it
    /// may take a new place (paper 002 runs ACK filtering on a RED queue).
    pub fn enqueue_gated(
        &mut self,
        now: Instant,
        entry: Entry<T>,
        gate: impl FnOnce(usize) -> Gate,
    ) -> Admission {
        self.forget_idle(now);
        let capacity = self.config.capacity_bps;
        let active = self.flows.len().max(1) + usize::from(!self.flows.contains_key(&entry.flow));
        let channel_util = self.channel_rate.utilization(now, capacity);
        let flow = self.flows.entry(entry.flow).or_insert_with(|| FlowState {
            queue: VecDeque::new(),
            rate: TswRate::new(self.config.rate_window),
        });
        let filtering = match self.config.filter {
            Filter::None | Filter::Static { .. } => false,
            Filter::Classic => true,
            Filter::Delayed { threshold } => channel_util > threshold,
            Filter::PerFlowDelayed { threshold } => {
                flow.rate.rate_at(now) * 8.0 > threshold * capacity as f64 / active as f64
            }
        };
        if let Some(newer) = entry.ack {
            let victims = &mut self.victims;
            match self.config.filter {
                Filter::Static { delta } => {
                    victims.clear();
                    victims.extend(static_victim(&flow.queue, delta, &newer));
                }
                _ if filtering => redundant(&flow.queue, &newer, victims),
                _ => victims.clear(),
            }
            if let Some(&first) = victims.first() {
                // The newest ACK takes the place of the first victim; the
                // others go, last first so the indices stay valid.
                for &i in victims[1..].iter().rev() {
                    let slot = flow.queue.remove(i).expect("index from this queue");
                    self.len_packets -= 1;
                    self.len_bytes -= u64::from(slot.entry.bytes);
                    self.removed.push_back((slot.entry.item, Removal::Filtered));
                }
                let slot = &mut flow.queue[first];
                self.len_bytes =
                    self.len_bytes - u64::from(slot.entry.bytes) + u64::from(entry.bytes);
                let old = core::mem::replace(&mut slot.entry, entry);
                self.removed.push_back((old.item, Removal::Filtered));
                self.counters.filtered += victims.len() as u64;
                return Admission::Replaced;
            }
        }
        let admission = match gate(self.len_packets) {
            Gate::Admit => Admission::Queued,
            Gate::Mark => Admission::Marked,
            Gate::Drop => {
                self.counters.dropped += 1;
                return Admission::Dropped;
            }
        };
        if self.len_packets >= self.config.limit_packets {
            let policy = if filtering {
                self.config.drop_while_filtering
            } else {
                self.config.drop
            };
            let victim = match policy {
                DropPolicy::DropTail => None,
                DropPolicy::LongestQueueOldest => self.longest_flow(),
                DropPolicy::HighestRateOldest => self.fastest_flow(now),
            };
            let Some(victim) = victim else {
                self.counters.dropped += 1;
                return Admission::Dropped;
            };
            let slot = self
                .flows
                .get_mut(&victim)
                .and_then(|f| f.queue.pop_front())
                .expect("victim flow has a queue");
            self.len_packets -= 1;
            self.len_bytes -= u64::from(slot.entry.bytes);
            self.counters.dropped += 1;
            self.removed.push_back((slot.entry.item, Removal::Dropped));
        }
        let order = self.next_order;
        self.next_order += 1;
        self.len_packets += 1;
        self.len_bytes += u64::from(entry.bytes);
        let flow = self.flows.get_mut(&entry.flow).expect("inserted above");
        flow.queue.push_back(Slot { order, entry });
        admission
    }

    /// Takes the next packet to send at `now` and counts its departure in
    /// the rate estimators.
    pub fn dequeue(&mut self, now: Instant) -> Option<Entry<T>> {
        let flow = match self.config.service {
            Service::Fifo => self
                .flows
                .iter()
                .filter_map(|(&id, f)| f.queue.front().map(|s| (s.order, id)))
                .min()
                .map(|(_, id)| id),
            Service::RoundRobin => {
                // The first busy connection after the one served last,
                // wrapping around.
                let busy = self.flows.iter().filter(|(_, f)| !f.queue.is_empty());
                let after = self.last_served;
                busy.clone()
                    .find(|(&id, _)| after.is_some_and(|a| id > a))
                    .or_else(|| busy.clone().next())
                    .map(|(&id, _)| id)
            }
        }?;
        self.last_served = Some(flow);
        let state = self.flows.get_mut(&flow).expect("chosen from the map");
        let slot = state.queue.pop_front().expect("chosen because non-empty");
        let bytes = u64::from(slot.entry.bytes);
        state.rate.on_departure(now, bytes);
        self.channel_rate.on_departure(now, bytes);
        self.len_packets -= 1;
        self.len_bytes -= bytes;
        Some(slot.entry)
    }

    fn longest_flow(&self) -> Option<u32> {
        // Longest queue; among equals the lowest connection number.
        self.flows
            .iter()
            .filter(|(_, f)| !f.queue.is_empty())
            .max_by_key(|(&id, f)| (f.queue.len(), core::cmp::Reverse(id)))
            .map(|(&id, _)| id)
    }

    fn fastest_flow(&self, now: Instant) -> Option<u32> {
        self.flows
            .iter()
            .filter(|(_, f)| !f.queue.is_empty())
            .map(|(&id, f)| (f.rate.rate_at(now), f.queue.len(), id))
            .max_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(b.2.cmp(&a.2)))
            .map(|(_, _, id)| id)
    }

    /// Frees the entries of connections with nothing queued whose rate
    /// fell below the idle threshold (sec. 4.1).
    fn forget_idle(&mut self, now: Instant) {
        let floor_bytes_per_sec = self.config.capacity_bps as f64 / 8.0 * self.config.idle_fraction;
        self.flows
            .retain(|_, f| !f.queue.is_empty() || f.rate.rate_at(now) >= floor_bytes_per_sec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ack_path::classify::may_replace;
    use crate::wire::{SackBlocks, SeqNum};
    use proptest::prelude::*;

    const WINDOW: Duration = Duration::from_millis(200);

    fn buffer(filter: Filter, service: Service, limit: usize) -> AckBuffer<&'static str> {
        AckBuffer::new(AckBufferConfig::paper_000(
            filter, service, limit, 100_000, WINDOW,
        ))
    }

    fn pure(n: u32, sack: &[(u32, u32)]) -> PureAck {
        let mut blocks = SackBlocks::new();
        for &(l, r) in sack {
            blocks.push(SeqNum(l), SeqNum(r));
        }
        PureAck {
            src_port: 80,
            dst_port: 4000,
            ack: SeqNum(n),
            sack: blocks,
        }
    }

    fn ack(item: &'static str, flow: u32, n: u32) -> Entry<&'static str> {
        Entry {
            item,
            bytes: 40,
            flow,
            ack: Some(pure(n, &[])),
        }
    }

    fn data(item: &'static str, flow: u32) -> Entry<&'static str> {
        Entry {
            item,
            bytes: 1040,
            flow,
            ack: None,
        }
    }

    fn at(ms: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(ms)
    }

    fn items(b: &AckBuffer<&'static str>) -> Vec<&'static str> {
        b.entries().iter().map(|e| e.item).collect()
    }

    fn removed(b: &mut AckBuffer<&'static str>) -> Vec<(&'static str, Removal)> {
        core::iter::from_fn(|| b.take_removed()).collect()
    }

    #[test]
    fn no_filter_keeps_everything() {
        let mut b = buffer(Filter::None, Service::Fifo, 10);
        for (i, n) in ["a", "b", "c"].into_iter().zip([100, 200, 300]) {
            assert_eq!(b.enqueue(at(0), ack(i, 0, n)), Admission::Queued);
        }
        assert_eq!(items(&b), ["a", "b", "c"]);
    }

    #[test]
    fn classic_keeps_one_ack_per_flow_in_the_oldest_place() {
        let mut b = buffer(Filter::Classic, Service::Fifo, 10);
        b.enqueue(at(0), ack("a1", 0, 100));
        b.enqueue(at(0), ack("b1", 1, 100));
        b.enqueue(at(0), data("d", 0));
        b.enqueue(at(0), ack("a2", 0, 200));
        // a2 took a1's place, ahead of b1; the data segment stays.
        assert_eq!(items(&b), ["a2", "b1", "d"]);
        assert_eq!(removed(&mut b), [("a1", Removal::Filtered)]);
        assert_eq!(b.counters().filtered, 1);
        assert_eq!(b.len_bytes(), 40 + 40 + 1040);
    }

    #[test]
    fn classic_with_several_older_acks_removes_them_all() {
        let mut b = buffer(Filter::None, Service::Fifo, 10);
        for (i, n) in ["a", "b", "c"].into_iter().zip([100, 200, 300]) {
            b.enqueue(at(0), ack(i, 0, n));
        }
        b.config.filter = Filter::Classic;
        assert_eq!(b.enqueue(at(0), ack("d", 0, 400)), Admission::Replaced);
        assert_eq!(items(&b), ["d"]);
        assert_eq!(
            removed(&mut b),
            [
                ("c", Removal::Filtered),
                ("b", Removal::Filtered),
                ("a", Removal::Filtered)
            ]
        );
    }

    #[test]
    fn duplicates_and_unrepeated_sack_blocks_are_never_filtered() {
        let mut b = buffer(Filter::Classic, Service::Fifo, 10);
        b.enqueue(at(0), ack("first", 0, 100));
        // A duplicate of the first: queued beside it.
        assert_eq!(b.enqueue(at(0), ack("dup", 0, 100)), Admission::Queued);
        // An ACK with a SACK block the next one does not repeat.
        let sacked = Entry {
            ack: Some(pure(150, &[(300, 400)])),
            ..ack("sacked", 0, 0)
        };
        // It replaces both ACKs of 100 (no SACK information lost).
        assert_eq!(b.enqueue(at(0), sacked), Admission::Replaced);
        assert_eq!(items(&b), ["sacked"]);
        let newer = Entry {
            ack: Some(pure(200, &[(500, 600)])),
            ..ack("newer", 0, 0)
        };
        assert_eq!(b.enqueue(at(0), newer), Admission::Queued);
        assert_eq!(items(&b), ["sacked", "newer"]);
    }

    #[test]
    fn static_filtering_starts_at_delta_and_replaces_the_newest() {
        let mut b = buffer(Filter::Static { delta: 2 }, Service::Fifo, 10);
        b.enqueue(at(0), ack("a", 0, 100));
        b.enqueue(at(0), ack("x", 1, 100));
        b.enqueue(at(0), ack("b", 0, 200));
        assert_eq!(b.enqueue(at(0), ack("c", 0, 300)), Admission::Replaced);
        assert_eq!(items(&b), ["a", "x", "c"]);
        assert_eq!(removed(&mut b), [("b", Removal::Filtered)]);
        // Flow 1 has one ACK queued: below delta, nothing filtered.
        assert_eq!(b.enqueue(at(0), ack("y", 1, 200)), Admission::Queued);
    }

    #[test]
    fn delayed_filtering_waits_for_a_busy_channel() {
        let mut b = buffer(Filter::DELAYED, Service::Fifo, 100);
        b.enqueue(at(0), ack("a", 0, 100));
        assert_eq!(b.enqueue(at(0), ack("b", 0, 200)), Admission::Queued);
        // Drain at the channel's full rate (40 bytes at 100 kbit/s =
        // 3.2 ms) for two windows: the measured utilization passes 90 %.
        let mut t = Duration::ZERO;
        let mut n = 300;
        for _ in 0..200 {
            t += Duration::from_micros(3200);
            b.enqueue(Instant::ZERO + t, ack("more", 1, n));
            n += 100;
            b.dequeue(Instant::ZERO + t);
        }
        let now = Instant::ZERO + t;
        assert!(b.utilization(now) > 0.9, "{}", b.utilization(now));
        b.enqueue(now, ack("c", 1, n));
        let before = b.len_packets();
        assert_eq!(b.enqueue(now, ack("c2", 1, n + 50)), Admission::Replaced);
        assert_eq!(b.len_packets(), before);
        // Idle for a while: the utilization decays and filtering stops.
        let later = now + Duration::from_secs(5);
        while b.dequeue(later).is_some() {}
        b.enqueue(later, ack("d", 1, n + 100));
        assert_eq!(b.enqueue(later, ack("e", 1, n + 200)), Admission::Queued);
    }

    #[test]
    fn per_flow_delayed_filters_only_the_flow_above_its_share() {
        let mut b = buffer(Filter::PER_FLOW_DELAYED, Service::Fifo, 100);
        // Flow 0 sends at the full channel rate for a while, flow 1 at a
        // fifth of it: flow 0 takes more than half the channel.
        let mut t = Duration::ZERO;
        for i in 0..200u32 {
            t += Duration::from_micros(3200);
            b.enqueue(Instant::ZERO + t, ack("fast", 0, 100 * (i + 1)));
            if i % 5 == 0 {
                b.enqueue(Instant::ZERO + t, ack("slow", 1, 100 * (i + 1)));
            }
            b.dequeue(Instant::ZERO + t);
        }
        let now = Instant::ZERO + t;
        assert_eq!(b.active_flows(), 2);
        b.enqueue(now, ack("f1", 0, 100_000));
        assert_eq!(b.enqueue(now, ack("f2", 0, 100_100)), Admission::Replaced);
        b.enqueue(now, ack("s1", 1, 100_000));
        assert_eq!(b.enqueue(now, ack("s2", 1, 100_100)), Admission::Queued);
    }

    #[test]
    fn a_gate_decides_only_for_packets_taking_a_new_place() {
        let mut b = buffer(Filter::Classic, Service::Fifo, 10);
        assert_eq!(
            b.enqueue_gated(at(0), ack("a", 0, 100), |_| Gate::Mark),
            Admission::Marked
        );
        // Filtered into a's place: the gate is not asked.
        assert_eq!(
            b.enqueue_gated(at(0), ack("b", 0, 200), |_| panic!("gate asked")),
            Admission::Replaced
        );
        assert_eq!(
            b.enqueue_gated(at(0), ack("x", 1, 100), |queued| {
                assert_eq!(queued, 1);
                Gate::Drop
            }),
            Admission::Dropped
        );
        assert_eq!(items(&b), ["b"]);
        assert_eq!(b.counters().dropped, 1);
    }

    #[test]
    fn drop_tail_drops_the_arrival() {
        let mut b = buffer(Filter::None, Service::Fifo, 2);
        b.enqueue(at(0), ack("a", 0, 100));
        b.enqueue(at(0), ack("b", 0, 200));
        assert_eq!(b.enqueue(at(0), ack("c", 1, 100)), Admission::Dropped);
        assert_eq!(items(&b), ["a", "b"]);
        assert_eq!(b.counters().dropped, 1);
    }

    #[test]
    fn longest_queue_drop_takes_the_oldest_of_the_longest_flow() {
        let mut b = buffer(Filter::None, Service::Fifo, 3);
        b.config.drop = DropPolicy::LongestQueueOldest;
        b.enqueue(at(0), ack("x", 1, 100));
        b.enqueue(at(0), ack("a", 0, 100));
        b.enqueue(at(0), ack("b", 0, 200));
        assert_eq!(b.enqueue(at(0), ack("y", 1, 200)), Admission::Queued);
        assert_eq!(items(&b), ["x", "b", "y"]);
        assert_eq!(removed(&mut b), [("a", Removal::Dropped)]);
    }

    #[test]
    fn highest_rate_drop_takes_the_oldest_of_the_fastest_flow() {
        let mut b = buffer(Filter::None, Service::Fifo, 3);
        b.config.drop = DropPolicy::HighestRateOldest;
        // Flow 2 has had many departures, flow 1 few.
        for i in 0..20 {
            b.enqueue(at(i), ack("old2", 2, 100 + i as u32));
            b.dequeue(at(i));
        }
        b.enqueue(at(20), ack("x", 1, 100));
        b.enqueue(at(20), ack("y", 1, 200));
        b.enqueue(at(20), ack("z", 2, 5000));
        assert_eq!(b.enqueue(at(20), ack("w", 1, 300)), Admission::Queued);
        // Flow 1's queue is longer, but flow 2 is faster.
        assert_eq!(items(&b), ["x", "y", "w"]);
        assert_eq!(removed(&mut b), [("z", Removal::Dropped)]);
    }

    #[test]
    fn round_robin_alternates_between_flows() {
        let mut b = buffer(Filter::None, Service::RoundRobin, 10);
        for (i, n) in ["a1", "a2", "a3"].into_iter().zip([1, 2, 3]) {
            b.enqueue(at(0), ack(i, 0, n));
        }
        b.enqueue(at(0), ack("b1", 5, 1));
        b.enqueue(at(0), ack("b2", 5, 2));
        let order: Vec<_> = core::iter::from_fn(|| b.dequeue(at(0)).map(|e| e.item)).collect();
        assert_eq!(order, ["a1", "b1", "a2", "b2", "a3"]);
        let mut f = buffer(Filter::None, Service::Fifo, 10);
        f.enqueue(at(0), ack("a1", 0, 1));
        f.enqueue(at(0), ack("b1", 5, 1));
        f.enqueue(at(0), ack("a2", 0, 2));
        let order: Vec<_> = core::iter::from_fn(|| f.dequeue(at(0)).map(|e| e.item)).collect();
        assert_eq!(order, ["a1", "b1", "a2"]);
    }

    /// One arrival or departure in a random trace.
    #[derive(Debug, Clone)]
    enum Step {
        Arrive {
            flow: u32,
            ack: u32,
            sack: Option<(u32, u32)>,
        },
        Depart,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            3 => (0u32..3, 0u32..20, proptest::option::of((0u32..20, 1u32..5))).prop_map(
                |(flow, ack, sack)| Step::Arrive {
                    flow,
                    ack: ack * 100,
                    sack: sack.map(|(l, len)| (l * 100 + 2000, (l + len) * 100 + 2000)),
                }
            ),
            1 => Just(Step::Depart),
        ]
    }

    proptest! {
        #![proptest_config(crate::test_support::proptest_config(256, 0xacf_17e4))]

        /// Under every filter, a filtered ACK is always covered by an ACK
        /// of its flow still queued (so no duplicate ACK and no SACK
        /// block is the only copy lost), and the counts add up.
        #[test]
        fn filtering_never_loses_information(
            steps in proptest::collection::vec(step(), 1..120),
            which in 0usize..5,
        ) {
            let filter = [
                Filter::Classic,
                Filter::Static { delta: 2 },
                Filter::DELAYED,
                Filter::PER_FLOW_DELAYED,
                Filter::None,
            ][which];
            let mut b: AckBuffer<u32> = AckBuffer::new(AckBufferConfig::paper_000(
                filter, Service::Fifo, 1000, 10_000, WINDOW,
            ));
            let mut contents = std::collections::HashMap::new();
            let (mut arrived, mut departed, mut filtered) = (0u64, 0u64, 0u64);
            for (i, s) in steps.into_iter().enumerate() {
                let now = Instant::ZERO + Duration::from_millis(i as u64);
                match s {
                    Step::Arrive { flow, ack, sack } => {
                        let mut p = pure(ack, &[]);
                        p.dst_port = 4000 + flow as u16;
                        if let Some((l, r)) = sack {
                            p.sack.push(SeqNum(l), SeqNum(r));
                        }
                        let id = i as u32;
                        contents.insert(id, p);
                        arrived += 1;
                        b.enqueue(now, Entry { item: id, bytes: 40, flow, ack: Some(p) });
                        while let Some((gone, why)) = b.take_removed() {
                            prop_assert_eq!(why, Removal::Filtered);
                            filtered += 1;
                            let old = contents[&gone];
                            let covered = b.entries().iter().any(|e| {
                                e.ack.is_some_and(|newer| may_replace(&old, &newer))
                            });
                            prop_assert!(covered, "ACK {:?} filtered without cover", old);
                        }
                    }
                    Step::Depart => {
                        departed += u64::from(b.dequeue(now).is_some());
                    }
                }
            }
            prop_assert_eq!(arrived, departed + filtered + b.len_packets() as u64);
            prop_assert_eq!(b.counters().filtered, filtered);
            if filter == Filter::None {
                prop_assert_eq!(filtered, 0);
            }
        }
    }
}
