//! One direction's emulated link, sans-IO: datagrams arrive at `now`, the
//! link says when it next needs attention and which datagrams are due at
//! their destination.
//!
//! Departures are scheduled on a virtual timeline: the transmitter is free
//! from `busy_until`, and the next datagram starts at
//! `max(busy_until, its enqueue time)` even when the driver wakes late, so
//! timer jitter delays delivery a little but never lowers the link rate.
//! A datagram of `n` payload bytes occupies the transmitter for
//! `(n + 28) * 8 / rate` (UDP and IPv4 headers counted), then propagates
//! for the link delay. Loss and reordering are drawn when serialisation
//! ends: a lost datagram has used the link's capacity (as on a lossy
//! wire), a reordered one arrives `reorder_delay` later than it would have.

use super::config::{LinkConfig, UDP_IP_OVERHEAD_BYTES};
use super::hook::{Arrival, HookAction, QueueView, ReverseHook};
use super::stats::DirectionStats;
use crate::ack_path::PureAck;
use crate::ack_path::Removal;
use crate::emu::link::transmission_time;
use crate::emu::queue::{LinkQueue, QueuedPacket, Verdict};
use crate::time::{Duration, Instant};
use crate::wire::{Checksum, SegmentRepr};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::net::SocketAddr;

/// A datagram held by a link.
#[derive(Debug)]
pub(crate) struct Datagram {
    pub client: SocketAddr,
    pub data: Vec<u8>,
    pub pure_ack: Option<PureAck>,
    pub enqueued: Instant,
}

/// Datagram buffers indexed by the `id` the queue carries.
#[derive(Debug, Default)]
pub(crate) struct Slab {
    entries: Vec<Option<Datagram>>,
    free: Vec<u32>,
}

impl Slab {
    fn insert(&mut self, d: Datagram) -> u32 {
        match self.free.pop() {
            Some(id) => {
                self.entries[id as usize] = Some(d);
                id
            }
            None => {
                self.entries.push(Some(d));
                (self.entries.len() - 1) as u32
            }
        }
    }

    pub fn get(&self, id: u32) -> Option<&Datagram> {
        self.entries.get(id as usize)?.as_ref()
    }

    fn get_mut(&mut self, id: u32) -> Option<&mut Datagram> {
        self.entries.get_mut(id as usize)?.as_mut()
    }

    pub fn take(&mut self, id: u32) -> Option<Datagram> {
        let d = self.entries.get_mut(id as usize)?.take()?;
        self.free.push(id);
        Some(d)
    }
}

/// The reverse link's middlebox, if any (hooks own their state, hence
/// `'static`).
pub(crate) type HookRef<'a> = Option<&'a mut (dyn ReverseHook + 'static)>;

/// The connection number of a datagram to `client` in `flows` (ports from
/// its TCP header; datagrams too short for one share a number per
/// client), handing out the next number to a new connection.
fn flow_of(
    flows: &mut HashMap<(SocketAddr, u16, u16), u32>,
    client: SocketAddr,
    data: &[u8],
) -> u32 {
    let port = |i: usize| {
        data.get(i..i + 2)
            .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]))
    };
    let next = flows.len() as u32;
    *flows.entry((client, port(0), port(2))).or_insert(next)
}

/// Time-ordered `(when, tie-breaker, slab id)`.
type Timeline = BinaryHeap<Reverse<(Instant, u64, u32)>>;

/// An emulated simplex link.
#[derive(Debug)]
pub(crate) struct EmulatedLink {
    config: LinkConfig,
    discipline: Box<dyn LinkQueue + Send>,
    /// Slab ids waiting, head first (the discipline keeps only counts that
    /// matter; see `QueueView`).
    fifo: VecDeque<u32>,
    queued_bytes: u64,
    slab: Slab,
    busy_until: Instant,
    /// Serialised datagrams on their way, by arrival time at the far end.
    in_flight: Timeline,
    /// Arrivals a hook delayed, by the time they reach the queue.
    held: Timeline,
    seq: u64,
    rng: ChaCha8Rng,
    /// Parse arrivals as segments (only when a hook or the discipline
    /// will look at them).
    parse_acks: bool,
    /// Connection numbers for per-flow disciplines, by client and ports,
    /// handed out in order of first appearance.
    flows: HashMap<(SocketAddr, u16, u16), u32>,
    pub stats: DirectionStats,
}

impl EmulatedLink {
    pub fn new(config: LinkConfig, seed: u64, parse_acks: bool) -> EmulatedLink {
        EmulatedLink {
            discipline: config.build_queue(),
            config,
            fifo: VecDeque::new(),
            queued_bytes: 0,
            slab: Slab::default(),
            busy_until: Instant::ZERO,
            in_flight: BinaryHeap::new(),
            held: BinaryHeap::new(),
            seq: 0,
            rng: ChaCha8Rng::seed_from_u64(seed),
            parse_acks,
            flows: HashMap::new(),
            stats: DirectionStats::default(),
        }
    }

    /// Replaces the discipline (only while nothing is queued).
    pub fn set_discipline(&mut self, q: Box<dyn LinkQueue + Send>) {
        debug_assert!(self.fifo.is_empty());
        self.discipline = q;
    }

    pub fn set_parse_acks(&mut self, on: bool) {
        self.parse_acks = on || self.discipline.wants_acks();
    }

    /// Takes out of the order what the discipline removed after admitting
    /// it (ACK filtering, an evicting drop policy).
    fn collect_removed(&mut self) {
        while let Some((qp, why)) = self.discipline.take_removed() {
            if let Some(pos) = self.fifo.iter().position(|&i| i == qp.id) {
                self.fifo.remove(pos);
            }
            if let Some(d) = self.slab.take(qp.id) {
                self.queued_bytes -= d.data.len() as u64;
            }
            match why {
                Removal::Filtered => self.stats.filtered += 1,
                Removal::Dropped => self.stats.queue_drops += 1,
            }
        }
    }

    pub fn queue_packets(&self) -> usize {
        self.fifo.len()
    }

    pub fn queue_bytes(&self) -> u64 {
        self.queued_bytes
    }

    /// A datagram for `client` arrives at `now`. `forward` is the other
    /// link's queue `(packets, bytes)`, shown to the hook.
    pub fn arrive(
        &mut self,
        now: Instant,
        client: SocketAddr,
        data: Vec<u8>,
        mut hook: HookRef<'_>,
        forward: (usize, u64),
    ) {
        self.advance(now, hook.as_deref_mut());
        self.stats.packets_in += 1;
        self.stats.bytes_in += data.len() as u64;
        let ip_bytes = data.len() as u64 + u64::from(UDP_IP_OVERHEAD_BYTES);
        if self
            .config
            .mtu_bytes
            .is_some_and(|mtu| ip_bytes > u64::from(mtu))
        {
            self.stats.mtu_drops += 1;
            return;
        }
        let pure_ack = if self.parse_acks {
            SegmentRepr::parse(&data, Checksum::Ignore)
                .ok()
                .and_then(|s| PureAck::from_segment(&s))
        } else {
            None
        };
        let id = self.slab.insert(Datagram {
            client,
            data,
            pure_ack,
            enqueued: now,
        });
        let action = match hook.as_deref_mut() {
            None => HookAction::Pass,
            Some(h) => {
                let d = self.slab.get(id).expect("just inserted");
                let arrival = Arrival {
                    client,
                    datagram: &d.data,
                    pure_ack,
                    forward_queue_packets: forward.0,
                    forward_queue_bytes: forward.1,
                };
                // The view borrows the slab mutably, so the arrival's bytes
                // are copied out of it first only when a hook exists.
                let bytes = arrival.datagram.to_vec();
                let arrival = Arrival {
                    datagram: &bytes,
                    ..arrival
                };
                let mut view = QueueView {
                    now,
                    fifo: &mut self.fifo,
                    slab: &mut self.slab,
                    discipline: self.discipline.as_mut(),
                    queued_bytes: &mut self.queued_bytes,
                    removed: &mut self.stats.hook_removed,
                };
                h.on_arrival(now, &arrival, &mut view)
            }
        };
        match action {
            HookAction::Pass => self.enqueue(now, id),
            HookAction::Drop => {
                self.slab.take(id);
                self.stats.hook_drops += 1;
            }
            HookAction::Delay(d) => {
                self.stats.hook_delayed += 1;
                self.seq += 1;
                self.held.push(Reverse((now + d, self.seq, id)));
            }
        }
        self.advance(now, hook);
    }

    fn enqueue(&mut self, at: Instant, id: u32) {
        let Some(d) = self.slab.get_mut(id) else {
            return;
        };
        d.enqueued = at;
        let len = d.data.len();
        let (client, ack) = (d.client, d.pure_ack);
        let flow = if self.discipline.serves_in_arrival_order() {
            0
        } else {
            let d = self.slab.get(id).expect("checked above");
            flow_of(&mut self.flows, client, &d.data)
        };
        let pkt = QueuedPacket {
            id,
            bytes: len as u32 + UDP_IP_OVERHEAD_BYTES,
            flow,
            ecn_capable: false,
        };
        let verdict = if self.discipline.wants_acks() {
            self.discipline.enqueue_ack(at, pkt, ack, &mut self.rng)
        } else {
            self.discipline.enqueue(at, pkt, &mut self.rng)
        };
        match verdict {
            Verdict::Queued | Verdict::Marked => {
                self.fifo.push_back(id);
                self.queued_bytes += len as u64;
                // A datagram reaching an idle transmitter starts at once
                // and never waits.
                let waiting = if self.busy_until > at {
                    self.fifo.len()
                } else {
                    self.fifo.len() - 1
                };
                self.stats.peak_queue_packets = self.stats.peak_queue_packets.max(waiting);
            }
            Verdict::Dropped => {
                self.slab.take(id);
                self.stats.queue_drops += 1;
            }
        }
        self.collect_removed();
    }

    /// When the head of the queue starts serialising.
    fn next_start(&self) -> Option<Instant> {
        let head = *self.fifo.front()?;
        let enqueued = self.slab.get(head).map_or(Instant::ZERO, |d| d.enqueued);
        Some(self.busy_until.max(enqueued))
    }

    /// Runs the link up to `now`: delayed arrivals reach the queue and the
    /// transmitter starts every datagram whose start time has come, in
    /// time order.
    pub fn advance(&mut self, now: Instant, mut hook: HookRef<'_>) {
        loop {
            let held = self.held.peek().map(|r| r.0 .0);
            let start = self.next_start();
            match (held, start) {
                (Some(h), s) if h <= now && s.is_none_or(|s| h <= s) => {
                    let Reverse((at, _, id)) = self.held.pop().expect("peeked");
                    self.enqueue(at, id);
                }
                (_, Some(s)) if s <= now => self.start_tx(s, hook.as_deref_mut()),
                _ => break,
            }
        }
    }

    fn start_tx(&mut self, start: Instant, hook: HookRef<'_>) {
        let id = if self.discipline.serves_in_arrival_order() {
            let Some(id) = self.fifo.pop_front() else {
                return;
            };
            let _ = self.discipline.dequeue(start);
            id
        } else {
            // The discipline chooses; the order beside it only tracks
            // what waits (for `next_start` and hooks' views).
            let Some(qp) = self.discipline.dequeue(start) else {
                return;
            };
            if let Some(pos) = self.fifo.iter().position(|&i| i == qp.id) {
                self.fifo.remove(pos);
            }
            qp.id
        };
        let Some(len) = self.slab.get(id).map(|d| d.data.len()) else {
            return;
        };
        self.queued_bytes -= len as u64;
        let link_bytes = len as u32 + UDP_IP_OVERHEAD_BYTES;
        let tx = transmission_time(link_bytes, self.config.rate_bps);
        let end = start + tx;
        self.busy_until = end;
        if let Some(h) = hook {
            h.on_departure(end, link_bytes);
        }
        if draw(&mut self.rng, self.config.loss) {
            self.stats.random_losses += 1;
            self.slab.take(id);
            return;
        }
        let mut arrive = end + self.config.delay;
        if draw(&mut self.rng, self.config.reorder) {
            self.stats.reorders += 1;
            let extra = self
                .config
                .reorder_delay
                .unwrap_or_else(|| (tx * 3).max(Duration::from_millis(1)));
            arrive += extra;
        }
        self.seq += 1;
        self.in_flight.push(Reverse((arrive, self.seq, id)));
    }

    /// The next time something happens on this link.
    pub fn next_wake(&self) -> Option<Instant> {
        [
            self.held.peek().map(|r| r.0 .0),
            self.next_start(),
            self.in_flight.peek().map(|r| r.0 .0),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// A datagram that has reached the far end by `now`, with its client.
    pub fn pop_due(&mut self, now: Instant) -> Option<(SocketAddr, Vec<u8>)> {
        let Reverse((at, _, id)) = *self.in_flight.peek()?;
        if at > now {
            return None;
        }
        self.in_flight.pop();
        let d = self.slab.take(id)?;
        self.stats.forwarded_packets += 1;
        self.stats.forwarded_bytes += d.data.len() as u64;
        Some((d.client, d.data))
    }
}

/// A Bernoulli draw with probability `p`.
fn draw(rng: &mut ChaCha8Rng, p: f64) -> bool {
    p > 0.0 && ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relay::QueueKind;

    fn client() -> SocketAddr {
        "127.0.0.1:1".parse().unwrap()
    }

    fn drain(link: &mut EmulatedLink, until: Instant) -> Vec<(Instant, usize)> {
        let mut out = Vec::new();
        while let Some(t) = link.next_wake() {
            if t > until {
                break;
            }
            link.advance(t, None);
            while let Some((_, d)) = link.pop_due(t) {
                out.push((t, d.len()));
            }
        }
        out
    }

    #[test]
    fn serialises_at_the_rate_then_delays() {
        // 972 + 28 bytes at 1 Mbit/s: 8 ms each; 10 ms delay.
        let cfg = LinkConfig::new(1_000_000, Duration::from_millis(10), 100);
        let mut link = EmulatedLink::new(cfg, 1, false);
        for _ in 0..5 {
            link.arrive(Instant::ZERO, client(), vec![0; 972], None, (0, 0));
        }
        let out = drain(&mut link, Instant::from_millis(1000));
        let times: Vec<u64> = out.iter().map(|(t, _)| t.as_nanos() / 1_000_000).collect();
        assert_eq!(times, vec![18, 26, 34, 42, 50]);
        assert_eq!(link.stats.peak_queue_packets, 4);
        // A lone datagram on an idle link never waits.
        let cfg = LinkConfig::new(1_000_000, Duration::from_millis(10), 100);
        let mut idle = EmulatedLink::new(cfg, 1, false);
        idle.arrive(Instant::ZERO, client(), vec![0; 10], None, (0, 0));
        assert_eq!(idle.stats.peak_queue_packets, 0);
    }

    #[test]
    fn late_wakeups_keep_the_rate() {
        let cfg = LinkConfig::new(1_000_000, Duration::ZERO, 100);
        let mut link = EmulatedLink::new(cfg, 1, false);
        for _ in 0..10 {
            link.arrive(Instant::ZERO, client(), vec![0; 972], None, (0, 0));
        }
        // Woken only every 30 ms: all ten still leave by 80 ms.
        let mut n = 0;
        for k in 1..=3 {
            let now = Instant::from_millis(30 * k);
            link.advance(now, None);
            while link.pop_due(now).is_some() {
                n += 1;
            }
        }
        assert_eq!(n, 10);
    }

    /// `--buffer` bounds what waits, whatever the arrival pattern: bursts
    /// at random instants, with and without RED, on a slow link.
    #[test]
    fn the_queue_never_holds_more_than_the_buffer() {
        use rand_core::SeedableRng;
        for seed in 0..20u64 {
            for queue in [QueueKind::DropTail, QueueKind::Red] {
                let buffer = 1 + (seed as usize % 7) * 5;
                let mut cfg = LinkConfig::new(1_000_000, Duration::from_millis(5), buffer);
                cfg.queue = queue;
                let mut link = EmulatedLink::new(cfg, seed, false);
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let mut now = Instant::ZERO;
                for _ in 0..2_000 {
                    now += Duration::from_micros(rng.next_u64() % 3_000);
                    let burst = 1 + rng.next_u64() % 8;
                    for _ in 0..burst {
                        let len = 40 + (rng.next_u64() % 1400) as usize;
                        link.arrive(now, client(), vec![0; len], None, (0, 0));
                        assert!(
                            link.queue_packets() <= buffer + 1,
                            "seed {seed} {queue:?}: {} queued with buffer {buffer}",
                            link.queue_packets()
                        );
                    }
                    link.advance(now, None);
                    while link.pop_due(now).is_some() {}
                }
                assert!(
                    link.stats.peak_queue_packets <= buffer,
                    "seed {seed} {queue:?}: peak {} with buffer {buffer}",
                    link.stats.peak_queue_packets
                );
                assert!(link.stats.queue_drops > 0, "seed {seed}: never full");
            }
        }
    }

    #[test]
    fn buffer_overflow_is_counted() {
        let cfg = LinkConfig::new(1_000_000, Duration::ZERO, 3);
        let mut link = EmulatedLink::new(cfg, 1, false);
        for _ in 0..10 {
            link.arrive(Instant::ZERO, client(), vec![0; 100], None, (0, 0));
        }
        // One on the wire, three waiting.
        assert_eq!(link.stats.queue_drops, 6);
        assert_eq!(link.stats.peak_queue_packets, 3);
        assert_eq!(drain(&mut link, Instant::from_millis(1000)).len(), 4);
    }

    #[derive(Debug, Default)]
    struct KeepNewest {
        departures: u32,
    }

    impl ReverseHook for KeepNewest {
        fn on_arrival(&mut self, _: Instant, a: &Arrival<'_>, q: &mut QueueView<'_>) -> HookAction {
            if a.datagram.first() == Some(&0xff) {
                return HookAction::Drop;
            }
            while !q.is_empty() {
                q.remove(q.len() - 1);
            }
            HookAction::Pass
        }

        fn on_departure(&mut self, _: Instant, _: u32) {
            self.departures += 1;
        }
    }

    #[test]
    fn hook_removes_drops_and_sees_departures() {
        let cfg = LinkConfig::new(1_000_000, Duration::ZERO, 3);
        let mut link = EmulatedLink::new(cfg, 1, true);
        let mut hook = KeepNewest::default();
        for i in 0..10u8 {
            link.arrive(
                Instant::ZERO,
                client(),
                vec![i; 100],
                Some(&mut hook),
                (0, 0),
            );
        }
        link.arrive(
            Instant::ZERO,
            client(),
            vec![0xff; 100],
            Some(&mut hook),
            (0, 0),
        );
        // The first goes on the wire at once; each later one replaced its
        // predecessor, so no queue drops despite the 3-packet buffer.
        assert_eq!(link.stats.queue_drops, 0);
        assert_eq!(link.stats.hook_removed, 8);
        assert_eq!(link.stats.hook_drops, 1);
        let mut got = Vec::new();
        while let Some(t) = link.next_wake() {
            link.advance(t, Some(&mut hook));
            while let Some((_, d)) = link.pop_due(t) {
                got.push(d[0]);
            }
        }
        assert_eq!(got, vec![0, 9]);
        assert_eq!(hook.departures, 2);
    }

    #[test]
    fn datagrams_above_the_mtu_are_dropped_and_counted() {
        let mut cfg = LinkConfig::new(1_000_000_000, Duration::ZERO, 100);
        cfg.mtu_bytes = Some(1500);
        let mut link = EmulatedLink::new(cfg, 1, false);
        // 1472 bytes of payload make a 1500-byte IP datagram: it fits.
        link.arrive(Instant::ZERO, client(), vec![1; 1472], None, (0, 0));
        link.arrive(Instant::ZERO, client(), vec![2; 1473], None, (0, 0));
        link.arrive(Instant::ZERO, client(), vec![3; 20], None, (0, 0));
        link.advance(Instant::from_millis(1), None);
        let mut got = Vec::new();
        while let Some((_, d)) = link.pop_due(Instant::from_millis(1)) {
            got.push((d[0], d.len()));
        }
        assert_eq!(got, vec![(1, 1472), (3, 20)]);
        assert_eq!(link.stats.mtu_drops, 1);
        assert_eq!(link.stats.packets_in, 3);
        // Without a limit the same datagram passes.
        let mut unlimited = LinkConfig::new(1_000_000_000, Duration::ZERO, 100);
        unlimited.mtu_bytes = None;
        let mut open = EmulatedLink::new(unlimited, 1, false);
        open.arrive(Instant::ZERO, client(), vec![2; 1473], None, (0, 0));
        open.advance(Instant::from_millis(1), None);
        assert!(open.pop_due(Instant::from_millis(1)).is_some());
        assert_eq!(open.stats.mtu_drops, 0);
    }

    #[test]
    fn loss_is_seeded() {
        let run = |seed| {
            let mut cfg = LinkConfig::new(1_000_000_000, Duration::ZERO, 10_000);
            cfg.loss = 0.1;
            let mut link = EmulatedLink::new(cfg, seed, false);
            for _ in 0..2000 {
                link.arrive(Instant::ZERO, client(), vec![0; 10], None, (0, 0));
            }
            link.advance(Instant::from_millis(100), None);
            link.stats.random_losses
        };
        assert_eq!(run(7), run(7));
        let lost = run(7);
        assert!((140..=260).contains(&lost), "seed 7: {lost} of 2000 lost");
    }

    #[derive(Debug)]
    struct DelayAll(Duration);

    impl ReverseHook for DelayAll {
        fn on_arrival(&mut self, _: Instant, _: &Arrival<'_>, _: &mut QueueView<'_>) -> HookAction {
            HookAction::Delay(self.0)
        }
    }

    #[test]
    fn hook_delay_holds_the_arrival_back() {
        // 72 + 28 bytes at 1 Mbit/s: 0.8 ms; 5 ms delay; the hook adds 20 ms.
        let cfg = LinkConfig::new(1_000_000, Duration::from_millis(5), 10);
        let mut link = EmulatedLink::new(cfg, 1, true);
        let mut hook = DelayAll(Duration::from_millis(20));
        link.arrive(
            Instant::ZERO,
            client(),
            vec![1; 72],
            Some(&mut hook),
            (0, 0),
        );
        assert_eq!(link.stats.hook_delayed, 1);
        assert_eq!(link.next_wake(), Some(Instant::from_millis(20)));
        let mut delivered = None;
        while let Some(t) = link.next_wake() {
            link.advance(t, Some(&mut hook));
            if link.pop_due(t).is_some() {
                delivered = Some(t);
            }
        }
        assert_eq!(delivered, Some(Instant::from_micros(25_800)));
    }

    #[test]
    fn red_keeps_the_queue_shorter_than_drop_tail() {
        // Twice the link rate for 10 s into a queue of 40: both drop about
        // half, but RED's early drops keep the standing queue short.
        let mean_queue = |queue| {
            let mut cfg = LinkConfig::new(1_000_000, Duration::ZERO, 40);
            cfg.queue = queue;
            let mut link = EmulatedLink::new(cfg, 3, false);
            let mut t = Instant::ZERO;
            let mut sum = 0;
            for i in 0..5000 {
                link.arrive(t, client(), vec![0; 472], None, (0, 0));
                while link.pop_due(t).is_some() {}
                if i >= 2500 {
                    sum += link.queue_packets();
                }
                t += Duration::from_millis(2);
            }
            let s = link.stats;
            assert!((2300..=2700).contains(&s.queue_drops), "{queue:?}: {s}");
            sum as f64 / 2500.0
        };
        let red = mean_queue(QueueKind::Red);
        let drop_tail = mean_queue(QueueKind::DropTail);
        assert!(drop_tail > 38.0, "DropTail mean queue {drop_tail}");
        assert!(red < 30.0, "RED mean queue {red}");
    }
}
