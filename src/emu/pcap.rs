//! Classic libpcap capture files (the "tcpdump" format: 24-byte global
//! header, 16-byte record headers, microsecond timestamps), link type
//! `LINKTYPE_RAW` (101): each record is an IPv4 packet. Segments are framed
//! with smoltcp's IPv4 types, with a valid header checksum and the TCP
//! checksum recomputed over the IPv4 pseudo-header, so Wireshark and tshark
//! decode them without complaint.

use smoltcp::phy::ChecksumCapabilities;
use smoltcp::wire::{IpProtocol, Ipv4Address, Ipv4Packet, Ipv4Repr, TcpPacket};
use std::io::{self, Write};

use crate::time::Instant;

/// pcap magic for microsecond timestamps, written in native order.
pub const PCAP_MAGIC: u32 = 0xa1b2_c3d4;
/// `LINKTYPE_RAW`: records start with an IP header.
pub const LINKTYPE_RAW: u32 = 101;
const SNAPLEN: u32 = 65_535;

/// Writes pcap records to `W`.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
    frame: Vec<u8>,
    ident: u16,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the global header.
    pub fn new(mut out: W) -> io::Result<Self> {
        let mut h = [0u8; 24];
        h[0..4].copy_from_slice(&PCAP_MAGIC.to_le_bytes());
        h[4..6].copy_from_slice(&2u16.to_le_bytes());
        h[6..8].copy_from_slice(&4u16.to_le_bytes());
        // thiszone and sigfigs stay zero.
        h[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
        h[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter {
            out,
            frame: Vec::with_capacity(2048),
            ident: 0,
        })
    }

    /// Records one TCP segment from `src` to `dst` at virtual time `at`,
    /// framed in IPv4 with the given ECN codepoint (0 not-ECT, 2 ECT(0),
    /// 3 CE). The segment's own checksum is replaced by a correct one.
    pub fn write_tcp(
        &mut self,
        at: Instant,
        src: Ipv4Address,
        dst: Ipv4Address,
        ecn: u8,
        segment: &[u8],
    ) -> io::Result<()> {
        let total = 20 + segment.len();
        if total > usize::from(u16::MAX) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "segment too large for IPv4",
            ));
        }
        self.frame.clear();
        self.frame.resize(total, 0);
        let repr = Ipv4Repr {
            src_addr: src,
            dst_addr: dst,
            next_header: IpProtocol::Tcp,
            payload_len: segment.len(),
            hop_limit: 64,
        };
        self.frame[20..].copy_from_slice(segment);
        if segment.len() >= 20 {
            let mut tcp = TcpPacket::new_unchecked(&mut self.frame[20..]);
            tcp.fill_checksum(&src.into(), &dst.into());
        }
        let mut ip = Ipv4Packet::new_unchecked(&mut self.frame[..]);
        repr.emit(&mut ip, &ChecksumCapabilities::ignored());
        self.ident = self.ident.wrapping_add(1);
        ip.set_ident(self.ident);
        ip.set_ecn(ecn & 3);
        ip.fill_checksum();
        let nanos = at.as_nanos();
        let secs = u32::try_from(nanos / 1_000_000_000).unwrap_or(u32::MAX);
        let micros = ((nanos % 1_000_000_000) / 1_000) as u32;
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&secs.to_le_bytes());
        rec[4..8].copy_from_slice(&micros.to_le_bytes());
        rec[8..12].copy_from_slice(&(total as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&(total as u32).to_le_bytes());
        self.out.write_all(&rec)?;
        self.out.write_all(&self.frame)
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// The address of flow `flow`'s client (`server == false`) or server:
/// 10.0.x.y, counting up from 10.0.0.1.
pub fn host_address(flow: u32, server: bool) -> Ipv4Address {
    let n = 0x0a00_0000u32 + 1 + 2 * (flow & 0x7fff) + u32::from(server);
    let [a, b, c, d] = n.to_be_bytes();
    Ipv4Address::new(a, b, c, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_checksums() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let mut seg = [0u8; 24];
        seg[12] = 5 << 4;
        seg[13] = 0x10;
        let (src, dst) = (host_address(0, false), host_address(0, true));
        w.write_tcp(Instant::from_micros(1_500_001), src, dst, 2, &seg)
            .unwrap();
        let out = w.finish().unwrap();
        assert_eq!(out.len(), 24 + 16 + 44);
        assert_eq!(
            u32::from_le_bytes(out[0..4].try_into().unwrap()),
            PCAP_MAGIC
        );
        assert_eq!(
            u32::from_le_bytes(out[20..24].try_into().unwrap()),
            LINKTYPE_RAW
        );
        assert_eq!(u32::from_le_bytes(out[24..28].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(out[28..32].try_into().unwrap()), 500_001);
        let ip = Ipv4Packet::new_checked(&out[40..]).unwrap();
        assert!(ip.verify_checksum());
        assert_eq!(ip.ecn(), 2);
        assert_eq!(ip.src_addr(), Ipv4Address::new(10, 0, 0, 1));
        let tcp = TcpPacket::new_checked(ip.payload()).unwrap();
        assert!(tcp.verify_checksum(&src.into(), &dst.into()));
    }
}
