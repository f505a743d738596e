//! Typed parse and emit errors.

use core::fmt;

/// Why a segment could not be parsed or emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireError {
    /// Fewer bytes than a TCP header.
    Truncated {
        /// bytes available
        len: usize,
    },
    /// Data offset below 5 words or past the end of the buffer.
    BadDataOffset {
        /// header length the segment claims, in bytes
        header_len: usize,
        /// bytes available
        len: usize,
    },
    /// An option's length byte runs past the end of the header.
    OptionOverrun {
        /// option kind
        kind: u8,
    },
    /// An option's length is impossible for its kind (including 0 and 1,
    /// which would make the option loop or overlap its own length byte).
    BadOptionLength {
        /// option kind
        kind: u8,
        /// length byte
        len: u8,
    },
    /// A SACK option with more blocks than fit in a TCP header.
    TooManySackBlocks {
        /// blocks claimed
        blocks: usize,
    },
    /// The checksum does not match.
    BadChecksum,
    /// The options do not fit into the 40 bytes a TCP header allows.
    OptionsTooLong {
        /// bytes needed
        len: usize,
    },
    /// The output buffer is too small for the segment.
    BufferTooSmall {
        /// bytes needed
        need: usize,
        /// bytes available
        have: usize,
    },
}

// Written out rather than derived so that the bare core needs no
// proc-macro crates (see the crate's "use as a library" docs).
impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            WireError::Truncated { len } => {
                write!(f, "segment shorter than a TCP header ({len} bytes)")
            }
            WireError::BadDataOffset { header_len, len } => write!(
                f,
                "bad data offset: header length {header_len} bytes for a {len}-byte segment"
            ),
            WireError::OptionOverrun { kind } => {
                write!(f, "option kind {kind} overruns the TCP header")
            }
            WireError::BadOptionLength { kind, len } => {
                write!(f, "option kind {kind} has invalid length {len}")
            }
            WireError::TooManySackBlocks { blocks } => {
                write!(f, "SACK option with {blocks} blocks (at most 4 fit)")
            }
            WireError::BadChecksum => f.write_str("bad checksum"),
            WireError::OptionsTooLong { len } => {
                write!(f, "options need {len} bytes, a TCP header holds 40")
            }
            WireError::BufferTooSmall { need, have } => {
                write!(
                    f,
                    "buffer of {have} bytes too small for a {need}-byte segment"
                )
            }
        }
    }
}

impl core::error::Error for WireError {}
