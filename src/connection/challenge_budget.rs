//! A challenge-ACK budget shared by the connections of one endpoint (RFC
//! 5961 section 7's system-wide limit), on top of each connection's own
//! [`Config::challenge_ack_limit`](super::Config::challenge_ack_limit).
//!
//! A shared counter is also a side channel: an off-path attacker who can
//! exhaust it and watch whether a challenge ACK of its own still comes
//! back learns whether some other connection just sent one, and from that
//! its sequence numbers (Cao et al., USENIX Security 2016, against Linux's
//! fixed global limit). So the budget of each second is drawn at random
//! between the configured figure and twice it, as Linux has done since,
//! and endpoints leave it off unless asked: Linux too now relies on the
//! per-connection limit by default.

use crate::time::{Duration, Instant};
use std::sync::Mutex;

/// Challenge ACKs a group of connections may send per second, together.
#[derive(Debug)]
pub struct ChallengeBudget {
    per_second: u32,
    state: Mutex<BudgetState>,
}

#[derive(Debug)]
struct BudgetState {
    window_start: Option<Instant>,
    left: u32,
    /// xorshift64* state for each second's draw.
    rng: u64,
}

impl ChallengeBudget {
    /// A budget of between `per_second` and `2 * per_second` challenge
    /// ACKs in each second, drawn afresh every second from `seed`.
    pub fn new(per_second: u32, seed: u64) -> Self {
        ChallengeBudget {
            per_second,
            state: Mutex::new(BudgetState {
                window_start: None,
                left: 0,
                rng: seed | 1,
            }),
        }
    }

    /// Takes one challenge ACK from the budget at `now`; false when the
    /// second's budget is spent.
    pub fn take(&self, now: Instant) -> bool {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let fresh = st
            .window_start
            .is_none_or(|start| now >= start + Duration::from_secs(1));
        if fresh {
            st.window_start = Some(now);
            st.rng ^= st.rng >> 12;
            st.rng ^= st.rng << 25;
            st.rng ^= st.rng >> 27;
            let draw = st.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32;
            let extra = (draw * (u64::from(self.per_second) + 1)) >> 32;
            st.left = self.per_second.saturating_add(extra as u32);
        }
        if st.left == 0 {
            return false;
        }
        st.left -= 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_second_allows_between_the_figure_and_twice_it() {
        let budget = ChallengeBudget::new(100, 42);
        let mut seen = Vec::new();
        for second in 0..50u64 {
            let now = Instant::from_millis(second * 1_000);
            let mut n = 0;
            while budget.take(now + Duration::from_millis(n % 900)) {
                n += 1;
                assert!(n <= 200, "second {second}: more than twice the figure");
            }
            assert!(n >= 100, "second {second}: {n}");
            seen.push(n);
        }
        // Drawn, not fixed.
        seen.sort_unstable();
        seen.dedup();
        assert!(seen.len() > 10, "{seen:?}");
    }

    #[test]
    fn a_zero_budget_allows_nothing() {
        let budget = ChallengeBudget::new(0, 1);
        assert!(!budget.take(Instant::from_millis(5)));
    }
}
