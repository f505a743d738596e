//! A pcap file of what crosses an endpoint's UDP socket, as IP/TCP.
//!
//! Each datagram carries ackwise TCP segments with no IP header; the
//! capture gives every segment the IP header it would have on a TCP
//! path between the same two hosts (the UDP socket's addresses, the TCP
//! header's own ports), so Wireshark's TCP analysis (retransmissions,
//! SACK, window, RTT graphs) works on the file as on any TCP capture. A
//! GSO or GRO batch is recorded segment by segment, all at the batch's
//! time. Timestamps are wall-clock time.

use crate::pcap::PcapWriter;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How often buffered records reach the file while the endpoint runs, so
/// that a capture read during a transfer, or left by a killed process,
/// is at most this far behind.
const FLUSH_EVERY: Duration = Duration::from_millis(200);

/// The driver's capture: the writer, and which local address stands for
/// this host toward each peer.
#[derive(Debug)]
pub(crate) struct SocketCapture {
    path: PathBuf,
    writer: Option<PcapWriter<BufWriter<File>>>,
    bound: IpAddr,
    local_toward: HashMap<IpAddr, IpAddr>,
    last_flush: SystemTime,
}

impl SocketCapture {
    /// Creates (or truncates) `path` and writes the pcap header.
    pub(crate) fn create(path: &Path, bound: SocketAddr) -> io::Result<SocketCapture> {
        let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
        let file = File::create(path).map_err(named)?;
        let writer = PcapWriter::new(BufWriter::new(file)).map_err(named)?;
        Ok(SocketCapture {
            path: path.to_path_buf(),
            writer: Some(writer),
            bound: bound.ip(),
            local_toward: HashMap::new(),
            last_flush: SystemTime::now(),
        })
    }

    /// Records the segments of a datagram that arrived from `from`.
    /// `dst_ip` is the address it was sent to, where the socket reports
    /// it (a socket bound to the unspecified address has many).
    pub(crate) fn received(
        &mut self,
        from: SocketAddr,
        dst_ip: Option<IpAddr>,
        ecn: u8,
        segments: impl Iterator<Item = impl AsRef<[u8]>>,
    ) -> Result<u64, io::Error> {
        let local = match dst_ip {
            Some(ip) if !ip.is_unspecified() => ip,
            _ => self.local_toward(from.ip()),
        };
        self.record(from.ip(), local, ecn, segments)
    }

    /// Records the segments of a datagram sent to `to`.
    pub(crate) fn sent(
        &mut self,
        to: SocketAddr,
        ecn: u8,
        segments: impl Iterator<Item = impl AsRef<[u8]>>,
    ) -> Result<u64, io::Error> {
        let local = self.local_toward(to.ip());
        self.record(local, to.ip(), ecn, segments)
    }

    /// Flushes when [`FLUSH_EVERY`] has passed since the last flush.
    pub(crate) fn maybe_flush(&mut self) -> Result<(), io::Error> {
        let now = SystemTime::now();
        if now.duration_since(self.last_flush).unwrap_or_default() < FLUSH_EVERY {
            return Ok(());
        }
        self.last_flush = now;
        self.flush()
    }

    /// Writes out everything buffered.
    pub(crate) fn flush(&mut self) -> Result<(), io::Error> {
        match &mut self.writer {
            Some(w) => w.flush().map_err(|e| self.failed(e)),
            None => Ok(()),
        }
    }

    /// Records segments from `src` to `dst` (the relay, which stands
    /// between the hosts, names both).
    pub(crate) fn record(
        &mut self,
        src: IpAddr,
        dst: IpAddr,
        ecn: u8,
        segments: impl Iterator<Item = impl AsRef<[u8]>>,
    ) -> Result<u64, io::Error> {
        let Some(w) = &mut self.writer else {
            return Ok(0);
        };
        let at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let mut n = 0;
        for seg in segments {
            if super::pmtu::is_probe_format(seg.as_ref()) {
                // Path MTU probes and their echoes are not segments: as
                // TCP they would only read as malformed.
                continue;
            }
            if let Err(e) = w.write_segment(at, src, dst, ecn, seg.as_ref()) {
                return Err(self.failed(e));
            }
            n += 1;
        }
        Ok(n)
    }

    /// After a write error the capture stops (the transfer goes on): a
    /// file with a gap would mislead more than a file that ends.
    fn failed(&mut self, e: io::Error) -> io::Error {
        self.writer = None;
        io::Error::new(e.kind(), format!("{}: {e}", self.path.display()))
    }

    /// The local address this host uses toward `peer`: the bound one, or
    /// for a socket bound to the unspecified address the one the kernel's
    /// routing picks (found once per peer by connecting a throwaway UDP
    /// socket, which sends nothing).
    fn local_toward(&mut self, peer: IpAddr) -> IpAddr {
        if !self.bound.is_unspecified() {
            return self.bound;
        }
        let peer = peer.to_canonical();
        *self.local_toward.entry(peer).or_insert_with(|| {
            let any: IpAddr = match peer {
                IpAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
                IpAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
            };
            std::net::UdpSocket::bind((any, 0))
                .and_then(|s| {
                    s.connect((peer, 9))?;
                    s.local_addr()
                })
                .map_or(any, |a| a.ip())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(port: u16, payload: &[u8]) -> Vec<u8> {
        let mut seg = vec![0u8; 20];
        seg[0..2].copy_from_slice(&port.to_be_bytes());
        seg[2..4].copy_from_slice(&4433u16.to_be_bytes());
        seg[12] = 5 << 4;
        seg[13] = 0x10;
        seg.extend_from_slice(payload);
        seg
    }

    #[test]
    fn batches_are_split_and_addresses_follow_the_direction() {
        let dir = std::env::temp_dir().join(format!("ackwise-capture-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.pcap");
        let local: SocketAddr = "127.0.0.1:4433".parse().unwrap();
        let peer: SocketAddr = "127.0.0.2:50000".parse().unwrap();
        let mut c = SocketCapture::create(&path, local).unwrap();
        let batch = [segment(1, b"ab"), segment(1, b"cd")];
        assert_eq!(c.sent(peer, 2, batch.iter()).unwrap(), 2);
        assert_eq!(
            c.received(peer, None, 0, [segment(2, b"")].iter()).unwrap(),
            1
        );
        c.flush().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        // Header, then three records: 16-byte record header, 20-byte IP
        // header, segments of 22, 22 and 20 bytes.
        assert_eq!(bytes.len(), 24 + 3 * (16 + 20) + 22 + 22 + 20);
        let ip = |at: usize| (&bytes[at + 12..at + 16], &bytes[at + 16..at + 20]);
        let first = 24 + 16;
        assert_eq!(ip(first), (&[127, 0, 0, 1][..], &[127, 0, 0, 2][..]));
        let third = first + 42 + 16 + 42 + 16;
        assert_eq!(ip(third), (&[127, 0, 0, 2][..], &[127, 0, 0, 1][..]));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unspecified_bind_uses_the_routes_local_address() {
        let dir = std::env::temp_dir().join(format!("ackwise-capture-u-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut c =
            SocketCapture::create(&dir.join("u.pcap"), "0.0.0.0:0".parse().unwrap()).unwrap();
        assert_eq!(
            c.local_toward(Ipv4Addr::LOCALHOST.into()),
            IpAddr::from(Ipv4Addr::LOCALHOST)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unwritable_path_is_an_error_naming_it() {
        let e = SocketCapture::create(
            Path::new("/nonexistent-ackwise-dir/x.pcap"),
            "127.0.0.1:1".parse().unwrap(),
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("/nonexistent-ackwise-dir/x.pcap"),
            "{e}"
        );
    }
}
