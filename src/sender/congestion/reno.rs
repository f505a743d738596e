//! Reno (RFC 5681) with Appropriate Byte Counting (RFC 3465).

/// Reno with ABC.
#[derive(Debug)]
pub struct Reno {
    _todo: (),
}
