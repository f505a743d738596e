//! IP framing of TCP segments, for the places where segments meet IP:
//! pcap captures ([`crate::pcap`]) and the TUN carrier (`crate::tun`).
//!
//! ackwise's connections emit bare TCP segments. [`frame`] puts one into
//! an IPv4 or IPv6 packet between two addresses, with the IPv4 header
//! checksum and the TCP checksum computed over that packet's
//! pseudo-header (RFC 9293 section 3.1, RFC 8200 section 8.1), whatever
//! the segment carried. [`unframe`] goes the other way for IPv4: it checks
//! the header, refuses fragments and other protocols, verifies the TCP
//! checksum and hands back the segment.

use core::fmt;
use smoltcp::phy::ChecksumCapabilities;
use smoltcp::wire::{checksum, IpProtocol, Ipv4Packet, Ipv4Repr, TcpPacket};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Bytes of an IPv4 header without options.
pub const IPV4_HEADER_LEN: usize = 20;
/// Bytes of the fixed IPv6 header.
pub const IPV6_HEADER_LEN: usize = 40;

/// Why a packet could not be framed or unframed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpError {
    /// The segment does not fit one packet (65 535 bytes).
    TooLarge,
    /// Not a well-formed IPv4 packet (short, bad length or header
    /// checksum, not version 4).
    Malformed,
    /// An IPv4 fragment: the carriers set DF and never reassemble.
    Fragment,
    /// Another protocol than TCP.
    NotTcp,
    /// The TCP checksum over the pseudo-header does not match.
    BadChecksum,
}

impl fmt::Display for IpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IpError::TooLarge => "segment too large for one IP packet",
            IpError::Malformed => "malformed IPv4 packet",
            IpError::Fragment => "IPv4 fragment",
            IpError::NotTcp => "not TCP",
            IpError::BadChecksum => "bad TCP checksum",
        })
    }
}

impl std::error::Error for IpError {}

/// Writes `segment` framed in IP from `src` to `dst` into `out` (cleared
/// first). IPv4 when both addresses are (IPv4-mapped IPv6 ones count),
/// IPv6 otherwise; `ecn` is the ECN codepoint (0 not-ECT, 1 ECT(1),
/// 2 ECT(0), 3 CE); `ident` the IPv4 identification. The IPv4 header
/// sets DF. The segment's checksum is replaced by the right one.
pub fn frame(
    out: &mut Vec<u8>,
    ident: u16,
    src: IpAddr,
    dst: IpAddr,
    ecn: u8,
    segment: &[u8],
) -> Result<(), IpError> {
    match (src.to_canonical(), dst.to_canonical()) {
        (IpAddr::V4(s), IpAddr::V4(d)) => frame_v4(out, ident, s, d, ecn, segment),
        (s, d) => frame_v6(out, v6(s), v6(d), ecn, segment),
    }
}

fn frame_v4(
    out: &mut Vec<u8>,
    ident: u16,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    ecn: u8,
    segment: &[u8],
) -> Result<(), IpError> {
    let total = IPV4_HEADER_LEN + segment.len();
    if total > usize::from(u16::MAX) {
        return Err(IpError::TooLarge);
    }
    out.clear();
    out.resize(total, 0);
    out[IPV4_HEADER_LEN..].copy_from_slice(segment);
    if segment.len() >= 20 {
        let mut tcp = TcpPacket::new_unchecked(&mut out[IPV4_HEADER_LEN..]);
        tcp.fill_checksum(&src.into(), &dst.into());
    }
    let repr = Ipv4Repr {
        src_addr: src,
        dst_addr: dst,
        next_header: IpProtocol::Tcp,
        payload_len: segment.len(),
        hop_limit: 64,
    };
    let mut ip = Ipv4Packet::new_unchecked(&mut out[..]);
    repr.emit(&mut ip, &ChecksumCapabilities::ignored());
    ip.set_ident(ident);
    ip.set_dont_frag(true);
    ip.set_ecn(ecn & 3);
    ip.fill_checksum();
    Ok(())
}

/// IPv6 by hand: smoltcp's IPv6 types are behind a feature the core does
/// not otherwise need, and the fixed header has no checksum of its own.
fn frame_v6(
    out: &mut Vec<u8>,
    src: Ipv6Addr,
    dst: Ipv6Addr,
    ecn: u8,
    segment: &[u8],
) -> Result<(), IpError> {
    let len = u16::try_from(segment.len()).map_err(|_| IpError::TooLarge)?;
    out.clear();
    // Version 6, traffic class = ECN in its low two bits, no flow label.
    let traffic_class = u32::from(ecn & 3);
    out.extend_from_slice(&((6u32 << 28) | (traffic_class << 20)).to_be_bytes());
    out.extend_from_slice(&len.to_be_bytes());
    out.push(6); // next header: TCP
    out.push(64); // hop limit
    out.extend_from_slice(&src.octets());
    out.extend_from_slice(&dst.octets());
    out.extend_from_slice(segment);
    if segment.len() >= 20 {
        let tcp = &mut out[IPV6_HEADER_LEN..];
        tcp[16..18].fill(0);
        let sum = !checksum::combine(&[
            checksum::data(&src.octets()),
            checksum::data(&dst.octets()),
            checksum::data(&u32::from(len).to_be_bytes()),
            checksum::data(&[0, 0, 0, 6]),
            checksum::data(tcp),
        ]);
        tcp[16..18].copy_from_slice(&sum.to_be_bytes());
    }
    Ok(())
}

fn v6(a: IpAddr) -> Ipv6Addr {
    match a {
        IpAddr::V4(a) => a.to_ipv6_mapped(),
        IpAddr::V6(a) => a,
    }
}

/// A TCP segment taken out of an IPv4 packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unframed<'a> {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// The ECN codepoint of the IP header.
    pub ecn: u8,
    /// The TCP segment, checksum verified.
    pub segment: &'a [u8],
}

/// Takes the TCP segment out of an IPv4 `packet` (see the module docs for
/// what is checked). Bytes past the IP total length are ignored.
pub fn unframe(packet: &[u8]) -> Result<Unframed<'_>, IpError> {
    let ip = Ipv4Packet::new_checked(packet).map_err(|_| IpError::Malformed)?;
    if ip.version() != 4 || !ip.verify_checksum() {
        return Err(IpError::Malformed);
    }
    if ip.more_frags() || ip.frag_offset() != 0 {
        return Err(IpError::Fragment);
    }
    if ip.next_header() != IpProtocol::Tcp {
        return Err(IpError::NotTcp);
    }
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    let header = usize::from(ip.header_len());
    let total = usize::from(ip.total_len());
    let segment = &packet[header..total];
    let tcp = TcpPacket::new_checked(segment).map_err(|_| IpError::Malformed)?;
    if !tcp.verify_checksum(&src.into(), &dst.into()) {
        return Err(IpError::BadChecksum);
    }
    Ok(Unframed {
        src,
        dst,
        ecn: ip.ecn(),
        segment,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment() -> Vec<u8> {
        let mut seg = vec![0u8; 20];
        seg[0..2].copy_from_slice(&4433u16.to_be_bytes());
        seg[2..4].copy_from_slice(&80u16.to_be_bytes());
        seg[12] = 5 << 4;
        seg[13] = 0x18;
        seg.extend_from_slice(b"payload");
        seg
    }

    #[test]
    fn ipv4_frames_round_trip_with_checksums() {
        let (a, b) = (Ipv4Addr::new(10, 77, 0, 2), Ipv4Addr::new(10, 77, 0, 1));
        let mut out = Vec::new();
        frame(&mut out, 9, a.into(), b.into(), 2, &segment()).unwrap();
        let u = unframe(&out).unwrap();
        assert_eq!((u.src, u.dst, u.ecn), (a, b, 2));
        assert_eq!(&u.segment[20..], b"payload");
        let ip = Ipv4Packet::new_checked(&out[..]).unwrap();
        assert!(ip.dont_frag());
        assert_eq!(ip.ident(), 9);
        // Trailing bytes (Ethernet padding, say) are not part of it.
        let mut padded = out.clone();
        padded.extend_from_slice(&[0; 6]);
        assert_eq!(unframe(&padded).unwrap().segment.len(), 27);
    }

    #[test]
    fn unframe_refuses_what_it_cannot_use() {
        let (a, b) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
        let mut good = Vec::new();
        frame(&mut good, 1, a.into(), b.into(), 0, &segment()).unwrap();
        assert_eq!(unframe(&good[..10]), Err(IpError::Malformed));
        let mut bad_sum = good.clone();
        bad_sum[30] ^= 0xff;
        assert_eq!(unframe(&bad_sum), Err(IpError::BadChecksum));
        let mut bad_ip = good.clone();
        bad_ip[10] ^= 0xff;
        assert_eq!(unframe(&bad_ip), Err(IpError::Malformed));
        let mut udp = good.clone();
        {
            let mut ip = Ipv4Packet::new_unchecked(&mut udp[..]);
            ip.set_next_header(IpProtocol::Udp);
            ip.fill_checksum();
        }
        assert_eq!(unframe(&udp), Err(IpError::NotTcp));
        let mut frag = good.clone();
        {
            let mut ip = Ipv4Packet::new_unchecked(&mut frag[..]);
            ip.set_more_frags(true);
            ip.fill_checksum();
        }
        assert_eq!(unframe(&frag), Err(IpError::Fragment));
        let mut v6 = Vec::new();
        frame(
            &mut v6,
            0,
            "::1".parse().unwrap(),
            "::2".parse().unwrap(),
            0,
            &segment(),
        )
        .unwrap();
        assert_eq!(v6[0] >> 4, 6);
        assert_eq!(unframe(&v6), Err(IpError::Malformed));
        assert_eq!(
            frame(&mut v6, 0, a.into(), b.into(), 0, &vec![0; 70_000]),
            Err(IpError::TooLarge)
        );
    }
}
