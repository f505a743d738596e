//! Reassembly of in-order and out-of-order data.
//!
//! Received bytes are copied into one ring of at most `capacity` bytes
//! (unless held by reference, below). The
//! byte at stream offset `o` sits at ring index `(o - base) % len`; because
//! the receive window (RFC 9293 section 3.8.6) never extends past
//! `read offset + capacity`, every acceptable offset maps to a distinct slot,
//! so out-of-order bytes are written straight to their final place and
//! become readable without any copy once the hole below them is filled.
//! Whenever the ring holds nothing, `base` moves up to the next expected
//! byte, so an application that reads as data arrives keeps reusing the
//! ring's first slots (which stay in cache) instead of sweeping the whole
//! ring.
//!
//! In-order data may also be held by reference, without a copy
//! ([`Reassembly::insert_shared`]): a segment that arrives in order while
//! the ring holds nothing (no unread ring bytes, no out-of-order data)
//! joins a queue of shared chunks in front of the ring, and the ring then
//! starts above it. A receiver whose datagrams land in buffers of their
//! own (the UDP endpoint) so copies each byte once, to the application,
//! as a kernel TCP receiver does, and holds no ring at all while nothing
//! is lost. Anything else (a hole, data behind ring bytes) is copied into
//! the ring as before, so the chunks never interleave with ring data.
//!
//! Which out-of-order bytes are held is tracked as a short sorted list of
//! disjoint, non-adjacent ranges above `RCV.NXT`. The list is bounded by
//! `max_ranges` and grows with the ranges actually held: the bound is a
//! receive window's worth of segments (thousands), and reserving that up
//! front cost every connection a few hundred KiB it almost never uses (a
//! connection gone idle gives what it grew back, with the ring:
//! [`Reassembly::release_if_drained`]). The same list yields the SACK
//! blocks of RFC 2018.
//!
//! Offsets are 64-bit stream offsets (0 = first data byte); sequence-number
//! wrap-around and FIN are handled by the connection.

use crate::buffer_limit::BufferLimit;
use alloc::collections::VecDeque;
use alloc::{vec, vec::Vec};
use bytes::Bytes;

/// Result of inserting one segment's payload with [`Reassembly::insert`].
///
/// The flags feed the ACK policy (RFC 5681 section 4.2 lists out-of-order
/// arrivals and gap fills as reasons for an immediate ACK).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InsertOutcome {
    /// `RCV.NXT` moved forward by this many bytes, including queued
    /// out-of-order data that this segment made contiguous.
    pub advanced: u64,
    /// Bytes of this segment that were not held before and are held now.
    pub new_bytes: u64,
    /// The segment started above `RCV.NXT`, i.e. with a hole before it.
    pub out_of_order: bool,
    /// Out-of-order data was held and this segment filled all or part of a
    /// hole below it (RFC 5681 section 4.2, second immediate-ACK case).
    pub filled_gap: bool,
    /// The segment carried bytes, none of them new, and nothing was refused:
    /// a retransmission of data already held.
    pub duplicate: bool,
    /// Some new bytes were refused, because they lay beyond the receive
    /// window or because holding them would exceed the out-of-order range
    /// limit. The sender will retransmit them.
    pub dropped: bool,
}

/// One held out-of-order range `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Range {
    start: u64,
    end: u64,
    /// Value of the change counter when a segment last touched this range;
    /// orders SACK blocks by recency (RFC 2018 section 4).
    stamp: u64,
}

/// In-order delivery buffer with a bounded out-of-order store.
///
/// Invariants: `read_offset <= next <= read_offset + capacity`; every range
/// satisfies `next < start < end <= read_offset + capacity`; ranges are
/// sorted, disjoint and separated by at least one missing byte.
#[derive(Debug)]
pub struct Reassembly {
    /// The ring: empty until the first byte arrives, then as long as the
    /// data held so far needed (see `reserve_to`), at most `capacity`, so
    /// that a connection that never receives data (a half-open one, a pure
    /// sender) holds no receive memory and one with a small window little.
    buf: Vec<u8>,
    /// Size of the ring in bytes.
    capacity: usize,
    /// The receive window offered is `limit - readable`; the capacity
    /// unless the window is autotuned (see `connection::autotune`).
    limit: BufferLimit,
    /// Stream offset that ring slot 0 stands for (modulo the ring's
    /// length); at most the ring's floor (`read_offset + chunk_bytes`),
    /// moved up only while the ring holds nothing.
    base: u64,
    /// In-order data held by reference, from `read_offset` on, in order;
    /// the ring holds only offsets from `read_offset + chunk_bytes` up.
    chunks: VecDeque<Bytes>,
    /// Bytes in `chunks`.
    chunk_bytes: usize,
    /// Stream offset of the first byte not yet read by the application.
    read_offset: u64,
    /// `RCV.NXT` as a stream offset: one past the last in-order byte.
    next: u64,
    /// Held out-of-order ranges, sorted by start.
    ranges: Vec<Range>,
    max_ranges: usize,
    /// One past the highest offset ever stored.
    highest: u64,
    /// Source of [`Range::stamp`] values; strictly increasing.
    change_counter: u64,
    /// The latest out-of-order changes, newest first, as (stamp, start of
    /// the range it left): the SACK blocks' order without a pass over
    /// every range. An entry whose range has since been merged or
    /// delivered no longer matches a range and is skipped; every range not
    /// listed was changed before all listed ones.
    recent: [(u64, u64); RECENT_CHANGES],
    /// Entries in use in `recent`.
    recent_len: usize,
}

/// Out-of-order changes remembered for the SACK blocks' order: more than
/// the four blocks an ACK can carry, so that a few merged or delivered
/// ranges among them rarely leave too few.
const RECENT_CHANGES: usize = 8;

impl Reassembly {
    /// A buffer of `capacity_bytes` bytes that holds at most `max_ranges`
    /// separate out-of-order ranges (e.g. 64).
    ///
    /// `max_ranges` bounds the bookkeeping a peer can force on us by
    /// sending many small scattered segments. Since two ranges need at least
    /// one missing byte between them, no more than `capacity / 2 + 1` can
    /// ever exist; the limit is clamped to that so an absurd value cannot
    /// reserve absurd memory.
    pub fn new(capacity_bytes: usize, max_ranges: usize) -> Self {
        let max_ranges = max_ranges.min(capacity_bytes / 2 + 1);
        Reassembly {
            buf: Vec::new(),
            capacity: capacity_bytes,
            limit: BufferLimit::new(capacity_bytes),
            base: 0,
            chunks: VecDeque::new(),
            chunk_bytes: 0,
            read_offset: 0,
            next: 0,
            ranges: Vec::new(),
            max_ranges,
            highest: 0,
            change_counter: 0,
            recent: [(0, 0); RECENT_CHANGES],
            recent_len: 0,
        }
    }

    /// `RCV.NXT` (RFC 9293 section 3.3.1) as a stream offset: every byte
    /// below it has been received.
    pub fn next_offset(&self) -> u64 {
        self.next
    }

    /// Total size of the ring in bytes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// What the receive window is offered out of: in-order data waiting
    /// for the application plus the window (the capacity unless a
    /// receiver that grows its window with what the application reads
    /// set it lower through [`limit_mut`](Self::limit_mut)).
    pub fn limit(&self) -> usize {
        self.limit.get()
    }

    /// The limit, to set at the start and raise later.
    pub fn limit_mut(&mut self) -> &mut BufferLimit {
        &mut self.limit
    }

    /// Stream offset of the first byte the application has not read.
    pub fn read_offset(&self) -> u64 {
        self.read_offset
    }

    /// The effective limit on held out-of-order ranges (after clamping).
    pub fn max_ranges(&self) -> usize {
        self.max_ranges
    }

    /// Number of out-of-order ranges currently held.
    pub fn range_count(&self) -> usize {
        self.ranges.len()
    }

    /// In-order bytes waiting for the application.
    pub fn readable(&self) -> usize {
        // Bounded by the capacity, so the conversion cannot fail.
        usize::try_from(self.next - self.read_offset).unwrap_or(usize::MAX)
    }

    /// Bytes acceptable beyond [`next_offset`](Self::next_offset): the
    /// receive window `RCV.WND` (RFC 9293 section 3.8.6), `limit -
    /// readable`. Out-of-order data held inside the window does not shrink
    /// it, because that data already occupies its final slot. (Data is
    /// only ever accepted inside a window offered, so `readable` never
    /// passes the limit.)
    pub fn window(&self) -> usize {
        self.limit.get().saturating_sub(self.readable())
    }

    /// One past the last offset the window accepts.
    fn window_end(&self) -> u64 {
        let window = u64::try_from(self.window()).unwrap_or(u64::MAX);
        self.next.saturating_add(window)
    }

    /// Out-of-order data is held above a hole (RFC 5681 section 4.2: while
    /// holes exist, every segment should be acknowledged at once).
    pub fn has_gaps(&self) -> bool {
        !self.ranges.is_empty()
    }

    /// One past the highest offset ever stored (in order or not); equals
    /// [`next_offset`](Self::next_offset) when nothing was ever held out of
    /// order.
    pub fn highest_received(&self) -> u64 {
        self.highest
    }

    /// Gives the ring back to the allocator when nothing is held (every
    /// byte read, no out-of-order data); it is allocated again, small,
    /// when data next arrives. For a connection gone idle.
    pub fn release_if_drained(&mut self) {
        if self.is_drained() {
            self.buf = Vec::new();
            self.chunks = VecDeque::new();
            self.ranges = Vec::new();
            self.recent_len = 0;
        }
    }

    /// The held out-of-order range `[start, end)` that contains the byte
    /// at stream offset `offset`, if one does.
    pub fn held_range(&self, offset: u64) -> Option<(u64, u64)> {
        self.range_holding(offset).map(|r| (r.start, r.end))
    }

    /// The held out-of-order range containing stream offset `offset`.
    fn range_holding(&self, offset: u64) -> Option<&Range> {
        let i = self.ranges.partition_point(|r| r.end <= offset);
        self.ranges.get(i).filter(|r| r.start <= offset)
    }

    /// Nothing is held: every byte received was read and no out-of-order
    /// data waits.
    fn is_drained(&self) -> bool {
        self.readable() == 0 && self.ranges.is_empty()
    }

    /// The lowest offset the ring may hold: the end of the shared chunks.
    fn ring_floor(&self) -> u64 {
        self.read_offset + self.chunk_bytes as u64
    }

    /// The ring holds nothing: no unread bytes above the chunks and no
    /// out-of-order data.
    fn ring_empty(&self) -> bool {
        self.next == self.ring_floor() && self.ranges.is_empty()
    }

    /// [`insert`](Self::insert) for a payload the caller can hand over by
    /// reference: an in-order payload that arrives while the ring holds
    /// nothing is kept as it is (its window-trimmed part), anything else is
    /// copied into the ring. Either way the outcome, and every later read,
    /// is what `insert` would give.
    pub fn insert_shared(&mut self, offset: u64, data: &Bytes) -> InsertOutcome {
        let window_end = self.window_end();
        let end = offset.saturating_add(data.len() as u64);
        if offset > self.next || end <= self.next || !self.ring_empty() {
            return self.insert(offset, data);
        }
        let start = self.next;
        let kept_end = end.min(window_end);
        let outcome = InsertOutcome {
            advanced: kept_end.saturating_sub(start),
            new_bytes: kept_end.saturating_sub(start),
            dropped: end > window_end,
            ..InsertOutcome::default()
        };
        if kept_end <= start {
            return outcome;
        }
        let from = slice_index(start - offset);
        let to = slice_index(kept_end - offset);
        self.chunks.push_back(data.slice(from..to));
        self.chunk_bytes += to - from;
        self.next = kept_end;
        self.highest = self.highest.max(kept_end);
        outcome
    }

    /// Stores a segment's payload that starts at stream offset `offset`.
    ///
    /// The payload is trimmed to `[next_offset, next_offset + window)`
    /// (RFC 9293 section 3.10.7.4: bytes below `RCV.NXT` are old, bytes past
    /// the window are not acceptable). Only bytes not already held are
    /// written, so a peer resending different data for a held offset cannot
    /// change what was accepted. A segment that would need a new
    /// out-of-order range while `max_ranges` are held is refused as a whole
    /// (`dropped`); extending or merging existing ranges is always allowed.
    ///
    /// An empty payload changes nothing and only reports `out_of_order`.
    pub fn insert(&mut self, offset: u64, data: &[u8]) -> InsertOutcome {
        let mut outcome = InsertOutcome {
            out_of_order: offset > self.next,
            ..InsertOutcome::default()
        };
        if data.is_empty() {
            return outcome;
        }
        let len = u64::try_from(data.len()).unwrap_or(u64::MAX);
        let end = offset.saturating_add(len);
        let window_end = self.window_end();
        // Nothing is ever held at or past the window's edge, so whatever the
        // segment carries there is new data we have to refuse.
        outcome.dropped = end > window_end;
        let start = offset.max(self.next);
        let end = end.min(window_end);
        if start >= end {
            outcome.duplicate = !outcome.dropped;
            return outcome;
        }

        // Ranges touching [start, end], adjacency included, are
        // ranges[first..past]: they merge with the segment.
        let first = self.ranges.partition_point(|r| r.end < start);
        let past = self.ranges.partition_point(|r| r.start <= end);
        let in_order = start == self.next;
        if !in_order && first == past && self.ranges.len() >= self.max_ranges {
            tracing::trace!(
                offset,
                len,
                ranges = self.ranges.len(),
                "out-of-order segment refused: range limit reached"
            );
            outcome.dropped = true;
            return outcome;
        }

        if self.ring_empty() {
            self.base = self.ring_floor();
        }
        self.reserve_to(end);
        let top_start = self.ranges.last().map(|r| r.start);
        let Reassembly {
            buf, ranges, base, ..
        } = self;
        let mut cursor = start;
        let mut store = |from: u64, to: u64| {
            let src = &data[slice_index(from - offset)..slice_index(to - offset)];
            write_ring(buf, from - *base, src);
            outcome.new_bytes += to - from;
            // A new byte below the highest held range lies in a hole.
            if top_start.is_some_and(|top| from < top) {
                outcome.filled_gap = true;
            }
        };
        for r in &ranges[first..past] {
            if r.start > cursor {
                store(cursor, r.start);
            }
            cursor = cursor.max(r.end);
        }
        if cursor < end {
            store(cursor, end);
        }

        if in_order {
            let old_next = self.next;
            self.next = match past.checked_sub(1) {
                Some(last) => end.max(self.ranges[last].end),
                None => end,
            };
            self.ranges.drain(..past);
            outcome.advanced = self.next - old_next;
        } else {
            self.change_counter = self.change_counter.wrapping_add(1);
            let stamp = self.change_counter;
            let changed = if first < past {
                let merged = Range {
                    start: start.min(self.ranges[first].start),
                    end: end.max(self.ranges[past - 1].end),
                    stamp,
                };
                self.ranges[first] = merged;
                self.ranges.drain(first + 1..past);
                merged
            } else {
                // The limit was checked above, so the list stays within
                // max_ranges entries.
                let new = Range { start, end, stamp };
                self.ranges.insert(first, new);
                new
            };
            self.note_change(changed);
        }
        self.highest = self.highest.max(end);
        outcome.duplicate = outcome.new_bytes == 0 && !outcome.dropped;
        outcome
    }

    /// Copies in-order bytes to the application; returns how many.
    ///
    /// Reading frees ring space, which opens the window by as much.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let mut done = 0;
        while let Some(chunk) = self.take_chunk(buf.len() - done) {
            buf[done..done + chunk.len()].copy_from_slice(&chunk);
            done += chunk.len();
        }
        let buf = &mut buf[done..];
        let n = buf.len().min(self.readable());
        if n == 0 {
            return done;
        }
        let at = ring_index(self.buf.len(), self.read_offset - self.base);
        let first = n.min(self.buf.len() - at);
        buf[..first].copy_from_slice(&self.buf[at..at + first]);
        buf[first..n].copy_from_slice(&self.buf[..n - first]);
        self.read_offset += n as u64;
        done + n
    }

    /// Takes the next in-order bytes, at most `max`, as one buffer: a
    /// shared chunk (or its front) as it is, ring bytes copied into a new
    /// buffer. `None` when nothing is readable or `max` is 0.
    pub fn read_chunk(&mut self, max: usize) -> Option<Bytes> {
        if !self.chunks.is_empty() {
            return self.take_chunk(max);
        }
        let n = self.readable().min(max);
        if n == 0 {
            return None;
        }
        let mut copy = vec![0; n];
        let read = self.read(&mut copy);
        debug_assert_eq!(read, n);
        Some(Bytes::from(copy))
    }

    /// Takes up to `max` bytes off the front shared chunk, if there is one
    /// and `max` is not 0: the next in-order bytes, when they are held by
    /// reference (chunks come before the ring's bytes).
    pub fn take_chunk(&mut self, max: usize) -> Option<Bytes> {
        let front = self.chunks.front_mut()?;
        let n = front.len().min(max);
        if n == 0 {
            return None;
        }
        let chunk = if n == front.len() {
            self.chunks.pop_front()?
        } else {
            front.split_to(n)
        };
        self.chunk_bytes -= n;
        self.read_offset += n as u64;
        Some(chunk)
    }

    /// Fills `out` with SACK blocks `[left, right)` in stream offsets and
    /// returns how many were written (at most `out.len()`).
    ///
    /// Order follows RFC 2018 section 4: the first block contains the most
    /// recently received segment (unless that segment advanced `RCV.NXT`,
    /// in which case it is in no block), and the others follow in order of
    /// their most recent change, so blocks reported first in earlier ACKs
    /// are repeated. Each held range is reported at most once. Does not
    /// allocate.
    pub fn sack_blocks(&self, out: &mut [(u64, u64)]) -> usize {
        let mut below = u64::MAX;
        let mut written = 0;
        for &(stamp, start) in &self.recent[..self.recent_len] {
            if written == out.len() {
                return written;
            }
            below = stamp;
            if let Some(r) = self
                .range_holding(start)
                .filter(|r| r.start == start && r.stamp == stamp)
            {
                out[written] = (r.start, r.end);
                written += 1;
            }
        }
        if written == self.ranges.len() {
            return written;
        }
        // Too few listed changes were still ranges: the rest by descending
        // stamp, below every listed one, with a pass over the ranges per
        // block (rare: only after merges or deliveries of recent ranges).
        for slot in out[written..].iter_mut() {
            let Some(r) = self
                .ranges
                .iter()
                .filter(|r| r.stamp < below)
                .max_by_key(|r| r.stamp)
            else {
                break;
            };
            *slot = (r.start, r.end);
            below = r.stamp;
            written += 1;
        }
        written
    }

    /// Puts `changed`, the range an out-of-order segment just created or
    /// extended, first in `recent`; entries of ranges it swallowed go.
    fn note_change(&mut self, changed: Range) {
        let mut kept = [(changed.stamp, changed.start); RECENT_CHANGES];
        let mut n = 1;
        for &(stamp, start) in &self.recent[..self.recent_len] {
            if n == RECENT_CHANGES {
                break;
            }
            if !(changed.start..changed.end).contains(&start) {
                kept[n] = (stamp, start);
                n += 1;
            }
        }
        self.recent = kept;
        self.recent_len = n;
    }

    /// Grows the ring so that it holds every offset from the first unread
    /// byte up to `end` (at most the capacity beyond it, which the window
    /// guarantees). The ring starts at [`INITIAL_RING_BYTES`] (or the
    /// capacity, if smaller) and doubles, so a connection holds memory for
    /// the most data it ever had between the application and the window's
    /// edge, not its whole receive buffer: a 16 MiB buffer behind a 2 MB
    /// window costs 2-4 MiB. Growth copies the held span to its slots in
    /// the larger ring (amortized once per byte of the largest window).
    fn reserve_to(&mut self, end: u64) {
        let floor = self.ring_floor();
        let need = usize::try_from(end.saturating_sub(floor)).unwrap_or(usize::MAX);
        if need <= self.buf.len() {
            return;
        }
        let mut len = self
            .buf
            .len()
            .max(INITIAL_RING_BYTES.min(self.capacity))
            .max(1);
        while len < need {
            len = len.saturating_mul(2).min(self.capacity.max(need));
        }
        let mut grown = vec![0; len];
        let old = self.buf.len();
        let held_end = self.highest.max(self.next);
        let mut at = floor;
        while old > 0 && at < held_end {
            let idx = ring_index(old, at - self.base);
            let n = slice_index(held_end - at).min(old - idx);
            write_ring(&mut grown, at - self.base, &self.buf[idx..idx + n]);
            at += n as u64;
        }
        self.buf = grown;
    }

    /// The byte held at stream offset `offset` (tests only).
    #[cfg(test)]
    fn byte_at(&self, offset: u64) -> u8 {
        self.buf[ring_index(self.buf.len(), offset - self.base)]
    }
}

/// The ring's first size: it doubles from here as the window needs. An
/// application that reads data as it arrives never needs more than its
/// largest out-of-order span (the ring restarts at its first slot whenever
/// it is empty), so this stays small: a thousand emulated flows hold a
/// thousand rings.
const INITIAL_RING_BYTES: usize = 8 * 1024;

/// Ring slot of the byte `offset` bytes past the ring's base; `capacity`
/// must be non-zero.
fn ring_index(capacity: usize, offset: u64) -> usize {
    let capacity = capacity as u64;
    // The ring restarts at its base whenever it empties, so an
    // application that keeps up reads and writes below `capacity`: no
    // 64-bit division there (tens of cycles, twice per segment). Either
    // way the slot is below `capacity`, so it fits in usize.
    if offset < capacity {
        offset as usize
    } else {
        (offset % capacity) as usize
    }
}

/// Converts an in-segment distance to a slice index. The distance is at
/// most the slice length, so it always fits.
fn slice_index(distance: u64) -> usize {
    usize::try_from(distance).unwrap_or(usize::MAX)
}

/// Writes `src` into the ring starting at the slot `at` bytes past the
/// ring's base, wrapping around the end. `src` is never longer than the ring because it
/// lies within the receive window.
fn write_ring(ring: &mut [u8], at: u64, src: &[u8]) {
    if src.is_empty() || ring.is_empty() {
        return;
    }
    let idx = ring_index(ring.len(), at);
    let first = src.len().min(ring.len() - idx);
    ring[idx..idx + first].copy_from_slice(&src[..first]);
    let rest = (src.len() - first).min(idx);
    ring[..rest].copy_from_slice(&src[first..first + rest]);
}

#[cfg(test)]
mod tests;
