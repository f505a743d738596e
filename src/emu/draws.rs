//! Common random numbers: every random choice the emulator makes about a
//! packet is a function of the run's seed, the link and the packet's own
//! identity, not of how many draws came before it.
//!
//! Why: the lab judges a strategy by running it and AE on the same path
//! with the same seed and comparing the two (the gauntlet's ratios, every
//! results page). With one RNG for the whole run, the two runs share their
//! draws only until the first packet that one sends and the other does
//! not; from there every loss, RED drop and jitter falls on other packets,
//! and on a lossy path the ratio mixes the strategy's mechanism with two
//! unrelated draws of the loss process. With the draw keyed by the packet
//! (flow, direction, sequence number, and how many times that segment has
//! crossed the link before), the first transmission of segment 1 234 of
//! flow 2 is lost in both runs or in neither, and so is its first
//! retransmission: the two runs differ only where the strategies do, which
//! is the standard variance reduction of simulation studies ("common
//! random numbers"). Each draw is still uniform and independent of every
//! other packet's, so the loss processes themselves are unchanged.
//!
//! What is keyed by what:
//!
//! * a TCP segment that carries data, SYN or FIN: its first sequence
//!   number and a crossing count: 0 for a segment that starts at or above
//!   everything the flow's direction sent across the link before (a first
//!   transmission), else how many times that sequence number came back
//!   (a resend, counted 1, 2, ... even when its first copy was lost before
//!   reaching this link), so a link keeps counts only for resent sequence
//!   numbers;
//! * a pure ACK: its acknowledgment number and how many ACKs in a row
//!   carried it before (duplicate ACKs are told apart);
//! * anything else (QUIC datagrams, whose packet numbers are encrypted,
//!   and cross traffic): its owner and its index among that owner's
//!   packets on the link.
//!
//! Initial sequence numbers come from a per-flow generator
//! ([`flow_rng`]), so both runs of a case number their segments alike.
//! A Gilbert-Elliott chain steps once per packet, so it is stepped by the
//! link's own generator in packet order ([`super::loss`]): the n-th packet
//! across the link meets the same step in both runs. Cross-traffic sources
//! have a generator each.
//!
//! Measured on the gauntlet (seeds 1-5, 200 cases, 5 replicates each;
//! `4w-adaptive+spread+sparse-holes` against AE): on the 414 paths with
//! Bernoulli loss the median spread of a case's per-replicate log ratio
//! fell from 0.014 to 0.007 (its upper quartile from 0.072 to 0.034), with
//! the loss rates themselves unchanged. A Gilbert-Elliott chain laid out
//! in time (bursts at the same instants in both runs) made the spread on
//! the 173 bursty paths larger, 0.021 to 0.036, since the two strategies'
//! packets cross at other instants; stepped per packet it stays at 0.021.

use crate::testing::TestRng;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::collections::HashMap;

/// What a draw is for; mixed into the key so that a packet's loss, queue
/// and jitter draws are independent of each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub(crate) enum Purpose {
    /// Random loss on the wire.
    Loss = 1,
    /// A queue's random choices (RED's early drop or mark).
    Queue = 2,
    /// Extra propagation delay and reordering.
    Jitter = 3,
    /// A Gilbert-Elliott chain's stretches (keyed by link, not packet).
    Chain = 4,
    /// A flow's endpoints (initial sequence numbers, secrets).
    Flow = 5,
    /// A cross-traffic source's on and off periods.
    Cross = 6,
}

/// SplitMix64's finaliser: a bijection of `u64` whose output bits each
/// depend on every input bit.
fn finalise(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Folds `value` into the key `key`.
pub(crate) fn mix(key: u64, value: u64) -> u64 {
    finalise(key.rotate_left(23) ^ finalise(value.wrapping_add(0x9e37_79b9_7f4a_7c15)))
}

/// A uniform draw in [0, 1) from a key (53 bits, as `queue::uniform`).
pub(crate) fn uniform_of(key: u64) -> f64 {
    super::queue::unit(finalise(key))
}

/// A generator for the draws of `purpose` about the packet keyed `key`.
pub(crate) fn packet_rng(key: u64, purpose: Purpose) -> TestRng {
    TestRng::seed_from_u64(mix(key, purpose as u64))
}

/// The generator of flow `flow`'s client (`server` false) or server end.
pub(crate) fn flow_rng(seed: u64, flow: usize, server: bool) -> ChaCha8Rng {
    let key = mix(mix(seed, Purpose::Flow as u64), flow as u64);
    ChaCha8Rng::seed_from_u64(mix(key, u64::from(server)))
}

/// A generator of its own for link `link`'s or cross source `index`'s
/// `purpose`.
pub(crate) fn own_rng(seed: u64, purpose: Purpose, index: usize) -> TestRng {
    TestRng::seed_from_u64(mix(mix(seed, purpose as u64), index as u64))
}

/// What identifies a packet to [`PacketKeys::key`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Identity {
    /// A TCP segment with data, SYN or FIN: its first sequence number and
    /// the sequence space it takes.
    Segment { seq: u32, len: u32 },
    /// A pure TCP ACK.
    Ack { ack: u32 },
    /// Anything else: told apart by its index among its owner's packets.
    Other,
}

impl Identity {
    /// The identity of the encoded TCP segment `seg` whose payload is
    /// `payload` bytes (counting any left out of `seg`); `Other` when
    /// `seg` is too short to be one.
    pub(crate) fn of_tcp(seg: &[u8], payload: u32) -> Identity {
        if seg.len() < 20 {
            return Identity::Other;
        }
        let word = |at: usize| u32::from_be_bytes([seg[at], seg[at + 1], seg[at + 2], seg[at + 3]]);
        let flags = seg[13];
        let syn_fin = u32::from(flags & 0x02 != 0) + u32::from(flags & 0x01 != 0);
        let len = payload + syn_fin;
        if len == 0 {
            Identity::Ack { ack: word(8) }
        } else {
            Identity::Segment { seq: word(4), len }
        }
    }
}

/// Where one packet owner (a flow's direction, a cross source) stands on
/// one link.
#[derive(Debug, Clone, Copy, Default)]
struct OwnerState {
    /// One past the highest sequence number seen; `None` before the first
    /// segment.
    next_seq: Option<u32>,
    /// The last pure ACK's acknowledgment number and how many before it
    /// in a row carried the same.
    last_ack: Option<(u32, u32)>,
    /// Packets of kind [`Identity::Other`] so far.
    others: u64,
}

/// A link's memory of the packets it has keyed.
#[derive(Debug, Default)]
pub(crate) struct PacketKeys {
    owners: Vec<OwnerState>,
    /// Crossings so far of each sequence number that has been resent.
    resent: HashMap<(u32, u32), u32>,
}

impl PacketKeys {
    /// The key of a packet of owner `owner` (a small dense index) with
    /// identity `id`, on the link keyed `link_key`. Call once per packet
    /// per link crossing, in event order.
    pub(crate) fn key(&mut self, link_key: u64, owner: u32, id: Identity) -> u64 {
        let o = owner as usize;
        if self.owners.len() <= o {
            self.owners.resize(o + 1, OwnerState::default());
        }
        let state = &mut self.owners[o];
        let (tag, value, repeat) = match id {
            Identity::Segment { seq, len } => {
                let end = seq.wrapping_add(len);
                let fresh = match state.next_seq {
                    None => true,
                    // Serial-number order (RFC 1982): not before next.
                    Some(next) => seq.wrapping_sub(next) as i32 >= 0,
                };
                let repeat = if fresh {
                    0
                } else {
                    let n = self.resent.entry((owner, seq)).or_insert(0);
                    *n += 1;
                    *n
                };
                if state
                    .next_seq
                    .is_none_or(|next| end.wrapping_sub(next) as i32 > 0)
                {
                    state.next_seq = Some(end);
                }
                (1, seq, repeat)
            }
            Identity::Ack { ack } => {
                let repeat = match state.last_ack {
                    Some((last, n)) if last == ack => n + 1,
                    _ => 0,
                };
                state.last_ack = Some((ack, repeat));
                (2, ack, repeat)
            }
            Identity::Other => {
                state.others += 1;
                return mix(mix(mix(link_key, u64::from(owner)), 3), state.others);
            }
        };
        let key = mix(mix(link_key, u64::from(owner)), tag);
        mix(mix(key, u64::from(value)), u64::from(repeat))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(seq: u32, ack: u32, flags: u8) -> Vec<u8> {
        let mut s = vec![0u8; 20];
        s[4..8].copy_from_slice(&seq.to_be_bytes());
        s[8..12].copy_from_slice(&ack.to_be_bytes());
        s[12] = 5 << 4;
        s[13] = flags;
        s
    }

    #[test]
    fn identities_of_segments_acks_and_control() {
        let ack = segment(10, 77, 0x10);
        assert_eq!(Identity::of_tcp(&ack, 0), Identity::Ack { ack: 77 });
        assert_eq!(
            Identity::of_tcp(&ack, 1448),
            Identity::Segment { seq: 10, len: 1448 }
        );
        let syn = segment(5, 0, 0x02);
        assert_eq!(
            Identity::of_tcp(&syn, 0),
            Identity::Segment { seq: 5, len: 1 }
        );
        let fin = segment(9, 1, 0x11);
        assert_eq!(
            Identity::of_tcp(&fin, 3),
            Identity::Segment { seq: 9, len: 4 }
        );
        assert_eq!(Identity::of_tcp(&[0; 12], 0), Identity::Other);
    }

    #[test]
    fn a_segment_has_one_key_per_crossing_whatever_came_between() {
        let seg = |seq| Identity::Segment { seq, len: 100 };
        // Run A sends 0, 100, 200, resends 100; run B sends 0, resends
        // 0, then 100, 200, and resends 100 twice.
        let mut a = PacketKeys::default();
        let ka: Vec<u64> = [0, 100, 200, 100]
            .into_iter()
            .map(|s| a.key(7, 0, seg(s)))
            .collect();
        let mut b = PacketKeys::default();
        let kb: Vec<u64> = [0, 0, 100, 200, 100, 100]
            .into_iter()
            .map(|s| b.key(7, 0, seg(s)))
            .collect();
        assert_eq!(ka[0], kb[0], "first crossing of 0");
        assert_eq!(ka[1], kb[2], "first crossing of 100");
        assert_eq!(ka[2], kb[3], "first crossing of 200");
        assert_eq!(ka[3], kb[4], "second crossing of 100");
        assert_ne!(kb[0], kb[1], "a resend draws anew");
        assert_ne!(kb[4], kb[5]);
        // Other owners, other links: other keys.
        assert_ne!(PacketKeys::default().key(7, 1, seg(0)), ka[0]);
        assert_ne!(PacketKeys::default().key(8, 0, seg(0)), ka[0]);
    }

    #[test]
    fn duplicate_acks_and_other_packets_are_told_apart() {
        let mut k = PacketKeys::default();
        let a1 = k.key(1, 0, Identity::Ack { ack: 5 });
        let a2 = k.key(1, 0, Identity::Ack { ack: 5 });
        let b = k.key(1, 0, Identity::Ack { ack: 9 });
        let a3 = k.key(1, 0, Identity::Ack { ack: 5 });
        assert_ne!(a1, a2);
        assert_ne!(a1, b);
        assert_eq!(a1, a3, "a new run of the same number starts over");
        let o1 = k.key(1, 0, Identity::Other);
        let o2 = k.key(1, 0, Identity::Other);
        assert_ne!(o1, o2);
    }

    #[test]
    fn sequence_numbers_wrap() {
        let mut k = PacketKeys::default();
        let near = u32::MAX - 49;
        let first = k.key(
            1,
            0,
            Identity::Segment {
                seq: near,
                len: 100,
            },
        );
        // 50 past the wrap is fresh, not a resend of something old.
        let past = k.key(1, 0, Identity::Segment { seq: 50, len: 100 });
        let fresh = PacketKeys::default().key(1, 0, Identity::Segment { seq: 50, len: 100 });
        assert_eq!(past, fresh);
        let again = k.key(
            1,
            0,
            Identity::Segment {
                seq: near,
                len: 100,
            },
        );
        assert_ne!(again, first);
    }

    #[test]
    fn uniform_draws_are_uniform() {
        let n = 100_000u64;
        let below: u64 = (0..n).filter(|&i| uniform_of(mix(3, i)) < 0.01).count() as u64;
        // 1% of 100 000 is 1 000, standard deviation about 31.
        assert!((880..=1120).contains(&below), "{below}");
        let mean = (0..n).map(|i| uniform_of(mix(4, i))).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.005, "{mean}");
    }
}
