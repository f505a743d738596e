//! The TCP segment representation (RFC 9293 section 3.1).
//!
//! The fixed 20-byte header is written through `smoltcp::wire::TcpPacket`,
//! so the bit layout of the data offset and the control bits comes from a
//! widely used implementation; the ones' complement sum over the IPv4
//! pseudo-header is the `checksum` module's, tested against smoltcp's
//! byte for byte. The options are handled in the
//! `options` module (RFC 2018, RFC 7323, RFC 6994); see [`Options`].
//!
//! The urgent pointer is neither represented nor acted upon: it is ignored
//! on parse and written as zero. The NS bit and the reserved bits are
//! likewise ignored on parse and written as zero.

use super::{Options, SeqNum, WireError};
use core::net::Ipv4Addr;
use smoltcp::wire::{TcpPacket, TcpSeqNumber};

/// Length of a TCP header without options.
pub const HEADER_LEN: usize = 20;
/// Room for options in a TCP header.
pub const MAX_OPTIONS_LEN: usize = 40;

/// Offset of the byte holding the control bits CWR to FIN (RFC 9293
/// section 3.1 with RFC 3168's ECE and CWR).
const FLAGS_BYTE: usize = 13;
/// Offset of the byte whose high nibble is the data offset.
const DATA_OFFSET_BYTE: usize = 12;

/// TCP control bits, at the bit positions they have on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Flags(pub u8);

impl Flags {
    /// no more data from sender
    pub const FIN: Flags = Flags(0x01);
    /// synchronize sequence numbers
    pub const SYN: Flags = Flags(0x02);
    /// reset the connection
    pub const RST: Flags = Flags(0x04);
    /// push function
    pub const PSH: Flags = Flags(0x08);
    /// acknowledgment field is significant
    pub const ACK: Flags = Flags(0x10);
    /// urgent pointer is significant (parsed, never acted upon)
    pub const URG: Flags = Flags(0x20);
    /// ECN echo (RFC 3168)
    pub const ECE: Flags = Flags(0x40);
    /// congestion window reduced (RFC 3168)
    pub const CWR: Flags = Flags(0x80);

    /// No bits set.
    pub const fn empty() -> Flags {
        Flags(0)
    }

    /// All bits of `other` are set in `self`.
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// `self` with the bits of `other` added.
    pub const fn with(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
}

impl core::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        self.with(rhs)
    }
}

/// How the checksum is computed and checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checksum {
    /// Neither computed on emit (left zero) nor checked on parse.
    Ignore,
    /// Over the IPv4 pseudo-header with these addresses. On UDP, where
    /// there is no IP header, both ends use the unspecified address.
    Ipv4 {
        /// source address
        src: Ipv4Addr,
        /// destination address
        dst: Ipv4Addr,
    },
    /// Computed like [`Ipv4`](Self::Ipv4) on emit; on parse, checked like
    /// it unless the field is zero, which says the sender left it out.
    /// For carriers that check integrity themselves (UDP's checksum covers
    /// the same bytes), where the two ends agreed in the handshake to
    /// omit it (see `Config::omit_checksums`). About one segment in
    /// 65 536 has a computed checksum of zero and goes unchecked too,
    /// which on such a carrier costs nothing.
    Ipv4OrOmitted {
        /// source address
        src: Ipv4Addr,
        /// destination address
        dst: Ipv4Addr,
    },
}

impl Checksum {
    /// The pseudo-header that connections use on a UDP substrate.
    pub const UNSPECIFIED: Checksum = Checksum::Ipv4 {
        src: Ipv4Addr::UNSPECIFIED,
        dst: Ipv4Addr::UNSPECIFIED,
    };

    /// [`UNSPECIFIED`](Self::UNSPECIFIED) that takes a zero field as
    /// omitted (see [`Ipv4OrOmitted`](Self::Ipv4OrOmitted)).
    pub const UNSPECIFIED_OR_OMITTED: Checksum = Checksum::Ipv4OrOmitted {
        src: Ipv4Addr::UNSPECIFIED,
        dst: Ipv4Addr::UNSPECIFIED,
    };

    /// The addresses to check `segment` over, if it is to be checked.
    fn to_verify(self, segment: &[u8]) -> Option<(Ipv4Addr, Ipv4Addr)> {
        match self {
            Checksum::Ignore => None,
            Checksum::Ipv4 { src, dst } => Some((src, dst)),
            Checksum::Ipv4OrOmitted { src, dst } => {
                (segment.get(16..18) != Some(&[0, 0])).then_some((src, dst))
            }
        }
    }

    /// The addresses to compute the checksum over, if it is computed.
    fn to_fill(self) -> Option<(Ipv4Addr, Ipv4Addr)> {
        match self {
            Checksum::Ignore => None,
            Checksum::Ipv4 { src, dst } | Checksum::Ipv4OrOmitted { src, dst } => Some((src, dst)),
        }
    }
}

/// A parsed TCP segment borrowing its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentRepr<'a> {
    /// source port
    pub src_port: u16,
    /// destination port
    pub dst_port: u16,
    /// sequence number
    pub seq: SeqNum,
    /// acknowledgment number (meaningful when `flags` has ACK)
    pub ack: SeqNum,
    /// control bits
    pub flags: Flags,
    /// unscaled window field
    pub window: u16,
    /// options
    pub options: Options,
    /// payload
    pub payload: &'a [u8],
}

impl<'a> SegmentRepr<'a> {
    /// Parses and validates `bytes`, which must hold exactly one segment
    /// (header and payload, nothing after it). Never panics and never
    /// allocates; every malformed input is a [`WireError`].
    ///
    /// Checks, in order: at least 20 bytes ([`WireError::Truncated`]); the
    /// checksum, when asked for ([`WireError::BadChecksum`]), before any
    /// field is trusted, so that a corrupted segment is reported as
    /// corrupted rather than as whatever the corruption happens to look
    /// like; the data offset ([`WireError::BadDataOffset`]); then the
    /// options (see [`Options`] for the rules).
    pub fn parse(bytes: &'a [u8], checksum: Checksum) -> Result<SegmentRepr<'a>, WireError> {
        let mut repr = SegmentRepr::EMPTY;
        repr.parse_from(bytes, checksum)?;
        Ok(repr)
    }

    /// A segment with every field zero or empty, to [`parse_from`]
    /// into.
    ///
    /// [`parse_from`]: Self::parse_from
    pub(crate) const EMPTY: SegmentRepr<'static> = SegmentRepr {
        src_port: 0,
        dst_port: 0,
        seq: SeqNum(0),
        ack: SeqNum(0),
        flags: Flags(0),
        window: 0,
        options: Options::EMPTY,
        payload: &[],
    };

    /// [`parse`](Self::parse) into `self`, which must be
    /// [`EMPTY`](Self::EMPTY) (on an error it holds what was parsed
    /// before). For the connection's receive path: returned by value,
    /// the parsed segment is moved out in wide loads right after the
    /// narrow stores that wrote its options, which the processor's store
    /// forwarding cannot serve, on every segment; parsed where the caller
    /// keeps it, it is not moved at all.
    pub(crate) fn parse_from(
        &mut self,
        bytes: &'a [u8],
        checksum: Checksum,
    ) -> Result<(), WireError> {
        let len = bytes.len();
        // The fixed header as an array: its fields are read below without
        // further bounds checks (RFC 9293 section 3.1 for the layout).
        let Some(h) = bytes.first_chunk::<HEADER_LEN>() else {
            return Err(WireError::Truncated { len });
        };
        if let Some((src, dst)) = checksum.to_verify(bytes) {
            if !super::checksum::verify(src, dst, bytes) {
                return Err(WireError::BadChecksum);
            }
        }
        let be16 = |at: usize| u16::from_be_bytes([h[at], h[at + 1]]);
        let be32 = |at: usize| u32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
        let header_len = usize::from(h[12] >> 4) * 4;
        if header_len < HEADER_LEN || header_len > len {
            return Err(WireError::BadDataOffset { header_len, len });
        }
        self.src_port = be16(0);
        self.dst_port = be16(2);
        self.seq = SeqNum(be32(4));
        self.ack = SeqNum(be32(8));
        // `Flags` uses the wire's bit positions: byte 13 as it is
        // (the NS bit in byte 12 is RFC 3540's, obsolete and ignored).
        self.flags = Flags(h[FLAGS_BYTE]);
        self.window = be16(14);
        self.payload = &bytes[header_len..];
        // Parsed in place: the options are most of the segment's
        // description, and building them apart cost two copies of it.
        // In bounds: HEADER_LEN <= header_len <= len was checked above.
        self.options.parse_into(&bytes[HEADER_LEN..header_len])
    }

    /// Header length in bytes (20 + padded options) that [`emit`](Self::emit)
    /// will write. SACK blocks that do not fit beside the other options are
    /// not counted (and not written); see [`Options::sack_capacity`].
    pub fn header_len(&self) -> usize {
        HEADER_LEN + self.options.encoded_len()
    }

    /// The reset that answers this segment where no connection takes it
    /// (RFC 9293 section 3.10.7.1), ports swapped: `seq` = the segment's
    /// ACK if it has one, else `seq` 0 with an ACK of everything the
    /// segment occupies. `None` for a reset, which is never answered.
    pub fn reset_reply(&self) -> Option<SegmentRepr<'static>> {
        if self.flags.contains(Flags::RST) {
            return None;
        }
        let (seq, ack, flags) = if self.flags.contains(Flags::ACK) {
            (self.ack, SeqNum(0), Flags::RST)
        } else {
            let len = self.payload.len() as u32
                + u32::from(self.flags.contains(Flags::SYN))
                + u32::from(self.flags.contains(Flags::FIN));
            (SeqNum(0), self.seq.add(len), Flags::RST | Flags::ACK)
        };
        Some(SegmentRepr {
            src_port: self.dst_port,
            dst_port: self.src_port,
            seq,
            ack,
            flags,
            window: 0,
            options: Options::default(),
            payload: &[],
        })
    }

    /// Total encoded length: header plus payload.
    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.payload.len()
    }

    /// Writes the segment into the first [`buffer_len`](Self::buffer_len)
    /// bytes of `buf`, returning that length. Whatever `buf` held before is
    /// overwritten: padding, the urgent pointer and reserved bits are zero,
    /// and so is the checksum under [`Checksum::Ignore`].
    ///
    /// SACK blocks beyond [`Options::sack_capacity`] are dropped from the
    /// end of the list. Errors: [`WireError::OptionsTooLong`] if even the
    /// options other than SACK do not fit (impossible with today's option
    /// set), [`WireError::BufferTooSmall`] if `buf` is shorter than the
    /// segment.
    pub fn emit(&self, buf: &mut [u8], checksum: Checksum) -> Result<usize, WireError> {
        self.emit_with_payload(buf, checksum, self.payload.len(), |out| {
            out.copy_from_slice(self.payload)
        })
    }

    /// Like [`emit`](Self::emit), but the payload of `payload_len` bytes is
    /// written in place by `write_payload` (which receives exactly that
    /// many bytes) instead of being copied from `self.payload`, which is
    /// ignored. Saves a copy when the payload lives in a send buffer.
    ///
    /// Inlined: a connection calls it from one place for every segment,
    /// and inlined there it takes about 45 fewer instructions per segment
    /// (the compiler's own choice varies with unrelated changes).
    #[inline]
    pub fn emit_with_payload(
        &self,
        buf: &mut [u8],
        checksum: Checksum,
        payload_len: usize,
        write_payload: impl FnOnce(&mut [u8]),
    ) -> Result<usize, WireError> {
        let have = buf.len();
        let options_len = if have >= HEADER_LEN + MAX_OPTIONS_LEN + payload_len {
            // Room for any header: options laid out and written in one pass.
            self.options
                .write(&mut buf[HEADER_LEN..HEADER_LEN + MAX_OPTIONS_LEN])?
        } else {
            let plan = self.options.plan()?;
            let need = HEADER_LEN + plan.len + payload_len;
            if have < need {
                return Err(WireError::BufferTooSmall { need, have });
            }
            self.options
                .emit(plan, &mut buf[HEADER_LEN..HEADER_LEN + plan.len]);
            plan.len
        };
        let header_len = HEADER_LEN + options_len;
        let need = header_len + payload_len;
        let buf = &mut buf[..need];
        // The fixed header's unused fields (urgent pointer, reserved bits,
        // and for `Checksum::Ignore` the checksum) are zero.
        buf[..HEADER_LEN].fill(0);
        // One byte for all eight control bits (see `parse`), and the data
        // offset in 32-bit words in the high nibble of the byte before
        // (header_len <= 60: the options take at most MAX_OPTIONS_LEN);
        // the low nibble (reserved bits) stays zero. Both stored as
        // bytes: reading the 16-bit field back to merge the offset in,
        // right after these stores, stalls the processor's store
        // forwarding on every segment.
        buf[DATA_OFFSET_BYTE] = (header_len as u8 / 4) << 4;
        buf[FLAGS_BYTE] = self.flags.0;

        // The packet spans exactly the segment, so that the checksum covers
        // exactly the segment.
        let mut packet = TcpPacket::new_unchecked(buf);
        packet.set_src_port(self.src_port);
        packet.set_dst_port(self.dst_port);
        packet.set_seq_number(TcpSeqNumber(self.seq.0 as i32));
        packet.set_ack_number(TcpSeqNumber(self.ack.0 as i32));
        packet.set_window_len(self.window);
        // The payload follows the header length known here, not the one
        // read back from the bytes just stored (see above).
        let buf = packet.into_inner();
        write_payload(&mut buf[header_len..]);
        if let Some((src, dst)) = checksum.to_fill() {
            super::checksum::fill(src, dst, buf);
        }
        Ok(need)
    }
}
