//! Bytes written by the application and not yet acknowledged.
//!
//! RFC 9293 section 3.3.1 describes the send sequence space: bytes below
//! SND.UNA are acknowledged and may be forgotten, bytes from SND.UNA up to
//! the last byte written must be kept for (re)transmission. [`SendBuffer`]
//! holds exactly that window, addressed by 64-bit stream offset so that the
//! 32-bit wrap-around stays in `wire/`.

use crate::buffer_limit::BufferLimit;
use std::collections::VecDeque;

/// A bounded byte queue addressed by stream offset (0 = first data byte).
///
/// The storage is a ring (`VecDeque<u8>`); it grows on demand up to
/// `capacity_bytes` and is never reallocated after that, so a busy
/// connection does not allocate per call.
#[derive(Debug)]
pub struct SendBuffer {
    /// Bytes in `start..start + buf.len()`.
    buf: VecDeque<u8>,
    /// Logical capacity; `buf.capacity()` may be rounded up by the allocator
    /// and must not be used as the limit.
    capacity: usize,
    /// What the application may fill now: `capacity`, or less while the
    /// buffer is autotuned (see `connection::autotune`).
    limit: BufferLimit,
    /// Stream offset of `buf[0]`.
    start: u64,
}

impl SendBuffer {
    /// A buffer holding at most `capacity_bytes` unacknowledged bytes
    /// (the application's share of the RFC 9293 section 3.3.1 send space).
    pub fn new(capacity_bytes: usize) -> Self {
        SendBuffer {
            buf: VecDeque::new(),
            capacity: capacity_bytes,
            limit: BufferLimit::new(capacity_bytes),
            start: 0,
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

    /// Appends as much of `data` as fits; returns the bytes taken.
    pub fn write(&mut self, data: &[u8]) -> usize {
        let n = data.len().min(self.free());
        self.buf.extend(&data[..n]);
        n
    }

    /// Gives the storage back to the allocator when nothing is held; the
    /// next write allocates again. For a connection gone idle.
    pub fn release_if_empty(&mut self) {
        if self.buf.is_empty() {
            self.buf = VecDeque::new();
        }
    }

    /// Room left, in bytes.
    pub fn free(&self) -> usize {
        self.limit.get().saturating_sub(self.buf.len())
    }

    /// Bytes held (acknowledged ones are released).
    pub fn len(&self) -> usize {
        self.buf.len()
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
        self.start.saturating_add(self.buf.len() as u64)
    }

    /// Copies bytes from stream offset `offset` into `buf`; returns how many
    /// (fewer when `end()` is reached). An `offset` outside
    /// `start()..=end()` copies nothing: the caller asked for bytes that were
    /// already released or never written, and a segment builder should see
    /// an empty read rather than a panic.
    pub fn copy_out(&self, offset: u64, buf: &mut [u8]) -> usize {
        let Some((a, b)) = self.slices(offset, buf.len()) else {
            return 0;
        };
        buf[..a.len()].copy_from_slice(a);
        buf[a.len()..a.len() + b.len()].copy_from_slice(b);
        a.len() + b.len()
    }

    /// The bytes from stream offset `offset`, at most `len` of them (fewer
    /// when `end()` is reached), in place: two slices because the ring may
    /// wrap between them (the second is empty when it does not). `None`
    /// for an `offset` outside `start()..=end()`.
    pub fn slices(&self, offset: u64, len: usize) -> Option<(&[u8], &[u8])> {
        if offset < self.start || offset > self.end() {
            return None;
        }
        // In range, so the difference fits in `len()` and therefore usize.
        let skip = (offset - self.start) as usize;
        let n = len.min(self.buf.len() - skip);
        let (a, b) = self.buf.as_slices();
        if skip >= a.len() {
            // Wholly in the wrapped-around second half of the ring.
            let from = skip - a.len();
            return Some((&b[from..from + n], &[]));
        }
        let take = n.min(a.len() - skip);
        Some((&a[skip..skip + take], &b[..n - take]))
    }

    /// Drops bytes below stream offset `offset` because they were
    /// cumulatively acknowledged (RFC 9293 section 3.10.7.4: SND.UNA
    /// advances). Offsets at or below `start()` do nothing; offsets beyond
    /// `end()` release everything and leave `start() == end()`.
    pub fn release_to(&mut self, offset: u64) {
        if offset <= self.start {
            return;
        }
        let n = (offset - self.start).min(self.buf.len() as u64) as usize;
        // Draining from the front of a VecDeque only moves its head index.
        self.buf.drain(..n);
        self.start += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn ring_wraps_and_does_not_reallocate() {
        let cap = 16;
        let mut b = SendBuffer::new(cap);
        let mut next_byte = 0u8;
        let mut gen = |n: usize| -> Vec<u8> {
            (0..n)
                .map(|_| {
                    next_byte = next_byte.wrapping_add(1);
                    next_byte
                })
                .collect()
        };
        let first = gen(cap);
        assert_eq!(b.write(&first), cap);
        let alloc = b.buf.capacity();
        let mut saw_wrap = false;
        // Byte at stream offset o is (o + 1) mod 256 by construction.
        for round in 0..200u64 {
            let release = (round % 7 + 1) as usize;
            b.release_to(b.start() + release as u64);
            let data = gen(release);
            assert_eq!(b.write(&data), release);
            saw_wrap |= !b.buf.as_slices().1.is_empty();
            assert_eq!(b.buf.capacity(), alloc, "ring must not reallocate");
            let got = read(&b, b.start(), cap);
            assert_eq!(got.len(), cap);
            for (i, byte) in got.iter().enumerate() {
                assert_eq!(*byte, (b.start() + i as u64 + 1) as u8);
            }
            // A read straddling the ring seam from the middle.
            let mid = b.start() + 5;
            let part = read(&b, mid, 9);
            assert_eq!(part.len(), 9);
            assert_eq!(part[0], (mid + 1) as u8);
            assert_eq!(part[8], (mid + 9) as u8);
        }
        assert!(saw_wrap, "test never exercised the wrapped layout");
    }
}
