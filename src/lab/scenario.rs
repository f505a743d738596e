//! Lab scenarios: a topology, a set of flows and the end-host parameters,
//! described once and turned into an emulator [`Scenario`] per strategy.
//!
//! The same structure is read from TOML files (schema in
//! `docs/scenarios.md`) and built by the presets.

use super::strategy::Strategy;
use super::units::{parse_duration, parse_rate};
use super::LabError;
use crate::connection::Config;
use crate::emu::{DumbbellSpec, FlowParams, HopSpec, QueueSpec, Scenario};
use crate::time::Duration;
use serde::Deserialize;

/// Which topology builder a scenario uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopologyKind {
    /// Flows share one middle link pair (paper 003 fig. 2/5, paper 004
    /// fig. 2).
    Dumbbell,
    /// Three bottlenecks in a chain (paper 004, Parking-Lot).
    ParkingLot,
}

/// One direction of the bottleneck.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkParams {
    /// Capacity, bits per second.
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Queue limit, packets.
    pub buffer_packets: usize,
    /// Per-flow round robin instead of DropTail.
    pub round_robin: bool,
}

impl LinkParams {
    fn hop(&self) -> HopSpec {
        HopSpec {
            rate_bps: self.rate_bps,
            delay: self.delay,
            queue: if self.round_robin {
                QueueSpec::RoundRobin {
                    limit_packets: self.buffer_packets,
                }
            } else {
                QueueSpec::drop_tail(self.buffer_packets)
            },
        }
    }
}

/// A group of identical flows.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowGroup {
    /// How many flows.
    pub count: u32,
    /// Payload bytes each flow transfers.
    pub bytes: u64,
    /// Start of the first flow of the group.
    pub start: Duration,
    /// Added to the start of each further flow of the group.
    pub stagger: Duration,
    /// One-way delay of each flow's access links.
    pub access_delay: Duration,
    /// Data flows from the right side to the left (two-way traffic).
    pub reverse: bool,
}

/// A complete lab scenario, independent of the strategy compared.
#[derive(Debug, Clone, PartialEq)]
pub struct LabScenario {
    /// Topology.
    pub topology: TopologyKind,
    /// Forward bottleneck (each hop of a parking lot).
    pub forward: LinkParams,
    /// Reverse bottleneck; `None` mirrors `forward`.
    pub reverse: Option<LinkParams>,
    /// Flows.
    pub flows: Vec<FlowGroup>,
    /// Payload bytes per full segment.
    pub segment_bytes: u16,
    /// Initial window, segments.
    pub initial_window_segments: u32,
    /// Minimum retransmission timeout.
    pub min_rto: Duration,
    /// Delayed-ACK timer.
    pub delayed_ack: Duration,
    /// Bytes added to each segment on links (IPv4 header).
    pub overhead_bytes: u32,
    /// Simulated time limit.
    pub horizon: Duration,
}

impl Default for LabScenario {
    fn default() -> Self {
        LabScenario {
            topology: TopologyKind::Dumbbell,
            forward: LinkParams {
                rate_bps: 1_500_000,
                delay: Duration::from_millis(50),
                buffer_packets: 19,
                round_robin: false,
            },
            reverse: None,
            flows: vec![FlowGroup {
                count: 1,
                bytes: 1_000_000,
                start: Duration::ZERO,
                stagger: Duration::ZERO,
                access_delay: Duration::ZERO,
                reverse: false,
            }],
            segment_bytes: 1000,
            initial_window_segments: 4,
            min_rto: Duration::from_millis(200),
            delayed_ack: Duration::from_millis(100),
            overhead_bytes: 20,
            horizon: Duration::from_secs(600),
        }
    }
}

impl LabScenario {
    /// Round-trip propagation delay of a flow without access delay.
    pub fn base_rtt(&self) -> Duration {
        let rev = self.reverse.as_ref().unwrap_or(&self.forward);
        self.forward.delay + rev.delay
    }

    /// The emulator scenario for `strategy` and `seed`.
    pub fn to_emu(&self, strategy: Strategy, seed: u64) -> Scenario {
        let base = Config {
            // Timestamps take 12 bytes of each segment's MSS.
            mss: self.segment_bytes.saturating_add(12),
            min_rto: self.min_rto,
            initial_rto: Duration::from_secs(1).max(self.min_rto),
            send_buffer: 16 << 20,
            recv_buffer: 16 << 20,
            idle_timeout: None,
            time_wait: Duration::from_millis(1),
            nagle: false,
            ..Config::default()
        };
        let mut config = strategy.apply(&base);
        if let crate::connection::AckPolicyConfig::Delayed { max_delay, .. } =
            &mut config.ack_policy
        {
            *max_delay = self.delayed_ack;
        }
        config.congestion.initial_window =
            Some(u64::from(self.initial_window_segments) * u64::from(self.segment_bytes));
        let mut flows = Vec::new();
        for g in &self.flows {
            for k in 0..g.count {
                let mut f = FlowParams::new(config.clone(), g.bytes);
                f.start = g.start + g.stagger * k;
                f.access_delay = g.access_delay;
                f.reverse = g.reverse;
                flows.push(f);
            }
        }
        let mut scenario = match self.topology {
            TopologyKind::Dumbbell => {
                let mut spec = DumbbellSpec::symmetric(
                    self.forward.rate_bps,
                    self.forward.delay,
                    self.forward.hop().queue,
                );
                if let Some(rev) = &self.reverse {
                    spec.reverse = rev.hop();
                }
                Scenario::dumbbell(&spec, &flows)
            }
            TopologyKind::ParkingLot => Scenario::parking_lot(&self.forward.hop(), &flows),
        };
        scenario.overhead_bytes = self.overhead_bytes;
        scenario.horizon = self.horizon;
        scenario.seed = seed;
        scenario
    }

    /// Checks the parameters the way a user would want to hear about them:
    /// the error names the field.
    pub fn validate(&self) -> Result<(), LabError> {
        let bad = |field: &str, problem: &str| {
            Err(LabError::Field {
                field: field.to_string(),
                problem: problem.to_string(),
            })
        };
        for (name, link) in [
            ("bottleneck", Some(&self.forward)),
            ("reverse", self.reverse.as_ref()),
        ] {
            let Some(link) = link else { continue };
            if link.rate_bps == 0 {
                return bad(&format!("{name}.rate"), "must be positive");
            }
            if link.buffer_packets == 0 {
                return bad(
                    &format!("{name}.buffer_packets"),
                    "must be at least 1 packet",
                );
            }
        }
        if self.flows.is_empty() || self.flows.iter().all(|g| g.count == 0) {
            return bad("flows", "at least one flow is needed");
        }
        for (i, g) in self.flows.iter().enumerate() {
            if g.bytes == 0 {
                return bad(&format!("flows[{i}].bytes"), "must be at least 1");
            }
        }
        if self.segment_bytes < 64 {
            return bad("segment_bytes", "must be at least 64");
        }
        if self.initial_window_segments == 0 {
            return bad("initial_window_segments", "must be at least 1");
        }
        if self.delayed_ack > Duration::from_millis(500) {
            return bad("delayed_ack", "must be at most 500ms (RFC 1122)");
        }
        if self.min_rto.is_zero() {
            return bad("min_rto", "must be positive");
        }
        if self.horizon.is_zero() {
            return bad("horizon", "must be positive");
        }
        // A flow that could not finish even alone on an idle bottleneck
        // within the horizon is a configuration mistake.
        for (i, g) in self.flows.iter().enumerate() {
            let last_start = g.start + g.stagger * g.count.saturating_sub(1);
            let bits = g.bytes.saturating_mul(8);
            let serialise = Duration::from_secs_f64(bits as f64 / self.forward.rate_bps as f64);
            if last_start + serialise + self.base_rtt() > self.horizon {
                return bad(
                    &format!("flows[{i}]"),
                    "cannot finish within the horizon even alone on the bottleneck",
                );
            }
        }
        Ok(())
    }
}

/// The TOML form of a scenario (see `docs/scenarios.md`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Name used in reports.
    pub name: Option<String>,
    /// Seed of the run.
    pub seed: Option<u64>,
    /// Strategies compared.
    pub strategies: Option<Vec<String>>,
    /// `"dumbbell"` (default) or `"parking-lot"`.
    pub topology: Option<String>,
    /// Forward bottleneck.
    pub bottleneck: LinkFile,
    /// Reverse bottleneck, if it differs.
    pub reverse: Option<LinkFile>,
    /// Flow groups.
    pub flows: Vec<FlowFile>,
    /// Payload bytes per segment.
    pub segment_bytes: Option<u16>,
    /// Initial window in segments.
    pub initial_window_segments: Option<u32>,
    /// Minimum RTO, e.g. `"200ms"`.
    pub min_rto: Option<String>,
    /// Delayed-ACK timer, e.g. `"100ms"`.
    pub delayed_ack: Option<String>,
    /// Per-packet overhead on links, bytes.
    pub overhead_bytes: Option<u32>,
    /// Simulated time limit, e.g. `"600s"`.
    pub horizon: Option<String>,
}

/// A link in a scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkFile {
    /// e.g. `"1.5mbit"`, `"64kbit"`, `"100mbit"`.
    pub rate: String,
    /// One-way delay, e.g. `"50ms"`.
    pub delay: String,
    /// Queue limit in packets.
    pub buffer_packets: usize,
    /// `"droptail"` (default) or `"round-robin"`.
    pub queue: Option<String>,
}

/// A flow group in a scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowFile {
    /// Number of identical flows (default 1).
    pub count: Option<u32>,
    /// Bytes per flow.
    pub bytes: u64,
    /// Start time of the first, e.g. `"0s"`.
    pub start: Option<String>,
    /// Added per further flow, e.g. `"100ms"`.
    pub stagger: Option<String>,
    /// One-way access-link delay.
    pub access_delay: Option<String>,
    /// Data flows right to left.
    pub reverse: Option<bool>,
}

fn field<T>(name: &str, r: Result<T, String>) -> Result<T, LabError> {
    r.map_err(|problem| LabError::Field {
        field: name.to_string(),
        problem,
    })
}

impl LinkFile {
    fn to_params(&self, name: &str) -> Result<LinkParams, LabError> {
        let round_robin = match self.queue.as_deref().unwrap_or("droptail") {
            "droptail" => false,
            "round-robin" => true,
            other => {
                return field(
                    &format!("{name}.queue"),
                    Err(format!("unknown queue `{other}` (droptail, round-robin)")),
                )
            }
        };
        Ok(LinkParams {
            rate_bps: field(&format!("{name}.rate"), parse_rate(&self.rate))?,
            delay: field(&format!("{name}.delay"), parse_duration(&self.delay))?,
            buffer_packets: self.buffer_packets,
            round_robin,
        })
    }
}

impl ScenarioFile {
    /// Parses TOML text.
    pub fn from_toml(text: &str) -> Result<ScenarioFile, LabError> {
        toml::from_str(text).map_err(|e| LabError::Toml(e.message().to_string()))
    }

    /// The scenario, with every value checked.
    pub fn to_scenario(&self) -> Result<LabScenario, LabError> {
        let d = LabScenario::default();
        let dur = |name: &str, v: &Option<String>, default: Duration| match v {
            Some(s) => field(name, parse_duration(s)),
            None => Ok(default),
        };
        let topology = match self.topology.as_deref().unwrap_or("dumbbell") {
            "dumbbell" => TopologyKind::Dumbbell,
            "parking-lot" => TopologyKind::ParkingLot,
            other => {
                return field(
                    "topology",
                    Err(format!(
                        "unknown topology `{other}` (dumbbell, parking-lot)"
                    )),
                )
            }
        };
        let mut flows = Vec::new();
        for (i, f) in self.flows.iter().enumerate() {
            flows.push(FlowGroup {
                count: f.count.unwrap_or(1),
                bytes: f.bytes,
                start: dur(&format!("flows[{i}].start"), &f.start, Duration::ZERO)?,
                stagger: dur(&format!("flows[{i}].stagger"), &f.stagger, Duration::ZERO)?,
                access_delay: dur(
                    &format!("flows[{i}].access_delay"),
                    &f.access_delay,
                    Duration::ZERO,
                )?,
                reverse: f.reverse.unwrap_or(false),
            });
        }
        let scenario = LabScenario {
            topology,
            forward: self.bottleneck.to_params("bottleneck")?,
            reverse: self
                .reverse
                .as_ref()
                .map(|r| r.to_params("reverse"))
                .transpose()?,
            flows,
            segment_bytes: self.segment_bytes.unwrap_or(d.segment_bytes),
            initial_window_segments: self
                .initial_window_segments
                .unwrap_or(d.initial_window_segments),
            min_rto: dur("min_rto", &self.min_rto, d.min_rto)?,
            delayed_ack: dur("delayed_ack", &self.delayed_ack, d.delayed_ack)?,
            overhead_bytes: self.overhead_bytes.unwrap_or(d.overhead_bytes),
            horizon: dur("horizon", &self.horizon, d.horizon)?,
        };
        scenario.validate()?;
        Ok(scenario)
    }
}
