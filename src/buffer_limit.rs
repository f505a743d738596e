//! How much of a buffer is in use: a limit that starts at or below the
//! buffer's capacity and only grows, up to it. The receive window and the
//! send buffer are offered out of one while autotuned (see
//! [`crate::connection::autotune`]); a window must not shrink (RFC 9293
//! section 3.8.6), and neither buffer needs to.

/// A limit of at most `ceiling` bytes that only [`raise`](Self::raise)s
/// after it is [`set`](Self::set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferLimit {
    value: usize,
    ceiling: usize,
}

impl BufferLimit {
    /// The whole of a `ceiling`-byte buffer.
    pub fn new(ceiling: usize) -> BufferLimit {
        BufferLimit {
            value: ceiling,
            ceiling,
        }
    }

    /// The limit in bytes.
    pub fn get(self) -> usize {
        self.value
    }

    /// The buffer's capacity, which the limit never passes.
    pub fn ceiling(self) -> usize {
        self.ceiling
    }

    /// Starts over at `bytes` (at most the ceiling): for the start of a
    /// connection, before anything was offered out of it.
    pub fn set(&mut self, bytes: usize) {
        self.value = bytes.min(self.ceiling);
    }

    /// Raises the limit to `bytes` (at most the ceiling); never lowers it.
    pub fn raise(&mut self, bytes: usize) {
        self.value = self.value.max(bytes.min(self.ceiling));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_only_and_never_past_the_ceiling() {
        let mut l = BufferLimit::new(100);
        assert_eq!((l.get(), l.ceiling()), (100, 100));
        l.set(10);
        assert_eq!(l.get(), 10);
        l.raise(5);
        assert_eq!(l.get(), 10);
        l.raise(40);
        assert_eq!(l.get(), 40);
        l.raise(1_000);
        assert_eq!(l.get(), 100);
        l.set(1_000);
        assert_eq!(l.get(), 100);
    }
}
