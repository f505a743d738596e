//! Bytes written by the application and not yet acknowledged.
//!
//! RFC 9293 section 3.3.1 describes the send sequence space: bytes below
//! SND.UNA are acknowledged and may be forgotten, bytes from SND.UNA up to
//! the last byte written must be kept for (re)transmission. [`SendBuffer`]
//! holds exactly that window, addressed by 64-bit stream offset so that the
//! 32-bit wrap-around stays in `wire/`.

use crate::buffer_limit::BufferLimit;
use alloc::collections::VecDeque;
use bytes::{Buf, Bytes, BytesMut};
use core::cell::Cell;

/// Size of the blocks that copied writes fill: large enough that a block
/// is allocated once per several dozen segments, small enough that an
/// acknowledged block goes back to the allocator soon.
const BLOCK_BYTES: usize = 64 * 1024;

/// Shared writes shorter than this are copied: a chunk per tiny write
/// would cost more to keep than the copy. It also bounds how many pieces
/// a run of the buffer spans (a few per 2 KiB: a shared chunk and the
/// copied bytes written before it), so a gathered send of a 64 KiB batch
/// stays far below the kernel's 1 024 I/O vector entries.
const MIN_SHARED_BYTES: usize = 2 * 1024;

/// Chunks at the end of the list that [`SendBuffer::slices`] checks one
/// by one before it searches the whole list.
const RECENT_CHUNKS: usize = 4;

/// A bounded byte queue addressed by stream offset (0 = first data byte).
///
/// The bytes are a list of chunks: blocks that [`write`](Self::write)
/// copies into, and buffers the application hands over whole with
/// [`write_shared`](Self::write_shared), which are kept by reference
/// (`Bytes`), not copied. A bulk sender that writes one buffer again and
/// again (a benchmark, a generator) or that reads each block from its
/// source into a fresh buffer then costs no copy here; the only copy left
/// is the one into the packet, or the kernel's where the payload is sent
/// in place (`Connection::poll_transmit_gather`).
#[derive(Debug)]
pub struct SendBuffer {
    /// Bytes from `start` up to the tail, in order, each with the stream
    /// offset of its first byte.
    chunks: VecDeque<(u64, Bytes)>,
    /// The block being filled by copied writes; its bytes follow the last
    /// chunk and end at `end()`.
    tail: BytesMut,
    /// Bytes held, in `chunks` and `tail`.
    len: usize,
    /// Logical capacity: the most bytes ever held.
    capacity: usize,
    /// What the application may fill now: `capacity`, or less while the
    /// buffer is autotuned (see `connection::autotune`).
    limit: BufferLimit,
    /// Stream offset of the first byte held.
    start: u64,
    /// Index of the chunk the last [`slices`](Self::slices) began in: a
    /// sender reads its buffer a segment at a time in stream order, so the
    /// next lookup usually lands in the same chunk or the next one (or,
    /// after acknowledged chunks left the front, one index lower), where
    /// the data sent is a window behind the end and a search of the whole
    /// list would be needed otherwise. A hint only; every use is checked.
    last_chunk: Cell<usize>,
}

impl SendBuffer {
    /// A buffer holding at most `capacity_bytes` unacknowledged bytes
    /// (the application's share of the RFC 9293 section 3.3.1 send space).
    pub fn new(capacity_bytes: usize) -> Self {
        SendBuffer {
            chunks: VecDeque::new(),
            tail: BytesMut::new(),
            len: 0,
            capacity: capacity_bytes,
            limit: BufferLimit::new(capacity_bytes),
            start: 0,
            last_chunk: Cell::new(0),
        }
    }

    /// The configured capacity in bytes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// What the application may fill now: the capacity, or less while
    /// autotuned.
    pub fn limit(&self) -> usize {
        self.limit.get()
    }

    /// The limit, to set at the start and raise later.
    pub fn limit_mut(&mut self) -> &mut BufferLimit {
        &mut self.limit
    }

    /// Appends as much of `data` as fits, copying it; returns the bytes
    /// taken.
    pub fn write(&mut self, data: &[u8]) -> usize {
        let n = data.len().min(self.free());
        let mut rest = &data[..n];
        while !rest.is_empty() {
            if self.tail.capacity() == self.tail.len() {
                self.seal_tail();
                self.tail = BytesMut::with_capacity(BLOCK_BYTES.min(self.capacity));
            }
            let take = rest.len().min(self.tail.capacity() - self.tail.len());
            self.tail.extend_from_slice(&rest[..take]);
            // Kept current in the loop: `seal_tail` reads `end()`.
            self.len += take;
            rest = &rest[take..];
        }
        n
    }

    /// Appends as much of `data` as fits without copying it (the buffer
    /// keeps a reference); returns the bytes taken. What is not taken is
    /// `data[n..]`, for a later call. Short buffers are copied instead.
    pub fn write_shared(&mut self, data: Bytes) -> usize {
        let n = data.len().min(self.free());
        if n < MIN_SHARED_BYTES {
            return self.write(&data[..n]);
        }
        self.seal_tail();
        self.chunks.push_back((self.end(), data.slice(..n)));
        self.len += n;
        n
    }

    /// Moves the tail's bytes into the chunk list, so that what follows
    /// can be appended after them; the tail keeps its unused room.
    fn seal_tail(&mut self) {
        if !self.tail.is_empty() {
            let at = self.end() - self.tail.len() as u64;
            self.chunks.push_back((at, self.tail.split().freeze()));
        }
    }

    /// Gives the storage back to the allocator when nothing is held; the
    /// next write allocates again. For a connection gone idle.
    pub fn release_if_empty(&mut self) {
        if self.len == 0 {
            self.chunks = VecDeque::new();
            self.tail = BytesMut::new();
        }
    }

    /// Room left, in bytes.
    pub fn free(&self) -> usize {
        self.limit.get().saturating_sub(self.len)
    }

    /// Bytes held (acknowledged ones are released).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Nothing held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stream offset of the first byte held (SND.UNA once every ACK has been
    /// applied with [`release_to`](Self::release_to)).
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Stream offset one past the last byte written.
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.len as u64)
    }

    /// Copies bytes from stream offset `offset` into `buf`; returns how many
    /// (fewer when `end()` is reached). An `offset` outside
    /// `start()..=end()` copies nothing: the caller asked for bytes that were
    /// already released or never written, and a segment builder should see
    /// an empty read rather than a panic.
    pub fn copy_out(&self, offset: u64, buf: &mut [u8]) -> usize {
        let Some(pieces) = self.slices(offset, buf.len()) else {
            return 0;
        };
        let mut n = 0;
        for piece in pieces {
            buf[n..n + piece.len()].copy_from_slice(piece);
            n += piece.len();
        }
        n
    }

    /// The bytes from stream offset `offset`, at most `len` of them (fewer
    /// when `end()` is reached), in place: one slice per chunk they span.
    /// `None` for an `offset` outside `start()..=end()`.
    pub fn slices(&self, offset: u64, len: usize) -> Option<Slices<'_>> {
        if offset < self.start || offset > self.end() {
            return None;
        }
        // In range, so the difference fits in `len` and therefore usize.
        let bytes = len.min((self.end() - offset) as usize);
        let tail_at = self.end() - self.tail.len() as u64;
        // New data, the common case, is in the tail or, after shared
        // writes, in one of the last chunks: look there before searching
        // a list that holds a whole window of them.
        let chunk = if offset >= tail_at {
            self.chunks.len()
        } else if let Some(near) = self.near_last_chunk(offset, tail_at) {
            near
        } else {
            // The last chunk starting at or before `offset`; the first
            // starts at `start`, so there is one.
            let recent = self
                .chunks
                .iter()
                .rev()
                .take(RECENT_CHUNKS)
                .position(|&(at, _)| at <= offset);
            match recent {
                Some(back) => self.chunks.len() - 1 - back,
                None => self.chunks.partition_point(|&(at, _)| at <= offset) - 1,
            }
        };
        self.last_chunk.set(chunk);
        let at = self.chunks.get(chunk).map_or(tail_at, |&(at, _)| at);
        Some(Slices {
            buffer: self,
            chunk,
            skip: (offset - at) as usize,
            left: bytes,
        })
    }

    /// The chunk holding `offset` (below `tail_at`, the tail's first
    /// offset) if it is the one the last lookup began in or a neighbour.
    fn near_last_chunk(&self, offset: u64, tail_at: u64) -> Option<usize> {
        let holds = |i: usize| {
            let &(at, _) = self.chunks.get(i)?;
            let next = self.chunks.get(i + 1).map_or(tail_at, |&(at, _)| at);
            (at <= offset && offset < next).then_some(i)
        };
        let last = self.last_chunk.get();
        holds(last)
            .or_else(|| holds(last + 1))
            .or_else(|| holds(last.checked_sub(1)?))
    }

    /// Drops bytes below stream offset `offset` because they were
    /// cumulatively acknowledged (RFC 9293 section 3.10.7.4: SND.UNA
    /// advances). Offsets at or below `start()` do nothing; offsets beyond
    /// `end()` release everything and leave `start() == end()`.
    pub fn release_to(&mut self, offset: u64) {
        if offset <= self.start {
            return;
        }
        let n = (offset - self.start).min(self.len as u64) as usize;
        let to = self.start + n as u64;
        while let Some((at, chunk)) = self.chunks.front_mut() {
            let chunk_end = *at + chunk.len() as u64;
            if chunk_end <= to {
                self.chunks.pop_front();
            } else {
                if *at < to {
                    chunk.advance((to - *at) as usize);
                    *at = to;
                }
                break;
            }
        }
        let tail_at = self.end() - self.tail.len() as u64;
        if tail_at < to {
            // The tail's block stays allocated for the writes to come.
            self.tail.advance((to - tail_at) as usize);
        }
        self.len -= n;
        self.start = to;
    }
}

/// The pieces of memory that hold a run of the send buffer's bytes, in
/// order (see [`SendBuffer::slices`]).
#[derive(Debug, Clone)]
pub struct Slices<'a> {
    buffer: &'a SendBuffer,
    /// Index into the chunks, or their count for the tail.
    chunk: usize,
    /// Bytes of the current piece before the run.
    skip: usize,
    /// Bytes of the run not yet returned.
    left: usize,
}

impl Slices<'_> {
    /// Bytes of the run not yet returned.
    pub fn bytes(&self) -> usize {
        self.left
    }
}

impl<'a> Iterator for Slices<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.left == 0 {
            return None;
        }
        let buffer = self.buffer;
        let piece: &'a [u8] = match buffer.chunks.get(self.chunk) {
            Some((_, chunk)) => chunk,
            None => &buffer.tail,
        };
        let piece = &piece[self.skip..];
        let take = piece.len().min(self.left);
        self.chunk += 1;
        self.skip = 0;
        self.left -= take;
        Some(&piece[..take])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::RngCore;

    fn read(b: &SendBuffer, offset: u64, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        let n = b.copy_out(offset, &mut out);
        out.truncate(n);
        out
    }

    #[test]
    fn write_takes_only_what_fits() {
        let mut b = SendBuffer::new(10);
        assert!(b.is_empty());
        assert_eq!(b.write(b"hello"), 5);
        assert_eq!(b.write(b"world!!"), 5);
        assert_eq!(b.free(), 0);
        assert_eq!(b.len(), 10);
        assert_eq!(b.write(b"x"), 0);
        assert_eq!((b.start(), b.end()), (0, 10));
        assert_eq!(read(&b, 0, 100), b"helloworld");
    }

    #[test]
    fn copy_out_respects_bounds() {
        let mut b = SendBuffer::new(16);
        b.write(b"abcdefgh");
        b.release_to(3);
        assert_eq!(read(&b, 3, 2), b"de");
        assert_eq!(read(&b, 6, 10), b"gh");
        // end() itself is valid and empty; outside the window gives nothing.
        assert_eq!(read(&b, 8, 4), b"");
        assert_eq!(read(&b, 9, 4), b"");
        assert_eq!(read(&b, 2, 4), b"");
        assert_eq!(read(&b, u64::MAX, 4), b"");
        assert_eq!(b.copy_out(4, &mut []), 0);
    }

    #[test]
    fn release_clamps_and_ignores_old_offsets() {
        let mut b = SendBuffer::new(8);
        b.write(b"abcdef");
        b.release_to(2);
        b.release_to(1);
        assert_eq!((b.start(), b.len()), (2, 4));
        b.release_to(100);
        assert_eq!((b.start(), b.end(), b.len()), (6, 6, 0));
        assert_eq!(b.free(), 8);
        // Offsets continue where they left off.
        b.write(b"xy");
        assert_eq!((b.start(), b.end()), (6, 8));
        assert_eq!(read(&b, 6, 8), b"xy");
    }

    #[test]
    fn zero_capacity_takes_nothing() {
        let mut b = SendBuffer::new(0);
        assert_eq!(b.write(b"abc"), 0);
        assert_eq!(b.end(), 0);
        b.release_to(5);
        assert_eq!(b.start(), 0);
    }

    /// Byte at stream offset `o` is `(o + 1) mod 256` in these tests.
    fn pattern(from: u64, n: usize) -> Vec<u8> {
        (0..n as u64).map(|i| (from + i + 1) as u8).collect()
    }

    #[test]
    fn copied_and_shared_writes_read_back_in_order_across_chunks() {
        let cap = 5 * BLOCK_BYTES;
        let mut b = SendBuffer::new(cap);
        let mut written = 0u64;
        let mut rng = crate::testing::TestRng::seed_from_u64(7);
        for round in 0..400u64 {
            // Writes of every kind and size: copied, shared, tiny shared
            // (copied), crossing block ends.
            let n = (rng.next_u64() % (BLOCK_BYTES as u64 + 3000)) as usize;
            let data = pattern(written, n);
            let took = if round % 3 == 0 {
                b.write(&data)
            } else {
                b.write_shared(Bytes::from(data))
            };
            assert!(took <= n);
            written += took as u64;
            assert_eq!(b.end(), written);
            assert_eq!(b.len() as u64, b.end() - b.start());
            // Reads from anywhere held, of any length, see the pattern.
            for _ in 0..4 {
                let from = b.start() + rng.next_u64() % (b.len() as u64 + 1);
                let want = (rng.next_u64() % 70_000) as usize;
                let got = read(&b, from, want);
                assert_eq!(got.len() as u64, (want as u64).min(b.end() - from));
                assert_eq!(got, pattern(from, got.len()), "round {round} from {from}");
                let pieces = b.slices(from, want).unwrap();
                assert_eq!(pieces.bytes(), got.len());
                assert!(pieces.clone().count() <= 3 * (got.len() / MIN_SHARED_BYTES + 2));
                assert_eq!(pieces.flatten().count(), got.len());
            }
            // Release a random part, sometimes into the tail.
            let release = rng.next_u64() % (b.len() as u64 + 1);
            b.release_to(b.start() + release);
            assert!(b.len() <= cap);
        }
    }

    #[test]
    fn reads_in_stream_order_find_their_chunks_while_the_front_is_released() {
        // A sender's pattern: a segment at a time in order, far behind the
        // end, while acknowledged chunks leave the front, and now and then
        // a resend of the first bytes: lookups near the last one's chunk,
        // and ones far from it.
        let mut b = SendBuffer::new(64 * BLOCK_BYTES);
        let mut written = 0u64;
        let mut rng = crate::testing::TestRng::seed_from_u64(11);
        while written < 40 * BLOCK_BYTES as u64 {
            let n = MIN_SHARED_BYTES + (rng.next_u64() % 70_000) as usize;
            let data = pattern(written, n);
            let took = if rng.next_u64().is_multiple_of(2) {
                b.write(&data)
            } else {
                b.write_shared(Bytes::from(data))
            };
            written += took as u64;
        }
        let mut sent = b.start();
        while sent < b.end() {
            let got = read(&b, sent, 1448);
            assert_eq!(got, pattern(sent, got.len()), "at {sent}");
            sent += got.len() as u64;
            if rng.next_u64().is_multiple_of(8) {
                let acked = b.start() + rng.next_u64() % (sent - b.start() + 1);
                b.release_to(acked);
            }
            if rng.next_u64().is_multiple_of(50) {
                let from = b.start();
                let got = read(&b, from, 1448);
                assert_eq!(got, pattern(from, got.len()), "resend at {from}");
            }
        }
    }

    #[test]
    fn a_shared_write_takes_only_what_fits_and_keeps_no_copy() {
        let mut b = SendBuffer::new(3 * BLOCK_BYTES);
        let data = Bytes::from(pattern(0, 4 * BLOCK_BYTES));
        let took = b.write_shared(data.clone());
        assert_eq!(took, 3 * BLOCK_BYTES);
        assert_eq!(b.free(), 0);
        assert_eq!(b.write_shared(data.slice(took..)), 0);
        // The chunk is the caller's memory, not a copy of it.
        let first = b.slices(0, 10).unwrap().next().unwrap();
        assert_eq!(first.as_ptr(), data.as_ptr());
        b.release_to(100);
        let first = b.slices(100, 10).unwrap().next().unwrap();
        assert_eq!(first.as_ptr(), data[100..].as_ptr());
    }

    #[test]
    fn a_run_spanning_chunks_comes_in_pieces() {
        let mut b = SendBuffer::new(1 << 20);
        b.write(&pattern(0, 100));
        b.write_shared(Bytes::from(pattern(100, 4000)));
        b.write(&pattern(4100, 100));
        let pieces: Vec<usize> = b.slices(50, 4100).unwrap().map(<[u8]>::len).collect();
        assert_eq!(pieces, [50, 4000, 50]);
        assert_eq!(read(&b, 50, 4100), pattern(50, 4100));
    }

    #[test]
    fn released_blocks_are_freed_and_an_idle_buffer_holds_nothing() {
        let mut b = SendBuffer::new(1 << 20);
        for _ in 0..10 {
            b.write(&[7; BLOCK_BYTES]);
        }
        b.release_to(9 * BLOCK_BYTES as u64 + 1);
        assert_eq!(b.chunks.len(), 0, "every sealed block released");
        assert_eq!(b.len(), BLOCK_BYTES - 1);
        b.release_to(b.end());
        b.release_if_empty();
        assert_eq!(b.tail.capacity(), 0);
        assert_eq!(b.write(b"ab"), 2);
        assert_eq!(read(&b, 10 * BLOCK_BYTES as u64, 5), b"ab");
    }
}
