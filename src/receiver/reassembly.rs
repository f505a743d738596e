//! Reassembly of in-order and out-of-order data.

/// Result of inserting one segment's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InsertOutcome {
    _todo: (),
}

/// In-order delivery buffer with a bounded out-of-order store.
#[derive(Debug)]
pub struct Reassembly {
    _todo: (),
}
