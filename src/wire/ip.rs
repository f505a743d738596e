//! IP framing of TCP segments, for the places where segments meet IP:
//! pcap captures (`crate::pcap`) and the TUN carrier (`crate::tun`).
//!
//! ackwise's connections emit bare TCP segments. [`frame`] puts one into
//! an IPv4 or IPv6 packet between two addresses, with the IPv4 header
//! checksum and the TCP checksum computed over that packet's
//! pseudo-header (RFC 9293 section 3.1, RFC 8200 section 8.1), whatever
//! the segment carried. [`unframe`] goes the other way for IPv4 and IPv6:
//! it checks the header, refuses fragments, extension headers and other
//! protocols, verifies the TCP checksum and hands back the segment.

use super::checksum;
use alloc::vec::Vec;
use core::fmt;
use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use smoltcp::phy::ChecksumCapabilities;
use smoltcp::wire::{IpProtocol, Ipv4Packet, Ipv4Repr, TcpPacket};

/// Bytes of an IPv4 header without options.
pub const IPV4_HEADER_LEN: usize = 20;
/// Bytes of the fixed IPv6 header.
pub const IPV6_HEADER_LEN: usize = 40;

/// Why a packet could not be framed or unframed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpError {
    /// The segment does not fit one packet (65 535 bytes).
    TooLarge,
    /// Not a well-formed IPv4 or IPv6 packet (short, bad length or
    /// header checksum, another version).
    Malformed,
    /// An IPv4 fragment: the carriers set DF and never reassemble.
    Fragment,
    /// Another protocol than TCP (for IPv6 also TCP behind extension
    /// headers, which the carriers never send).
    NotTcp,
    /// The TCP checksum over the pseudo-header does not match.
    BadChecksum,
}

impl fmt::Display for IpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IpError::TooLarge => "segment too large for one IP packet",
            IpError::Malformed => "malformed IP packet",
            IpError::Fragment => "IPv4 fragment",
            IpError::NotTcp => "not TCP",
            IpError::BadChecksum => "bad TCP checksum",
        })
    }
}

impl core::error::Error for IpError {}

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
        checksum::fill(src, dst, &mut out[IPV4_HEADER_LEN..]);
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
        checksum::fill_v6(src, dst, &mut out[IPV6_HEADER_LEN..]);
    }
    Ok(())
}

fn v6(a: IpAddr) -> Ipv6Addr {
    match a {
        IpAddr::V4(a) => a.to_ipv6_mapped(),
        IpAddr::V6(a) => a,
    }
}

/// A TCP segment taken out of an IP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unframed<'a> {
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// The ECN codepoint of the IP header.
    pub ecn: u8,
    /// The TCP segment, checksum verified.
    pub segment: &'a [u8],
}

/// Takes the TCP segment out of an IPv4 or IPv6 `packet` (see the module
/// docs for what is checked). Bytes past the IP length are ignored.
pub fn unframe(packet: &[u8]) -> Result<Unframed<'_>, IpError> {
    match packet.first().map(|b| b >> 4) {
        Some(4) => unframe_v4(packet),
        Some(6) => unframe_v6(packet),
        _ => Err(IpError::Malformed),
    }
}

fn unframe_v4(packet: &[u8]) -> Result<Unframed<'_>, IpError> {
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
    TcpPacket::new_checked(segment).map_err(|_| IpError::Malformed)?;
    if !checksum::verify(src, dst, segment) {
        return Err(IpError::BadChecksum);
    }
    Ok(Unframed {
        src: src.into(),
        dst: dst.into(),
        ecn: ip.ecn(),
        segment,
    })
}

fn unframe_v6(packet: &[u8]) -> Result<Unframed<'_>, IpError> {
    let header = packet.get(..IPV6_HEADER_LEN).ok_or(IpError::Malformed)?;
    let len = usize::from(u16::from_be_bytes([header[4], header[5]]));
    let segment = packet
        .get(IPV6_HEADER_LEN..IPV6_HEADER_LEN + len)
        .ok_or(IpError::Malformed)?;
    if header[6] != 6 {
        return Err(IpError::NotTcp);
    }
    if segment.len() < 20 {
        return Err(IpError::Malformed);
    }
    let octets = |at: usize| -> [u8; 16] {
        let mut a = [0u8; 16];
        a.copy_from_slice(&header[at..at + 16]);
        a
    };
    let (src, dst) = (Ipv6Addr::from(octets(8)), Ipv6Addr::from(octets(24)));
    if !checksum::verify_v6(src, dst, segment) {
        return Err(IpError::BadChecksum);
    }
    let first = u32::from_be_bytes([header[0], header[1], header[2], header[3]]);
    Ok(Unframed {
        src: src.into(),
        dst: dst.into(),
        ecn: ((first >> 20) & 3) as u8,
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
        assert_eq!((u.src, u.dst, u.ecn), (a.into(), b.into(), 2));
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
    fn ipv6_frames_round_trip_with_checksums() {
        let (a, b): (IpAddr, IpAddr) = ("fd00::2".parse().unwrap(), "fd00::1".parse().unwrap());
        let mut out = Vec::new();
        frame(&mut out, 0, a, b, 3, &segment()).unwrap();
        let u = unframe(&out).unwrap();
        assert_eq!((u.src, u.dst, u.ecn), (a, b, 3));
        assert_eq!(&u.segment[20..], b"payload");
        let mut padded = out.clone();
        padded.extend_from_slice(&[0; 3]);
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
        let mut v6_bad = v6.clone();
        v6_bad[50] ^= 1;
        assert_eq!(unframe(&v6_bad), Err(IpError::BadChecksum));
        let mut v6_udp = v6.clone();
        v6_udp[6] = 17;
        assert_eq!(unframe(&v6_udp), Err(IpError::NotTcp));
        assert_eq!(unframe(&v6[..50]), Err(IpError::Malformed));
        assert_eq!(unframe(&[0x50; 40]), Err(IpError::Malformed));
        assert_eq!(unframe(&[]), Err(IpError::Malformed));
        assert_eq!(
            frame(&mut v6, 0, a.into(), b.into(), 0, &vec![0; 70_000]),
            Err(IpError::TooLarge)
        );
    }
}
