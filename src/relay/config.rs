//! What a relay emulates: the two links and where datagrams go.

use crate::ack_path::{DelayControlConfig, Filter, Service};
use crate::emu::queue::{DropTail, LinkQueue, Red, RedParams};
use crate::time::Duration;
use std::fmt;
use std::net::SocketAddr;

/// Bytes counted on the emulated link for every datagram on top of its
/// payload: an IPv4 header (20) and a UDP header (8). Ethernet framing is
/// left out, as the emulator's links leave it out.
pub const UDP_IP_OVERHEAD_BYTES: u32 = 28;

/// The MTU a [`LinkConfig::new`] link and the relay's `--mtu` start
/// from: Ethernet's.
pub const ETHERNET_MTU_BYTES: u32 = 1500;

/// The smallest `--mtu`: IPv4's minimum (RFC 791).
pub const MIN_MTU_BYTES: u32 = 68;

/// The largest `--mtu`: an IPv4 datagram's total length.
pub const MAX_MTU_BYTES: u32 = 65_535;

/// The queueing discipline at a link's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueKind {
    /// FIFO dropping arrivals once `buffer_packets` wait.
    #[default]
    DropTail,
    /// Random Early Detection (gentle, no ECN marking: the relay cannot set
    /// congestion-experienced bits in a UDP payload's IP header).
    Red,
}

impl QueueKind {
    /// Parses `droptail` or `red`.
    pub fn parse(s: &str) -> Result<QueueKind, RelayConfigError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "droptail" | "drop-tail" => Ok(QueueKind::DropTail),
            "red" => Ok(QueueKind::Red),
            other => Err(RelayConfigError::new(
                "--queue",
                format!("unknown queue `{other}` (use droptail or red)"),
            )),
        }
    }
}

/// One direction's emulated link: queue, serialiser, propagation delay,
/// then random loss and reordering.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkConfig {
    /// Serialisation rate, bits per second (payload plus
    /// [`UDP_IP_OVERHEAD_BYTES`] per datagram).
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Queueing discipline.
    pub queue: QueueKind,
    /// Most datagrams waiting (the one being serialised not counted, as in
    /// the emulator).
    pub buffer_packets: usize,
    /// Probability that a serialised datagram is lost.
    pub loss: f64,
    /// Probability that a datagram is held back by `reorder_delay`, so that
    /// later ones overtake it.
    pub reorder: f64,
    /// Extra delay of a reordered datagram; `None` means three of its own
    /// transmission times (at least 1 ms), enough for the next few
    /// back-to-back datagrams to pass it.
    pub reorder_delay: Option<Duration>,
    /// Largest IP datagram the link carries (the UDP payload plus
    /// [`UDP_IP_OVERHEAD_BYTES`]): a larger one is dropped on arrival, as a
    /// router drops a packet too big for the next hop when it may not
    /// fragment it. `None` carries any size. It lets a path MTU below
    /// loopback's 64 KiB be tried on one host; [`LinkConfig::new`] sets
    /// Ethernet's 1 500, as paths that are not loopback have.
    pub mtu_bytes: Option<u32>,
}

impl LinkConfig {
    /// A lossless DropTail link of `rate_bps` and `delay` with a buffer of
    /// `buffer_packets`, and Ethernet's MTU of 1 500 bytes (so that a
    /// connecting endpoint's path MTU probes find what a real path would
    /// have, instead of 64 KiB datagrams that hold a slow link for
    /// seconds).
    pub fn new(rate_bps: u64, delay: Duration, buffer_packets: usize) -> LinkConfig {
        LinkConfig {
            rate_bps,
            delay,
            queue: QueueKind::DropTail,
            buffer_packets,
            loss: 0.0,
            reorder: 0.0,
            reorder_delay: None,
            mtu_bytes: Some(ETHERNET_MTU_BYTES),
        }
    }

    /// Checks the settings; `direction` names the flags in the error.
    pub fn validate(&self, direction: &str) -> Result<(), RelayConfigError> {
        if self.rate_bps == 0 {
            return Err(RelayConfigError::new(
                &format!("--{direction}-rate"),
                "must be positive",
            ));
        }
        if self.buffer_packets == 0 {
            return Err(RelayConfigError::new(
                "--buffer",
                "must be at least one packet",
            ));
        }
        if let Some(mtu) = self.mtu_bytes {
            if !(MIN_MTU_BYTES..=MAX_MTU_BYTES).contains(&mtu) {
                return Err(RelayConfigError::new(
                    "--mtu",
                    format!(
                        "{mtu} bytes is outside {MIN_MTU_BYTES}-{MAX_MTU_BYTES} \
                         (IPv4's minimum MTU to its largest datagram)"
                    ),
                ));
            }
        }
        for (flag, p) in [("--loss", self.loss), ("--reorder", self.reorder)] {
            // Written so that NaN fails.
            if !(0.0..=1.0).contains(&p) {
                return Err(RelayConfigError::new(
                    flag,
                    format!("{p} is not a probability in [0, 1]"),
                ));
            }
        }
        Ok(())
    }

    /// The discipline this link starts with.
    pub fn build_queue(&self) -> Box<dyn LinkQueue + Send> {
        match self.queue {
            QueueKind::DropTail => Box::new(DropTail::new(self.buffer_packets, None)),
            QueueKind::Red => Box::new(Red::new(red_params(self.buffer_packets), self.rate_bps)),
        }
    }
}

/// Paper 004's RED setting (thresholds 5 and 15) when the buffer is large
/// enough for it; smaller buffers get thresholds at a sixth and half of
/// the buffer, so early drops still start before the hard limit.
pub(super) fn red_params(buffer_packets: usize) -> RedParams {
    let mut p = RedParams::paper_004(buffer_packets);
    if buffer_packets < 30 {
        let b = buffer_packets as f64;
        p.min_th = (b / 6.0).max(1.0).min(b - 1.0).max(0.0);
        p.max_th = (b / 2.0).max(p.min_th + 1.0);
    }
    p
}

/// Everything a relay needs.
#[derive(Debug, Clone, PartialEq)]
pub struct RelayConfig {
    /// Where clients send their datagrams.
    pub listen: SocketAddr,
    /// Where the relay forwards them (the server).
    pub to: SocketAddr,
    /// Client to server.
    pub forward: LinkConfig,
    /// Server to client (where ACKs travel when the client sends data).
    pub reverse: LinkConfig,
    /// Seed of the loss and reordering draws (each direction derives its
    /// own stream from it).
    pub seed: u64,
    /// In-network ACK management on the reverse link.
    pub ack_management: AckManagement,
}

/// In-network ACK management on the reverse (server to client) link: the
/// same components the emulator runs (`ackwise::ack_path`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AckManagement {
    /// `--ack-filter`: the reverse queue becomes paper 000's filtering
    /// buffer (with the reverse link's buffer size, behind its RED gate
    /// when `--queue red`).
    pub filter: Option<(Filter, Service)>,
    /// `--ack-delay-control`: paper 001's ACK shaper at the reverse
    /// link's input, watching the forward queue.
    pub delay_control: Option<DelayControlSetting>,
}

/// The flag part of ACK delay control: the normal leak rate comes from the
/// forward link (see [`DelayControlSetting::config`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DelayControlSetting {
    /// Forward queue length at which the leak slows, bytes.
    pub threshold_bytes: u64,
    /// The slowed rate as a fraction of the normal one.
    pub fraction: f64,
}

/// The data packet the relay assumes when it turns the forward rate into
/// a packet service rate for delay control: a full Ethernet-sized
/// datagram (the relay cannot know the senders' segment size in advance).
pub const DELAY_CONTROL_PACKET_BYTES: u32 = 1500;

impl DelayControlSetting {
    /// The shaper's settings over a forward link of `forward_rate_bps`.
    pub fn config(&self, forward_rate_bps: u64) -> DelayControlConfig {
        DelayControlConfig {
            threshold_bytes: self.threshold_bytes,
            fraction: self.fraction,
            ..DelayControlConfig::paper_001(forward_rate_bps, DELAY_CONTROL_PACKET_BYTES)
        }
    }
}

/// Parses `--ack-filter`: `classic`, `static:DELTA`, `delayed`,
/// `per-flow` or `per-flow-rr`.
pub fn parse_ack_filter(flag: &str, value: &str) -> Result<(Filter, Service), RelayConfigError> {
    let v = value.trim().to_ascii_lowercase();
    Ok(match v.as_str() {
        "classic" => (Filter::Classic, Service::Fifo),
        "delayed" => (Filter::DELAYED, Service::Fifo),
        "per-flow" => (Filter::PER_FLOW_DELAYED, Service::Fifo),
        "per-flow-rr" => (Filter::PER_FLOW_DELAYED, Service::RoundRobin),
        other => {
            let delta = other
                .strip_prefix("static:")
                .and_then(|d| d.parse::<usize>().ok())
                .filter(|&d| d >= 1)
                .ok_or_else(|| {
                    RelayConfigError::new(
                        flag,
                        format!(
                            "`{value}` is not one of classic, static:DELTA (DELTA >= 1), delayed, \
                             per-flow, per-flow-rr"
                        ),
                    )
                })?;
            (Filter::Static { delta }, Service::Fifo)
        }
    })
}

/// Parses `--ack-delay-control THRESHOLD[,FRACTION]`: a byte count with
/// an optional `B`, `kB` or `MB` suffix, and a fraction in (0, 1] (one
/// half when left out, as in paper 001).
pub fn parse_delay_control(
    flag: &str,
    value: &str,
) -> Result<DelayControlSetting, RelayConfigError> {
    let (threshold, fraction) = match value.split_once(',') {
        Some((t, f)) => (t.trim(), Some(f.trim())),
        None => (value.trim(), None),
    };
    let lower = threshold.to_ascii_lowercase();
    let (digits, scale) = [("mb", 1_000_000.0), ("kb", 1000.0), ("b", 1.0)]
        .into_iter()
        .find_map(|(suffix, scale)| {
            lower
                .strip_suffix(suffix)
                .map(|d| (d.trim().to_string(), scale))
        })
        .unwrap_or((lower.clone(), 1.0));
    let bytes = digits
        .parse::<f64>()
        .ok()
        .filter(|b| b.is_finite() && *b >= 0.0)
        .ok_or_else(|| {
            RelayConfigError::new(
                flag,
                format!("`{threshold}` is not a byte count such as 50kB"),
            )
        })?;
    let fraction = match fraction {
        None => 0.5,
        Some(f) => f
            .parse::<f64>()
            .ok()
            .filter(|f| *f > 0.0 && *f <= 1.0)
            .ok_or_else(|| {
                RelayConfigError::new(flag, format!("fraction `{f}` is not in (0, 1]"))
            })?,
    };
    Ok(DelayControlSetting {
        threshold_bytes: (bytes * scale).round() as u64,
        fraction,
    })
}

impl RelayConfig {
    /// Checks both links.
    pub fn validate(&self) -> Result<(), RelayConfigError> {
        self.forward.validate("fwd")?;
        self.reverse.validate("rev")
    }
}

/// A bad relay setting: the flag and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{flag}: {problem}")]
pub struct RelayConfigError {
    /// The flag (or field) at fault.
    pub flag: String,
    /// What is wrong.
    pub problem: String,
}

impl RelayConfigError {
    /// An error about `flag`.
    pub fn new(flag: &str, problem: impl fmt::Display) -> RelayConfigError {
        RelayConfigError {
            flag: flag.to_string(),
            problem: problem.to_string(),
        }
    }
}

/// Parses a rate flag such as `10mbit`, `64kbit` or `1gbit` (the lab's
/// units).
pub fn parse_rate(flag: &str, value: &str) -> Result<u64, RelayConfigError> {
    crate::lab::units::parse_rate(value).map_err(|p| RelayConfigError::new(flag, p))
}

/// Parses a delay flag such as `50ms` (zero is allowed).
pub fn parse_delay(flag: &str, value: &str) -> Result<Duration, RelayConfigError> {
    crate::lab::units::parse_duration(value).map_err(|p| RelayConfigError::new(flag, p))
}

/// Parses a probability flag such as `0.01` or `1%`.
pub fn parse_probability(flag: &str, value: &str) -> Result<f64, RelayConfigError> {
    let v = value.trim();
    let (num, scale) = match v.strip_suffix('%') {
        Some(n) => (n, 0.01),
        None => (v, 1.0),
    };
    let p = num
        .trim()
        .parse::<f64>()
        .map_err(|_| RelayConfigError::new(flag, format!("`{value}` is not a number")))?
        * scale;
    if !(0.0..=1.0).contains(&p) {
        return Err(RelayConfigError::new(
            flag,
            format!("`{value}` is not a probability in [0, 1]"),
        ));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags() {
        assert_eq!(parse_rate("--fwd-rate", "10mbit"), Ok(10_000_000));
        assert_eq!(parse_rate("--rev-rate", "500kbps"), Ok(500_000));
        let e = parse_rate("--fwd-rate", "fast").unwrap_err();
        assert_eq!(e.flag, "--fwd-rate");
        assert_eq!(
            parse_delay("--fwd-delay", "50ms"),
            Ok(Duration::from_millis(50))
        );
        assert!(parse_delay("--fwd-delay", "50").is_err());
        assert_eq!(parse_probability("--loss", "1%"), Ok(0.01));
        assert_eq!(parse_probability("--loss", "0.25"), Ok(0.25));
        assert!(parse_probability("--loss", "1.5").is_err());
        assert!(parse_probability("--loss", "NaN").is_err());
        assert_eq!(QueueKind::parse("RED"), Ok(QueueKind::Red));
        assert!(QueueKind::parse("fq").is_err());
    }

    #[test]
    fn mtu_is_bounded_and_shown() {
        let mut link = LinkConfig::new(10_000_000, Duration::from_millis(5), 50);
        for (mtu, ok) in [
            (67, false),
            (68, true),
            (1500, true),
            (65_535, true),
            (65_536, false),
        ] {
            link.mtu_bytes = Some(mtu);
            let got = link.validate("fwd");
            assert_eq!(got.is_ok(), ok, "mtu {mtu}: {got:?}");
            if let Err(e) = got {
                assert_eq!(e.flag, "--mtu");
            }
        }
        link.mtu_bytes = Some(1500);
        assert_eq!(
            link.to_string(),
            "10 Mbit/s 5 ms droptail 50 pkts mtu 1500 B"
        );
    }

    #[test]
    fn red_thresholds_fit_small_buffers() {
        for b in 1..40 {
            let p = red_params(b);
            assert!(p.validate().is_ok(), "buffer {b}: {p:?}");
        }
    }
}

/// One readable line of the settings, as `ackwise relay` prints at start:
/// rates in bit/s, delays in ms, ACK management by its flag values.
impl fmt::Display for RelayConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} -> {}; forward {}, reverse {}; seed {}",
            self.listen, self.to, self.forward, self.reverse, self.seed
        )?;
        if let Some((filter, service)) = &self.ack_management.filter {
            write!(f, "; ACK filter {}", filter_name(filter, service))?;
        }
        if let Some(dc) = &self.ack_management.delay_control {
            write!(
                f,
                "; ACK delay control above {} B at {}x",
                dc.threshold_bytes, dc.fraction
            )?;
        }
        Ok(())
    }
}

/// `10 Mbit/s 25 ms droptail 50 pkts`, then loss and reordering if any.
impl fmt::Display for LinkConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let queue = match self.queue {
            QueueKind::DropTail => "droptail",
            QueueKind::Red => "red",
        };
        write!(
            f,
            "{} {} ms {queue} {} pkts",
            fmt_bps(self.rate_bps),
            fmt_ms(self.delay),
            self.buffer_packets
        )?;
        if self.loss > 0.0 {
            write!(f, " loss {}%", self.loss * 100.0)?;
        }
        if self.reorder > 0.0 {
            write!(f, " reorder {}%", self.reorder * 100.0)?;
        }
        if let Some(mtu) = self.mtu_bytes {
            write!(f, " mtu {mtu} B")?;
        }
        Ok(())
    }
}

/// The `--ack-filter` value that selects this filter and service.
fn filter_name(filter: &Filter, service: &Service) -> String {
    match (filter, service) {
        (Filter::None, _) => "none".into(),
        (Filter::Classic, _) => "classic".into(),
        (Filter::Static { delta }, _) => format!("static:{delta}"),
        (Filter::Delayed { .. }, _) => "delayed".into(),
        (Filter::PerFlowDelayed { .. }, Service::RoundRobin) => "per-flow-rr".into(),
        (Filter::PerFlowDelayed { .. }, Service::Fifo) => "per-flow".into(),
    }
}

/// A rate as `64 kbit/s`, `1.5 Mbit/s` or `1 Gbit/s`, exact where it can.
fn fmt_bps(bps: u64) -> String {
    for (scale, unit) in [
        (1_000_000_000, "Gbit/s"),
        (1_000_000, "Mbit/s"),
        (1_000, "kbit/s"),
    ] {
        if bps >= scale {
            return if bps.is_multiple_of(scale) {
                format!("{} {unit}", bps / scale)
            } else {
                format!("{} {unit}", bps as f64 / scale as f64)
            };
        }
    }
    format!("{bps} bit/s")
}

/// A delay in milliseconds, with fractions only when it has them.
fn fmt_ms(d: Duration) -> String {
    let us = d.as_micros();
    if us.is_multiple_of(1000) {
        format!("{}", us / 1000)
    } else {
        format!("{}", us as f64 / 1000.0)
    }
}

#[cfg(test)]
mod display_tests {
    use super::*;

    #[test]
    fn the_startup_line_reads_like_the_flags() {
        let mut c = RelayConfig {
            listen: "127.0.0.1:9000".parse().unwrap(),
            to: "127.0.0.1:9001".parse().unwrap(),
            forward: LinkConfig::new(10_000_000, Duration::from_millis(25), 50),
            reverse: LinkConfig::new(64_000, Duration::ZERO, 20),
            seed: 1,
            ack_management: AckManagement::default(),
        };
        c.forward.loss = 0.02;
        c.ack_management.filter = Some((Filter::DELAYED, Service::Fifo));
        assert_eq!(
            c.to_string(),
            "127.0.0.1:9000 -> 127.0.0.1:9001; forward 10 Mbit/s 25 ms droptail 50 pkts \
             loss 2% mtu 1500 B, reverse 64 kbit/s 0 ms droptail 20 pkts mtu 1500 B; seed 1; \
             ACK filter delayed"
        );
        assert_eq!(fmt_bps(1_500_000), "1.5 Mbit/s");
        assert_eq!(fmt_ms(Duration::from_micros(2500)), "2.5");
    }
}
