//! What a run measured: per-flow results with the metrics of paper 004
//! sec. 4.3 (completion time from the first data segment sent to the last
//! ACK delivered, and Jain's fairness index over completion times),
//! per-link counters, and optional time series.

use crate::connection::Stats;
use crate::time::{Duration, Instant};

/// One flow's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowResult {
    /// The flow's name from the scenario.
    pub name: String,
    /// Payload bytes the flow was to transfer.
    pub bytes: u64,
    /// Every byte was acknowledged to the sender and read, intact, by the
    /// receiver.
    pub finished: bool,
    /// The receiver read exactly `bytes` bytes.
    pub delivered_all: bool,
    /// Everything the receiver read matched what the sender wrote.
    pub content_ok: bool,
    /// When the first data segment left the client.
    pub first_data_at: Option<Instant>,
    /// When the ACK covering the last byte reached the client.
    pub last_ack_at: Option<Instant>,
    /// `last_ack_at - first_data_at`.
    pub completion_time: Option<Duration>,
    /// `bytes * 8 / completion_time`, bits per second.
    pub goodput_bps: Option<f64>,
    /// Payload bytes the receiver read inside the measurement window.
    pub measured_bytes: u64,
    /// `measured_bytes * 8` over the window's length, bits per second:
    /// the throughput of a long-lived flow.
    pub throughput_bps: f64,
    /// Data segments the client emitted (retransmissions included).
    pub data_packets: u64,
    /// Their on-link bytes.
    pub data_bytes: u64,
    /// Pure ACKs the server emitted.
    pub ack_packets: u64,
    /// Their on-link bytes.
    pub ack_bytes: u64,
    /// Retransmitted segments.
    pub retransmissions: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Data packets of this flow that were CE-marked on the way.
    pub ce_marks: u64,
    /// Client counters at the end (whole run, not only the window; the
    /// packet counters above cover the measurement window).
    pub client_stats: Stats,
    /// Server counters at the end (default if the SYN never arrived).
    pub server_stats: Stats,
    /// For a QUIC flow, what its connection leaves in a path cache
    /// (window, datagram size, SRTT at the end).
    #[cfg(feature = "quic")]
    pub quic_path: Option<crate::quic::CachedPath>,
}

/// One link's counters.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkResult {
    /// The link's name from the scenario.
    pub name: String,
    /// Packets transmitted.
    pub packets: u64,
    /// On-link bytes transmitted.
    pub bytes: u64,
    /// Packets the queue dropped.
    pub drops: u64,
    /// Packets serialised and then lost on the wire by the link's
    /// [`LossModel`](super::LossModel) (not counted in `drops`).
    pub lost: u64,
    /// Packets a middlebox hook dropped.
    pub hook_drops: u64,
    /// Pure ACKs the queue's ACK filter removed (paper 000).
    pub filtered: u64,
    /// Pure ACKs delay control held back before the queue (paper 001).
    pub delayed: u64,
    /// Packets the queue marked CE.
    pub ecn_marks: u64,
    /// Busy time over the measurement window.
    pub utilization: f64,
    /// Longest queue seen, packets.
    pub peak_queue_packets: usize,
    /// Time-averaged queue length, packets.
    pub mean_queue_packets: f64,
}

/// Samples of one flow, aligned with [`TimeSeries::times`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FlowSeries {
    /// Sender congestion window, bytes.
    pub cwnd: Vec<u64>,
    /// Sender slow-start threshold, bytes.
    pub ssthresh: Vec<u64>,
    /// Receiver-side congestion window estimate (paper 004 figure 1); left
    /// `None` until the estimator is wired in.
    pub receiver_cwnd_estimate: Vec<Option<u64>>,
}

/// Periodic samples.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TimeSeries {
    /// Sample instants.
    pub times: Vec<Instant>,
    /// Per flow, in scenario order.
    pub flows: Vec<FlowSeries>,
    /// Queue length in packets of each sampled link: (link, samples).
    pub queues: Vec<(usize, Vec<usize>)>,
}

/// Everything a run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct RunResult {
    /// Per flow, in scenario order.
    pub flows: Vec<FlowResult>,
    /// Per link, in scenario order.
    pub links: Vec<LinkResult>,
    /// Virtual time when the run stopped.
    pub elapsed: Duration,
    /// Length of the measurement window (`elapsed - measure_from`, or
    /// `elapsed` if the run stopped before the window opened).
    pub measured: Duration,
    /// Every flow finished before the horizon.
    pub all_finished: bool,
    /// Events processed (for packets-per-wall-second figures).
    pub events: u64,
    /// Data segments emitted by all clients.
    pub data_packets: u64,
    /// Cross-traffic datagrams emitted.
    pub cross_packets: u64,
    /// Largest number of packets in flight at once (pool size).
    pub peak_packets_in_flight: usize,
    /// Periodic samples, if the scenario asked for them.
    pub series: Option<TimeSeries>,
}

impl RunResult {
    /// Jain's index over the completion times of finished flows (paper 004
    /// eq. 2); `None` if no flow finished.
    pub fn completion_fairness(&self) -> Option<f64> {
        let t: Vec<f64> = self
            .flows
            .iter()
            .filter_map(|f| f.completion_time.map(|d| d.as_secs_f64()))
            .collect();
        jain_index(&t)
    }

    /// Jain's index over the goodputs of finished flows.
    pub fn goodput_fairness(&self) -> Option<f64> {
        let x: Vec<f64> = self.flows.iter().filter_map(|f| f.goodput_bps).collect();
        jain_index(&x)
    }
}

/// Jain's fairness index `(sum x)^2 / (n sum x^2)`: 1 when all are equal,
/// `1/n` when one gets everything. `None` for an empty slice or all zeros.
pub fn jain_index(x: &[f64]) -> Option<f64> {
    let n = x.len() as f64;
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    (sq > 0.0).then(|| sum * sum / (n * sq))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_hand_examples() {
        assert_eq!(jain_index(&[3.0, 3.0, 3.0, 3.0]), Some(1.0));
        assert_eq!(jain_index(&[0.0, 5.0, 0.0, 0.0]), Some(0.25));
        let j = jain_index(&[1.0, 2.0]).unwrap();
        assert!((j - 9.0 / 10.0).abs() < 1e-12);
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[0.0]), None);
    }
}
