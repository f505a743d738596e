//! Typed parse and emit errors.

use thiserror::Error;

/// Why a segment could not be parsed or emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum WireError {
    /// Fewer bytes than a TCP header.
    #[error("segment shorter than a TCP header ({len} bytes)")]
    Truncated {
        /// bytes available
        len: usize,
    },
    /// Data offset below 5 words or past the end of the buffer.
    #[error("bad data offset: header length {header_len} bytes for a {len}-byte segment")]
    BadDataOffset {
        /// header length the segment claims, in bytes
        header_len: usize,
        /// bytes available
        len: usize,
    },
    /// An option's length byte runs past the end of the header.
    #[error("option kind {kind} overruns the TCP header")]
    OptionOverrun {
        /// option kind
        kind: u8,
    },
    /// An option's length is impossible for its kind (including 0 and 1,
    /// which would make the option loop or overlap its own length byte).
    #[error("option kind {kind} has invalid length {len}")]
    BadOptionLength {
        /// option kind
        kind: u8,
        /// length byte
        len: u8,
    },
    /// A SACK option with more blocks than fit in a TCP header.
    #[error("SACK option with {blocks} blocks (at most 4 fit)")]
    TooManySackBlocks {
        /// blocks claimed
        blocks: usize,
    },
    /// The checksum does not match.
    #[error("bad checksum")]
    BadChecksum,
    /// The options do not fit into the 40 bytes a TCP header allows.
    #[error("options need {len} bytes, a TCP header holds 40")]
    OptionsTooLong {
        /// bytes needed
        len: usize,
    },
    /// The output buffer is too small for the segment.
    #[error("buffer of {have} bytes too small for a {need}-byte segment")]
    BufferTooSmall {
        /// bytes needed
        need: usize,
        /// bytes available
        have: usize,
    },
}
