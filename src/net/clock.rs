//! Real time as the sans-IO core sees it.

use crate::time::Instant;

/// Maps `std::time::Instant` onto [`Instant`], counting from the moment the
/// endpoint was bound.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    epoch: std::time::Instant,
}

impl Clock {
    pub(crate) fn new() -> Clock {
        Clock {
            epoch: std::time::Instant::now(),
        }
    }

    /// Now, in the core's time.
    pub(crate) fn now(&self) -> Instant {
        let nanos = self.epoch.elapsed().as_nanos();
        Instant::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    /// `t` on the system clock, for tokio's timers.
    pub(crate) fn to_std(self, t: Instant) -> std::time::Instant {
        self.epoch
            .checked_add(t.since_epoch())
            // Far enough for any timer we would ever set.
            .unwrap_or_else(|| self.epoch + std::time::Duration::from_secs(86_400 * 365))
    }
}
