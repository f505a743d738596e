//! The TCP segment representation.

use super::{Options, SeqNum, WireError};
use std::net::Ipv4Addr;

/// Length of a TCP header without options.
pub const HEADER_LEN: usize = 20;
/// Room for options in a TCP header.
pub const MAX_OPTIONS_LEN: usize = 40;

/// TCP control bits.
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
}

impl Checksum {
    /// The pseudo-header that connections use on a UDP substrate.
    pub const UNSPECIFIED: Checksum = Checksum::Ipv4 {
        src: Ipv4Addr::UNSPECIFIED,
        dst: Ipv4Addr::UNSPECIFIED,
    };
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
    /// Parses and validates `bytes`. Never panics; every malformed input is
    /// a [`WireError`].
    pub fn parse(bytes: &'a [u8], checksum: Checksum) -> Result<SegmentRepr<'a>, WireError> {
        let _ = (bytes, checksum);
        todo!("wire helper")
    }

    /// Header length in bytes (20 + padded options) that [`emit`](Self::emit)
    /// will write. SACK blocks that do not fit beside the other options are
    /// not counted (and not written).
    pub fn header_len(&self) -> usize {
        todo!("wire helper")
    }

    /// Total encoded length: header plus payload.
    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.payload.len()
    }

    /// Writes the segment into `buf`, returning the bytes written.
    pub fn emit(&self, buf: &mut [u8], checksum: Checksum) -> Result<usize, WireError> {
        let _ = (buf, checksum);
        todo!("wire helper")
    }
}
