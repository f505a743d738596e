//! The simulator: one event queue, one virtual clock, and random draws
//! keyed by the seed and by what they are about ([`super::draws`]). Hosts,
//! links, queues and cross-traffic sources react to events in time order,
//! ties broken by scheduling order, so a scenario and a seed determine the
//! result bit for bit.

use super::cross::CrossSource;
use super::draws::{flow_rng, own_rng, packet_rng, Identity, Purpose};
use super::elide;
use super::event::{Event, EventQueue, PacketIdx};
use super::host::{pattern, FlowState, CHUNK};
use super::link::{Link, LinkCounters};
use super::measure::{FlowResult, FlowSeries, LinkResult, RunResult, TimeSeries};
use super::medium::Medium;
use super::middlebox::{HookAction, LinkHook, PacketInfo};
use super::packet::{classify, Owner, Packet, PacketKind, Pool};
use super::pcap::{host_address, PcapWriter};
use super::queue::{QueuedPacket, Verdict};
use super::scenario::FlowTransport;
use super::scenario::{LinkId, Scenario};
use super::smoltcp_host::{SmolHost, SmolParams, SmoltcpEnd};
use super::EmuError;
use crate::ack_path::{DelayControl, PureAck, Removal};
use crate::connection::{Connection, Emitted};
use crate::testing::TestRng;
use crate::time::{Duration, Instant};
use crate::wire::{Checksum, SegmentRepr};
use rand_core::RngCore;
use std::fs::File;
use std::io::BufWriter;

/// Room for TCP header and options beyond the MSS in a packet buffer.
const HEADER_ROOM: usize = 60;
/// Client ports count up from here; the server listens on 80.
const CLIENT_PORT_BASE: u16 = 10_000;
const SERVER_PORT: u16 = 80;
/// The UDP header a QUIC datagram carries on top of the IP overhead.
const UDP_HEADER_BYTES: u32 = 8;

/// A scenario ready to run, with optional middlebox hooks installed.
#[derive(Debug)]
pub struct Simulator {
    now: Instant,
    events: EventQueue,
    links: Vec<Link>,
    /// Shared half-duplex transmitters over some of the links.
    media: Vec<Medium>,
    link_names: Vec<String>,
    flows: Vec<FlowState>,
    cross: Vec<CrossSource>,
    /// Each cross source's own generator, so its on and off periods are
    /// the same whatever the flows do ([`super::draws`]).
    cross_rngs: Vec<TestRng>,
    /// What queues that never draw ([`LinkQueue::draws`](super::LinkQueue::draws))
    /// are handed; nothing ever draws from it.
    idle_rng: TestRng,
    pool: Pool,
    pattern: bytes::Bytes,
    scratch: Vec<u8>,
    /// Where a host writes the segment it sends and where an elided one
    /// is rebuilt for its receiver: two buffers that stay in cache.
    tx_scratch: Vec<u8>,
    rx_scratch: Vec<u8>,
    /// Whether data payloads that are the pattern travel as headers
    /// alone ([`elide`]); off when a capture needs every byte.
    elide: bool,
    /// Whether a link is handing over packets that arrive at the same
    /// instant, and the ends that wait to answer until all are in (kept
    /// between batches, so a batch does not allocate).
    gathering: bool,
    arrived_together: Vec<(usize, bool)>,
    /// See [`Scenario::client_reads_batches`].
    client_reads_batches: bool,
    captures: Vec<PcapWriter<BufWriter<File>>>,
    capture_error: Option<std::io::Error>,
    /// The ACK shaper, the forward link it watches, and which links'
    /// inputs it shapes.
    delay_control: Option<(DelayControl, usize, Vec<bool>)>,
    horizon: Instant,
    overhead: u32,
    sample_interval: Option<Duration>,
    series: Option<TimeSeries>,
    /// When the measurement window opened, and each flow's counters then.
    window: (Instant, Vec<FlowCounters>),
    events_processed: u64,
    data_packets: u64,
    cross_packets: u64,
    finished: usize,
    /// The run's seed, from which every random draw is keyed
    /// ([`super::draws`]) and QUIC endpoints seed their RNGs.
    seed: u64,
    /// The certificate every QUIC server of the run presents, generated
    /// when the run has QUIC flows.
    #[cfg(feature = "quic")]
    quic_cert: Option<crate::quic::SelfSigned>,
}

impl Simulator {
    /// Validates `scenario` and builds the simulator; capture files are
    /// created here.
    pub fn new(scenario: &Scenario) -> Result<Simulator, EmuError> {
        scenario.validate()?;
        let mut links: Vec<Link> = scenario
            .links
            .iter()
            .enumerate()
            .map(|(i, spec)| Link::new(spec, scenario.seed, i))
            .collect();
        for (m, spec) in scenario.media.iter().enumerate() {
            for &l in &spec.links {
                links[l].medium = Some(m);
                links[l].per_frame_overhead = spec.per_frame_overhead;
            }
        }
        let mut captures = Vec::new();
        for c in &scenario.captures {
            let named = |e: std::io::Error| {
                std::io::Error::new(e.kind(), format!("{}: {e}", c.path.display()))
            };
            let file = File::create(&c.path).map_err(named)?;
            let w = PcapWriter::new(BufWriter::new(file)).map_err(named)?;
            links[c.link].capture = Some(captures.len());
            captures.push(w);
        }
        let max_mss = scenario
            .flows
            .iter()
            .flat_map(|f| [f.client.mss, f.server.mss])
            .max()
            .unwrap_or(0);
        #[allow(unused_mut)]
        let mut buf_len = usize::from(max_mss) + HEADER_ROOM;
        #[cfg(feature = "quic")]
        let mut quic_cert = None;
        #[cfg(feature = "quic")]
        for (i, f) in scenario.flows.iter().enumerate() {
            if let FlowTransport::Quic(q) = &f.transport {
                // quinn-proto never sends less than QUIC's 1200 bytes.
                buf_len = buf_len.max(usize::from(q.datagram_bytes.max(1200)));
                if quic_cert.is_none() {
                    quic_cert = Some(
                        crate::quic::SelfSigned::generate()
                            .map_err(|source| EmuError::Quic { flow: i, source })?,
                    );
                }
            }
        }
        let mut events = EventQueue::default();
        for (i, f) in scenario.flows.iter().enumerate() {
            events.push(Instant::ZERO + f.start, Event::FlowStart(i as u32));
        }
        let cross: Vec<CrossSource> = scenario
            .cross_traffic
            .iter()
            .map(CrossSource::new)
            .collect();
        for (i, c) in cross.iter().enumerate() {
            events.push(c.first_event(), Event::Cross(i as u32));
        }
        if !scenario.measure_from.is_zero() {
            events.push(Instant::ZERO + scenario.measure_from, Event::MeasureStart);
        }
        let series = scenario.sample_interval.map(|_| {
            events.push(Instant::ZERO, Event::Sample);
            TimeSeries {
                times: Vec::new(),
                flows: vec![FlowSeries::default(); scenario.flows.len()],
                queues: scenario
                    .sampled_links
                    .iter()
                    .map(|&l| (l, Vec::new()))
                    .collect(),
            }
        });
        Ok(Simulator {
            now: Instant::ZERO,
            events,
            link_names: scenario.links.iter().map(|l| l.name.clone()).collect(),
            links,
            media: scenario.media.iter().map(Medium::new).collect(),
            flows: scenario
                .flows
                .iter()
                .map(|spec| {
                    let mut flow = FlowState::new(spec);
                    if scenario.captures.is_empty() {
                        leave_checksums_out(&mut flow);
                    }
                    flow
                })
                .collect(),
            idle_rng: TestRng::seed_from_u64(0),
            cross_rngs: (0..cross.len())
                .map(|i| own_rng(scenario.seed, Purpose::Cross, i))
                .collect(),
            cross,
            pool: Pool::new(),
            pattern: pattern(),
            scratch: vec![0; CHUNK],
            tx_scratch: vec![0; buf_len],
            rx_scratch: Vec::with_capacity(buf_len),
            elide: scenario.captures.is_empty(),
            gathering: false,
            arrived_together: Vec::new(),
            client_reads_batches: scenario.client_reads_batches,
            captures,
            capture_error: None,
            horizon: Instant::ZERO + scenario.horizon,
            overhead: scenario.overhead_bytes,
            sample_interval: scenario.sample_interval,
            series,
            window: (
                Instant::ZERO,
                vec![FlowCounters::default(); scenario.flows.len()],
            ),
            delay_control: scenario.delay_control.as_ref().map(|dc| {
                let mut on = vec![false; scenario.links.len()];
                for &l in &dc.ack_links {
                    on[l] = true;
                }
                (DelayControl::new(dc.config), dc.forward_link, on)
            }),
            events_processed: 0,
            data_packets: 0,
            cross_packets: 0,
            finished: 0,
            seed: scenario.seed,
            #[cfg(feature = "quic")]
            quic_cert,
        })
    }

    /// Installs a middlebox hook at the input of `link`, replacing the
    /// no-op default.
    pub fn set_hook(&mut self, link: LinkId, hook: Box<dyn LinkHook>) -> Result<(), EmuError> {
        let l = self.links.get_mut(link).ok_or(EmuError::InvalidScenario(
            "hook on a link that does not exist",
        ))?;
        l.hook = hook;
        Ok(())
    }

    /// Runs until every flow finished, the horizon passed, or nothing is
    /// left to happen.
    pub fn run(mut self) -> Result<RunResult, EmuError> {
        let mut end = None;
        while self.finished < self.flows.len() || self.flows.is_empty() {
            let Some((at, ev)) = self.events.pop() else {
                break;
            };
            if at > self.horizon {
                end = Some(self.horizon);
                break;
            }
            self.now = at;
            self.events_processed += 1;
            self.dispatch(at, ev)?;
        }
        if let Some(e) = end {
            self.now = e;
        }
        self.finish()
    }

    fn dispatch(&mut self, at: Instant, ev: Event) -> Result<(), EmuError> {
        match ev {
            Event::LinkExit(l) => {
                let line = &mut self.links[l as usize].in_flight;
                // A packet inserted ahead of the head (reordering) got its
                // own event; the old head's event may then find the line's
                // head not yet due, and the head's own event is pending.
                if line.front().is_none_or(|&(due, _)| due > at) {
                    return Ok(());
                }
                let Some((_, p)) = line.pop_front() else {
                    return Ok(());
                };
                // Only ends that read batches need a batch gathered; the
                // others see each packet as its own event, as always.
                if self.client_reads_batches && line.front().is_some_and(|&(due, _)| due == at) {
                    self.arrive_together(at, l, p);
                    return Ok(());
                }
                if let Some(&(next, _)) = line.front() {
                    self.events.push(next, Event::LinkExit(l));
                }
                self.forward(p);
            }
            Event::TxDone(l) => self.tx_done(l as usize),
            Event::MediumFree(m) => self.medium_free(m as usize),
            Event::Reoffer(p) => {
                let link = self.path_of(p)[usize::from(self.pool.get(p).hop) - 1];
                self.enqueue(link as usize, p);
            }
            Event::Timer(f, server) => {
                let fl = &mut self.flows[f as usize];
                let slot = &mut fl.timer[usize::from(server)];
                if *slot == Some(at) {
                    *slot = None;
                }
                #[cfg(feature = "quic")]
                if let Some(q) = fl.quic.as_mut() {
                    q.handle_timeout(at, server);
                }
                if let Some(h) = fl.smol_at(server) {
                    h.handle_timeout(at);
                }
                let conn = if server {
                    fl.server.as_mut()
                } else {
                    fl.client.as_mut()
                };
                if let Some(c) = conn {
                    if c.poll_timeout().is_some_and(|t| t <= at) {
                        c.handle_timeout(at);
                    }
                }
                self.after_activity(f as usize, server);
            }
            Event::FlowStart(f) => {
                let fl = &mut self.flows[f as usize];
                #[cfg(feature = "quic")]
                if let FlowTransport::Quic(config) = &fl.transport {
                    let quic_error = |source| EmuError::Quic {
                        flow: f as usize,
                        source,
                    };
                    let cert = self.quic_cert.as_ref().ok_or_else(|| {
                        quic_error(crate::quic::QuicError::Certificate(
                            "no certificate for the run".into(),
                        ))
                    })?;
                    let mut q =
                        crate::quic::emu_host::QuicFlow::new(config, cert, fl.bytes, self.seed, f)
                            .map_err(quic_error)?;
                    q.start(at).map_err(quic_error)?;
                    fl.quic = Some(Box::new(q));
                    self.after_activity(f as usize, false);
                    return Ok(());
                }
                let port = CLIENT_PORT_BASE.wrapping_add(f as u16);
                if let Some(end) = fl.smoltcp_end() {
                    let server = end.is_server();
                    let config = if server {
                        &fl.server_config
                    } else {
                        &fl.client_config
                    };
                    let params = SmolParams {
                        local: host_address(f, server),
                        remote: host_address(f, !server),
                        local_port: if server { SERVER_PORT } else { port },
                        remote_port: SERVER_PORT,
                        mss: config.mss,
                        recv_buffer: config.recv_buffer,
                        send_buffer: config.send_buffer,
                        seed: flow_rng(self.seed, f as usize, server).next_u64(),
                    };
                    fl.smol = Some(Box::new(SmolHost::new(params, server, at)));
                    if !server {
                        self.after_activity(f as usize, false);
                        return Ok(());
                    }
                }
                let c = Connection::connect(
                    fl.client_config.clone(),
                    at,
                    port,
                    SERVER_PORT,
                    &mut flow_rng(self.seed, f as usize, false),
                )
                .map_err(|source| EmuError::InvalidConfig {
                    flow: f as usize,
                    source,
                })?;
                fl.client = Some(c);
                self.after_activity(f as usize, false);
            }
            Event::Cross(i) => {
                let (emit, next) =
                    self.cross[i as usize].step(at, &mut self.cross_rngs[i as usize]);
                if emit {
                    self.emit_cross(i);
                }
                self.events.push(next, Event::Cross(i));
            }
            Event::Sample => self.sample(),
            Event::MeasureStart => self.open_window(),
        }
        Ok(())
    }

    fn path_of(&self, p: PacketIdx) -> &[u32] {
        match self.pool.get(p).owner {
            Owner::Flow { flow, to_server } => {
                let f = &self.flows[flow as usize];
                if to_server {
                    &f.forward_path
                } else {
                    &f.reverse_path
                }
            }
            Owner::Cross(i) => &self.cross[i as usize].path,
        }
    }

    /// Moves a packet to its next hop: the next link's input, or its
    /// destination host after the last link.
    fn forward(&mut self, p: PacketIdx) {
        let hop = usize::from(self.pool.get(p).hop);
        match self.path_of(p).get(hop).copied() {
            Some(link) => {
                self.pool.get_mut(p).hop += 1;
                self.offer(link as usize, p);
            }
            None => self.deliver(p),
        }
    }

    fn offer(&mut self, l: usize, p: PacketIdx) {
        let pkt = self.pool.get(p);
        let (flow, toward_server) = match pkt.owner {
            Owner::Flow { flow, to_server } => (Some(flow), to_server),
            Owner::Cross(_) => (None, true),
        };
        let info = PacketInfo {
            flow,
            toward_server,
            kind: pkt.kind,
            bytes: pkt.wire_bytes,
        };
        if let Some((dc, fwd, on)) = &mut self.delay_control {
            if on[l] && pkt.kind == PacketKind::PureAck && flow.is_some() {
                let backlog = self.links[*fwd].queue.len_bytes();
                let release = dc.release_at(self.now, backlog);
                if release > self.now {
                    self.links[l].counters.delayed += 1;
                    self.events.push(release, Event::Reoffer(p));
                    return;
                }
            }
        }
        let link = &mut self.links[l];
        match link.hook.on_arrival(self.now, &info, &*link.queue) {
            HookAction::Pass => self.enqueue(l, p),
            HookAction::Drop => {
                link.counters.hook_drops += 1;
                self.pool.release(p);
            }
            HookAction::Delay(d) => self.events.push(self.now + d, Event::Reoffer(p)),
        }
    }

    /// Keys packet `p`'s draws on link `l` by its identity
    /// ([`super::draws`]); once per crossing, in event order.
    fn key_packet(&mut self, l: usize, p: PacketIdx) {
        let pkt = self.pool.get(p);
        let (owner, id) = match pkt.owner {
            Owner::Flow { flow, to_server } => {
                let id = if self.flows[flow as usize].is_tcp() {
                    let seg = &pkt.buf[..pkt.len];
                    let header = elide::payload_offset(seg).unwrap_or(seg.len());
                    let payload = (seg.len() - header) as u32 + pkt.elided.bytes;
                    Identity::of_tcp(seg, payload)
                } else {
                    Identity::Other
                };
                (2 * flow + u32::from(to_server), id)
            }
            Owner::Cross(i) => (2 * self.flows.len() as u32 + i, Identity::Other),
        };
        let link = &mut self.links[l];
        let key = link.keys.key(link.key, owner, id);
        self.pool.get_mut(p).draw_key = key;
    }

    fn enqueue(&mut self, l: usize, p: PacketIdx) {
        let now = self.now;
        if self.links[l].draws {
            self.key_packet(l, p);
        }
        let link = &mut self.links[l];
        // On a shared medium every frame waits its turn in its queue.
        if link.medium.is_none()
            && link.busy_until <= now
            && !link.tx_done_pending
            && link.queue.len_packets() == 0
        {
            self.transmit(l, p);
            return;
        }
        let pkt = self.pool.get_mut(p);
        let class = match pkt.owner {
            Owner::Flow { flow, .. } => flow,
            Owner::Cross(i) => self.flows.len() as u32 + i,
        };
        let qp = QueuedPacket {
            id: p,
            bytes: pkt.wire_bytes,
            flow: class,
            ecn_capable: pkt.ecn_capable,
        };
        link.account_queue(now);
        // A queue that never draws is handed the idle generator rather than
        // one seeded per packet: no per-packet work on such links.
        let mut keyed;
        let rng: &mut dyn RngCore = if link.draws {
            keyed = packet_rng(pkt.draw_key, Purpose::Queue);
            &mut keyed
        } else {
            &mut self.idle_rng
        };
        let verdict = if link.queue.wants_acks() {
            // Only pure ACKs of TCP flows are candidates for filtering.
            let ack = match (pkt.kind, pkt.owner) {
                (PacketKind::PureAck, Owner::Flow { .. }) => {
                    SegmentRepr::parse(&pkt.buf[..pkt.len], Checksum::Ignore)
                        .ok()
                        .and_then(|seg| PureAck::from_segment(&seg))
                }
                _ => None,
            };
            link.queue.enqueue_ack(now, qp, ack, rng)
        } else {
            link.queue.enqueue(now, qp, rng)
        };
        match verdict {
            Verdict::Queued => {}
            Verdict::Marked => {
                pkt.ce = true;
                link.counters.marks += 1;
            }
            Verdict::Dropped => {
                link.counters.queue_drops += 1;
                self.pool.release(p);
            }
        }
        while let Some((gone, why)) = link.queue.take_removed() {
            match why {
                Removal::Filtered => link.counters.filtered += 1,
                Removal::Dropped => link.counters.queue_drops += 1,
            }
            self.pool.release(gone.id);
        }
        let len = link.queue.len_packets();
        link.counters.peak_queue_packets = link.counters.peak_queue_packets.max(len);
        if let Some(m) = link.medium {
            let medium = &mut self.media[m];
            if !medium.pending && len > 0 {
                medium.pending = true;
                self.events
                    .push(medium.busy_until.max(now), Event::MediumFree(m as u32));
            }
            return;
        }
        if !link.tx_done_pending && len > 0 {
            link.tx_done_pending = true;
            self.events
                .push(link.busy_until.max(now), Event::TxDone(l as u32));
        }
    }

    fn tx_done(&mut self, l: usize) {
        let now = self.now;
        let link = &mut self.links[l];
        link.tx_done_pending = false;
        link.account_queue(now);
        let Some(qp) = link.queue.dequeue(now) else {
            return;
        };
        self.transmit(l, qp.id);
        let link = &mut self.links[l];
        if link.queue.len_packets() > 0 {
            link.tx_done_pending = true;
            self.events.push(link.busy_until, Event::TxDone(l as u32));
        }
    }

    /// A shared medium is free: the next member link in turn with a frame
    /// queued sends it, and the medium is busy for that frame's airtime.
    fn medium_free(&mut self, m: usize) {
        let now = self.now;
        let links = &self.links;
        let medium = &mut self.media[m];
        medium.pending = false;
        let Some(l) = medium.next(|l| links[l].queue.len_packets() > 0) else {
            return;
        };
        let link = &mut self.links[l];
        link.account_queue(now);
        // A queue that reports a backlog but yields nothing is left for its
        // next arrival to wake, rather than polled again at this instant.
        let Some(qp) = link.queue.dequeue(now) else {
            return;
        };
        self.transmit(l, qp.id);
        self.media[m].busy_until = self.links[l].busy_until;
        let links = &self.links;
        let medium = &mut self.media[m];
        if medium
            .links
            .iter()
            .any(|&k| links[k].queue.len_packets() > 0)
        {
            medium.pending = true;
            self.events
                .push(medium.busy_until.max(now), Event::MediumFree(m as u32));
        }
    }

    fn transmit(&mut self, l: usize, p: PacketIdx) {
        let now = self.now;
        let pkt = self.pool.get(p);
        let link = &mut self.links[l];
        let idle = now.saturating_duration_since(link.busy_until);
        let arrive = link.start_tx(now, pkt.wire_bytes);
        // pcap frames TCP; QUIC datagrams are left out of captures.
        let tcp = match pkt.owner {
            Owner::Flow { flow, .. } => self.flows[flow as usize].is_tcp(),
            Owner::Cross(_) => false,
        };
        if let (Some(c), Owner::Flow { flow, to_server }, true) = (link.capture, pkt.owner, tcp) {
            let (src, dst) = (
                host_address(flow, !to_server),
                host_address(flow, to_server),
            );
            let ecn = if pkt.ce {
                3
            } else if pkt.ecn_capable {
                2
            } else {
                0
            };
            if let Err(e) = self.captures[c].write_segment(
                now.since_epoch(),
                src.into(),
                dst.into(),
                ecn,
                &pkt.buf[..pkt.len],
            ) {
                self.capture_error.get_or_insert(e);
            }
        }
        // Loss on the wire: the packet used the transmitter (and was
        // captured) but never reaches the far end.
        if link.loss.lose(idle, link.rate_bps, pkt.draw_key) {
            link.counters.lost += 1;
            self.pool.release(p);
            return;
        }
        let arrive = if link.draws {
            link.jitter
                .arrival(arrive, &mut packet_rng(pkt.draw_key, Purpose::Jitter))
        } else {
            arrive
        };
        // Each link keeps its own delay line sorted by arrival and only
        // the head is in the event heap: the heap stays as small as the
        // number of links, not packets. Without reordering, arrivals leave
        // in the order they entered.
        if link.propagate(arrive, p) {
            self.events.push(arrive, Event::LinkExit(l as u32));
        }
    }

    /// Packets that leave link `l` at the same instant (a clock's tick)
    /// reach their hosts together; an end that reads batches
    /// ([`Scenario::client_reads_batches`]) reads them all before it
    /// answers.
    fn arrive_together(&mut self, at: Instant, l: u32, first: PacketIdx) {
        self.gathering = true;
        self.forward(first);
        loop {
            let line = &mut self.links[l as usize].in_flight;
            match line.front() {
                Some(&(due, p)) if due == at => {
                    line.pop_front();
                    self.events_processed += 1;
                    self.forward(p);
                }
                Some(&(next, _)) => {
                    self.events.push(next, Event::LinkExit(l));
                    break;
                }
                None => break,
            }
        }
        self.gathering = false;
        let mut ends = std::mem::take(&mut self.arrived_together);
        for &(f, server) in &ends {
            self.after_activity(f, server);
        }
        ends.clear();
        self.arrived_together = ends;
    }

    /// Answers at one end of flow `f` now, or, for an end that reads
    /// batches, once the packets arriving with this one are all in.
    #[inline]
    fn answer(&mut self, f: usize, server: bool) {
        if self.gathering && !server {
            if !self.arrived_together.contains(&(f, server)) {
                self.arrived_together.push((f, server));
            }
        } else {
            self.after_activity(f, server);
        }
    }

    fn deliver(&mut self, p: PacketIdx) {
        let pkt = &self.pool.packets[p as usize];
        let Owner::Flow { flow, to_server } = pkt.owner else {
            self.pool.release(p);
            return;
        };
        if to_server && pkt.ce && pkt.kind == PacketKind::Data {
            self.flows[flow as usize].ce_marks += 1;
        }
        self.hand_over(p, flow, to_server);
        self.pool.release(p);
        self.answer(flow as usize, to_server);
    }

    /// Hands packet `p` to the end of `flow` it is for.
    fn hand_over(&mut self, p: PacketIdx, flow: u32, to_server: bool) {
        let now = self.now;
        let pkt = &self.pool.packets[p as usize];
        let f = &mut self.flows[flow as usize];
        // A payload left out reaches an ackwise end that exists by
        // reference, a slice of the pattern: never copied behind its
        // header, and held as that slice until its application reads it.
        if pkt.elided.bytes > 0 && f.smoltcp_end().is_none_or(|e| e.is_server() != to_server) {
            let conn = if to_server {
                f.server.as_mut()
            } else {
                f.client.as_mut()
            };
            if let Some(c) = conn {
                let payload = elide::payload(&self.pattern, pkt.elided);
                let _ = c.handle_segment_parts(now, &pkt.buf[..pkt.len], &payload, pkt.ce);
                return;
            }
        }
        let bytes = elide::restore(
            &pkt.buf[..pkt.len],
            pkt.elided,
            &self.pattern,
            &mut self.rx_scratch,
        );
        let ce = pkt.ce;
        #[cfg(feature = "quic")]
        if let Some(q) = f.quic.as_mut() {
            q.deliver(now, to_server, bytes);
            return;
        }
        if let Some(h) = f.smol_at(to_server) {
            // smoltcp does not negotiate ECN: a CE mark reaches it unseen.
            h.deliver(now, bytes);
        } else if to_server {
            match f.server.as_mut() {
                Some(s) => {
                    let _ = s.handle_segment_with_ce(now, bytes, ce);
                }
                None => {
                    // Only a SYN creates the server; anything else before
                    // it is lost, as at a host with no listener state.
                    if let Ok(s) = Connection::accept(
                        f.server_config.clone(),
                        now,
                        bytes,
                        &mut flow_rng(self.seed, flow as usize, true),
                    ) {
                        f.server = Some(s);
                    }
                }
            }
        } else if let Some(c) = f.client.as_mut() {
            let _ = c.handle_segment_with_ce(now, bytes, ce);
        }
    }

    /// After something touched one end of flow `f`: run the applications,
    /// send what that end wants to send, and (re)arm its timer. The other
    /// end cannot have changed: the two only meet through packets.
    #[inline]
    fn after_activity(&mut self, f: usize, server: bool) {
        if self.flows[f].drive(self.now, server, &self.pattern, &mut self.scratch) {
            self.finished += 1;
        }
        self.flush(f, server);
        self.arm(f, server);
    }

    fn flush(&mut self, f: usize, server: bool) {
        loop {
            let p = self.pool.alloc();
            let pkt = &mut self.pool.packets[p as usize];
            let fl = &mut self.flows[f];
            let conn = if server {
                fl.server.as_mut()
            } else {
                fl.client.as_mut()
            };
            let smol = match &fl.transport {
                FlowTransport::Smoltcp(end) if end.is_server() == server => fl.smol.as_deref_mut(),
                _ => None,
            };
            // A TCP segment goes into the packet without its payload when
            // that is the pattern; a QUIC datagram is written in place.
            let (scratch, pattern, elide) = (&mut self.tx_scratch, &self.pattern[..], self.elide);
            let tcp = match smol {
                Some(h) => h
                    .poll_transmit(self.now, scratch)
                    .map(|n| store_segment(&scratch[..n], pattern, elide, pkt)),
                None => {
                    conn.and_then(|c| transmit_segment(c, self.now, scratch, pattern, elide, pkt))
                }
            };
            #[cfg(feature = "quic")]
            let polled = match fl.quic.as_mut() {
                Some(q) => {
                    // As large as any datagram of the run (the scratch's
                    // size), once per slot.
                    if pkt.buf.len() < self.tx_scratch.len() {
                        pkt.buf.resize(self.tx_scratch.len(), 0);
                    }
                    q.poll_transmit(self.now, server, &mut pkt.buf)
                        .map(|(n, class)| {
                            pkt.len = n;
                            pkt.elided = elide::Elided::NONE;
                            (n, quic_kind(class))
                        })
                }
                None => tcp,
            };
            #[cfg(not(feature = "quic"))]
            let polled = tcp;
            let Some((n, kind)) = polled else {
                self.pool.release(p);
                return;
            };
            // A QUIC datagram also pays its UDP header.
            let udp = if fl.is_tcp() { 0 } else { UDP_HEADER_BYTES };
            let wire = u32::try_from(n)
                .unwrap_or(u32::MAX)
                .saturating_add(self.overhead)
                .saturating_add(udp);
            pkt.wire_bytes = wire;
            pkt.kind = kind;
            pkt.owner = Owner::Flow {
                flow: f as u32,
                to_server: !server,
            };
            pkt.hop = 0;
            pkt.ecn_capable = fl.ecn_capable;
            pkt.ce = false;
            pkt.sent_at = self.now;
            match (server, kind) {
                (false, PacketKind::Data) => {
                    fl.data_packets += 1;
                    fl.data_bytes += u64::from(wire);
                    fl.first_data_at.get_or_insert(self.now);
                    self.data_packets += 1;
                }
                (true, PacketKind::PureAck) => {
                    fl.ack_packets += 1;
                    fl.ack_bytes += u64::from(wire);
                }
                _ => {}
            }
            self.forward(p);
        }
    }

    /// Makes sure a timer event is pending no later than the connection's
    /// next deadline. Events are only added when the deadline moves
    /// earlier; a stale later event re-arms when it fires.
    fn arm(&mut self, f: usize, server: bool) {
        let fl = &mut self.flows[f];
        let conn = if server {
            fl.server.as_ref()
        } else {
            fl.client.as_ref()
        };
        let now = self.now;
        let tcp = match fl.smoltcp_end() {
            Some(end) if end.is_server() == server => {
                fl.smol.as_deref_mut().and_then(|h| h.poll_timeout(now))
            }
            _ => conn.and_then(|c| c.poll_timeout()),
        };
        #[cfg(feature = "quic")]
        let next = match fl.quic.as_mut() {
            Some(q) => q.poll_timeout(server),
            None => tcp,
        };
        #[cfg(not(feature = "quic"))]
        let next = tcp;
        let Some(t) = next else {
            return;
        };
        // A deadline at or before now was just handled (or is due with the
        // current event); one nanosecond later keeps the clock moving.
        let t = t.max(self.now + Duration::from_nanos(1));
        let slot = &mut fl.timer[usize::from(server)];
        if slot.is_none_or(|a| t < a) {
            *slot = Some(t);
            self.events.push(t, Event::Timer(f as u32, server));
        }
    }

    fn emit_cross(&mut self, i: u32) {
        let p = self.pool.alloc();
        let pkt = self.pool.get_mut(p);
        pkt.len = 0;
        pkt.elided = elide::Elided::NONE;
        pkt.wire_bytes = self.cross[i as usize].packet_bytes;
        pkt.kind = PacketKind::Udp;
        pkt.owner = Owner::Cross(i);
        pkt.hop = 0;
        pkt.ecn_capable = false;
        pkt.ce = false;
        pkt.sent_at = self.now;
        self.cross_packets += 1;
        self.forward(p);
    }

    fn sample(&mut self) {
        let Some(series) = self.series.as_mut() else {
            return;
        };
        series.times.push(self.now);
        for (fl, s) in self.flows.iter().zip(series.flows.iter_mut()) {
            let (cwnd, ssthresh) = fl.sender_window();
            s.cwnd.push(cwnd);
            s.ssthresh.push(ssthresh);
            s.receiver_cwnd_estimate
                .push(fl.server.as_ref().and_then(|c| c.receiver_cwnd_estimate()));
        }
        for (l, q) in series.queues.iter_mut() {
            q.push(self.links[*l].queue.len_packets());
        }
        if let Some(d) = self.sample_interval {
            self.events.push(self.now + d, Event::Sample);
        }
    }

    /// Restarts every counter a result reports over the window.
    fn open_window(&mut self) {
        let now = self.now;
        for l in &mut self.links {
            l.counters = LinkCounters {
                peak_queue_packets: l.queue.len_packets(),
                last_change: now,
                ..LinkCounters::default()
            };
        }
        self.window = (now, self.flows.iter().map(FlowCounters::of).collect());
    }

    fn finish(mut self) -> Result<RunResult, EmuError> {
        if let Some(e) = self.capture_error.take() {
            return Err(e.into());
        }
        for w in self.captures.drain(..) {
            w.finish()?;
        }
        let end = self.now;
        let elapsed = end - Instant::ZERO;
        let (opened, at_open) = &self.window;
        let measured = end.saturating_duration_since(*opened);
        let window_ns = measured.as_nanos().max(1) as f64;
        let links = self
            .links
            .iter_mut()
            .zip(&self.link_names)
            .map(|(l, name)| {
                l.account_queue(end);
                let c = &l.counters;
                LinkResult {
                    name: name.clone(),
                    packets: c.packets,
                    bytes: c.bytes,
                    drops: c.queue_drops,
                    lost: c.lost,
                    hook_drops: c.hook_drops,
                    filtered: c.filtered,
                    delayed: c.delayed,
                    ecn_marks: c.marks,
                    // Busy time past the end (a packet still on the wire)
                    // is not counted.
                    utilization: (c.busy_nanos as f64 / window_ns).min(1.0),
                    peak_queue_packets: c.peak_queue_packets,
                    mean_queue_packets: c.queue_area as f64 / window_ns,
                }
            })
            .collect();
        let flows = self
            .flows
            .iter()
            .zip(at_open)
            .map(|(f, start)| flow_result(f, start, measured))
            .collect();
        Ok(RunResult {
            flows,
            links,
            elapsed,
            measured,
            all_finished: self.finished == self.flows.len(),
            events: self.events_processed,
            data_packets: self.data_packets,
            cross_packets: self.cross_packets,
            peak_packets_in_flight: self.pool.capacity(),
            series: self.series.take(),
        })
    }
}

/// The counters of one flow that a result reports over the window.
#[derive(Debug, Clone, Copy, Default)]
struct FlowCounters {
    read: u64,
    data_packets: u64,
    data_bytes: u64,
    ack_packets: u64,
    ack_bytes: u64,
    retransmissions: u64,
    timeouts: u64,
    ce_marks: u64,
}

impl FlowCounters {
    fn of(f: &FlowState) -> FlowCounters {
        let stats = f.client.as_ref().map(|c| c.stats()).unwrap_or_default();
        #[cfg(feature = "quic")]
        let retransmissions = match f.quic.as_ref() {
            // QUIC retransmits frames, not packets: a packet declared lost
            // is what a TCP sender's retransmitted segment counts.
            Some(q) => q.lost_packets(),
            None => stats.retransmissions,
        };
        #[cfg(not(feature = "quic"))]
        let retransmissions = stats.retransmissions;
        let retransmissions = match (f.smoltcp_end(), f.smol.as_ref()) {
            (Some(SmoltcpEnd::Sender), Some(h)) => h.retransmissions,
            _ => retransmissions,
        };
        FlowCounters {
            read: f.read,
            data_packets: f.data_packets,
            data_bytes: f.data_bytes,
            ack_packets: f.ack_packets,
            ack_bytes: f.ack_bytes,
            retransmissions,
            timeouts: stats.timeouts,
            ce_marks: f.ce_marks,
        }
    }
}

/// Stores the encoded segment `seg` in `pkt`, its payload left out when
/// `elide` is on and that payload is the pattern ([`elide::store`]);
/// returns the segment's length and kind.
fn store_segment(seg: &[u8], pattern: &[u8], elide: bool, pkt: &mut Packet) -> (usize, PacketKind) {
    let kind = classify(seg);
    let (len, elided) = elide::store(seg, kind, pattern, elide, &mut pkt.buf);
    pkt.len = len;
    pkt.elided = elided;
    (seg.len(), kind)
}

/// Polls an ackwise end for its next segment and stores it in `pkt`;
/// returns the segment's length and kind.
///
/// With elision on, checksums are off ([`leave_checksums_out`]), so the
/// end can leave a data segment's payload in its send buffer
/// (`Connection::poll_transmit_gather`). A payload that is the pattern's
/// own memory, as the emulated application hands it over by reference, is
/// then left out without a byte of it copied or compared
/// ([`elide::store_in_place`]); any other payload is put after the header
/// and the whole segment stored as `poll_transmit` would have written it.
fn transmit_segment(
    c: &mut Connection,
    now: Instant,
    scratch: &mut [u8],
    pattern: &[u8],
    elide: bool,
    pkt: &mut Packet,
) -> Option<(usize, PacketKind)> {
    if !elide {
        let n = c.poll_transmit(now, scratch)?;
        return Some(store_segment(&scratch[..n], pattern, false, pkt));
    }
    let (header_len, offset, payload_len) = match c.poll_transmit_gather(now, scratch)? {
        Emitted::Whole(n) => return Some(store_segment(&scratch[..n], pattern, true, pkt)),
        Emitted::Header {
            header_len,
            payload_offset,
            payload_len,
        } => (header_len, payload_offset, payload_len),
    };
    // Just emitted, so still held; were it not, the segment would leave
    // as its header alone, a pure ACK, and the sender resend the data.
    let pieces = c.sent_payload(offset, payload_len);
    if let Some(elided) = pieces
        .clone()
        .and_then(|p| elide::store_in_place(&scratch[..header_len], p, pattern, &mut pkt.buf))
    {
        pkt.len = header_len;
        pkt.elided = elided;
        return Some((header_len + payload_len, PacketKind::Data));
    }
    let mut end = header_len;
    for piece in pieces.into_iter().flatten() {
        scratch[end..end + piece.len()].copy_from_slice(piece);
        end += piece.len();
    }
    Some(store_segment(&scratch[..end], pattern, true, pkt))
}

/// The emulator's links never corrupt a packet, so between two ackwise
/// ends a TCP checksum can only ever verify, and summing every segment
/// twice (once at each end) is time spent on nothing. Without a capture,
/// whose readers expect valid checksums, both ends of an ackwise flow
/// therefore leave them out. Nothing else on the wire changes, so the run
/// is the same to the byte: the field is in no record, and an end
/// configured to negotiate checksum omission (`Config::omit_checksums`)
/// keeps them, so that its SYN still offers what its config says.
/// smoltcp checks its own, and QUIC has none of TCP's.
fn leave_checksums_out(flow: &mut FlowState) {
    if matches!(flow.transport, FlowTransport::Tcp)
        && !flow.client_config.omit_checksums
        && !flow.server_config.omit_checksums
    {
        flow.client_config.checksums = false;
        flow.server_config.checksums = false;
    }
}

fn flow_result(f: &FlowState, start: &FlowCounters, window: Duration) -> FlowResult {
    let now = FlowCounters::of(f);
    let client_stats = f.client.as_ref().map(|c| c.stats()).unwrap_or_default();
    let server_stats = f.server.as_ref().map(|c| c.stats()).unwrap_or_default();
    let completion_time = match (f.finished, f.first_data_at, f.last_ack_at) {
        (true, Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    FlowResult {
        name: f.name.clone(),
        bytes: f.bytes,
        finished: f.finished,
        delivered_all: f.read == f.bytes,
        content_ok: f.content_ok,
        first_data_at: f.first_data_at,
        last_ack_at: f.last_ack_at,
        completion_time,
        goodput_bps: completion_time
            .filter(|d| !d.is_zero())
            .map(|d| f.bytes as f64 * 8.0 / d.as_secs_f64()),
        measured_bytes: now.read - start.read,
        throughput_bps: if window.is_zero() {
            0.0
        } else {
            (now.read - start.read) as f64 * 8.0 / window.as_secs_f64()
        },
        data_packets: now.data_packets - start.data_packets,
        data_bytes: now.data_bytes - start.data_bytes,
        ack_packets: now.ack_packets - start.ack_packets,
        ack_bytes: now.ack_bytes - start.ack_bytes,
        retransmissions: now.retransmissions - start.retransmissions,
        timeouts: now.timeouts - start.timeouts,
        ce_marks: now.ce_marks - start.ce_marks,
        client_stats,
        server_stats,
        #[cfg(feature = "quic")]
        quic_path: f.quic.as_ref().and_then(|q| q.path_at_end()),
    }
}

/// A QUIC datagram's class as the emulator's packet kind: ACK-only
/// datagrams count (and are filtered, shaped) as pure ACKs.
#[cfg(feature = "quic")]
fn quic_kind(class: crate::quic::emu_host::DatagramClass) -> PacketKind {
    use crate::quic::emu_host::DatagramClass;
    match class {
        DatagramClass::Data => PacketKind::Data,
        DatagramClass::AckOnly => PacketKind::PureAck,
        DatagramClass::Control => PacketKind::Control,
    }
}
