//! The TCP checksum (RFC 9293 section 3.1): the ones' complement of the
//! ones' complement sum of 16-bit words (RFC 1071) over a pseudo-header
//! and the whole segment. Connections sum over IPv4's pseudo-header (on
//! UDP with unspecified addresses); the IP framing of captures and the
//! TUN carrier (`wire::ip`) also over IPv6's (RFC 8200 section 8.1).
//!
//! Every data segment is summed twice, once by its sender and once by its
//! receiver, so the sum is written for speed: eight 32-bit lanes over
//! 32-byte blocks, each lane keeping two sums (see [`words_sum`]), a loop
//! the compiler turns into vector adds on any x86-64 or AArch64 without
//! unsafe code or CPU detection (RFC 1071 section 2: the sum may be taken
//! in any order and in either byte order, with the carries folded back at
//! the end).

use core::net::{Ipv4Addr, Ipv6Addr};

/// Offset of the checksum field in the TCP header.
const FIELD: usize = 16;
/// IANA protocol number of TCP, as it stands in the pseudo-header.
const PROTOCOL_TCP: u8 = 6;

/// Writes the checksum of `segment` (at least 18 bytes) into its
/// checksum field, over IPv4's pseudo-header.
pub(super) fn fill(src: Ipv4Addr, dst: Ipv4Addr, segment: &mut [u8]) {
    fill_over(&pseudo_v4(src, dst, segment.len()), segment);
}

/// Whether the checksum field of `segment` is right, over IPv4's
/// pseudo-header.
pub(super) fn verify(src: Ipv4Addr, dst: Ipv4Addr, segment: &[u8]) -> bool {
    verify_over(&pseudo_v4(src, dst, segment.len()), segment)
}

/// [`fill`] over IPv6's pseudo-header.
pub(super) fn fill_v6(src: Ipv6Addr, dst: Ipv6Addr, segment: &mut [u8]) {
    fill_over(&pseudo_v6(src, dst, segment.len()), segment);
}

/// [`verify`] over IPv6's pseudo-header.
pub(super) fn verify_v6(src: Ipv6Addr, dst: Ipv6Addr, segment: &[u8]) -> bool {
    verify_over(&pseudo_v6(src, dst, segment.len()), segment)
}

fn fill_over(pseudo: &[u8], segment: &mut [u8]) {
    segment[FIELD..FIELD + 2].fill(0);
    // In the machine's byte order, as the words were summed.
    let sum = !fold(words_sum(pseudo) + words_sum(segment));
    segment[FIELD..FIELD + 2].copy_from_slice(&sum.to_ne_bytes());
}

/// Summing the pseudo-header and the segment, its checksum included,
/// gives all ones when the checksum is right. Fuzzing builds accept
/// every segment, so that fuzzers reach past this check.
fn verify_over(pseudo: &[u8], segment: &[u8]) -> bool {
    cfg!(fuzzing) || fold(words_sum(pseudo) + words_sum(segment)) == 0xffff
}

/// IPv4's pseudo-header: both addresses, zero, the protocol, the TCP
/// length. Segments longer than 65 535 bytes cannot be framed; their
/// length wraps as the IP length would, and they fail to verify.
fn pseudo_v4(src: Ipv4Addr, dst: Ipv4Addr, len: usize) -> [u8; 12] {
    let len = (len as u16).to_be_bytes();
    let [a, b, c, d] = src.octets();
    let [e, f, g, h] = dst.octets();
    [a, b, c, d, e, f, g, h, 0, PROTOCOL_TCP, len[0], len[1]]
}

/// IPv6's pseudo-header: both addresses, the 32-bit upper-layer length,
/// three zero bytes and the next header.
fn pseudo_v6(src: Ipv6Addr, dst: Ipv6Addr, len: usize) -> [u8; 40] {
    let mut pseudo = [0u8; 40];
    pseudo[..16].copy_from_slice(&src.octets());
    pseudo[16..32].copy_from_slice(&dst.octets());
    pseudo[32..36].copy_from_slice(&(len as u32).to_be_bytes());
    pseudo[39] = PROTOCOL_TCP;
    pseudo
}

/// Sum of `data` as native-order 16-bit words, a trailing odd byte padded
/// with zero; not folded.
///
/// The bytes are read as 32-bit words, eight lanes per 32-byte block,
/// each word holding two 16-bit words `low + (high << 16)`. A lane keeps
/// two sums: of the high halves (`x >> 16`), and of the whole words
/// modulo 2^32. The sum of the low halves is then the second minus the
/// first shifted left by 16, modulo 2^32; and it is exact as long as it
/// stays below 2^32, which a run of at most 65 536 blocks guarantees.
/// Per 16 bytes that is a load, two adds and a shift, where widening each
/// 16-bit word to 32 bits took a load, two unpacks, two copies and two
/// adds; the loop stays one the compiler vectorizes on its own.
fn words_sum(data: &[u8]) -> u64 {
    let (blocks, rest) = data.as_chunks::<32>();
    let mut total = 0u64;
    // Per lane, a run adds one low half of at most 65 535 per block: over
    // 32 768 blocks (1 MiB) that stays below 2^31, so the low halves'
    // sum is recovered exactly. A segment is one run.
    for run in blocks.chunks(1 << 15) {
        let mut whole = [0u32; 8];
        let mut high = [0u32; 8];
        for block in run {
            let (words, _) = block.as_chunks::<4>();
            for ((w, h), word) in whole.iter_mut().zip(high.iter_mut()).zip(words) {
                let x = u32::from_ne_bytes(*word);
                *w = w.wrapping_add(x);
                *h += x >> 16;
            }
        }
        for (w, h) in whole.into_iter().zip(high) {
            let low = w.wrapping_sub(h << 16);
            total += u64::from(low) + u64::from(h);
        }
    }
    let (words, odd) = rest.as_chunks::<2>();
    for word in words {
        total += u64::from(u16::from_ne_bytes(*word));
    }
    if let Some(&byte) = odd.first() {
        total += u64::from(u16::from_ne_bytes([byte, 0]));
    }
    total
}

/// Folds the carries of a ones' complement sum back into 16 bits.
fn fold(mut sum: u64) -> u16 {
    while sum > 0xffff {
        sum = (sum >> 16) + (sum & 0xffff);
    }
    sum as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use smoltcp::wire::{IpAddress, TcpPacket};

    fn smoltcp_fill(src: Ipv4Addr, dst: Ipv4Addr, segment: &mut [u8]) {
        TcpPacket::new_unchecked(segment)
            .fill_checksum(&IpAddress::Ipv4(src), &IpAddress::Ipv4(dst));
    }

    fn smoltcp_verify(src: Ipv4Addr, dst: Ipv4Addr, segment: &[u8]) -> bool {
        TcpPacket::new_unchecked(segment)
            .verify_checksum(&IpAddress::Ipv4(src), &IpAddress::Ipv4(dst))
    }

    /// A deterministic byte stream for test segments.
    fn bytes(seed: u64, len: usize) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect()
    }

    #[test]
    fn agrees_with_smoltcp_on_every_length_and_content() {
        let addrs = [
            (Ipv4Addr::UNSPECIFIED, Ipv4Addr::UNSPECIFIED),
            (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2)),
            (
                Ipv4Addr::new(255, 255, 255, 255),
                Ipv4Addr::new(192, 168, 1, 254),
            ),
        ];
        // Every length across the 32-byte blocks and the tails, a full
        // segment, and the largest a 64 KiB datagram carries.
        let lengths = (20..200).chain([1_447, 1_448, 1_449, 9_000, 65_515]);
        for len in lengths {
            for (seed, &(src, dst)) in addrs.iter().enumerate() {
                for content in [
                    bytes(seed as u64 + len as u64, len),
                    vec![0; len],
                    vec![0xff; len],
                ] {
                    let mut ours = content.clone();
                    let mut theirs = content;
                    fill(src, dst, &mut ours);
                    smoltcp_fill(src, dst, &mut theirs);
                    assert_eq!(ours, theirs, "len {len}, addresses {src} {dst}");
                    assert!(verify(src, dst, &ours));
                    assert!(smoltcp_verify(src, dst, &ours));
                }
            }
        }
    }

    #[test]
    fn ipv6_agrees_with_a_sum_of_smoltcps_pieces() {
        use smoltcp::wire::checksum;
        let (src, dst): (Ipv6Addr, Ipv6Addr) =
            ("2001:db8::1".parse().unwrap(), "fe80::2".parse().unwrap());
        for len in [20, 21, 1_440, 1_441, 9_000] {
            let mut segment = bytes(len as u64, len);
            fill_v6(src, dst, &mut segment);
            // RFC 8200 section 8.1 summed piece by piece with smoltcp's
            // RFC 1071 sum, the checksum field included: all ones.
            let sum = checksum::combine(&[
                checksum::data(&src.octets()),
                checksum::data(&dst.octets()),
                checksum::data(&(len as u32).to_be_bytes()),
                checksum::data(&[0, 0, 0, 6]),
                checksum::data(&segment),
            ]);
            assert_eq!(sum, 0xffff, "len {len}");
            assert!(verify_v6(src, dst, &segment));
            segment[len / 2] ^= 1;
            assert!(!verify_v6(src, dst, &segment));
        }
    }

    #[test]
    fn inputs_past_a_run_are_summed_without_overflow() {
        // A plain word-by-word sum into 64 bits as the reference.
        let reference = |data: &[u8]| -> u64 {
            data.chunks(2)
                .map(|w| u64::from(u16::from_ne_bytes([w[0], *w.get(1).unwrap_or(&0)])))
                .sum()
        };
        for len in [(1 << 20) - 1, 1 << 20, (1 << 20) + 33, 3 << 20] {
            for data in [vec![0xff; len], bytes(len as u64, len)] {
                assert_eq!(words_sum(&data), reference(&data), "len {len}");
            }
        }
    }

    #[test]
    fn any_changed_word_fails_to_verify() {
        let (src, dst) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
        let mut segment = bytes(7, 1_448 + 32);
        fill(src, dst, &mut segment);
        for at in (0..segment.len()).step_by(37) {
            let mut bad = segment.clone();
            bad[at] ^= 0x10;
            assert!(!verify(src, dst, &bad), "flip at {at}");
            assert_eq!(verify(src, dst, &bad), smoltcp_verify(src, dst, &bad));
        }
        // The pseudo-header counts: another address fails.
        assert!(!verify(Ipv4Addr::new(10, 0, 0, 3), dst, &segment));
        // So does a segment one byte shorter (the length is summed).
        assert!(!verify(src, dst, &segment[..segment.len() - 1]));
    }
}
