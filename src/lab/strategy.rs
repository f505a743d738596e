//! Lab strategy names and the connection configurations behind them.
//!
//! The names are the papers' (paper 003 section 3, paper 004 section 4.1)
//! in lower case; scripts rely on them, so they never change meaning. Later
//! mechanisms add names; options will append with `+`.

use super::options::apply_option;
use crate::ack_path::{Filter, Service};
use crate::connection::{
    AckPolicyConfig, AckRequestConfig, Config, HoleAcks, SmartParams, SmartRtt,
};
use crate::emu::SmoltcpEnd;
use crate::time::Duration;
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// The mechanism a strategy is built on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Base {
    /// `ae`: the receiver acknowledges every segment (paper 003 "AE",
    /// paper 004 "AckEvery").
    Ae,
    /// `da`: delayed ACK with byte counting limit L = 1 in slow start and
    /// ACK counting in congestion avoidance, which is what paper 004 calls
    /// NewReno.
    Da,
    /// `dal2`: delayed ACK with byte counting limit L = 2 (paper 003
    /// "DAL2", RFC 3465's recommended limit).
    Dal2,
    /// `a4l4`: the sender asks for every 4th segment, at least two ACKs
    /// per send window, L = 4 (paper 003 sec. 3.2).
    A4l4,
    /// `a8l8`: every 8th segment, at least two per window, L = 8.
    A8l8,
    /// `2w`: two ACKs per send window, L = the segments an ACK covers.
    W2,
    /// `4w`: four ACKs per send window.
    W4,
    /// `2waf`: 2W with the acknowledgment fixes (paper 003 sec. 4.3).
    W2af,
    /// `4waf`: 4W with the acknowledgment fixes.
    W4af,
    /// `4w-adaptive`, ackwise's own: 4WAF that asks for 4 ACKs per window
    /// in congestion avoidance from 16 segments on, counting the group the
    /// receiver holds as delivered (`sender::hold_credit`), and in slow
    /// start and smaller windows for up to 32 while the bottleneck queue
    /// is too short for 4 (see `sender::AdaptivePerWindow`), with tail
    /// loss probes, early
    /// retransmit (RFC 5827), and AF's fast-retransmit wait only while
    /// each requested ACK covers two or more segments
    /// (`SenderParams::af_waits_only_for_sparse_acks`).
    W4Adaptive,
    /// `smart`: receiver-only smartacking (paper 004 sec. 3.2) against a
    /// plain sender (byte counting L = 1, no polling).
    Smart,
    /// `smart-ext`: extended smartacking, alpha adapted (sec. 4.1).
    SmartExt,
    /// `smart-fixed-rtt`: smartacking with the first RTT sample kept
    /// (sec. 5.4).
    SmartFixedRtt,
    /// `smart-minrtt`, ackwise's own: smartacking against the minimum RTT
    /// of the last 10 s.
    SmartMinRtt,
    /// `acc`: ACK Congestion Control (RFC 5690, paper 004 sec. 2).
    Acc,
    /// `smart-assisted`: smartacking with the sender announcing its
    /// window (paper 004's explicit assistance), to measure what
    /// receiver-only estimation costs.
    SmartAssisted,
    /// `quic`: quinn-proto 0.11 as it comes: its NewReno, and the peer
    /// acknowledging every second ack-eliciting packet (RFC 9000 section
    /// 13.2.2). Feature `quic`.
    #[cfg(feature = "quic")]
    Quic,
    /// `quic-af-N`: quinn-proto asking its peer, by ACK_FREQUENCY, for one
    /// ACK per N ack-eliciting packets (threshold N - 1), 1 <= N <= 256.
    #[cfg(feature = "quic")]
    QuicAf(u16),
    /// `quic-2w` / `quic-4w`: 2 or 4 ACKs per window, the threshold sized
    /// once at connection start from a path cache an earlier connection
    /// on the same path filled (quinn-proto cannot change it later; see
    /// `quic::ack_frequency`).
    #[cfg(feature = "quic")]
    QuicPerWindow(u8),
}

impl Base {
    /// Every base, in the order tables list them.
    pub const ALL: [Base; 16] = [
        Base::Ae,
        Base::Da,
        Base::Dal2,
        Base::A4l4,
        Base::A8l8,
        Base::W2,
        Base::W4,
        Base::W2af,
        Base::W4af,
        Base::W4Adaptive,
        Base::Smart,
        Base::SmartExt,
        Base::SmartFixedRtt,
        Base::SmartMinRtt,
        Base::SmartAssisted,
        Base::Acc,
    ];

    fn name(self) -> &'static str {
        match self {
            Base::Ae => "ae",
            Base::Da => "da",
            Base::Dal2 => "dal2",
            Base::A4l4 => "a4l4",
            Base::A8l8 => "a8l8",
            Base::W2 => "2w",
            Base::W4 => "4w",
            Base::W2af => "2waf",
            Base::W4af => "4waf",
            Base::W4Adaptive => "4w-adaptive",
            Base::Smart => "smart",
            Base::SmartExt => "smart-ext",
            Base::SmartFixedRtt => "smart-fixed-rtt",
            Base::SmartMinRtt => "smart-minrtt",
            Base::SmartAssisted => "smart-assisted",
            Base::Acc => "acc",
            #[cfg(feature = "quic")]
            Base::Quic => "quic",
            #[cfg(feature = "quic")]
            Base::QuicAf(_) => "quic-af-N",
            #[cfg(feature = "quic")]
            Base::QuicPerWindow(2) => "quic-2w",
            #[cfg(feature = "quic")]
            Base::QuicPerWindow(_) => "quic-4w",
        }
    }

    /// The base as written in a strategy name (`quic-af-8` rather than
    /// `quic-af-N`).
    fn written(self) -> String {
        match self {
            #[cfg(feature = "quic")]
            Base::QuicAf(n) => format!("quic-af-{n}"),
            other => other.name().to_string(),
        }
    }

    /// Parses a base name, `quic-af-N` included.
    fn parse(name: &str) -> Option<Base> {
        #[cfg(feature = "quic")]
        if let Some(n) = name.strip_prefix("quic-af-") {
            let n: u16 = n.parse().ok()?;
            return (1..=256).contains(&n).then_some(Base::QuicAf(n));
        }
        Base::ALL
            .into_iter()
            .chain(Base::QUIC)
            .find(|b| b.name() == name)
    }

    /// The QUIC bases `lab list` shows (feature `quic`), `quic-af-8` for
    /// the `quic-af-N` family.
    #[cfg(feature = "quic")]
    pub const QUIC: [Base; 4] = [
        Base::Quic,
        Base::QuicAf(8),
        Base::QuicPerWindow(2),
        Base::QuicPerWindow(4),
    ];
    /// No QUIC bases without feature `quic`.
    #[cfg(not(feature = "quic"))]
    pub const QUIC: [Base; 0] = [];

    /// The base sends tail loss probes (RFC 8985 sec. 7) without being
    /// asked: only ackwise's own default, `4w-adaptive`. The papers'
    /// senders had none, so their strategies take them only as `+tlp`.
    pub fn probes_tails(self) -> bool {
        self == Base::W4Adaptive
    }

    /// A smartacking receiver (paper 004), which measures the spacing of
    /// arriving segments.
    pub fn is_smart(self) -> bool {
        matches!(
            self,
            Base::Smart
                | Base::SmartExt
                | Base::SmartFixedRtt
                | Base::SmartMinRtt
                | Base::SmartAssisted
        )
    }

    /// A quinn-proto strategy rather than an ackwise TCP-style one.
    pub fn is_quic(self) -> bool {
        #[cfg(feature = "quic")]
        if matches!(self, Base::Quic | Base::QuicAf(_) | Base::QuicPerWindow(_)) {
            return true;
        }
        false
    }

    fn description(self) -> &'static str {
        match self {
            Base::Ae => "ACK every segment (AE)",
            Base::Da => "delayed ACK, L=1, ACK-counting avoidance (paper 004 NewReno)",
            Base::Dal2 => "delayed ACK, byte counting L=2 (paper 003 DAL2)",
            Base::A4l4 => "sender asks for every 4th segment, >= 2 per window, L=4",
            Base::A8l8 => "sender asks for every 8th segment, >= 2 per window, L=8",
            Base::W2 => "sender asks for 2 ACKs per send window (2W)",
            Base::W4 => "sender asks for 4 ACKs per send window (4W)",
            Base::W2af => "2W with the acknowledgment fixes (2WAF)",
            Base::W4af => "4W with the acknowledgment fixes (4WAF)",
            Base::W4Adaptive => {
                "4WAF: 4 ACKs/window in avoidance with the hold credit, up to 32 in slow start while the queue is short"
            }
            Base::Smart => "receiver-only smartacking, smoothed RTT (paper 004)",
            Base::SmartExt => "extended smartacking: ACK delay LastSegmentTime - alpha*RTT",
            Base::SmartFixedRtt => "smartacking with the first RTT sample kept (paper 004 5.4)",
            Base::SmartMinRtt => {
                "smartacking: 300 s minimum RTT, delayed-ACK floor (ackwise's own)"
            }
            Base::SmartAssisted => "smartacking with the sender's announced window",
            Base::Acc => "ACK Congestion Control: ratio doubled on ECN, -1 per quiet RTT",
            #[cfg(feature = "quic")]
            Base::Quic => "quinn-proto: NewReno, ACK every 2nd ack-eliciting packet",
            #[cfg(feature = "quic")]
            Base::QuicAf(_) => "quinn-proto asking by ACK_FREQUENCY for 1 ACK per N packets",
            #[cfg(feature = "quic")]
            Base::QuicPerWindow(_) => {
                "quinn-proto, ACK_FREQUENCY sized once from a warm path cache: 2/4 per window"
            }
        }
    }

    /// The ACK requests of a polled base, `None` for the others.
    fn requests(self, every_segment_in_slow_start: bool) -> Option<AckRequestConfig> {
        let ss = every_segment_in_slow_start;
        match self {
            Base::Ae
            | Base::Da
            | Base::Dal2
            | Base::Smart
            | Base::SmartExt
            | Base::SmartFixedRtt
            | Base::SmartMinRtt
            | Base::SmartAssisted
            | Base::Acc => None,
            #[cfg(feature = "quic")]
            Base::Quic | Base::QuicAf(_) | Base::QuicPerWindow(_) => None,
            Base::A4l4 => Some(AckRequestConfig::EveryN {
                segments: 4,
                every_segment_in_slow_start: ss,
            }),
            Base::A8l8 => Some(AckRequestConfig::EveryN {
                segments: 8,
                every_segment_in_slow_start: ss,
            }),
            Base::W2 | Base::W2af => Some(AckRequestConfig::PerWindow {
                acks: 2,
                every_segment_in_slow_start: ss,
            }),
            Base::W4 | Base::W4af => Some(AckRequestConfig::PerWindow {
                acks: 4,
                every_segment_in_slow_start: ss,
            }),
            Base::W4Adaptive => Some(AckRequestConfig::Adaptive {
                min_acks: 4,
                max_acks: 32,
                every_segment_in_slow_start: ss,
                hold_credit_from: Some(crate::sender::AdaptivePerWindow::HOLD_CREDIT_FROM),
                ack_loss_compensation: false,
                slow_start_acks: None,
            }),
        }
    }
}

/// Options appended to a strategy name with `+`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Options {
    /// `+ss-every`: ask for an ACK of every segment in slow start (paper
    /// 003 sec. 4.2, against the byte-counting delay); polled bases only.
    pub ss_every: bool,
    /// `+pacing`: pace each window over 0.9 SRTT (paper 004 sec. 4.1).
    pub pacing: bool,
    /// `+beta27`: decrease by beta = 2/7 after the initial slow start
    /// (paper 003 sec. 4.4).
    pub beta27: bool,
    /// `+nosackabc`: byte counting also counts data that was already
    /// SACKed (turns the default refinement off, to measure it).
    pub nosackabc: bool,
    /// `+nosack`: neither end offers SACK, so the sender runs NewReno
    /// (RFC 6582), the baseline of papers 000, 002 and 004.
    pub nosack: bool,
    /// `+impatient`: NewReno's Impatient retransmission timer (RFC 6582
    /// sec. 4), as ns-2's NewReno sender has it; acts only without SACK.
    pub impatient: bool,
    /// `+hystart`: HyStart++ (RFC 9406) ends the initial slow start when
    /// the RTT climbs.
    pub hystart: bool,
    /// `+tlp`: tail loss probes (RFC 8985 sec. 7) for a base that has
    /// none; `4w-adaptive`, the base of ackwise's default, has them.
    pub tlp: bool,
    /// `+notlp`: no tail loss probes, for a base that has them.
    pub notlp: bool,
    /// `+fq`: round-robin (per-flow) queueing at the bottleneck instead of
    /// the scenario's queue (paper 004 sec. 4.1's "fair queueing"). A
    /// property of the network, not the hosts: the lab scenario applies
    /// it.
    pub fq: bool,
    /// `+af-...` / `+adc`: in-network ACK management on the path (paper
    /// 000's filters, paper 001's delay control); also applied by the
    /// lab scenario.
    pub net_ack: Option<NetAck>,
    /// `+ackwise-cc`: a QUIC sender runs ackwise's Reno with extended
    /// byte counting (`quic::AckwiseReno`, L matched to its ACK
    /// frequency) instead of quinn's NewReno; QUIC bases only.
    pub ackwise_cc: bool,
    /// `+cubic`: CUBIC congestion avoidance (RFC 9438, `Cubic`) over the
    /// base's slow start and loss recovery; TCP-style bases only.
    pub cubic: bool,
    /// `+smoltcp-sender` / `+smoltcp-receiver`: smoltcp's TCP plays that
    /// end of each flow of this strategy, unmodified, against ackwise's
    /// other end (see `emu::SmoltcpEnd`); TCP-style bases only.
    pub smoltcp: Option<SmoltcpEnd>,
    /// `+span`: a smartacking receiver measures the segment spacing over
    /// spans of `SmartParams::SPAN_SEGMENTS` gaps rather than gap by gap,
    /// so that segments delivered in clumps still give their rate
    /// (ackwise's own; smartacking bases only).
    pub span: bool,
    /// `+floor`: a smartacking receiver acknowledges at least
    /// `SmartParams::FLOOR_ACKS` times per estimated window, however long
    /// the spacing says it could wait (ackwise's own; smartacking bases
    /// only).
    pub floor: bool,
    /// `+spread`: ACK-clock spreading (`sender::spread`): in congestion
    /// avoidance and loss recovery the data an ACK releases leaves at up
    /// to 1.05 times the delivery rate measured between ACKs (ackwise's
    /// own; polled bases only).
    pub spread: bool,
    /// `+sparse-holes`: while a hole is open the polled receiver
    /// acknowledges at once only the arrival that opens it (and gap
    /// fills), the others following the countdown (`HoleAcks::Openings`;
    /// ackwise's own; polled bases only).
    pub sparse_holes: bool,
    /// `+ack-loss`: after a retransmission timeout the sender asks for
    /// more ACKs per window in congestion avoidance from 16 segments on
    /// as the ACKs it asked for go missing
    /// (`AdaptivePerWindow::ack_loss_compensation`; ackwise's own;
    /// `4w-adaptive` only).
    pub ack_loss: bool,
    /// `+sparse-start`: slow start asks for 4 ACKs per window too, and
    /// with `+spread` the sender spreads what each releases at twice the
    /// delivery rate (`AdaptivePerWindow::slow_start_acks`; ackwise's
    /// own; `4w-adaptive` only).
    pub sparse_start: bool,
}

/// In-network ACK management a strategy puts on the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NetAck {
    /// `+af-classic`: classic filtering at the reverse bottleneck (one
    /// redundant ACK per connection at most).
    Classic,
    /// `+af-static-N`: static threshold `delta = N` (paper 000 sec. 2.3).
    Static(u16),
    /// `+af-delayed`: delayed filtering above 90 % utilization (sec. 3).
    Delayed,
    /// `+af-perflow`: per-connection delayed filtering, FIFO service
    /// (sec. 4.1).
    PerFlow,
    /// `+af-perflow-rr`: per-connection delayed filtering, round-robin
    /// service (sec. 4.1).
    PerFlowRr,
    /// `+adc`: ACK delay control at the forward bottleneck's router
    /// (paper 001: 50 kB threshold, half rate).
    DelayControl,
}

impl NetAck {
    fn parse(option: &str) -> Option<NetAck> {
        Some(match option {
            "af-classic" => NetAck::Classic,
            "af-delayed" => NetAck::Delayed,
            "af-perflow" => NetAck::PerFlow,
            "af-perflow-rr" => NetAck::PerFlowRr,
            "adc" => NetAck::DelayControl,
            other => {
                let delta: u16 = other.strip_prefix("af-static-")?.parse().ok()?;
                NetAck::Static(delta).validated()?
            }
        })
    }

    fn validated(self) -> Option<NetAck> {
        (self != NetAck::Static(0)).then_some(self)
    }

    /// The reverse-buffer filter and service this option installs, `None`
    /// for delay control.
    pub fn filter(self) -> Option<(Filter, Service)> {
        Some(match self {
            NetAck::Classic => (Filter::Classic, Service::Fifo),
            NetAck::Static(delta) => (
                Filter::Static {
                    delta: usize::from(delta),
                },
                Service::Fifo,
            ),
            NetAck::Delayed => (Filter::DELAYED, Service::Fifo),
            NetAck::PerFlow => (Filter::PER_FLOW_DELAYED, Service::Fifo),
            NetAck::PerFlowRr => (Filter::PER_FLOW_DELAYED, Service::RoundRobin),
            NetAck::DelayControl => return None,
        })
    }

    /// The option as written after `+`.
    pub fn name(self) -> String {
        match self {
            NetAck::Classic => "af-classic".into(),
            NetAck::Static(d) => format!("af-static-{d}"),
            NetAck::Delayed => "af-delayed".into(),
            NetAck::PerFlow => "af-perflow".into(),
            NetAck::PerFlowRr => "af-perflow-rr".into(),
            NetAck::DelayControl => "adc".into(),
        }
    }
}

impl Options {
    const NAMES: [&'static str; 26] = [
        "ss-every",
        "pacing",
        "beta27",
        "nosackabc",
        "nosack",
        "impatient",
        "hystart",
        "tlp",
        "notlp",
        "fq",
        "af-classic",
        "af-static-N",
        "af-delayed",
        "af-perflow",
        "af-perflow-rr",
        "adc",
        "ackwise-cc",
        "cubic",
        "smoltcp-sender",
        "smoltcp-receiver",
        "span",
        "floor",
        "spread",
        "sparse-holes",
        "ack-loss",
        "sparse-start",
    ];

    const NONE: Options = Options {
        ss_every: false,
        pacing: false,
        beta27: false,
        nosackabc: false,
        nosack: false,
        impatient: false,
        hystart: false,
        tlp: false,
        notlp: false,
        fq: false,
        net_ack: None,
        ackwise_cc: false,
        cubic: false,
        smoltcp: None,
        span: false,
        floor: false,
        spread: false,
        sparse_holes: false,
        ack_loss: false,
        sparse_start: false,
    };
}

/// A named end-host configuration compared in the lab: a [`Base`] and
/// its [`Options`], written `base+option+option` (e.g. `4w+ss-every`).
///
/// The names are the papers' (paper 003 sec. 3, paper 004 sec. 4.1) in
/// lower case; scripts rely on them, so they never change meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Strategy {
    /// The mechanism.
    pub base: Base,
    /// Its options.
    pub options: Options,
}

/// A strategy name the lab does not know.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown strategy `{name}` (known: {known})")]
pub struct UnknownStrategy {
    /// What was asked for.
    pub name: String,
    /// The names that exist, comma separated.
    pub known: String,
}

const fn plain(base: Base) -> Strategy {
    Strategy {
        base,
        options: Options::NONE,
    }
}

impl Strategy {
    /// `ae`.
    pub const AE: Strategy = plain(Base::Ae);
    /// `da`.
    pub const DA: Strategy = plain(Base::Da);
    /// `dal2`.
    pub const DAL2: Strategy = plain(Base::Dal2);
    /// `a4l4`.
    pub const A4L4: Strategy = plain(Base::A4l4);
    /// `a8l8`.
    pub const A8L8: Strategy = plain(Base::A8l8);
    /// `2w`.
    pub const W2: Strategy = plain(Base::W2);
    /// `4w`.
    pub const W4: Strategy = plain(Base::W4);
    /// `2waf`.
    pub const W2AF: Strategy = plain(Base::W2af);
    /// `4waf`.
    pub const W4AF: Strategy = plain(Base::W4af);
    /// `4w-adaptive`.
    pub const W4_ADAPTIVE: Strategy = plain(Base::W4Adaptive);
    /// `4w-adaptive+notlp`: the default without its tail loss probes.
    pub const W4_ADAPTIVE_NOTLP: Strategy = Strategy {
        base: Base::W4Adaptive,
        options: Options {
            notlp: true,
            ..Options::NONE
        },
    };
    /// `4w-adaptive+spread+sparse-holes`: `4w-adaptive` with ACK-clock
    /// spreading and the polled receiver's sparse ACKs in holes; the
    /// [`DEFAULT`](Self::DEFAULT).
    pub const W4_ADAPTIVE_SPREAD: Strategy = Strategy {
        base: Base::W4Adaptive,
        options: Options {
            spread: true,
            sparse_holes: true,
            ..Options::NONE
        },
    };
    /// `ae+tlp`: ACK every segment, its sender with tail loss probes.
    pub const AE_TLP: Strategy = Strategy {
        base: Base::Ae,
        options: Options {
            tlp: true,
            ..Options::NONE
        },
    };
    /// The strategy `ackwise send` and `recv` use unless told otherwise,
    /// and the one the gauntlet's targets judge: the one that held up
    /// best against `ae` across the gauntlet's random paths (see the
    /// README's "Which strategy" and `docs/results/gauntlet.md`).
    pub const DEFAULT: Strategy = Strategy::W4_ADAPTIVE_SPREAD;
    /// [`DEFAULT`](Self::DEFAULT)'s name, for command-line defaults.
    pub const DEFAULT_NAME: &'static str = "4w-adaptive+spread+sparse-holes";
    /// `smart`.
    pub const SMART: Strategy = plain(Base::Smart);
    /// `smart-ext`.
    pub const SMART_EXT: Strategy = plain(Base::SmartExt);
    /// `smart-fixed-rtt`.
    pub const SMART_FIXED_RTT: Strategy = plain(Base::SmartFixedRtt);
    /// `smart-minrtt`.
    pub const SMART_MINRTT: Strategy = plain(Base::SmartMinRtt);
    /// `smart-assisted`.
    pub const SMART_ASSISTED: Strategy = plain(Base::SmartAssisted);
    /// `acc`.
    pub const ACC: Strategy = plain(Base::Acc);

    /// Every base strategy without options, in the order tables list them.
    pub const ALL: [Strategy; 16] = [
        Strategy::AE,
        Strategy::DA,
        Strategy::DAL2,
        Strategy::A4L4,
        Strategy::A8L8,
        Strategy::W2,
        Strategy::W4,
        Strategy::W2AF,
        Strategy::W4AF,
        Strategy::W4_ADAPTIVE,
        Strategy::SMART,
        Strategy::SMART_EXT,
        Strategy::SMART_FIXED_RTT,
        Strategy::SMART_MINRTT,
        Strategy::SMART_ASSISTED,
        Strategy::ACC,
    ];

    /// This strategy with `+pacing`.
    pub const fn with_pacing(self) -> Strategy {
        let mut s = self;
        s.options.pacing = true;
        s
    }

    /// This strategy with in-network ACK management `n`.
    pub const fn with_net_ack(self, n: NetAck) -> Strategy {
        let mut s = self;
        s.options.net_ack = Some(n);
        s
    }

    /// This strategy with `+fq`.
    pub const fn with_fq(self) -> Strategy {
        let mut s = self;
        s.options.fq = true;
        s
    }

    /// This strategy with smoltcp's TCP at `end` (`+smoltcp-sender` or
    /// `+smoltcp-receiver`).
    pub const fn with_smoltcp(self, end: SmoltcpEnd) -> Strategy {
        let mut s = self;
        s.options.smoltcp = Some(end);
        s
    }

    /// The stable lab name, options included.
    pub fn name(self) -> String {
        self.to_string()
    }

    /// The QUIC strategies `lab list` shows (empty without feature
    /// `quic`): each QUIC base, and each with `+ackwise-cc`.
    pub fn quic() -> Vec<Strategy> {
        Base::QUIC
            .into_iter()
            .flat_map(|base| {
                let mut cc = plain(base);
                cc.options.ackwise_cc = true;
                [plain(base), cc]
            })
            .collect()
    }

    /// What a `quic*` strategy runs over quinn-proto: its ACK-frequency
    /// policy and controller, the other settings at their defaults (the
    /// lab and the sockets set sizes and windows); `None` for the
    /// TCP-style strategies.
    #[cfg(feature = "quic")]
    pub fn quic_flow_config(self) -> Option<crate::quic::QuicFlowConfig> {
        use crate::quic::{AckFrequencyPolicy, QuicController, QuicFlowConfig};
        let ack_frequency = match self.base {
            Base::Quic => AckFrequencyPolicy::QuinnDefault,
            Base::QuicAf(n) => AckFrequencyPolicy::EveryN {
                packets: u32::from(n),
            },
            Base::QuicPerWindow(acks) => AckFrequencyPolicy::PerWindow {
                acks: u32::from(acks),
            },
            _ => return None,
        };
        let controller = if self.options.ackwise_cc {
            QuicController::Ackwise {
                decrease: if self.options.beta27 {
                    crate::sender::congestion::Decrease::TwoSevenths
                } else {
                    crate::sender::congestion::Decrease::Half
                },
            }
        } else {
            QuicController::NewReno
        };
        Some(QuicFlowConfig {
            controller,
            ack_frequency,
            ..QuicFlowConfig::default()
        })
    }

    /// One line for `ackwise lab list`.
    pub fn description(self) -> &'static str {
        #[cfg(feature = "quic")]
        if self.options.ackwise_cc {
            return match self.base {
                Base::QuicAf(_) => "quic-af-N with ackwise's Reno, extended byte counting L=N",
                Base::QuicPerWindow(_) => {
                    "quic-2w/4w with ackwise's Reno, extended byte counting L=packets per ACK"
                }
                _ => "quic with ackwise's Reno, extended byte counting L=2",
            };
        }
        self.base.description()
    }

    /// The option names `+` accepts, for help texts.
    pub fn option_names() -> &'static [&'static str] {
        &Options::NAMES
    }

    /// Parses a comma-separated list such as `ae,dal2,4w+ss-every`.
    pub fn parse_list(list: &str) -> Result<Vec<Strategy>, UnknownStrategy> {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::parse)
            .collect()
    }

    /// `base` with this strategy's ACK policy, ACK requests and
    /// byte-counting limit. Both ends of a flow use the result: the
    /// receiver reads the policy, the sender the requests and the limit.
    /// `ack_delay` is the delayed-ACK timer, `poll_fallback` the polled
    /// receiver's fallback timer.
    ///
    /// The receiver-side strategies (`smart*`, `acc`) hold an ACK at most
    /// `ack_delay` and start their estimate of the sender's window at the
    /// initial window `base` configures (one segment if none).
    pub fn apply(self, base: &Config, ack_delay: Duration, poll_fallback: Duration) -> Config {
        let mut config = base.clone();
        let delayed = AckPolicyConfig::Delayed {
            max_delay: ack_delay,
            segments: 2,
        };
        let polled = AckPolicyConfig::Polled {
            fallback: poll_fallback,
            holes: if self.options.sparse_holes {
                HoleAcks::Openings
            } else {
                HoleAcks::Every
            },
        };
        let iw_segments = base.congestion.initial_window.map_or(1, |iw| {
            let segment = u64::from(base.mss.saturating_sub(12).max(1));
            u32::try_from(iw.div_ceil(segment))
                .unwrap_or(u32::MAX)
                .max(1)
        });
        let smart = |rtt: SmartRtt, extended: bool| {
            AckPolicyConfig::Smart(SmartParams {
                max_delay: ack_delay,
                rtt,
                extended,
                initial_window_segments: iw_segments,
                delayed_ack_floor: rtt == SmartRtt::WindowedMin,
                assisted: self.base == Base::SmartAssisted,
                isat_span_segments: if self.options.span {
                    SmartParams::SPAN_SEGMENTS
                } else {
                    1
                },
                min_acks_per_window: if self.options.floor {
                    SmartParams::FLOOR_ACKS
                } else {
                    0
                },
            })
        };
        let (policy, limit) = match self.base {
            Base::Ae => (AckPolicyConfig::Every, 1),
            // Receiver-only: the sender is paper 004's plain NewReno,
            // byte counting with L = 1 and no polling.
            Base::Smart => (smart(SmartRtt::Smoothed, false), 1),
            Base::SmartExt => (smart(SmartRtt::Smoothed, true), 1),
            Base::SmartFixedRtt => (smart(SmartRtt::Fixed, false), 1),
            Base::SmartMinRtt => (smart(SmartRtt::WindowedMin, false), 1),
            Base::SmartAssisted => (smart(SmartRtt::Smoothed, false), 1),
            Base::Acc => (
                AckPolicyConfig::Acc {
                    max_delay: ack_delay,
                    initial_window_segments: iw_segments,
                },
                1,
            ),
            Base::Da => (delayed, 1),
            Base::Dal2 => (delayed, 2),
            Base::A4l4 => (polled, 4),
            Base::A8l8 => (polled, 8),
            // The limit follows the group size once data flows; 2 until
            // the first group.
            Base::W2 | Base::W4 | Base::W2af | Base::W4af | Base::W4Adaptive => (polled, 2),
            // A QUIC flow does not use the TCP-style config; it stays valid.
            #[cfg(feature = "quic")]
            Base::Quic | Base::QuicAf(_) | Base::QuicPerWindow(_) => (delayed, 2),
        };
        config.ack_fixes = matches!(self.base, Base::W2af | Base::W4af | Base::W4Adaptive);
        config.tail_loss_probe =
            (self.base.probes_tails() || self.options.tlp) && !self.options.notlp;
        // Every lab sender finds losses by the order of transmission too
        // (ackwise's loss recovery; the ns-2 cross-checks use
        // `Config::standard_tcp` without it).
        config.loss_by_send_order = true;
        // And samples SACKs in recovery and keeps them at a timeout
        // (ackwise's; not ns-2's either).
        config.sack_rtt_samples = true;
        config.timeout_keeps_sacks = true;
        // Early retransmit, AF waiting only for sparse ACKs and the
        // reordering timer of a stalled recovery are ackwise's own
        // recovery, in its own base; the papers' senders had none.
        config.early_retransmit = self.base == Base::W4Adaptive;
        config.af_waits_only_for_sparse_acks = self.base == Base::W4Adaptive;
        config.reorder_timer = self.base == Base::W4Adaptive;
        // Paper 004's NewReno counts ACKs in congestion avoidance; its ABC
        // (`dal2`) and paper 003's senders count bytes.
        config.congestion.ack_counting_avoidance = matches!(
            self.base,
            Base::Da
                | Base::Smart
                | Base::SmartExt
                | Base::SmartFixedRtt
                | Base::SmartMinRtt
                | Base::SmartAssisted
                | Base::Acc
        );
        config.announce_window = self.base == Base::SmartAssisted;
        config.ack_spreading = self.options.spread;
        config.ack_policy = policy;
        config.congestion.byte_counting_limit = limit;
        if let Some(mut requests) = self.base.requests(self.options.ss_every) {
            if let AckRequestConfig::Adaptive {
                min_acks,
                ack_loss_compensation,
                slow_start_acks,
                ..
            } = &mut requests
            {
                *ack_loss_compensation = self.options.ack_loss;
                *slow_start_acks = self.options.sparse_start.then_some(*min_acks);
            }
            config.ack_requests = true;
            config.request_acks = requests;
            config.congestion.extended_abc = true;
        } else {
            config.request_acks = AckRequestConfig::None;
            // Whatever the base config says (the library default extends
            // byte counting for its own polling): a strategy that does
            // not poll keeps RFC 3465's L = 1 after a timeout.
            config.congestion.extended_abc = false;
        }
        config.abc_skips_sacked = !self.options.nosackabc;
        // The names are the options module's own, so this cannot fail.
        for (on, name) in [
            (self.options.pacing, "pacing"),
            (self.options.beta27, "beta27"),
            (self.options.nosack, "nosack"),
            (self.options.impatient, "impatient"),
            (self.options.hystart, "hystart"),
            (self.options.cubic, "cubic"),
        ] {
            if on {
                let _ = apply_option(name, &mut config);
            }
        }
        config
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.base.written())?;
        let o = self.options;
        for (on, name) in [
            (o.ss_every, "+ss-every"),
            (o.pacing, "+pacing"),
            (o.beta27, "+beta27"),
            (o.nosackabc, "+nosackabc"),
            (o.nosack, "+nosack"),
            (o.impatient, "+impatient"),
            (o.hystart, "+hystart"),
            (o.cubic, "+cubic"),
            (o.tlp, "+tlp"),
            (o.notlp, "+notlp"),
            (o.fq, "+fq"),
            (o.span, "+span"),
            (o.floor, "+floor"),
            (o.spread, "+spread"),
            (o.sparse_holes, "+sparse-holes"),
            (o.ack_loss, "+ack-loss"),
            (o.sparse_start, "+sparse-start"),
        ] {
            if on {
                f.write_str(name)?;
            }
        }
        if let Some(n) = o.net_ack {
            write!(f, "+{}", n.name())?;
        }
        if o.ackwise_cc {
            f.write_str("+ackwise-cc")?;
        }
        match o.smoltcp {
            Some(SmoltcpEnd::Sender) => f.write_str("+smoltcp-sender")?,
            Some(SmoltcpEnd::Receiver) => f.write_str("+smoltcp-receiver")?,
            None => {}
        }
        Ok(())
    }
}

impl FromStr for Strategy {
    type Err = UnknownStrategy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let unknown = || UnknownStrategy {
            name: s.to_string(),
            known: format!(
                "{}; options +{}",
                Base::ALL
                    .into_iter()
                    .chain(Base::QUIC)
                    .map(Base::name)
                    .collect::<Vec<_>>()
                    .join(", "),
                Options::NAMES.join(", +")
            ),
        };
        let wanted = s.trim().to_ascii_lowercase();
        let mut parts = wanted.split('+');
        let base_name = parts.next().unwrap_or_default();
        let base = Base::parse(base_name).ok_or_else(unknown)?;
        let mut options = Options::default();
        for option in parts {
            match option {
                // Only a polled sender can ask for every segment.
                "ss-every" if base.requests(false).is_some() => options.ss_every = true,
                // quinn-proto always paces and always has SACK-like ACK
                // ranges; the TCP-style host options mean nothing to it.
                "pacing" | "nosackabc" | "nosack" | "hystart" | "tlp" | "notlp" | "cubic"
                    if base.is_quic() =>
                {
                    return Err(unknown())
                }
                "pacing" => options.pacing = true,
                "beta27" if !options.cubic => options.beta27 = true,
                "nosackabc" => options.nosackabc = true,
                "nosack" => options.nosack = true,
                "impatient" => options.impatient = true,
                "hystart" => options.hystart = true,
                // CUBIC has its own decrease.
                "cubic" if !options.beta27 => options.cubic = true,
                // Only what the base does not already do, so that one
                // configuration has one name.
                "tlp" if !base.probes_tails() && !options.notlp => options.tlp = true,
                "notlp" if base.probes_tails() && !options.tlp => options.notlp = true,
                "fq" => options.fq = true,
                // Only a smartacking receiver measures segment spacing.
                "span" if base.is_smart() => options.span = true,
                "floor" if base.is_smart() => options.floor = true,
                // Only a polled sender's bursts are spread, and only a
                // polled receiver has a countdown to follow in a hole.
                "spread" if base.requests(false).is_some() => options.spread = true,
                "sparse-holes" if base.requests(false).is_some() => options.sparse_holes = true,
                // Only the adaptive requester sizes its groups per window.
                "ack-loss" if base == Base::W4Adaptive => options.ack_loss = true,
                "sparse-start" if base == Base::W4Adaptive => options.sparse_start = true,
                // Only a QUIC sender takes a quinn-proto controller.
                "ackwise-cc" if base.is_quic() => options.ackwise_cc = true,
                // smoltcp speaks TCP: it can face a TCP-style end only.
                "smoltcp-sender" | "smoltcp-receiver"
                    if !base.is_quic() && options.smoltcp.is_none() =>
                {
                    options.smoltcp = Some(if option == "smoltcp-sender" {
                        SmoltcpEnd::Sender
                    } else {
                        SmoltcpEnd::Receiver
                    })
                }
                other if options.net_ack.is_none() => {
                    options.net_ack = Some(NetAck::parse(other).ok_or_else(unknown)?)
                }
                _ => return Err(unknown()),
            }
        }
        // beta = 2/7 is an option of ackwise's controller, not quinn's.
        if base.is_quic() && options.beta27 && !options.ackwise_cc {
            return Err(unknown());
        }
        Ok(Strategy { base, options })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_do_not_depend_on_the_library_default() {
        // The lab builds every strategy on top of Config::default(); what
        // a strategy means must not change when that default does. (The
        // nonce is no part of a strategy: the lab's scenario turns it off
        // for every host.)
        let (delay, fallback) = (Duration::from_millis(100), Duration::from_millis(100));
        let standard = Config {
            ack_nonce: Config::default().ack_nonce,
            ..Config::standard_tcp()
        };
        for base in Base::ALL {
            let s = plain(base);
            assert_eq!(
                s.apply(&Config::default(), delay, fallback),
                s.apply(&standard, delay, fallback),
                "{s}"
            );
        }
    }

    #[test]
    fn the_library_default_is_the_default_strategy() {
        use crate::receiver::Polled;
        assert_eq!(Strategy::DEFAULT.name(), Strategy::DEFAULT_NAME);
        assert_eq!(
            Strategy::DEFAULT_NAME.parse::<Strategy>().unwrap(),
            Strategy::DEFAULT
        );
        // What the strategy sets, applied with the library's own timers,
        // changes nothing in Config::default().
        let d = Config::default();
        let applied =
            Strategy::DEFAULT.apply(&d, Duration::from_millis(100), Polled::DEFAULT_FALLBACK);
        assert_eq!(applied, d);
        // The standard-TCP settings differ exactly in the ACK economy.
        let standard = Config::standard_tcp();
        assert_ne!(standard.request_acks, d.request_acks);
        assert_eq!(
            standard.ack_policy,
            crate::connection::AckPolicyConfig::DELAYED
        );
        assert!(!standard.ack_fixes && !standard.congestion.extended_abc);
    }

    #[test]
    fn names_round_trip_and_unknown_names_list_the_known_ones() {
        for s in Strategy::ALL {
            assert_eq!(s.name().parse::<Strategy>().unwrap(), s);
        }
        assert_eq!(
            Strategy::parse_list(" AE, dal2 ,").unwrap(),
            vec![Strategy::AE, Strategy::DAL2]
        );
        let err = Strategy::parse_list("ae,9w").unwrap_err();
        assert_eq!(err.name, "9w");
        assert!(err.to_string().contains("ae, da, dal2"), "{err}");
        let w4: Strategy = "4W+ss-every".parse().unwrap();
        assert_eq!(w4.base, Base::W4);
        assert!(w4.options.ss_every);
        assert_eq!(w4.name(), "4w+ss-every");
        // Options a base cannot take, and unknown options, are refused.
        assert!("ae+ss-every".parse::<Strategy>().is_err());
        // Tail loss probes: 4w-adaptive has them, the papers' bases take
        // them as an option; a name never asks for what the base does.
        let d = Config::default();
        let (delay, fallback) = (Duration::from_millis(100), Duration::from_millis(100));
        let probes = |name: &str| {
            let s: Strategy = name.parse().unwrap();
            assert_eq!(s.name(), name);
            s.apply(&d, delay, fallback).tail_loss_probe
        };
        assert!(probes("4w-adaptive") && probes("ae+tlp") && probes("4w+tlp"));
        assert!(!probes("4w-adaptive+notlp") && !probes("ae") && !probes("4w"));
        for refused in ["4w-adaptive+tlp", "ae+notlp", "4w-adaptive+notlp+tlp"] {
            assert!(refused.parse::<Strategy>().is_err(), "{refused}");
        }
        assert!("4w+turbo".parse::<Strategy>().is_err());
        let s: Strategy = "dal2+beta27+pacing".parse().unwrap();
        assert_eq!(s.name(), "dal2+pacing+beta27");
        let c = s.apply(
            &Config::default(),
            Duration::from_millis(100),
            Duration::from_millis(100),
        );
        assert!(c.pacing.is_some());
        assert_eq!(
            c.congestion.decrease,
            crate::connection::Decrease::TwoSevenths
        );
        // `+cubic` swaps the congestion avoidance of any TCP-style base,
        // and cannot go with paper 003's decrease, which is Reno's.
        let cubic: Strategy = "4w-adaptive+cubic+spread+sparse-holes".parse().unwrap();
        assert_eq!(cubic.name(), "4w-adaptive+cubic+spread+sparse-holes");
        assert!(cubic.apply(&d, delay, fallback).congestion.cubic);
        assert!(
            !Strategy::DEFAULT
                .apply(&d, delay, fallback)
                .congestion
                .cubic
        );
        assert!("ae+cubic".parse::<Strategy>().is_ok());
        for refused in ["4w+cubic+beta27", "4w+beta27+cubic"] {
            assert!(refused.parse::<Strategy>().is_err(), "{refused}");
        }
        let nosack: Strategy = "da+nosack".parse().unwrap();
        assert!(nosack.options.nosack);
        assert_eq!(nosack.name(), "da+nosack");
        let c = nosack.apply(
            &Config::default(),
            Duration::from_millis(100),
            Duration::from_millis(100),
        );
        assert!(!c.sack);
        c.validate().unwrap();
        // `+span` belongs to the smartacking receivers and sets their ISAT
        // span; the paper's receiver takes every gap.
        let smart = |name: &str| match name.parse::<Strategy>().unwrap().apply(&d, delay, fallback)
        {
            Config {
                ack_policy: AckPolicyConfig::Smart(p),
                ..
            } => p,
            other => panic!("{name}: {:?}", other.ack_policy),
        };
        let span = |name: &str| smart(name).isat_span_segments;
        assert_eq!(span("smart-minrtt+span"), SmartParams::SPAN_SEGMENTS);
        assert_eq!(span("smart+span"), SmartParams::SPAN_SEGMENTS);
        assert_eq!(span("smart-minrtt"), 1);
        for refused in ["ae+span", "4w-adaptive+span", "da+span"] {
            assert!(refused.parse::<Strategy>().is_err(), "{refused}");
        }
        // So does `+floor`, which sets their ACKs per window.
        let floor = |name: &str| smart(name).min_acks_per_window;
        assert_eq!(floor("smart-minrtt+span+floor"), SmartParams::FLOOR_ACKS);
        assert_eq!(floor("smart+floor"), SmartParams::FLOOR_ACKS);
        assert_eq!(floor("smart-minrtt+span"), 0);
        let named: Strategy = "smart-minrtt+floor+span".parse().unwrap();
        assert_eq!(named.name(), "smart-minrtt+span+floor");
        for refused in ["ae+floor", "4w-adaptive+floor", "da+floor"] {
            assert!(refused.parse::<Strategy>().is_err(), "{refused}");
        }
        // `+spread` and `+sparse-holes` belong to the polled strategies:
        // the first turns the sender's spreading on, the second the
        // receiver's rule for holes; neither changes anything else.
        let both: Strategy = "4w-adaptive+spread+sparse-holes".parse().unwrap();
        assert_eq!(both.name(), "4w-adaptive+spread+sparse-holes");
        let c = both.apply(&d, delay, fallback);
        assert!(c.ack_spreading);
        assert_eq!(
            c.ack_policy,
            AckPolicyConfig::Polled {
                fallback,
                holes: HoleAcks::Openings
            }
        );
        let plain = Strategy::W4_ADAPTIVE.apply(&d, delay, fallback);
        assert!(!plain.ack_spreading);
        assert_eq!(
            Config {
                ack_spreading: false,
                ack_policy: plain.ack_policy,
                ..c
            },
            plain
        );
        for refused in [
            "ae+spread",
            "da+sparse-holes",
            "smart+spread",
            "acc+sparse-holes",
        ] {
            assert!(refused.parse::<Strategy>().is_err(), "{refused}");
        }
    }

    #[test]
    fn strategies_set_policy_and_limit() {
        let base = Config::default();
        let d = Duration::from_millis(100);
        assert_eq!(
            Strategy::AE.apply(&base, d, d).ack_policy,
            AckPolicyConfig::Every
        );
        assert_eq!(
            Strategy::DA
                .apply(&base, d, d)
                .congestion
                .byte_counting_limit,
            1
        );
        let dal2 = Strategy::DAL2.apply(&base, d, d);
        assert_eq!(dal2.ack_policy, AckPolicyConfig::DELAYED);
        assert_eq!(dal2.congestion.byte_counting_limit, 2);
        assert_eq!(dal2.request_acks, AckRequestConfig::None);
        let a8 = Strategy::A8L8.apply(&base, d, d);
        assert_eq!(
            a8.ack_policy,
            AckPolicyConfig::Polled {
                fallback: d,
                holes: HoleAcks::Every
            }
        );
        assert_eq!(a8.congestion.byte_counting_limit, 8);
        assert!(a8.congestion.extended_abc && a8.ack_requests);
        assert!(matches!(
            Strategy::W4.apply(&base, d, d).request_acks,
            AckRequestConfig::PerWindow { acks: 4, .. }
        ));
        for s in Strategy::ALL {
            s.apply(&base, d, d).validate().unwrap();
        }
    }
}
