//! Time for a sans-IO stack.
//!
//! Nothing below `net/` reads a clock: every entry point takes `now: Instant`.
//! An [`Instant`] is a count of nanoseconds from an arbitrary epoch chosen by
//! the driver (the emulator starts its virtual clock at zero, a socket driver
//! maps `std::time::Instant` onto it). Durations are `core::time::Duration`,
//! the type `std::time::Duration` names.

use core::fmt;
use core::ops::{Add, AddAssign, Sub};
pub use core::time::Duration;

/// A point in (virtual or real) time, in nanoseconds since the driver's epoch.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant {
    nanos: u64,
}

impl Instant {
    /// The driver's epoch.
    pub const ZERO: Instant = Instant { nanos: 0 };

    /// An instant `nanos` nanoseconds after the epoch.
    pub const fn from_nanos(nanos: u64) -> Self {
        Instant { nanos }
    }

    /// An instant `micros` microseconds after the epoch.
    pub const fn from_micros(micros: u64) -> Self {
        Instant {
            nanos: micros.saturating_mul(1_000),
        }
    }

    /// An instant `millis` milliseconds after the epoch.
    pub const fn from_millis(millis: u64) -> Self {
        Instant {
            nanos: millis.saturating_mul(1_000_000),
        }
    }

    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.nanos
    }

    /// Time since the epoch.
    pub const fn since_epoch(self) -> Duration {
        Duration::from_nanos(self.nanos)
    }

    /// Time elapsed from `earlier` to `self`, zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.nanos.saturating_sub(earlier.nanos))
    }

    /// `self + d`, or `None` on overflow.
    pub fn checked_add(self, d: Duration) -> Option<Instant> {
        let d = u64::try_from(d.as_nanos()).ok()?;
        self.nanos.checked_add(d).map(Instant::from_nanos)
    }
}

/// The earlier of two optional deadlines: a driver's timer is set to the
/// earliest of the deadlines that exist.
///
/// ```
/// use ackwise::time::{earliest, Instant};
/// let (a, b) = (Instant::from_millis(5), Instant::from_millis(3));
/// assert_eq!(earliest(Some(a), Some(b)), Some(b));
/// assert_eq!(earliest(Some(a), None), Some(a));
/// assert_eq!(earliest(None, None), None);
/// ```
#[inline]
pub fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// `d` in nanoseconds, `u64::MAX` when it does not fit. Exactly
/// `u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)`, but in 64-bit
/// arithmetic: `as_nanos` widens to `u128`, and this runs for every
/// deadline the stack computes (several per segment).
#[inline]
pub(crate) fn duration_nanos_saturating(d: Duration) -> u64 {
    d.as_secs()
        .checked_mul(1_000_000_000)
        .and_then(|n| n.checked_add(u64::from(d.subsec_nanos())))
        .unwrap_or(u64::MAX)
}

impl Add<Duration> for Instant {
    type Output = Instant;
    /// Saturates at the far future rather than wrapping.
    fn add(self, rhs: Duration) -> Instant {
        Instant::from_nanos(self.nanos.saturating_add(duration_nanos_saturating(rhs)))
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;
    /// Saturates at the epoch rather than wrapping.
    fn sub(self, rhs: Duration) -> Instant {
        Instant::from_nanos(self.nanos.saturating_sub(duration_nanos_saturating(rhs)))
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturating: an earlier `self` gives zero.
    fn sub(self, rhs: Instant) -> Duration {
        self.saturating_duration_since(rhs)
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:09}s",
            self.nanos / 1_000_000_000,
            self.nanos % 1_000_000_000
        )
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        let t = Instant::from_millis(5);
        assert_eq!(t + Duration::from_millis(5), Instant::from_millis(10));
        assert_eq!(t - Duration::from_secs(1), Instant::ZERO);
        assert_eq!(Instant::ZERO - t, Duration::ZERO);
        assert_eq!(t - Instant::ZERO, Duration::from_millis(5));
        assert_eq!(
            Instant::from_nanos(u64::MAX) + Duration::from_secs(1),
            Instant::from_nanos(u64::MAX)
        );
        assert_eq!(format!("{t:?}"), "0.005000000s");
    }

    #[test]
    fn duration_nanos_saturate_as_the_wide_conversion_does() {
        let wide = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let max_secs = u64::MAX / 1_000_000_000;
        let max_subsec = (u64::MAX % 1_000_000_000) as u32;
        for d in [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::new(3, 999_999_999),
            Duration::from_secs(120),
            Duration::new(max_secs, max_subsec),
            Duration::new(max_secs, max_subsec + 1),
            Duration::new(max_secs + 1, 0),
            Duration::from_secs(u64::MAX),
            Duration::MAX,
        ] {
            assert_eq!(duration_nanos_saturating(d), wide(d), "{d:?}");
        }
        assert_eq!(
            duration_nanos_saturating(Duration::new(max_secs, max_subsec)),
            u64::MAX
        );
    }
}
