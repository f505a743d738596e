//! TCP options: MSS, window scale, SACK-permitted, SACK, timestamps and the
//! experimental ACK-request option (kind 253, RFC 6994).

use super::SeqNum;

/// RFC 6994 shared experimental option kind used for the ACK request.
pub const ACK_REQUEST_KIND: u8 = 253;
/// RFC 6994 experiment identifier of the ackwise ACK request.
pub const ACK_REQUEST_EXID: u16 = 0xACC5;
/// A SACK option in a 40-byte option space holds at most four blocks.
pub const MAX_SACK_BLOCKS_PARSED: usize = 4;

/// RFC 7323 timestamps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timestamps {
    /// sender's clock when the segment was sent
    pub tsval: u32,
    /// echo of the peer's most recent relevant tsval
    pub tsecr: u32,
}

/// The ACK-request option.
///
/// On SYN and SYN-ACK it only advertises that the sender of the segment
/// understands requests. On any other segment it carries a countdown: how
/// many more data segments the receiver may take before it owes an ACK
/// (0 = acknowledge this segment at once). A countdown is robust to the loss
/// of the segment that carried it, unlike a single poll bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckRequest {
    /// "I understand ACK requests" (SYN / SYN-ACK, no payload).
    Supported,
    /// Segments still allowed before an ACK is owed.
    Countdown(u16),
}

/// Up to four SACK blocks `[left, right)`, most recent first (RFC 2018).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SackBlocks {
    blocks: [(SeqNum, SeqNum); MAX_SACK_BLOCKS_PARSED],
    len: u8,
}

impl SackBlocks {
    /// No blocks.
    pub const fn new() -> Self {
        SackBlocks {
            blocks: [(SeqNum(0), SeqNum(0)); MAX_SACK_BLOCKS_PARSED],
            len: 0,
        }
    }

    /// Appends a block; returns false (and drops it) when four are held.
    pub fn push(&mut self, left: SeqNum, right: SeqNum) -> bool {
        if (self.len as usize) < MAX_SACK_BLOCKS_PARSED {
            self.blocks[self.len as usize] = (left, right);
            self.len += 1;
            true
        } else {
            false
        }
    }

    /// The blocks, most recent first.
    pub fn as_slice(&self) -> &[(SeqNum, SeqNum)] {
        &self.blocks[..self.len as usize]
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// No blocks at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Keeps only the first `n` blocks.
    pub fn truncate(&mut self, n: usize) {
        self.len = self.len.min(n as u8);
    }
}

/// The options of one segment. Unknown options are skipped on parse
/// (RFC 9293 section 3.2) and never emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    /// maximum segment size (SYN only)
    pub mss: Option<u16>,
    /// window scale shift (SYN only, RFC 7323)
    pub window_scale: Option<u8>,
    /// SACK-permitted (SYN only, RFC 2018)
    pub sack_permitted: bool,
    /// SACK blocks
    pub sack: SackBlocks,
    /// timestamps (RFC 7323)
    pub timestamps: Option<Timestamps>,
    /// experimental ACK request
    pub ack_request: Option<AckRequest>,
}
