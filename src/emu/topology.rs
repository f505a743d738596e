//! Builders for the topologies of paper 004 sec. 4.2 (figure 2) and paper
//! 003 sec. 4: a dumbbell (with per-flow access links, an optionally
//! asymmetric middle link and flows in either direction, covering the 1-0,
//! Asymmetric, 2-2, High-Multiplexing and Different-RTT configurations) and
//! a parking lot of three bottlenecks.
//!
//! Routing is static: each flow's forward and reverse paths are lists of
//! link indices fixed here.

use super::jitter::Jitter;
use super::loss::LossModel;
use super::queue::QueueSpec;
use super::scenario::{FlowSpec, FlowTransport, LinkId, LinkSpec, Scenario};
use crate::connection::Config;
use crate::time::Duration;

/// One direction of a shared link.
#[derive(Debug, Clone, PartialEq)]
pub struct HopSpec {
    /// Capacity, bits per second.
    pub rate_bps: u64,
    /// Propagation delay.
    pub delay: Duration,
    /// Queue at the input.
    pub queue: QueueSpec,
    /// Random loss on the wire (default none).
    pub loss: LossModel,
    /// Random extra propagation delay and reordering (default none).
    pub jitter: Option<Jitter>,
}

/// A flow to place on a built topology.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowParams {
    /// Sender configuration.
    pub client: Config,
    /// Receiver configuration.
    pub server: Config,
    /// Payload bytes.
    pub bytes: u64,
    /// Start time.
    pub start: Duration,
    /// Propagation delay of each of the flow's access links (both ends,
    /// both directions).
    pub access_delay: Duration,
    /// Send right to left (the reverse direction of the middle link), for
    /// two-way traffic.
    pub reverse: bool,
    /// Packets are ECN-capable.
    pub ecn_capable: bool,
    /// Which transport carries the transfer.
    pub transport: FlowTransport,
}

impl FlowParams {
    /// `bytes` from client to server with the same `config` at both ends,
    /// starting at zero, no access delay, left to right.
    pub fn new(config: Config, bytes: u64) -> FlowParams {
        FlowParams {
            client: config.clone(),
            server: config,
            bytes,
            start: Duration::ZERO,
            access_delay: Duration::ZERO,
            reverse: false,
            ecn_capable: false,
            transport: FlowTransport::Tcp,
        }
    }
}

/// Which hops of a three-hop parking lot each flow crosses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ParkingLotRoutes {
    /// Flow 0 crosses all three hops; flow k (k >= 1) crosses hop
    /// (k - 1) mod 3 only, so each hop is shared by the long flow and one
    /// short one (the usual fairness test of a multi-hop flow).
    #[default]
    Classic,
    /// Paper 004 figure 2b as its sec. 5.6 describes it: every flow ends
    /// at the last hop, which is the bottleneck for all of them. Flow 0
    /// crosses hop 2 only (the shortest RTT), flow 1 hops 1 and 2, and
    /// flows 2 and up all three (the longest RTT, shared by connections 3
    /// and 4 in the paper).
    SharedLast,
}

impl ParkingLotRoutes {
    /// The hops flow `i` crosses, in order.
    pub fn hops(self, i: usize) -> Vec<usize> {
        match (self, i) {
            (ParkingLotRoutes::Classic, 0) => vec![0, 1, 2],
            (ParkingLotRoutes::Classic, i) => vec![(i - 1) % 3],
            (ParkingLotRoutes::SharedLast, 0) => vec![2],
            (ParkingLotRoutes::SharedLast, 1) => vec![1, 2],
            (ParkingLotRoutes::SharedLast, _) => vec![0, 1, 2],
        }
    }
}

/// Shape of a dumbbell: the middle link in both directions, plus access
/// link settings.
#[derive(Debug, Clone, PartialEq)]
pub struct DumbbellSpec {
    /// Left router to right router.
    pub forward: HopSpec,
    /// Right router to left router (differs from `forward` in the
    /// Asymmetric configuration).
    pub reverse: HopSpec,
    /// Access link capacity; `None` means 10 times the faster middle
    /// direction, so access links never bottleneck.
    pub access_rate_bps: Option<u64>,
    /// Queue of every access link.
    pub access_queue: QueueSpec,
}

impl DumbbellSpec {
    /// A symmetric middle link with the same queue in both directions.
    pub fn symmetric(rate_bps: u64, delay: Duration, queue: QueueSpec) -> DumbbellSpec {
        let hop = HopSpec {
            rate_bps,
            delay,
            queue,
            loss: LossModel::None,
            jitter: None,
        };
        DumbbellSpec {
            forward: hop.clone(),
            reverse: hop,
            access_rate_bps: None,
            access_queue: QueueSpec::drop_tail(1000),
        }
    }
}

fn add_link(
    s: &mut Scenario,
    name: String,
    rate_bps: u64,
    delay: Duration,
    queue: QueueSpec,
) -> LinkId {
    s.links.push(LinkSpec {
        name,
        rate_bps,
        delay,
        queue,
        loss: LossModel::None,
        jitter: None,
    });
    s.links.len() - 1
}

/// Adds a link with the rate, delay, queue and loss of `hop`.
fn add_hop(s: &mut Scenario, name: String, hop: &HopSpec) -> LinkId {
    s.links.push(LinkSpec {
        name,
        rate_bps: hop.rate_bps,
        delay: hop.delay,
        queue: hop.queue.clone(),
        loss: hop.loss,
        jitter: hop.jitter,
    });
    s.links.len() - 1
}

/// Adds the four access links of flow `i` (up and down at each end) and
/// returns them as (left up, left down, right up, right down).
fn access_links(
    s: &mut Scenario,
    i: usize,
    rate_bps: u64,
    delay: Duration,
    q: &QueueSpec,
) -> [LinkId; 4] {
    [
        add_link(s, format!("f{i}.left.up"), rate_bps, delay, q.clone()),
        add_link(s, format!("f{i}.left.down"), rate_bps, delay, q.clone()),
        add_link(s, format!("f{i}.right.up"), rate_bps, delay, q.clone()),
        add_link(s, format!("f{i}.right.down"), rate_bps, delay, q.clone()),
    ]
}

fn flow_spec(
    i: usize,
    f: &FlowParams,
    forward_path: Vec<LinkId>,
    reverse_path: Vec<LinkId>,
) -> FlowSpec {
    FlowSpec {
        name: format!("flow{i}"),
        client: f.client.clone(),
        server: f.server.clone(),
        bytes: f.bytes,
        start: f.start,
        forward_path,
        reverse_path,
        ecn_capable: f.ecn_capable,
        transport: f.transport.clone(),
    }
}

/// Index of the middle link in each direction of a dumbbell built by
/// [`Scenario::dumbbell`]: (left to right, right to left).
pub const DUMBBELL_MIDDLE: (LinkId, LinkId) = (0, 1);

/// The three bottleneck hops of [`Scenario::parking_lot`], left to right;
/// their reverse directions are 3, 4, 5.
pub const PARKING_LOT_HOPS: [LinkId; 3] = [0, 1, 2];

impl Scenario {
    /// A dumbbell: every flow has its own access links at both ends and
    /// crosses the middle link (links 0 and 1, see [`DUMBBELL_MIDDLE`]);
    /// flows with `reverse` send right to left. Other scenario fields take
    /// their defaults and can be set afterwards.
    pub fn dumbbell(spec: &DumbbellSpec, flows: &[FlowParams]) -> Scenario {
        let mut s = Scenario::default();
        let fwd = add_hop(&mut s, "middle.fwd".into(), &spec.forward);
        let rev = add_hop(&mut s, "middle.rev".into(), &spec.reverse);
        let access = spec.access_rate_bps.unwrap_or_else(|| {
            spec.forward
                .rate_bps
                .max(spec.reverse.rate_bps)
                .saturating_mul(10)
        });
        for (i, f) in flows.iter().enumerate() {
            let [lu, ld, ru, rd] =
                access_links(&mut s, i, access, f.access_delay, &spec.access_queue);
            let (fp, rp) = if f.reverse {
                (vec![ru, rev, ld], vec![lu, fwd, rd])
            } else {
                (vec![lu, fwd, rd], vec![ru, rev, ld])
            };
            s.flows.push(flow_spec(i, f, fp, rp));
        }
        s
    }

    /// The classic parking lot: routers R0..R3 in a chain, hop k from Rk
    /// to Rk+1 (links 0..2, reverse 3..5), with [`ParkingLotRoutes::Classic`]
    /// routes. See [`parking_lot_with`](Self::parking_lot_with).
    pub fn parking_lot(hop: &HopSpec, flows: &[FlowParams]) -> Scenario {
        Self::parking_lot_with(hop, flows, ParkingLotRoutes::Classic)
    }

    /// Three hops in a chain, routers R0..R3, hop k from Rk to Rk+1 (links
    /// 0..2, reverse 3..5), each flow routed as `routes` says. Each flow
    /// has its own access links; they run at 10 times the hop rate.
    pub fn parking_lot_with(
        hop: &HopSpec,
        flows: &[FlowParams],
        routes: ParkingLotRoutes,
    ) -> Scenario {
        let mut s = Scenario::default();
        let fwd: Vec<LinkId> = (0..3)
            .map(|k| add_hop(&mut s, format!("hop{k}.fwd"), hop))
            .collect();
        let rev: Vec<LinkId> = (0..3)
            .map(|k| add_hop(&mut s, format!("hop{k}.rev"), hop))
            .collect();
        let access = hop.rate_bps.saturating_mul(10);
        let q = QueueSpec::drop_tail(1000);
        for (i, f) in flows.iter().enumerate() {
            let [lu, ld, ru, rd] = access_links(&mut s, i, access, f.access_delay, &q);
            let hops = routes.hops(i);
            let mut fp = vec![lu];
            fp.extend(hops.iter().map(|&k| fwd[k]));
            fp.push(rd);
            let mut rp = vec![ru];
            rp.extend(hops.iter().rev().map(|&k| rev[k]));
            rp.push(ld);
            s.flows.push(flow_spec(i, f, fp, rp));
        }
        s
    }

    /// Every flow of `flows` over the same pair of links (link 0 forward,
    /// link 1 reverse), no access links: [`single_link`](Self::single_link)
    /// shared.
    pub fn shared_link(forward: &HopSpec, reverse: &HopSpec, flows: &[FlowParams]) -> Scenario {
        let mut s = Scenario::default();
        let f = add_hop(&mut s, "fwd".into(), forward);
        let r = add_hop(&mut s, "rev".into(), reverse);
        for (i, flow) in flows.iter().enumerate() {
            s.flows.push(flow_spec(i, flow, vec![f], vec![r]));
        }
        s
    }

    /// A single flow over one bottleneck in each direction, no access
    /// links: the smallest useful scenario (paper 004's 1-0 configuration
    /// without edge hops). Link 0 is forward, link 1 reverse.
    pub fn single_link(forward: &HopSpec, reverse: &HopSpec, flow: &FlowParams) -> Scenario {
        let mut s = Scenario::default();
        let f = add_hop(&mut s, "fwd".into(), forward);
        let r = add_hop(&mut s, "rev".into(), reverse);
        s.flows.push(flow_spec(0, flow, vec![f], vec![r]));
        s
    }
}
