//! TCP options: MSS, window scale, SACK-permitted, SACK, timestamps and
//! ackwise's experimental options (kind 253, RFC 6994): the ACK request,
//! the ACK nonce and its echoes, and the offer to omit the checksum.
//!
//! References:
//! - RFC 9293 section 3.2: option syntax (kind, length, EOL and NOP), MSS,
//!   and the rule that unknown options are skipped using their length.
//! - RFC 2018: SACK-permitted (kind 4) and SACK (kind 5) with `[left, right)`
//!   blocks, most recent first.
//! - RFC 7323: window scale (kind 3, shift at most 14) and timestamps
//!   (kind 8).
//! - RFC 6994: shared experimental options (kinds 253 and 254) carrying a
//!   16-bit experiment identifier (ExID) right after the length byte.
//!
//! The parse and emit rules are documented on [`Options`].

use super::{SeqNum, WireError, MAX_OPTIONS_LEN};

/// RFC 6994 shared experimental option kind used for the ACK request.
pub const ACK_REQUEST_KIND: u8 = 253;
/// RFC 6994 experiment identifier of the ackwise ACK request.
pub const ACK_REQUEST_EXID: u16 = 0xACC5;
/// RFC 6994 experiment identifier of ackwise's ACK nonce: offered on a
/// SYN (no value), carried by every data segment (two bytes).
pub const ACK_NONCE_EXID: u16 = 0xACC6;
/// RFC 6994 experiment identifier of the nonce echo an ACK carries: two
/// bytes, or four when a second echo follows for the out-of-order segment
/// that caused the ACK.
pub const NONCE_ECHO_EXID: u16 = 0xACC7;
/// RFC 6994 experiment identifier of the offer to leave the TCP checksum
/// out (SYN and SYN-ACK only, no value): the sender checks the integrity
/// of what its carrier delivers by other means, such as UDP's checksum.
pub const CHECKSUM_OMISSION_EXID: u16 = 0xACC8;
/// A SACK option in a 40-byte option space holds at most four blocks.
pub const MAX_SACK_BLOCKS_PARSED: usize = 4;
/// Largest window-scale shift (RFC 7323 section 2.3); larger shifts are
/// clamped to it on parse and on emit.
pub const MAX_WINDOW_SCALE: u8 = 14;

/// End of option list (RFC 9293).
const KIND_EOL: u8 = 0;
/// No-operation, used for alignment (RFC 9293).
const KIND_NOP: u8 = 1;
/// Maximum segment size (RFC 9293).
const KIND_MSS: u8 = 2;
/// Window scale (RFC 7323).
const KIND_WINDOW_SCALE: u8 = 3;
/// SACK-permitted (RFC 2018).
const KIND_SACK_PERMITTED: u8 = 4;
/// SACK blocks (RFC 2018).
const KIND_SACK: u8 = 5;
/// Timestamps (RFC 7323).
const KIND_TIMESTAMPS: u8 = 8;

/// RFC 7323 timestamps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timestamps {
    /// sender's clock when the segment was sent
    pub tsval: u32,
    /// echo of the peer's most recent relevant tsval
    pub tsecr: u32,
}

impl Timestamps {
    /// The option's eight data bytes: TSval, then TSecr, big-endian.
    fn from_body(body: &[u8; 8]) -> Timestamps {
        let [a, b, c, d, e, f, g, h] = *body;
        Timestamps {
            tsval: u32::from_be_bytes([a, b, c, d]),
            tsecr: u32::from_be_bytes([e, f, g, h]),
        }
    }
}

/// The ACK-request option.
///
/// On SYN and SYN-ACK it only advertises that the sender of the segment
/// understands requests. On any other segment it carries a countdown: how
/// many more data segments the receiver may take before it owes an ACK
/// (0 = acknowledge this segment at once). A countdown is robust to the loss
/// of the segment that carried it, unlike a single poll bit. A sender that
/// does not poll may instead announce its congestion window, for a
/// smartacking receiver that uses it rather than estimating it (paper 004
/// sec. 3.2's "explicit assistance").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckRequest {
    /// "I understand ACK requests" (SYN / SYN-ACK, no payload).
    Supported,
    /// Segments still allowed before an ACK is owed.
    Countdown(u16),
    /// The sender's congestion window, in segments (4 bytes after the
    /// ExID, so the length tells it from a countdown).
    SenderWindow(u32),
}

/// ackwise's ACK nonce (see `connection::ack_nonce`): a value the sender
/// draws for each data segment and that only a receiver holding the
/// segment can echo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckNonce {
    /// "I take part" (SYN / SYN-ACK).
    Permitted,
    /// The nonce of this data segment.
    Nonce(u16),
}

/// Up to four SACK blocks `[left, right)`, most recent first (RFC 2018).
///
/// Equality and `Debug` look only at the blocks held, not at stale entries
/// left in the backing array by [`truncate`](Self::truncate).
#[derive(Clone, Copy, Default)]
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

impl PartialEq for SackBlocks {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for SackBlocks {}

impl core::fmt::Debug for SackBlocks {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// The options of one segment. Unknown options are skipped on parse
/// (RFC 9293 section 3.2) and never emitted.
///
/// # Parsing
///
/// The option loop is our own rather than smoltcp's, because smoltcp keeps
/// only three SACK blocks and reports every malformation as one untyped
/// error. The checks, in the order they are applied to each option:
///
/// 1. kind 0 (EOL) ends the list; kind 1 (NOP) is one byte;
/// 2. no length byte before the end of the header: [`WireError::OptionOverrun`];
/// 3. length 0 or 1: [`WireError::BadOptionLength`] (it would loop forever or
///    overlap its own length byte);
/// 4. a SACK whose length is `2 + 8n` with `n > 4`:
///    [`WireError::TooManySackBlocks`] (checked before the overrun, because
///    such an option can never fit in 40 bytes and would otherwise always be
///    reported as an overrun);
/// 5. length running past the end of the header: [`WireError::OptionOverrun`];
/// 6. a length that is wrong for a known kind: [`WireError::BadOptionLength`].
///
/// Unknown kinds, kind 254, and kind 253 with another ExID (or too short to
/// hold one) are skipped. When an option appears twice, the last one wins
/// (including SACK: a later SACK option replaces the blocks of an earlier
/// one): a single pass that overwrites fields gives that for free, and no
/// RFC asks for duplicates to be rejected. A window-scale shift above 14 is
/// clamped to 14 as RFC 7323 section 2.3 requires.
///
/// # Emitting
///
/// Options are written in the order MSS, window scale, SACK-permitted,
/// timestamps, ACK request, ACK nonce, checksum omission, nonce echo,
/// SACK, then padded with EOL (zero) bytes to a
/// multiple of four. Where the 40-byte option space allows, NOPs are
/// inserted so that multi-byte fields are aligned the way common stacks
/// align them (`NOP NOP TS`, `NOP WS`, `NOP NOP SACK`, `SACK-permitted TS`).
/// Alignment is a convenience, not a requirement: when it would cost a SACK
/// block, the options are packed without NOPs instead. So the number of
/// SACK blocks emitted depends only on which other options are present
/// (see [`sack_capacity`](Self::sack_capacity)), and anything that parsed
/// from a 40-byte option area can be emitted again without losing a block.
/// Blocks that still do not fit are dropped from the end of the list, since
/// the first block reports the most recent data (RFC 2018 section 4).
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
    /// experimental ACK nonce (SYN: offered; data: the segment's nonce)
    pub ack_nonce: Option<AckNonce>,
    /// experimental nonce echo: the nonce of the segment that ends where
    /// this segment's ACK points
    pub nonce_echo: Option<u16>,
    /// experimental second echo: the nonce of the out-of-order segment
    /// whose arrival this (duplicate) ACK reports; written only beside
    /// `nonce_echo`
    pub arrival_echo: Option<u16>,
    /// experimental offer to leave the TCP checksum out (SYN only)
    pub checksum_omission: bool,
}

impl Options {
    /// No options: `Options::default()`, usable in constants.
    pub(crate) const EMPTY: Options = Options {
        mss: None,
        window_scale: None,
        sack_permitted: false,
        sack: SackBlocks::new(),
        timestamps: None,
        ack_request: None,
        ack_nonce: None,
        nonce_echo: None,
        arrival_echo: None,
        checksum_omission: false,
    };

    /// Bytes that [`SegmentRepr::emit`](super::SegmentRepr::emit) writes
    /// for these options, including alignment NOPs and EOL padding (always a
    /// multiple of four, at most 40 when emit can succeed). SACK blocks
    /// beyond [`sack_capacity`](Self::sack_capacity) are not counted, as
    /// they are not written.
    ///
    /// If the options cannot fit at all (emit would fail with
    /// [`WireError::OptionsTooLong`]), this is the length they would need.
    /// With the options ackwise sends that cannot happen: a SYN's MSS,
    /// window scale, SACK-permitted, timestamps, ACK-request, nonce and
    /// checksum-omission offers take at most 31 bytes packed (32 aligned), and a later segment's
    /// timestamps, window announcement, nonce and both echoes at most 32.
    pub fn encoded_len(&self) -> usize {
        match self.plan() {
            Ok(plan) => plan.len,
            Err(_) => self.layout(Packing::Tight, &[], None),
        }
    }

    /// How many SACK blocks (0 to 4) fit in the option space beside the
    /// other options of `self`, whatever `self.sack` holds. Emit writes the
    /// first `min(self.sack.len(), self.sack_capacity())` blocks.
    ///
    /// This is the room left after packing the other options without
    /// alignment padding: 4 with no other options, 3 beside timestamps,
    /// 2 beside timestamps and a countdown ACK request.
    pub fn sack_capacity(&self) -> usize {
        let dummy = [(SeqNum(0), SeqNum(0)); MAX_SACK_BLOCKS_PARSED];
        (0..=MAX_SACK_BLOCKS_PARSED)
            .rev()
            .find(|&n| self.layout(Packing::Tight, &dummy[..n], None) <= MAX_OPTIONS_LEN)
            .unwrap_or(0)
    }

    /// Decides how the options will be laid out: aligned when that keeps
    /// every SACK block that fits at all, packed otherwise.
    pub(super) fn plan(&self) -> Result<Plan, WireError> {
        if self.sack.is_empty() {
            // The common case (every data segment and in-order ACK): one
            // layout pass instead of the search below, same answer.
            let len = self.layout(Packing::Aligned, &[], None);
            if len <= MAX_OPTIONS_LEN {
                return Ok(Plan {
                    packing: Packing::Aligned,
                    sack_blocks: 0,
                    len,
                });
            }
        }
        let base = self.layout(Packing::Tight, &[], None);
        if base > MAX_OPTIONS_LEN {
            return Err(WireError::OptionsTooLong { len: base });
        }
        let blocks = self.sack.as_slice();
        let fit = |packing: Packing| {
            (0..=blocks.len())
                .rev()
                .find(|&n| self.layout(packing, &blocks[..n], None) <= MAX_OPTIONS_LEN)
        };
        // The packed layout always fits zero blocks (checked above), so
        // `fit(Tight)` is never None; the fallback only keeps this panic-free.
        let tight = fit(Packing::Tight).unwrap_or(0);
        let (packing, sack_blocks) = match fit(Packing::Aligned) {
            Some(aligned) if aligned == tight => (Packing::Aligned, aligned),
            _ => (Packing::Tight, tight),
        };
        let len = self.layout(packing, &blocks[..sack_blocks], None);
        Ok(Plan {
            packing,
            sack_blocks,
            len,
        })
    }

    /// Writes the options at the start of `area`, which holds at least
    /// [`MAX_OPTIONS_LEN`] bytes, padding included, and returns their
    /// length: [`plan`](Self::plan) then [`emit`](Self::emit), in a
    /// single pass where the aligned layout is sure to fit (every data
    /// segment and in-order ACK).
    pub(super) fn write(&self, area: &mut [u8]) -> Result<usize, WireError> {
        // Without SACK blocks and the SYN's options, the aligned layout
        // takes at most 36 bytes: timestamps 12, ACK request 8, nonce 6,
        // NOPs 2 and both echoes 8.
        let syn_options = self.mss.is_some()
            || self.window_scale.is_some()
            || self.sack_permitted
            || self.checksum_omission;
        if self.sack.is_empty() && !syn_options {
            return Ok(self.layout(Packing::Aligned, &[], Some(area)));
        }
        let plan = self.plan()?;
        self.emit(plan, &mut area[..plan.len]);
        Ok(plan.len)
    }

    /// Writes the options as planned into `out`, which must be exactly
    /// `plan.len` bytes long.
    pub(super) fn emit(&self, plan: Plan, out: &mut [u8]) {
        let blocks = &self.sack.as_slice()[..plan.sack_blocks];
        let written = self.layout(plan.packing, blocks, Some(out));
        debug_assert_eq!(written, plan.len);
    }

    /// The one place that knows the option layout. With `out` it writes;
    /// without it only counts, so that lengths and bytes cannot disagree.
    /// Returns the padded length.
    fn layout(&self, packing: Packing, sack: &[(SeqNum, SeqNum)], out: Option<&mut [u8]>) -> usize {
        let mut w = Writer {
            out,
            pos: 0,
            packing,
        };
        if let Some(mss) = self.mss {
            w.align(0);
            w.option(KIND_MSS, &mss.to_be_bytes());
        }
        if let Some(shift) = self.window_scale {
            // NOP + 3-byte option keeps whatever follows on a word boundary.
            w.align(1);
            w.option(KIND_WINDOW_SCALE, &[shift.min(MAX_WINDOW_SCALE)]);
        }
        if self.sack_permitted {
            // No alignment of its own: two bytes that, before timestamps,
            // take the place of the two NOPs timestamps would need.
            w.option(KIND_SACK_PERMITTED, &[]);
        }
        if let Some(ts) = self.timestamps {
            // Start at 2 mod 4 so that TSval and TSecr are word-aligned.
            w.align(2);
            let [v0, v1, v2, v3] = ts.tsval.to_be_bytes();
            let [e0, e1, e2, e3] = ts.tsecr.to_be_bytes();
            w.option(KIND_TIMESTAMPS, &[v0, v1, v2, v3, e0, e1, e2, e3]);
        }
        if let Some(request) = self.ack_request {
            let [e0, e1] = ACK_REQUEST_EXID.to_be_bytes();
            w.align(0);
            match request {
                AckRequest::Supported => w.option(ACK_REQUEST_KIND, &[e0, e1]),
                AckRequest::SenderWindow(window) => {
                    let [w0, w1, w2, w3] = window.to_be_bytes();
                    w.option(ACK_REQUEST_KIND, &[e0, e1, w0, w1, w2, w3]);
                }
                AckRequest::Countdown(n) => {
                    let [n0, n1] = n.to_be_bytes();
                    // Six bytes ending at 2 mod 4: exactly where a following
                    // SACK option wants to start.
                    w.option(ACK_REQUEST_KIND, &[e0, e1, n0, n1]);
                }
            }
        }
        if let Some(nonce) = self.ack_nonce {
            let [e0, e1] = ACK_NONCE_EXID.to_be_bytes();
            w.align(0);
            match nonce {
                AckNonce::Permitted => w.option(ACK_REQUEST_KIND, &[e0, e1]),
                AckNonce::Nonce(n) => {
                    let [n0, n1] = n.to_be_bytes();
                    w.option(ACK_REQUEST_KIND, &[e0, e1, n0, n1]);
                }
            }
        }
        if self.checksum_omission {
            w.align(0);
            w.option(ACK_REQUEST_KIND, &CHECKSUM_OMISSION_EXID.to_be_bytes());
        }
        if let Some(echo) = self.nonce_echo {
            let [e0, e1] = NONCE_ECHO_EXID.to_be_bytes();
            let [n0, n1] = echo.to_be_bytes();
            w.align(0);
            match self.arrival_echo {
                // Six bytes from a word boundary end at 2 mod 4, where
                // SACK blocks want to start.
                None => w.option(ACK_REQUEST_KIND, &[e0, e1, n0, n1]),
                Some(arrival) => {
                    let [a0, a1] = arrival.to_be_bytes();
                    w.option(ACK_REQUEST_KIND, &[e0, e1, n0, n1, a0, a1]);
                }
            }
        }
        if !sack.is_empty() {
            // Start at 2 mod 4 so that the blocks are word-aligned. Written
            // by hand: smoltcp's `SackRange` holds only three blocks.
            w.align(2);
            w.put(&[KIND_SACK, (2 + 8 * sack.len()) as u8]);
            for (left, right) in sack {
                w.put(&left.0.to_be_bytes());
                w.put(&right.0.to_be_bytes());
            }
        }
        // EOL (zero) padding to a multiple of four.
        let len = w.pos.next_multiple_of(4);
        let pad = len - w.pos;
        fill_short(w.reserve(pad), KIND_EOL);
        len
    }

    /// Parses the option area of a TCP header (everything between the fixed
    /// 20 bytes and the data offset) into `self`, which starts out as
    /// `Options::default()` (on an error it holds what came before). The
    /// rules are in the [`Options`] docs.
    pub(super) fn parse_into(&mut self, bytes: &[u8]) -> Result<(), WireError> {
        let opts = self;
        let mut i = 0;
        // Aligned timestamps first (`NOP NOP TS`, what ackwise and most
        // stacks put on every segment after the SYN): taken in one step,
        // as the loop below would take them in three.
        if let Some(&[KIND_NOP, KIND_NOP, KIND_TIMESTAMPS, 10, ref body @ ..]) =
            bytes.first_chunk::<12>()
        {
            opts.timestamps = Some(Timestamps::from_body(body));
            i = 12;
        }
        while let Some(&kind) = bytes.get(i) {
            match kind {
                KIND_EOL => break,
                KIND_NOP => {
                    i += 1;
                    continue;
                }
                _ => {}
            }
            let Some(&len_byte) = bytes.get(i + 1) else {
                return Err(WireError::OptionOverrun { kind });
            };
            let len = usize::from(len_byte);
            let bad_len = WireError::BadOptionLength {
                kind,
                len: len_byte,
            };
            if len < 2 {
                return Err(bad_len);
            }
            if kind == KIND_SACK && (len - 2) % 8 == 0 && (len - 2) / 8 > MAX_SACK_BLOCKS_PARSED {
                return Err(WireError::TooManySackBlocks {
                    blocks: (len - 2) / 8,
                });
            }
            let Some(body) = bytes.get(i + 2..i + len) else {
                return Err(WireError::OptionOverrun { kind });
            };
            match kind {
                KIND_MSS => match *body {
                    [a, b] => opts.mss = Some(u16::from_be_bytes([a, b])),
                    _ => return Err(bad_len),
                },
                KIND_WINDOW_SCALE => match *body {
                    [shift] => opts.window_scale = Some(shift.min(MAX_WINDOW_SCALE)),
                    _ => return Err(bad_len),
                },
                KIND_SACK_PERMITTED => match *body {
                    [] => opts.sack_permitted = true,
                    _ => return Err(bad_len),
                },
                KIND_TIMESTAMPS => match body.first_chunk::<8>() {
                    Some(ts) if body.len() == 8 => {
                        opts.timestamps = Some(Timestamps::from_body(ts))
                    }
                    _ => return Err(bad_len),
                },
                KIND_SACK => {
                    if body.is_empty() || body.len() % 8 != 0 {
                        return Err(bad_len);
                    }
                    let mut sack = SackBlocks::new();
                    for block in body.chunks_exact(8) {
                        if let [a, b, c, d, e, f, g, h] = *block {
                            sack.push(
                                SeqNum(u32::from_be_bytes([a, b, c, d])),
                                SeqNum(u32::from_be_bytes([e, f, g, h])),
                            );
                        }
                    }
                    opts.sack = sack;
                }
                ACK_REQUEST_KIND => {
                    // Shorter than an ExID: some other experiment's (or
                    // nobody's) business, so skip it like an unknown option.
                    if let [x0, x1, ref rest @ ..] = *body {
                        match u16::from_be_bytes([x0, x1]) {
                            ACK_REQUEST_EXID => {
                                opts.ack_request = Some(match *rest {
                                    [] => AckRequest::Supported,
                                    [n0, n1] => AckRequest::Countdown(u16::from_be_bytes([n0, n1])),
                                    [w0, w1, w2, w3] => {
                                        AckRequest::SenderWindow(u32::from_be_bytes([
                                            w0, w1, w2, w3,
                                        ]))
                                    }
                                    _ => return Err(bad_len),
                                });
                            }
                            ACK_NONCE_EXID => {
                                opts.ack_nonce = Some(match *rest {
                                    [] => AckNonce::Permitted,
                                    [n0, n1] => AckNonce::Nonce(u16::from_be_bytes([n0, n1])),
                                    _ => return Err(bad_len),
                                });
                            }
                            NONCE_ECHO_EXID => match *rest {
                                [n0, n1] => opts.nonce_echo = Some(u16::from_be_bytes([n0, n1])),
                                [n0, n1, a0, a1] => {
                                    opts.nonce_echo = Some(u16::from_be_bytes([n0, n1]));
                                    opts.arrival_echo = Some(u16::from_be_bytes([a0, a1]));
                                }
                                _ => return Err(bad_len),
                            },
                            CHECKSUM_OMISSION_EXID => match *rest {
                                [] => opts.checksum_omission = true,
                                _ => return Err(bad_len),
                            },
                            _ => {}
                        }
                    }
                }
                // Unknown kinds (and kind 254) are skipped (RFC 9293 3.2).
                _ => {}
            }
            i += len;
        }
        Ok(())
    }
}

/// Whether alignment NOPs are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Packing {
    /// NOPs before options so that their fields are word-aligned.
    Aligned,
    /// No NOPs; used only when alignment would cost a SACK block.
    Tight,
}

/// How [`Options::emit`] will lay the options out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Plan {
    /// alignment or not
    pub(super) packing: Packing,
    /// SACK blocks written (a prefix of `Options::sack`)
    pub(super) sack_blocks: usize,
    /// padded length in bytes
    pub(super) len: usize,
}

/// Option writer that either writes into a buffer or only counts bytes.
struct Writer<'b> {
    out: Option<&'b mut [u8]>,
    pos: usize,
    packing: Packing,
}

/// Sets the bytes of `dst` (alignment NOPs or EOL padding, at most three)
/// to `byte`, one store each: a `fill` of a length unknown at compile time
/// is a call to `memset`, several times the cost for so few bytes.
fn fill_short(dst: Option<&mut [u8]>, byte: u8) {
    match dst {
        Some([a]) => *a = byte,
        Some([a, b]) => [*a, *b] = [byte; 2],
        Some([a, b, c]) => [*a, *b, *c] = [byte; 3],
        Some(longer) => longer.fill(byte),
        None => {}
    }
}

impl Writer<'_> {
    /// The `n` bytes from the current position, if they are being written
    /// and fit; the position moves past them either way. Every write below
    /// goes through one such range check (the layouts are laid out a few
    /// bytes at a time for every segment sent).
    fn reserve(&mut self, n: usize) -> Option<&mut [u8]> {
        let at = self.pos;
        self.pos += n;
        self.out.as_deref_mut()?.get_mut(at..at + n)
    }

    /// Appends raw bytes.
    fn put(&mut self, bytes: &[u8]) {
        if let Some(dst) = self.reserve(bytes.len()) {
            dst.copy_from_slice(bytes);
        }
    }

    /// Appends one option: kind, length (two more than `data`), data.
    fn option(&mut self, kind: u8, data: &[u8]) {
        // Options are at most 40 bytes, so the length fits a byte.
        let len = 2 + data.len();
        if let Some(dst) = self.reserve(len) {
            dst[0] = kind;
            dst[1] = len as u8;
            dst[2..].copy_from_slice(data);
        }
    }

    /// In the aligned layout, NOPs until the position is `residue` mod 4.
    fn align(&mut self, residue: usize) {
        if self.packing == Packing::Aligned {
            let nops = (residue + 4 - self.pos % 4) % 4;
            fill_short(self.reserve(nops), KIND_NOP);
        }
    }
}
