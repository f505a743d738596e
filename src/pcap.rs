//! Classic libpcap capture files (the "tcpdump" format: 24-byte global
//! header, 16-byte record headers, microsecond timestamps), link type
//! `LINKTYPE_RAW` (101): each record is an IPv4 or IPv6 packet carrying
//! one TCP segment.
//!
//! ackwise's segments travel without an IP header (inside UDP datagrams
//! on sockets, bare in the emulator), so a capture frames each one in the
//! IP header it would have had between the two hosts
//! ([`crate::wire::ip::frame`]: a valid header checksum and the TCP
//! checksum recomputed over that header's pseudo-header). Wireshark and tshark then decode the file as an
//! ordinary TCP conversation, sequence analysis, SACK and window scaling
//! included. The emulator writes these files for the links a scenario
//! captures; on sockets the endpoint writes one for what crosses its UDP
//! socket (`net::EndpointConfig::capture`), and the relay for what
//! arrives at it.
//!
//! ```
//! use ackwise::pcap::PcapWriter;
//! use std::time::Duration;
//!
//! let mut w = PcapWriter::new(Vec::new())?;
//! let mut syn = [0u8; 20];
//! syn[12] = 5 << 4; // data offset: 5 words
//! syn[13] = 0x02; // SYN
//! let (a, b) = ("10.0.0.1".parse()?, "10.0.0.2".parse()?);
//! w.write_segment(Duration::from_millis(1), a, b, 0, &syn)?;
//! let file = w.finish()?;
//! assert_eq!(file.len(), 24 + 16 + 40);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::wire::ip;
use std::io::{self, Write};
use std::net::IpAddr;
use std::time::Duration;

/// pcap magic for microsecond timestamps, written in native order.
pub const PCAP_MAGIC: u32 = 0xa1b2_c3d4;
/// `LINKTYPE_RAW`: records start with an IP header (version 4 or 6).
pub const LINKTYPE_RAW: u32 = 101;
const SNAPLEN: u32 = 65_535;

/// Writes pcap records to `W`.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
    frame: Vec<u8>,
    ident: u16,
    records: u64,
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
            records: 0,
        })
    }

    /// Records one TCP segment from `src` to `dst`, `at` after the epoch
    /// of the capture's clock (virtual time in the emulator, the Unix
    /// epoch on sockets), framed in IPv4 or IPv6 as the addresses are
    /// (both must be of one family; IPv4-mapped IPv6 addresses count as
    /// IPv4) with the given ECN codepoint (0 not-ECT, 2 ECT(0), 3 CE).
    /// The segment's own checksum is replaced by a correct one.
    pub fn write_segment(
        &mut self,
        at: Duration,
        src: IpAddr,
        dst: IpAddr,
        ecn: u8,
        segment: &[u8],
    ) -> io::Result<()> {
        self.ident = self.ident.wrapping_add(1);
        let mut frame = std::mem::take(&mut self.frame);
        let framed = ip::frame(&mut frame, self.ident, src, dst, ecn, segment)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
            .and_then(|()| self.write_packet(at, &frame));
        self.frame = frame;
        framed
    }

    /// Records one IP packet as it is (a carrier that already framed it,
    /// such as the TUN host).
    pub fn write_packet(&mut self, at: Duration, packet: &[u8]) -> io::Result<()> {
        let total = u32::try_from(packet.len())
            .ok()
            .filter(|&n| n <= SNAPLEN)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "packet too large"))?;
        let secs = u32::try_from(at.as_secs()).unwrap_or(u32::MAX);
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&secs.to_le_bytes());
        rec[4..8].copy_from_slice(&at.subsec_micros().to_le_bytes());
        rec[8..12].copy_from_slice(&total.to_le_bytes());
        rec[12..16].copy_from_slice(&total.to_le_bytes());
        self.out.write_all(&rec)?;
        self.out.write_all(packet)?;
        self.records += 1;
        Ok(())
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Flushes what is buffered, so that a reader sees every record so
    /// far (and a process killed later leaves a readable file).
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smoltcp::wire::{checksum, Ipv4Packet, TcpPacket};
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn ack_segment() -> [u8; 24] {
        let mut seg = [0u8; 24];
        seg[0..2].copy_from_slice(&4433u16.to_be_bytes());
        seg[2..4].copy_from_slice(&50000u16.to_be_bytes());
        seg[12] = 5 << 4;
        seg[13] = 0x10;
        seg[20..24].copy_from_slice(b"data");
        seg
    }

    #[test]
    fn ipv4_headers_and_checksums() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let seg = ack_segment();
        let (src, dst) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
        w.write_segment(
            Duration::from_micros(1_500_001),
            src.into(),
            dst.into(),
            2,
            &seg,
        )
        .unwrap();
        assert_eq!(w.records(), 1);
        let out = w.finish().unwrap();
        assert_eq!(out.len(), 24 + 16 + 44);
        let word = |at: usize| u32::from_le_bytes(out[at..at + 4].try_into().unwrap());
        assert_eq!(word(0), PCAP_MAGIC);
        assert_eq!(word(20), LINKTYPE_RAW);
        assert_eq!((word(24), word(28)), (1, 500_001));
        assert_eq!((word(32), word(36)), (44, 44));
        let ip = Ipv4Packet::new_checked(&out[40..]).unwrap();
        assert!(ip.verify_checksum());
        assert_eq!(ip.ecn(), 2);
        assert_eq!(ip.src_addr(), src);
        let tcp = TcpPacket::new_checked(ip.payload()).unwrap();
        assert!(tcp.verify_checksum(&src.into(), &dst.into()));
        assert_eq!(tcp.payload(), b"data");
    }

    #[test]
    fn ipv4_mapped_addresses_are_framed_as_ipv4() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let mapped = IpAddr::V6(Ipv4Addr::LOCALHOST.to_ipv6_mapped());
        w.write_segment(Duration::ZERO, mapped, mapped, 0, &ack_segment())
            .unwrap();
        let out = w.finish().unwrap();
        assert_eq!(out[40] >> 4, 4);
    }

    #[test]
    fn ipv6_header_and_tcp_checksum() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let (src, dst): (Ipv6Addr, Ipv6Addr) =
            ("2001:db8::1".parse().unwrap(), "::1".parse().unwrap());
        w.write_segment(
            Duration::from_secs(3),
            src.into(),
            dst.into(),
            3,
            &ack_segment(),
        )
        .unwrap();
        let out = w.finish().unwrap();
        let f = &out[40..];
        assert_eq!(f.len(), 40 + 24);
        assert_eq!(f[0] >> 4, 6);
        // Traffic class 3 (CE) sits in bits 20-27 of the first word.
        assert_eq!(
            (u32::from_be_bytes(f[0..4].try_into().unwrap()) >> 20) & 0xff,
            3
        );
        assert_eq!(u16::from_be_bytes([f[4], f[5]]), 24);
        assert_eq!((f[6], f[7]), (6, 64));
        assert_eq!(&f[8..24], &src.octets());
        assert_eq!(&f[24..40], &dst.octets());
        // Summing the pseudo-header and the segment, checksum included,
        // gives all ones when the checksum is right.
        let total = checksum::combine(&[
            checksum::data(&src.octets()),
            checksum::data(&dst.octets()),
            checksum::data(&24u32.to_be_bytes()),
            checksum::data(&[0, 0, 0, 6]),
            checksum::data(&f[40..]),
        ]);
        assert_eq!(total, 0xffff);
    }

    #[test]
    fn an_oversized_segment_is_an_error_not_a_torn_record() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let big = vec![0u8; 70_000];
        let a: IpAddr = Ipv4Addr::LOCALHOST.into();
        assert!(w.write_segment(Duration::ZERO, a, a, 0, &big).is_err());
        let b: IpAddr = Ipv6Addr::LOCALHOST.into();
        assert!(w.write_segment(Duration::ZERO, b, b, 0, &big).is_err());
        assert_eq!(w.records(), 0);
        assert_eq!(w.finish().unwrap().len(), 24);
    }
}
