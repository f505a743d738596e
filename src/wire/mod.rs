//! TCP segment format (RFC 9293) with the options ackwise uses: MSS, window
//! scale and timestamps (RFC 7323), SACK-permitted and SACK (RFC 2018), and
//! an ACK-request option in the shared experimental kind 253 (RFC 6994).
//!
//! In the style of smoltcp: [`SegmentRepr`] is a plain, owned-by-borrow view
//! of a parsed segment; [`SegmentRepr::parse`] validates bytes into it and
//! [`SegmentRepr::emit`] writes it back. On emit the fixed header's fields
//! go through `smoltcp::wire::TcpPacket`, and the checksum is ackwise's
//! own (a wider loop than smoltcp's, checked against it); parsing
//! reads the fixed header directly, and the options are parsed and written
//! here so that every malformed option maps to its own [`WireError`], a
//! four-block SACK option from a peer is kept whole, and a segment's
//! options cost one pass each way.

mod checksum;
mod error;
pub mod ip;
mod options;
mod segment;
mod seq;
#[cfg(test)]
mod tests;

pub use error::WireError;
pub use options::{
    AckNonce, AckRequest, Options, SackBlocks, Timestamps, ACK_NONCE_EXID, ACK_REQUEST_EXID,
    ACK_REQUEST_KIND, CHECKSUM_OMISSION_EXID, MAX_SACK_BLOCKS_PARSED, MAX_WINDOW_SCALE,
    NONCE_ECHO_EXID,
};
pub use segment::{Checksum, Flags, SegmentRepr, HEADER_LEN, MAX_OPTIONS_LEN};
pub use seq::SeqNum;
