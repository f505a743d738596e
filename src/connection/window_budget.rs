//! Receive-window room shared by the connections of one endpoint.
//!
//! Autotuned windows ([`Config::buffer_autotuning`]) grow as Linux's do:
//! twice what the application reads per round trip plus a margin of 16
//! segments. ackwise asks its peer for a fixed number of ACKs per window,
//! so every byte of window is also fewer ACKs per byte moved; a wider
//! margin saves ACKs on paths (loopback above all) where the window, not
//! the path, sets the pace. But every byte of window is a byte the
//! peer may send in one burst, and on a fast path that burst waits in the
//! endpoint's one UDP socket until the endpoint reads it. Windows that
//! together pass the socket's receive buffer lose datagrams in the
//! kernel, to every connection at once.
//!
//! So the margin beyond Linux's is drawn from a budget: the receive
//! buffer the kernel granted the socket, halved for the kernel's
//! per-datagram overhead (as Linux offers half a TCP socket's buffer as
//! window). A connection takes the wider margin only while all windows of
//! the endpoint, its own grown one included, fit in the budget, and
//! otherwise grows as Linux does. Nothing shrinks a window that was
//! offered (RFC 9293 section 3.8.6): the budget only decides how far the
//! next step goes, and a connection gives its share back when it is
//! dropped.
//!
//! [`Config::buffer_autotuning`]: super::Config::buffer_autotuning

use alloc::sync::Arc;
use core::sync::atomic::{AtomicU64, Ordering};

/// Segments of margin beyond Linux's 16 that a window may take from the
/// endpoint's budget. On loopback, where the margin is most of the window
/// (segments of 64 KiB, round trips of microseconds), a margin of 48
/// segments instead of 16 cut the receiver's ACKs per GiB from 2 500-3 250
/// to 1 080-1 260 at the same goodput (`scripts/perf-vs-kernel.sh`).
pub(super) const EXTRA_MARGIN_SEGMENTS: u64 = 32;

/// Window bytes the connections of one endpoint may offer together
/// before any of them stops taking the wider margin.
#[derive(Debug)]
pub struct WindowBudget {
    capacity_bytes: u64,
    used_bytes: AtomicU64,
}

impl WindowBudget {
    /// A budget of `capacity_bytes` (for a UDP endpoint, half the receive
    /// buffer the kernel granted its socket).
    pub fn new(capacity_bytes: u64) -> WindowBudget {
        WindowBudget {
            capacity_bytes,
            used_bytes: AtomicU64::new(0),
        }
    }

    /// The budget's size in bytes.
    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    /// Window bytes the connections sharing the budget offer now.
    pub fn used_bytes(&self) -> u64 {
        self.used_bytes.load(Ordering::Relaxed)
    }

    fn try_take(&self, bytes: u64) -> bool {
        self.used_bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                let after = used.checked_add(bytes)?;
                (after <= self.capacity_bytes).then_some(after)
            })
            .is_ok()
    }

    fn take(&self, bytes: u64) {
        self.used_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    fn give_back(&self, bytes: u64) {
        // Never below zero, whatever the order of the updates.
        let _ = self
            .used_bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                Some(used.saturating_sub(bytes))
            });
    }
}

/// One connection's part of a [`WindowBudget`]: the window it offers
/// now, counted in the budget until the share is dropped.
#[derive(Debug)]
pub(super) struct WindowShare {
    budget: Arc<WindowBudget>,
    held_bytes: u64,
}

impl WindowShare {
    pub(super) fn new(budget: Arc<WindowBudget>) -> WindowShare {
        WindowShare {
            budget,
            held_bytes: 0,
        }
    }

    /// The window to offer when autotuning calls for `plain` bytes (the
    /// Linux rule) and would take `wider` (the wider margin) where the
    /// budget allows; neither past `ceiling`, nor below what is offered
    /// already. Counts the result in the budget.
    pub(super) fn grow(&mut self, plain: u64, wider: u64, ceiling: u64) -> u64 {
        let plain = plain.min(ceiling).max(self.held_bytes);
        let wider = wider.min(ceiling).max(plain);
        let next = if self.budget.try_take(wider - self.held_bytes) {
            wider
        } else {
            self.budget.take(plain - self.held_bytes);
            plain
        };
        self.held_bytes = next;
        next
    }

    /// Counts a window offered without the budget's say (the first one,
    /// before any measurement).
    pub(super) fn hold(&mut self, bytes: u64) {
        if bytes > self.held_bytes {
            self.budget.take(bytes - self.held_bytes);
            self.held_bytes = bytes;
        }
    }
}

impl Drop for WindowShare {
    fn drop(&mut self) {
        self.budget.give_back(self.held_bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wider_margin_only_while_all_windows_fit() {
        let budget = Arc::new(WindowBudget::new(1_000));
        let mut a = WindowShare::new(budget.clone());
        let mut b = WindowShare::new(budget.clone());
        a.hold(100);
        assert_eq!(budget.used_bytes(), 100);
        // Room for the wider step.
        assert_eq!(a.grow(300, 500, u64::MAX), 500);
        assert_eq!(budget.used_bytes(), 500);
        // 500 + 600 would pass 1 000: b grows as Linux would, and is
        // counted all the same.
        assert_eq!(b.grow(400, 600, u64::MAX), 400);
        assert_eq!(budget.used_bytes(), 900);
        // A plain step is never refused, even past the budget.
        assert_eq!(b.grow(700, 900, u64::MAX), 700);
        assert_eq!(budget.used_bytes(), 1_200);
        // Dropping a gives its 500 back; b then fits a wider step.
        drop(a);
        assert_eq!(budget.used_bytes(), 700);
        assert_eq!(b.grow(800, 1_000, u64::MAX), 1_000);
        assert_eq!(budget.used_bytes(), 1_000);
        drop(b);
        assert_eq!(budget.used_bytes(), 0);
    }

    #[test]
    fn a_window_never_shrinks_nor_passes_its_ceiling() {
        let budget = Arc::new(WindowBudget::new(10_000));
        let mut a = WindowShare::new(budget.clone());
        assert_eq!(a.grow(2_000, 3_000, 2_500), 2_500);
        // A smaller call keeps what is offered.
        assert_eq!(a.grow(1_000, 1_500, 2_500), 2_500);
        assert_eq!(budget.used_bytes(), 2_500);
        let mut b = WindowShare::new(budget.clone());
        b.hold(500);
        b.hold(200);
        assert_eq!(budget.used_bytes(), 3_000);
    }
}
