//! What the relay counts.

use std::fmt;

/// Counters of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DirectionStats {
    /// Datagrams received for this direction.
    pub packets_in: u64,
    /// Their payload bytes.
    pub bytes_in: u64,
    /// Datagrams that crossed the link and were handed to the socket
    /// toward their destination (those whose send then failed are also in
    /// `send_errors`).
    pub forwarded_packets: u64,
    /// Their payload bytes.
    pub forwarded_bytes: u64,
    /// Datagrams the queue discipline refused (buffer full, RED).
    pub queue_drops: u64,
    /// Datagrams lost by the random loss draw.
    pub random_losses: u64,
    /// Datagrams dropped on arrival for being larger than the link's MTU
    /// (`--mtu`).
    pub mtu_drops: u64,
    /// Datagrams held back by the reordering draw.
    pub reorders: u64,
    /// Arrivals a reverse hook dropped.
    pub hook_drops: u64,
    /// Queued datagrams a reverse hook removed.
    pub hook_removed: u64,
    /// Queued pure ACKs an ACK-filtering queue removed in favour of newer
    /// ones (`--ack-filter`).
    pub filtered: u64,
    /// Arrivals a reverse hook delayed.
    pub hook_delayed: u64,
    /// Sends that failed at the socket (the datagram is lost).
    pub send_errors: u64,
    /// Most datagrams ever waiting in the queue.
    pub peak_queue_packets: usize,
}

/// Counters of a relay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// Client to server.
    pub forward: DirectionStats,
    /// Server to client.
    pub reverse: DirectionStats,
    /// Clients with a socket toward the server now (each has its own).
    pub clients: usize,
    /// Client sockets closed after carrying nothing for the idle time
    /// ([`ClientLimits::idle`](super::ClientLimits::idle)).
    pub clients_expired: u64,
    /// Datagrams of new clients dropped because
    /// [`ClientLimits::max_clients`](super::ClientLimits::max_clients)
    /// sockets were already open.
    pub clients_refused: u64,
    /// Datagrams written to the capture ([`Relay::set_capture`](super::Relay::set_capture)).
    pub captured: u64,
    /// The capture stopped at a write error (the relay goes on).
    pub capture_failed: bool,
}

impl fmt::Display for DirectionStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "in {} pkts / {} B, forwarded {} pkts / {} B, queue drops {}, losses {}, reorders {}, \
             peak queue {}",
            self.packets_in,
            self.bytes_in,
            self.forwarded_packets,
            self.forwarded_bytes,
            self.queue_drops,
            self.random_losses,
            self.reorders,
            self.peak_queue_packets
        )?;
        if self.hook_drops + self.hook_removed + self.hook_delayed > 0 {
            write!(
                f,
                ", hook dropped {} removed {} delayed {}",
                self.hook_drops, self.hook_removed, self.hook_delayed
            )?;
        }
        if self.filtered > 0 {
            write!(f, ", ACKs filtered {}", self.filtered)?;
        }
        if self.mtu_drops > 0 {
            write!(f, ", above the MTU {}", self.mtu_drops)?;
        }
        if self.send_errors > 0 {
            write!(f, ", send errors {}", self.send_errors)?;
        }
        Ok(())
    }
}

impl fmt::Display for RelayStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "clients: {}", self.clients)?;
        if self.clients_expired > 0 {
            write!(f, ", expired {}", self.clients_expired)?;
        }
        if self.clients_refused > 0 {
            write!(
                f,
                ", datagrams of new clients refused {}",
                self.clients_refused
            )?;
        }
        if self.captured > 0 || self.capture_failed {
            write!(f, ", captured {}", self.captured)?;
            if self.capture_failed {
                write!(f, " (capture stopped at a write error)")?;
            }
        }
        writeln!(f)?;
        writeln!(f, "forward: {}", self.forward)?;
        write!(f, "reverse: {}", self.reverse)
    }
}
