//! The hold credit: counting the group a polled receiver holds as
//! delivered (ackwise's own, after paper 003's equation 1).
//!
//! A receiver asked for one ACK per group of `g` segments holds each
//! segment of the group until the last one arrives. Those segments have
//! left the network, but the sender still counts them in flight until
//! the group's ACK comes back, so with `x` ACKs per window only a window
//! of `x / (x - 1)` BDP fills the path (paper 003 sec. 3.1, equation 1):
//! 4 ACKs per window leave a quarter of a BDP-sized window unused. The
//! adaptive strategy can pay for that with ACKs (up to 32 per window while
//! no queue covers the gap); the hold credit pays with accounting instead.
//! At most `g - 1` segments of the current group can sit at the receiver
//! (the group's last arrival sends the ACK), so outside loss recovery and
//! slow start the sender may have `cwnd + (g - 1)` segments out and still
//! have no more than cwnd in the network, the same as a sender whose every
//! segment is acknowledged.
//!
//! A standing queue already covers the gap (equation 1's condition is a
//! window of BDP plus a group, and a queue is window beyond BDP), so the
//! credit shrinks by the queue the sender estimates from its RTTs: cwnd
//! times `(SRTT - min RTT) / SRTT`. On a path whose buffer holds a group
//! the credit is gone when the queue is there; it acts after a halving
//! and on paths whose random losses keep the window below the BDP, where
//! the extra ACKs bought nothing but the filled pipe. Loss recovery counts
//! its pipe by RFC 6675 and gets no credit; slow start neither (its
//! window doubles anyway, and a larger flight there only overflows a short
//! buffer earlier).
//!
//! Used by the default strategy, whose `4w-adaptive` asks for 4 ACKs per
//! window in congestion avoidance from a window of 16 segments on and
//! relies on the credit there (`AdaptivePerWindow::hold_credit_from`), and
//! whose ACK-clock spreading releases at 1.05 times the delivery rate.
//! Against the default before (4 to 32 ACKs per window as the queue
//! needed, spreading at 1.5), over the gauntlet's seeds 1-5 (1 000 cases, 5
//! replicates, `lab gauntlet --cases 200 --seed S --replicates 5`, `lab
//! compare`): 3.25% faster against AE on the paired geometric mean
//! (standard error 0.26%; 397 cases faster by more than 2%, 75 slower),
//! cases within 1.05x of AE 92.3% to 94.7%, clearly above 1.05x 27 as
//! before, ACKs 0.571 to 0.421 of AE's at the median; on seeds 6-10, drawn
//! only to check, 3.19% faster (0.25%), within 1.05x 94.2% to 96.6%,
//! clearly above 17 to 16, ACKs 0.576 to 0.430. The parts on seeds 1-3:
//! 4 ACKs per window from 16 segments without the credit (and in slow
//! start too) was 2.20% slower than the old default, with 70 of 600 cases
//! clearly above; with the credit, 3.12% faster but 31 clearly above
//! (small buffers overflowed by slow start's larger groups), 2.01% faster
//! with 24 when slow start kept the queue rule, and 3.04% faster with 15
//! (against the old default's 16) once spreading released at 1.05.

use crate::time::Duration;

/// Bytes beyond cwnd the sender may have in flight for a group of
/// `group_segments` of `mss` bytes held at the receiver, less the queue
/// a window of `window` bytes keeps at `srtt` over `min_rtt` (no credit
/// is taken off before both are measured).
pub fn hold_credit(
    group_segments: u32,
    mss: u64,
    window: u64,
    srtt: Option<Duration>,
    min_rtt: Option<Duration>,
) -> u64 {
    let held = u64::from(group_segments.saturating_sub(1)).saturating_mul(mss);
    let queue = match (srtt, min_rtt) {
        (Some(srtt), Some(min)) if !srtt.is_zero() => {
            // The queue's share of the RTT, with both terms brought under
            // 64 bits so that the product stays inside 128 (only RTTs of
            // centuries are shifted).
            let (mut queue, mut rtt) = (srtt.saturating_sub(min).as_nanos(), srtt.as_nanos());
            while rtt > u128::from(u64::MAX) {
                queue >>= 1;
                rtt >>= 1;
            }
            u64::try_from(u128::from(window) * queue / rtt).unwrap_or(u64::MAX)
        }
        _ => 0,
    };
    held.saturating_sub(queue)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ms(v: u64) -> Option<Duration> {
        Some(Duration::from_millis(v))
    }

    #[test]
    fn an_empty_queue_credits_all_but_the_last_segment_of_the_group() {
        assert_eq!(hold_credit(25, MSS, 100 * MSS, ms(50), ms(50)), 24 * MSS);
        // Before any RTT is measured: the whole hold.
        assert_eq!(hold_credit(25, MSS, 100 * MSS, None, None), 24 * MSS);
    }

    #[test]
    fn a_group_of_one_is_acknowledged_at_once_and_earns_nothing() {
        assert_eq!(hold_credit(1, MSS, 100 * MSS, ms(50), ms(50)), 0);
        assert_eq!(hold_credit(0, MSS, 100 * MSS, None, None), 0);
    }

    #[test]
    fn a_standing_queue_takes_the_credit_back() {
        // 100 segments at 60 ms over a 50 ms minimum: a sixth of the
        // window, 16.67 segments, is queue.
        assert_eq!(
            hold_credit(25, MSS, 100 * MSS, ms(60), ms(50)),
            24 * MSS - 16_666
        );
        // A queue of a quarter of the window or more covers a group of a
        // quarter.
        assert_eq!(hold_credit(25, MSS, 100 * MSS, ms(67), ms(50)), 0);
        assert_eq!(hold_credit(25, MSS, 100 * MSS, ms(500), ms(50)), 0);
    }

    #[test]
    fn extreme_values_saturate() {
        assert_eq!(
            hold_credit(u32::MAX, u64::MAX, u64::MAX, ms(1), ms(1)),
            u64::MAX
        );
        assert_eq!(
            hold_credit(u32::MAX, u64::MAX, u64::MAX, ms(u64::MAX / 2), ms(0)),
            0
        );
        assert_eq!(
            hold_credit(2, MSS, 10 * MSS, Some(Duration::ZERO), ms(0)),
            MSS
        );
    }
}
