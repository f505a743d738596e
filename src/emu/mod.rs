//! A discrete-event link emulator in the spirit of ns-2, the simulator the
//! papers behind ackwise used (paper 003 sec. 4.1, paper 004 sec. 4.2).
//!
//! Hosts run real [`Connection`](crate::connection::Connection)s exchanging
//! real encoded TCP segments over simplex links with a rate, a propagation
//! delay and a queue at the input ([`queue`]: DropTail, RED with gentle mode
//! and ECN marking, per-flow round robin). Everything happens on one
//! virtual clock driven by one event queue, and every random choice is
//! a function of the seed and of what it is about: the same [`Scenario`]
//! and seed give the same [`RunResult`], bit for bit.
//!
//! The random choices about a packet (its loss, RED's early drop, its
//! jitter) are keyed by the packet's identity (flow, direction, sequence
//! number, which crossing), not drawn in turn from one stream. Two runs of
//! one seed that differ only in their strategy then lose the same segments
//! where they send the same segments, and a comparison of the two measures
//! the strategies rather than two unrelated draws of the path (common
//! random numbers; see `draws` in the source).
//!
//! # Using it
//!
//! A [`Scenario`] is plain data: links, flows with static routes, cross
//! traffic, horizon, seed, what to sample and capture. Build one by hand or
//! with [`Scenario::dumbbell`], [`Scenario::parking_lot`] or
//! [`Scenario::single_link`], then call [`run`] (or [`Simulator::new`],
//! [`Simulator::set_hook`] and [`Simulator::run`] to install a middlebox).
//!
//! ```
//! use ackwise::connection::{AckPolicyConfig, Config};
//! use ackwise::emu::{self, DumbbellSpec, FlowParams, QueueSpec};
//! use std::time::Duration;
//!
//! let config = Config {
//!     mss: 1000,
//!     timestamps: false,
//!     ack_policy: AckPolicyConfig::Every,
//!     min_rto: Duration::from_millis(200),
//!     ..Config::default()
//! };
//! let spec = DumbbellSpec::symmetric(10_000_000, Duration::from_millis(20), QueueSpec::drop_tail(50));
//! let scenario = emu::Scenario::dumbbell(&spec, &[FlowParams::new(config, 200_000)]);
//! let result = emu::run(&scenario)?;
//! assert!(result.flows[0].finished);
//! # Ok::<(), emu::EmuError>(())
//! ```
//!
//! # Model
//!
//! - Packet size on a link is the encoded segment length plus
//!   [`Scenario::overhead_bytes`] (20 for an IPv4 header by default).
//! - A link serialises one packet at a time; the packet on the wire is not
//!   in the queue (as in ns-2). See [`link`].
//! - A link may lose packets at random on the wire, after serialisation
//!   ([`LossModel`]: Bernoulli or Gilbert-Elliott); those count as `lost`,
//!   not as queue drops.
//! - A link may add random propagation delay ([`Jitter`]): order-keeping
//!   jitter, and a fraction of packets held back and overtaken.
//! - Links may share one half-duplex transmitter ([`MediumSpec`], a
//!   Wi-Fi-like medium): frames of all member links take turns, each
//!   paying a fixed per-frame airtime overhead.
//! - The client writes `bytes` of a fixed pattern and closes; the server
//!   reads, verifies and closes when the peer has closed. A flow is
//!   finished when the ACK of its last byte reached the client and the
//!   server read every byte intact. Completion time runs from the first
//!   data segment sent to that ACK (paper 004 sec. 4.3).
//! - The run ends when every flow finished (cross traffic is ignored for
//!   that), at the horizon, or when nothing is left to happen.
//! - Time is integer nanoseconds throughout; floats appear only in derived
//!   statistics and RED's average.

mod cross;
mod draws;
mod elide;
mod error;
mod event;
pub(crate) mod host;
mod jitter;
pub mod link;
mod loss;
mod measure;
mod medium;
pub mod middlebox;
mod packet;
pub mod pcap;
pub mod queue;
mod scenario;
mod sim;
mod smoltcp_host;
mod topology;

pub use error::EmuError;
pub use jitter::{Jitter, Reorder};
pub use link::transmission_time;
pub use loss::LossModel;
pub use measure::{jain_index, FlowResult, FlowSeries, LinkResult, RunResult, TimeSeries};
pub use medium::MediumSpec;
pub use middlebox::{HookAction, LinkHook, NoHook, PacketInfo};
pub use packet::PacketKind;
pub use queue::{LinkQueue, QueueSpec, QueuedPacket, RedParams, Verdict};
pub use scenario::{
    CaptureSpec, CrossTrafficSpec, DelayControlSpec, FlowSpec, FlowTransport, LinkId, LinkSpec,
    Period, Scenario,
};
pub use sim::Simulator;
pub use smoltcp_host::SmoltcpEnd;
pub use topology::{
    DumbbellSpec, FlowParams, HopSpec, ParkingLotRoutes, DUMBBELL_MIDDLE, PARKING_LOT_HOPS,
};

/// Runs `scenario` to the end and reports what happened.
pub fn run(scenario: &Scenario) -> Result<RunResult, EmuError> {
    Simulator::new(scenario)?.run()
}
