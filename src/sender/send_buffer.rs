//! Bytes written by the application and not yet acknowledged.

/// A bounded byte queue addressed by stream offset (0 = first data byte).
#[derive(Debug)]
pub struct SendBuffer {
    _todo: (),
}

impl SendBuffer {
    /// A buffer holding at most `capacity_bytes`.
    pub fn new(capacity_bytes: usize) -> Self {
        let _ = capacity_bytes;
        todo!()
    }
    /// Appends as much of `data` as fits; returns the bytes taken.
    pub fn write(&mut self, data: &[u8]) -> usize {
        let _ = data;
        todo!()
    }
    /// Room left, in bytes.
    pub fn free(&self) -> usize {
        todo!()
    }
    /// Bytes held (acknowledged ones are released).
    pub fn len(&self) -> usize {
        todo!()
    }
    /// Nothing held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Stream offset of the first byte held.
    pub fn start(&self) -> u64 {
        todo!()
    }
    /// Stream offset one past the last byte written.
    pub fn end(&self) -> u64 {
        todo!()
    }
    /// Copies bytes from `offset` into `buf`; returns how many (fewer when
    /// `end()` is reached). `offset` must lie in `start()..=end()`.
    pub fn copy_out(&self, offset: u64, buf: &mut [u8]) -> usize {
        let _ = (offset, buf);
        todo!()
    }
    /// Drops bytes below `offset` (they were acknowledged).
    pub fn release_to(&mut self, offset: u64) {
        let _ = offset;
        todo!()
    }
}
