//! Payload elision: a data segment in flight keeps its headers and leaves
//! its payload out when that payload is exactly the flows' pattern
//! ([`super::host::pattern`]) from some phase on; the receiving host gets
//! the segment rebuilt byte for byte, or, where an ackwise connection
//! takes it, its header and the payload as a slice of the pattern's own
//! memory ([`payload`], `Connection::handle_segment_parts`), which the
//! connection holds by reference and its application reads out in place
//! and checks by address ([`is_pattern_at`]).
//!
//! Why: between the sender and the receiver a packet spends a whole
//! round trip in queues and delay lines. With the payload in it, every
//! byte in flight is memory the simulator touches twice (written at the
//! sender, read at the receiver, a round trip apart), so on a large
//! window both ends miss the CPU's caches on every packet and the cost
//! per packet grows with the window and with the number of flows. Kept
//! out, a packet in flight is one cache line, the payload is written into
//! and read from buffers that stay hot, and the run is the same: the
//! receiver sees the very bytes the sender emitted (checksum included),
//! so results are byte-identical.
//!
//! Nothing is taken on trust: a payload is left out only after it was
//! compared with the pattern, or when it is the pattern's own memory (the
//! emulated application hands the pattern to its connection by reference,
//! and a sender that leaves payloads in its send buffer names the very
//! slices it would send: [`store_in_place`], no byte read or copied). One
//! that differs (an application that wrote something else, a sender that
//! emitted the wrong bytes) travels whole, for the receiving application's
//! content check to judge. Captures need every byte, so a run with a
//! capture keeps payloads.

use super::host::{pattern_at, CHUNK, PATTERN_PERIOD};
use super::packet::{header_len, PacketKind};
use bytes::Bytes;

/// A payload left out of a packet: its length and where in the pattern
/// it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Elided {
    /// Payload bytes left out (0: the packet is whole).
    pub bytes: u32,
    /// Offset in the pattern of the payload's first byte.
    pub phase: u8,
}

impl Elided {
    /// Nothing left out.
    pub const NONE: Elided = Elided { bytes: 0, phase: 0 };
}

/// Offset of a TCP segment's payload; `None` for something too short to
/// be a segment or whose header would run past its end.
pub(crate) fn payload_offset(seg: &[u8]) -> Option<usize> {
    header_len(seg).filter(|&h| h >= 20 && h <= seg.len())
}

/// Copies the encoded segment `seg` into `buf`, leaving the payload out
/// when `elide` allows it, `kind` is data and the payload is the pattern
/// from some phase on. Returns the bytes written to `buf` and what was
/// left out. `buf` grows to what it must hold, so a pool slot that only
/// ever carried headers stays a few dozen bytes.
pub(crate) fn store(
    seg: &[u8],
    kind: PacketKind,
    pattern: &[u8],
    elide: bool,
    buf: &mut Vec<u8>,
) -> (usize, Elided) {
    if elide && kind == PacketKind::Data {
        if let Some(h) = payload_offset(seg) {
            let payload = &seg[h..];
            // The pattern's byte at offset `i` is `i` mod its period, so a
            // payload that is the pattern starts at the phase its first
            // byte names (and a first byte past the period matches none;
            // nor does a payload longer than the pattern's longest slice).
            let phase = payload.first().copied().unwrap_or(u8::MAX);
            if !payload.is_empty()
                && *payload == *pattern_at(pattern, u64::from(phase), payload.len())
            {
                fill(buf, &seg[..h]);
                let bytes = u32::try_from(payload.len()).unwrap_or(u32::MAX);
                return (h, Elided { bytes, phase });
            }
        }
    }
    fill(buf, seg);
    (seg.len(), Elided::NONE)
}

/// [`store`] for a data segment whose payload stayed in the sender's
/// buffer (`Connection::poll_transmit_gather`): `header` is the encoded
/// header and `pieces` the payload where it lies. When every piece is a
/// slice of `pattern`'s own memory (the emulated application wrote the
/// pattern by reference) and each continues the phase where the one
/// before ended, the payload is the pattern from the first piece's phase:
/// only the header is copied to `buf`, and what was left out is returned,
/// without a byte of the payload read. Otherwise `None`, and nothing is
/// written.
pub(crate) fn store_in_place<'a>(
    header: &[u8],
    pieces: impl Iterator<Item = &'a [u8]>,
    pattern: &[u8],
    buf: &mut Vec<u8>,
) -> Option<Elided> {
    let mut first = None;
    let mut bytes = 0usize;
    for piece in pieces {
        let phase = phase_in(pattern, piece)?;
        match first {
            None => first = Some(phase),
            Some(start) if (start + bytes) % PATTERN_PERIOD == phase => {}
            Some(_) => return None,
        }
        bytes += piece.len();
    }
    // `restore` rebuilds at most one chunk's worth, as `store` compares.
    let phase = u8::try_from(first?).ok()?;
    if bytes == 0 || bytes > CHUNK {
        return None;
    }
    fill(buf, header);
    Some(Elided {
        bytes: u32::try_from(bytes).ok()?,
        phase,
    })
}

/// The phase of `piece` in the pattern, if `piece` lies in `pattern`'s
/// memory: the pattern's byte at index `i` is `i` mod its period, so a
/// slice starting at index `i` starts at that phase.
fn phase_in(pattern: &[u8], piece: &[u8]) -> Option<usize> {
    let at = (piece.as_ptr() as usize).checked_sub(pattern.as_ptr() as usize)?;
    (at.checked_add(piece.len())? <= pattern.len()).then_some(at % PATTERN_PERIOD)
}

/// Copies `bytes` to the front of `buf`, growing it if it is shorter.
fn fill(buf: &mut Vec<u8>, bytes: &[u8]) {
    if buf.len() < bytes.len() {
        buf.resize(bytes.len(), 0);
    }
    buf[..bytes.len()].copy_from_slice(bytes);
}

/// The whole segment of a packet whose `stored` bytes are in the pool:
/// `stored` itself when nothing was left out, else the headers followed by
/// the pattern, rebuilt in `out`.
#[inline]
pub(crate) fn restore<'a>(
    stored: &'a [u8],
    elided: Elided,
    pattern: &[u8],
    out: &'a mut Vec<u8>,
) -> &'a [u8] {
    if elided.bytes == 0 {
        return stored;
    }
    out.clear();
    out.extend_from_slice(stored);
    out.extend_from_slice(pattern_at(
        pattern,
        u64::from(elided.phase),
        elided.bytes as usize,
    ));
    out
}

/// Whether `data` is the pattern from stream offset `offset` on: known
/// from its address when it is the pattern's own memory at that phase (a
/// payload that arrived by reference), else by comparing its bytes.
pub(crate) fn is_pattern_at(pattern: &[u8], data: &[u8], offset: u64) -> bool {
    let phase = (offset % PATTERN_PERIOD as u64) as usize;
    phase_in(pattern, data) == Some(phase) || *data == *pattern_at(pattern, offset, data.len())
}

/// The payload a packet left out, as a slice of the pattern's own memory:
/// what [`restore`] appends after the headers, by reference.
pub(crate) fn payload(pattern: &Bytes, elided: Elided) -> Bytes {
    pattern.slice_ref(pattern_at(
        pattern,
        u64::from(elided.phase),
        elided.bytes as usize,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::host::pattern;
    use super::super::packet::classify;
    use super::*;

    /// A segment with a 32-byte header (12 bytes of options) and `payload`.
    fn segment(payload: &[u8]) -> Vec<u8> {
        let mut seg = vec![0xA5u8; 32];
        seg[12] = 8 << 4;
        seg[13] = 0x18; // PSH, ACK
        seg.extend_from_slice(payload);
        seg
    }

    #[test]
    fn pattern_payloads_travel_as_headers_and_come_back_whole() {
        let pat = pattern();
        for (phase, len) in [(0usize, 1usize), (17, 1448), (250, 1448), (3, 9000)] {
            let seg = segment(&pat[phase..phase + len]);
            let kind = classify(&seg);
            let mut buf = Vec::new();
            let (n, e) = store(&seg, kind, &pat, true, &mut buf);
            assert_eq!(n, 32, "phase {phase} len {len}");
            assert_eq!(buf.len(), 32, "only the headers are held");
            assert_eq!(e.bytes as usize, len);
            let mut out = Vec::new();
            assert_eq!(restore(&buf[..n], e, &pat, &mut out), &seg[..]);
        }
    }

    #[test]
    fn pattern_memory_in_place_travels_as_headers_and_comes_back_whole() {
        let pat = pattern();
        let header = segment(&[]);
        // One piece, and a payload split where a send buffer's pieces
        // meet: each piece continues the phase where the last one ended,
        // though it lies elsewhere in the pattern's memory.
        let split: [&[u8]; 2] = [&pat[17..17 + 700], &pat[17 + 700 + 251..17 + 1448 + 251]];
        for pieces in [vec![&pat[250..250 + 1448]], split.to_vec()] {
            let mut buf = vec![9u8; 3];
            let e = store_in_place(&header, pieces.iter().copied(), &pat, &mut buf)
                .expect("the pattern in place");
            assert_eq!(
                &buf[..header.len()],
                &header[..],
                "only the headers are held"
            );
            let whole: Vec<u8> = header
                .iter()
                .chain(pieces.concat().iter())
                .copied()
                .collect();
            let mut out = Vec::new();
            assert_eq!(restore(&buf[..header.len()], e, &pat, &mut out), &whole[..]);
        }
    }

    #[test]
    fn anything_but_pattern_memory_in_order_is_not_stored_in_place() {
        let pat = pattern();
        let header = segment(&[]);
        // The same bytes in memory of their own: only a comparison could
        // tell, so they go the way of `store`.
        let copy = pat[5..1453].to_vec();
        let phase_break: [&[u8]; 2] = [&pat[0..700], &pat[701..1449]];
        // In phase, but more than `restore` rebuilds.
        let next = CHUNK % PATTERN_PERIOD;
        let too_long: [&[u8]; 2] = [&pat[0..CHUNK], &pat[next..next + 1]];
        let cases: [Vec<&[u8]>; 4] = [
            vec![&copy[..]],
            phase_break.to_vec(),
            vec![], // no payload
            too_long.to_vec(),
        ];
        for (i, pieces) in cases.iter().enumerate() {
            let mut buf = vec![7u8; 3];
            let stored = store_in_place(&header, pieces.iter().copied(), &pat, &mut buf);
            assert_eq!(stored, None, "case {i}");
            assert_eq!(buf, [7u8; 3], "case {i}: nothing written");
        }
    }

    #[test]
    fn a_payload_left_out_comes_back_as_pattern_memory_and_is_known_by_address() {
        let pat = pattern();
        let header = segment(&[]);
        let seg = segment(&pat[40..40 + 1448]);
        let mut buf = Vec::new();
        let (n, e) = store(&seg, PacketKind::Data, &pat, true, &mut buf);
        let payload = payload(&pat, e);
        assert_eq!(&payload[..], &seg[n..]);
        assert_eq!(n, header.len());
        // Its address says what it is: right at the stream offsets of its
        // phase, wrong at any other.
        assert!(is_pattern_at(&pat, &payload, 40));
        assert!(is_pattern_at(&pat, &payload, 40 + 251 * 1000));
        assert!(!is_pattern_at(&pat, &payload, 41));
        // Bytes elsewhere are compared: the same bytes pass, others fail.
        let copy = payload.to_vec();
        assert!(is_pattern_at(&pat, &copy, 40 + 251));
        let mut other = copy.clone();
        other[1000] ^= 1;
        assert!(!is_pattern_at(&pat, &other, 40));
    }

    #[test]
    fn anything_else_travels_whole() {
        let pat = pattern();
        let mut other = pat[5..1453].to_vec();
        other[700] ^= 1;
        let cases = [
            (segment(&other), true),         // one byte off the pattern
            (segment(&[251u8; 10]), true),   // no phase starts with 251
            (segment(&pat[5..1453]), false), // elision off (a capture)
            (segment(&[]), true),            // no payload
            (vec![0u8; 12], true),           // shorter than a header
            (vec![0xF0u8; 30], true),        // data offset past the end
        ];
        for (i, (seg, elide)) in cases.iter().enumerate() {
            // Claimed to be data, so only the checks on the bytes decide.
            let mut buf = vec![7u8; 3];
            let (n, e) = store(seg, PacketKind::Data, &pat, *elide, &mut buf);
            assert_eq!((n, e), (seg.len(), Elided::NONE), "case {i}");
            let mut out = Vec::new();
            assert_eq!(restore(&buf[..n], e, &pat, &mut out), &seg[..], "case {i}");
        }
    }
}
