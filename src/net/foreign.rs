//! Telling a QUIC peer from an ackwise one, so that starting the two ends
//! with different transports (`--transport quic` on one side only) ends in
//! an error that names the mistake instead of a silent timeout.
//!
//! Both transports run over UDP, and neither answers the other's packets:
//! an ackwise endpoint drops a QUIC Initial as a malformed segment, and a
//! QUIC server ignores a datagram as small as a SYN (RFC 9000 section 14.1
//! lets it answer only datagrams of at least 1200 bytes). Both sides can
//! still find out, with QUIC's own version negotiation (RFC 9000 section
//! 6):
//!
//! - a listening ackwise endpoint answers a QUIC client's Initial with a
//!   Version Negotiation packet that offers no version the client
//!   supports, which a QUIC client reports as a version mismatch at once;
//! - an ackwise sender whose handshake timed out sends one 1200-byte
//!   long-header probe with a reserved version; a QUIC server answers it
//!   with Version Negotiation, and the sender then says that the receiver
//!   speaks QUIC.
//!
//! A Version Negotiation packet is smaller than the Initial it answers,
//! so neither exchange amplifies traffic.

use std::net::SocketAddr;
use std::time::Duration;

/// The smallest datagram carrying a client's Initial (RFC 9000 section
/// 14.1), and the size of the probe.
pub const QUIC_MIN_INITIAL_BYTES: usize = 1200;

/// QUIC version 1 (RFC 9000) and version 2 (RFC 9369): the versions whose
/// Initials an ackwise endpoint recognises.
const QUIC_VERSIONS: [u32; 2] = [0x0000_0001, 0x6b33_43cf];

/// A reserved version (RFC 9000 section 15: the 0x?a?a?a?a pattern) that
/// no implementation supports: offered in Version Negotiation it tells the
/// client there is nothing in common, sent in the probe it forces a QUIC
/// server to negotiate.
const RESERVED_VERSION: u32 = 0x1a2a_3a4a;

/// Longest connection ID (RFC 9000 section 17.2).
const MAX_CID_BYTES: usize = 20;

/// The connection IDs of a QUIC client's Initial, as (destination,
/// source), if `datagram` is one: a long header of a known QUIC version,
/// at least [`QUIC_MIN_INITIAL_BYTES`] long. An ackwise segment never
/// passes: its "version" bytes would hold a destination port of zero.
pub fn quic_initial_ids(datagram: &[u8]) -> Option<(&[u8], &[u8])> {
    if datagram.len() < QUIC_MIN_INITIAL_BYTES || datagram[0] & 0xc0 != 0xc0 {
        return None;
    }
    let version = u32::from_be_bytes([datagram[1], datagram[2], datagram[3], datagram[4]]);
    if !QUIC_VERSIONS.contains(&version) {
        return None;
    }
    let (dcid, rest) = length_prefixed(&datagram[5..])?;
    let (scid, _) = length_prefixed(rest)?;
    Some((dcid, scid))
}

/// A connection ID after its one-byte length, and what follows it.
fn length_prefixed(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let (&len, rest) = bytes.split_first()?;
    let len = usize::from(len);
    if len > MAX_CID_BYTES || rest.len() < len {
        return None;
    }
    Some(rest.split_at(len))
}

/// The Version Negotiation packet that answers an Initial whose connection
/// IDs were (`dcid`, `scid`): the IDs swapped, as RFC 9000 section 17.2.1
/// requires, and only the reserved version on offer.
pub fn version_negotiation(dcid: &[u8], scid: &[u8]) -> Vec<u8> {
    let mut packet = Vec::with_capacity(7 + dcid.len() + scid.len() + 4);
    // Long header form; the other bits of the first byte are unused.
    packet.push(0x80);
    packet.extend_from_slice(&0u32.to_be_bytes());
    // Both lengths were checked against MAX_CID_BYTES by the parser.
    packet.push(scid.len() as u8);
    packet.extend_from_slice(scid);
    packet.push(dcid.len() as u8);
    packet.extend_from_slice(dcid);
    packet.extend_from_slice(&RESERVED_VERSION.to_be_bytes());
    packet
}

/// Whether `datagram` is a Version Negotiation packet (a long header with
/// version zero).
pub fn is_version_negotiation(datagram: &[u8]) -> bool {
    datagram.len() >= 7 && datagram[0] & 0x80 != 0 && datagram[1..5] == [0, 0, 0, 0]
}

/// The probe an ackwise sender sends when its handshake got no answer:
/// a long header with the reserved version, random-looking connection IDs
/// and padding to [`QUIC_MIN_INITIAL_BYTES`].
pub fn quic_probe() -> Vec<u8> {
    let mut probe = vec![0u8; QUIC_MIN_INITIAL_BYTES];
    probe[0] = 0xc0;
    probe[1..5].copy_from_slice(&RESERVED_VERSION.to_be_bytes());
    probe[5] = 8;
    probe[6..14].copy_from_slice(b"ackwise?");
    probe[14] = 8;
    probe[15..23].copy_from_slice(b"probe-id");
    probe
}

/// Sends [`quic_probe`] to `addr` from a fresh socket and waits up to
/// `wait` for a Version Negotiation answer: true when a QUIC server
/// listens there. Any failure (no socket, no answer) is false.
pub async fn answers_as_quic(addr: SocketAddr, wait: Duration) -> bool {
    let local: SocketAddr = if addr.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let Ok(socket) = tokio::net::UdpSocket::bind(local).await else {
        return false;
    };
    if socket.send_to(&quic_probe(), addr).await.is_err() {
        return false;
    }
    let mut buf = [0u8; 1500];
    let answer = async {
        loop {
            match socket.recv_from(&mut buf).await {
                Ok((n, from)) if from == addr && is_version_negotiation(&buf[..n]) => return true,
                Ok(_) => continue,
                Err(_) => return false,
            }
        }
    };
    tokio::time::timeout(wait, answer).await.unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn initial(version: u32, dcid: &[u8], scid: &[u8]) -> Vec<u8> {
        let mut p = vec![0xc3];
        p.extend_from_slice(&version.to_be_bytes());
        p.push(dcid.len() as u8);
        p.extend_from_slice(dcid);
        p.push(scid.len() as u8);
        p.extend_from_slice(scid);
        p.resize(QUIC_MIN_INITIAL_BYTES, 0);
        p
    }

    #[test]
    fn an_initial_is_recognised_and_answered_with_swapped_ids() {
        let p = initial(1, b"12345678", b"abcd");
        assert_eq!(quic_initial_ids(&p), Some((&b"12345678"[..], &b"abcd"[..])));
        let vn = version_negotiation(b"12345678", b"abcd");
        assert!(is_version_negotiation(&vn));
        assert_eq!(vn[5], 4);
        assert_eq!(&vn[6..10], b"abcd");
        assert_eq!(vn[10], 8);
        assert_eq!(&vn[11..19], b"12345678");
        assert_eq!(&vn[19..], &RESERVED_VERSION.to_be_bytes());
        assert!(vn.len() < p.len(), "no amplification");
    }

    #[test]
    fn segments_short_datagrams_and_other_versions_are_not_initials() {
        assert_eq!(quic_initial_ids(&initial(0x1234, b"x", b"y")), None);
        assert_eq!(quic_initial_ids(&initial(1, b"x", b"y")[..1199]), None);
        // A connection ID longer than 20 bytes.
        assert_eq!(quic_initial_ids(&initial(1, &[7; 21], b"y")), None);
        // An ackwise data segment from an ephemeral port to port 4433: its
        // first byte has both top bits set, but the "version" bytes hold
        // the destination port.
        let mut seg = vec![0u8; 1460];
        seg[..4].copy_from_slice(&[0xc3, 0x50, 0x11, 0x51]);
        assert_eq!(quic_initial_ids(&seg), None);
        assert!(!is_version_negotiation(&seg));
    }

    #[test]
    fn the_probe_forces_negotiation() {
        let p = quic_probe();
        assert_eq!(p.len(), QUIC_MIN_INITIAL_BYTES);
        assert_eq!(p[0] & 0xc0, 0xc0);
        // Not a version anyone supports, so not something this module
        // would answer itself either.
        assert_eq!(quic_initial_ids(&p), None);
    }
}
