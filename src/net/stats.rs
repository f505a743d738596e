//! Endpoint-wide counters.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A snapshot of an endpoint's counters (every connection's own counters
/// are in [`Stream::stats`](super::Stream::stats)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndpointStats {
    /// UDP datagrams received (a GRO batch counts once).
    pub datagrams_received: u64,
    /// Segments received, after splitting GRO batches.
    pub segments_received: u64,
    /// UDP send calls that succeeded (a GSO batch counts once).
    pub datagrams_sent: u64,
    /// Segments sent, after counting GSO batches out.
    pub segments_sent: u64,
    /// Segments dropped because they were too short, did not parse, failed
    /// their checksum or were rejected by their connection.
    pub malformed_dropped: u64,
    /// Well-formed segments for no connection (answered with a reset
    /// unless they were resets themselves), and SYNs refused because the
    /// endpoint does not listen or is full.
    pub unknown_dropped: u64,
    /// Resets sent for segments of no connection.
    pub resets_sent: u64,
    /// Sends that failed for a reason other than a full socket buffer.
    pub send_errors: u64,
    /// Connections opened by peers that completed their handshake.
    pub connections_accepted: u64,
    /// Half-open connections (SYN received, handshake not complete)
    /// dropped to make room for a newer SYN when the half-open limit or
    /// the connection table was full: what a SYN flood costs the flooder
    /// instead of the clients behind it.
    pub half_open_evicted: u64,
    /// SYNs (and returning SYN cookies) refused with a reset because
    /// their peer address had
    /// [`EndpointConfig::max_connections_per_peer`](super::EndpointConfig::max_connections_per_peer)
    /// connections open already.
    pub per_peer_refused: u64,
    /// SYNs answered with a SYN cookie (no state kept) because the
    /// half-open limits were reached.
    pub syn_cookies_sent: u64,
    /// Connections rebuilt from a valid SYN cookie when the handshake's
    /// ACK returned.
    pub syn_cookies_accepted: u64,
    /// Established connections reset to make room in a full table because
    /// their data had not moved for
    /// [`EndpointConfig::idle_eviction`](super::EndpointConfig::idle_eviction).
    pub idle_evicted: u64,
    /// Segments written to the endpoint's pcap capture
    /// ([`EndpointConfig::capture`](super::EndpointConfig::capture)).
    pub segments_captured: u64,
    /// Capture write failures (the capture stops at the first; the
    /// connections go on).
    pub capture_errors: u64,
    /// Path MTU probes sent before connecting (see
    /// [`EndpointConfig::probe_path_mtu`](super::EndpointConfig::probe_path_mtu)).
    pub mtu_probes_sent: u64,
    /// Path MTU probes from connecting peers this endpoint echoed.
    pub mtu_probes_echoed: u64,
}

/// The driver's live counters.
#[derive(Debug, Default)]
pub(crate) struct StatsCell {
    pub(crate) datagrams_received: AtomicU64,
    pub(crate) segments_received: AtomicU64,
    pub(crate) datagrams_sent: AtomicU64,
    pub(crate) segments_sent: AtomicU64,
    pub(crate) malformed_dropped: AtomicU64,
    pub(crate) unknown_dropped: AtomicU64,
    pub(crate) resets_sent: AtomicU64,
    pub(crate) send_errors: AtomicU64,
    pub(crate) connections_accepted: AtomicU64,
    pub(crate) half_open_evicted: AtomicU64,
    pub(crate) per_peer_refused: AtomicU64,
    pub(crate) syn_cookies_sent: AtomicU64,
    pub(crate) syn_cookies_accepted: AtomicU64,
    pub(crate) idle_evicted: AtomicU64,
    pub(crate) segments_captured: AtomicU64,
    pub(crate) capture_errors: AtomicU64,
    pub(crate) mtu_probes_sent: AtomicU64,
    pub(crate) mtu_probes_echoed: AtomicU64,
}

impl StatsCell {
    pub(crate) fn snapshot(&self) -> EndpointStats {
        EndpointStats {
            datagrams_received: self.datagrams_received.load(Relaxed),
            segments_received: self.segments_received.load(Relaxed),
            datagrams_sent: self.datagrams_sent.load(Relaxed),
            segments_sent: self.segments_sent.load(Relaxed),
            malformed_dropped: self.malformed_dropped.load(Relaxed),
            unknown_dropped: self.unknown_dropped.load(Relaxed),
            resets_sent: self.resets_sent.load(Relaxed),
            send_errors: self.send_errors.load(Relaxed),
            connections_accepted: self.connections_accepted.load(Relaxed),
            half_open_evicted: self.half_open_evicted.load(Relaxed),
            per_peer_refused: self.per_peer_refused.load(Relaxed),
            syn_cookies_sent: self.syn_cookies_sent.load(Relaxed),
            syn_cookies_accepted: self.syn_cookies_accepted.load(Relaxed),
            idle_evicted: self.idle_evicted.load(Relaxed),
            segments_captured: self.segments_captured.load(Relaxed),
            capture_errors: self.capture_errors.load(Relaxed),
            mtu_probes_sent: self.mtu_probes_sent.load(Relaxed),
            mtu_probes_echoed: self.mtu_probes_echoed.load(Relaxed),
        }
    }
}
