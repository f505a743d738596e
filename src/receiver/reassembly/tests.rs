use super::*;
use proptest::prelude::*;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Recognisable stream contents: byte `i` of the stream.
fn stream(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + 3) as u8).collect()
}

/// Inserts `stream[start..end]` at its offset.
fn put(r: &mut Reassembly, data: &[u8], start: usize, end: usize) -> InsertOutcome {
    r.insert(start as u64, &data[start..end])
}

fn blocks(r: &Reassembly) -> Vec<(u64, u64)> {
    let mut out = [(0, 0); 16];
    let n = r.sack_blocks(&mut out);
    out[..n].to_vec()
}

fn read_all(r: &mut Reassembly) -> Vec<u8> {
    let mut out = vec![0; r.readable()];
    let n = r.read(&mut out);
    out.truncate(n);
    out
}

#[test]
fn in_order_segments_are_readable_at_once() {
    let data = stream(30);
    let mut r = Reassembly::new(100, 8);
    let o = put(&mut r, &data, 0, 10);
    assert_eq!(
        o,
        InsertOutcome {
            advanced: 10,
            new_bytes: 10,
            ..InsertOutcome::default()
        }
    );
    assert_eq!(r.next_offset(), 10);
    assert_eq!(r.readable(), 10);
    assert_eq!(r.window(), 90);
    assert!(!r.has_gaps());
    let o = put(&mut r, &data, 10, 30);
    assert_eq!(o.advanced, 20);
    assert_eq!(read_all(&mut r), data);
    assert_eq!(r.window(), 100);
    assert_eq!(r.highest_received(), 30);
}

#[test]
fn out_of_order_then_fill() {
    let data = stream(20);
    let mut r = Reassembly::new(100, 8);
    let o = put(&mut r, &data, 10, 20);
    assert!(o.out_of_order);
    assert!(!o.filled_gap);
    assert_eq!((o.advanced, o.new_bytes), (0, 10));
    assert!(r.has_gaps());
    assert_eq!(r.next_offset(), 0);
    assert_eq!(r.readable(), 0);
    // Held out-of-order data does not shrink the window.
    assert_eq!(r.window(), 100);
    assert_eq!(r.highest_received(), 20);
    assert_eq!(blocks(&r), vec![(10, 20)]);

    let o = put(&mut r, &data, 0, 4);
    assert!(o.filled_gap && !o.out_of_order);
    assert_eq!(o.advanced, 4);
    assert!(r.has_gaps());

    let o = put(&mut r, &data, 4, 10);
    assert!(o.filled_gap);
    assert_eq!(o.advanced, 16, "the queued range becomes contiguous");
    assert!(!r.has_gaps());
    assert!(blocks(&r).is_empty());
    assert_eq!(read_all(&mut r), data);
}

#[test]
fn a_segment_above_the_highest_range_fills_no_gap() {
    let data = stream(40);
    let mut r = Reassembly::new(100, 8);
    put(&mut r, &data, 10, 20);
    let o = put(&mut r, &data, 15, 25);
    assert!(o.out_of_order && !o.filled_gap);
    let o = put(&mut r, &data, 30, 40);
    assert!(o.out_of_order && !o.filled_gap);
    // Filling the hole between the two ranges is a gap fill even though
    // the segment itself is out of order.
    let o = put(&mut r, &data, 26, 28);
    assert!(o.out_of_order && o.filled_gap);
}

#[test]
fn duplicates_carry_nothing_new() {
    let data = stream(30);
    let mut r = Reassembly::new(100, 8);
    put(&mut r, &data, 0, 10);
    let o = put(&mut r, &data, 0, 10);
    assert!(o.duplicate);
    assert_eq!((o.advanced, o.new_bytes), (0, 0));
    let o = put(&mut r, &data, 2, 5);
    assert!(o.duplicate && !o.out_of_order);

    put(&mut r, &data, 20, 30);
    let o = put(&mut r, &data, 22, 25);
    assert!(o.duplicate && o.out_of_order && !o.filled_gap && !o.dropped);
    assert_eq!(r.range_count(), 1);
    put(&mut r, &data, 10, 20);
    assert_eq!(read_all(&mut r), data);
}

#[test]
fn partial_overlaps_keep_accepted_bytes() {
    let data = stream(40);
    let mut r = Reassembly::new(100, 8);
    // Overlap at the left end with in-order data.
    put(&mut r, &data, 0, 10);
    let o = put(&mut r, &data, 5, 15);
    assert_eq!((o.advanced, o.new_bytes), (5, 5));
    assert!(!o.duplicate);

    // Overlap at both ends of a held range, with different bytes where
    // data is already held: those must not be overwritten.
    put(&mut r, &data, 20, 25);
    let mut forged = data[17..30].to_vec();
    forged[3..8].fill(0xEE);
    let o = r.insert(17, &forged);
    assert_eq!(o.new_bytes, 8);
    assert!(o.out_of_order);
    assert_eq!(blocks(&r), vec![(17, 30)]);

    // Overlap at the right end of the in-order data and the left end of
    // the held range at once.
    let o = put(&mut r, &data, 12, 20);
    assert_eq!((o.advanced, o.new_bytes), (15, 2));
    assert!(o.filled_gap);
    put(&mut r, &data, 28, 40);
    assert_eq!(read_all(&mut r), data);
}

#[test]
fn overlap_at_each_end_of_an_out_of_order_range() {
    let data = stream(40);
    let mut r = Reassembly::new(100, 8);
    put(&mut r, &data, 10, 20);
    let o = put(&mut r, &data, 15, 30);
    assert_eq!(o.new_bytes, 10);
    assert_eq!(blocks(&r), vec![(10, 30)]);
    let o = put(&mut r, &data, 5, 12);
    assert_eq!(o.new_bytes, 5);
    assert_eq!(blocks(&r), vec![(5, 30)]);
    // Adjacent, not overlapping: still one range.
    put(&mut r, &data, 30, 32);
    assert_eq!(blocks(&r), vec![(5, 32)]);
    put(&mut r, &data, 0, 5);
    put(&mut r, &data, 32, 40);
    assert_eq!(read_all(&mut r), data);
}

#[test]
fn window_limits_what_is_accepted() {
    let data = stream(40);
    let mut r = Reassembly::new(16, 8);
    let o = put(&mut r, &data, 0, 20);
    assert!(o.dropped && !o.duplicate);
    assert_eq!((o.advanced, o.new_bytes), (16, 16));
    assert_eq!(r.window(), 0);
    // A zero-window probe is refused, not a duplicate.
    let o = put(&mut r, &data, 16, 17);
    assert!(o.dropped && !o.duplicate);
    assert_eq!(o.new_bytes, 0);

    let mut buf = [0; 8];
    assert_eq!(r.read(&mut buf), 8);
    assert_eq!(&buf, &data[..8]);
    assert_eq!(r.window(), 8);
    let o = put(&mut r, &data, 16, 30);
    assert!(o.dropped);
    assert_eq!(o.new_bytes, 8);
    assert_eq!(r.next_offset(), 24);

    // Out of order and wholly beyond the window.
    let o = put(&mut r, &data, 30, 35);
    assert!(o.dropped && o.out_of_order && !o.duplicate);
    assert_eq!(r.highest_received(), 24);
    // Old bytes plus bytes beyond the window: no new bytes, refused.
    let o = put(&mut r, &data, 20, 40);
    assert!(o.dropped && !o.duplicate);
    assert_eq!(o.new_bytes, 0);
}

#[test]
fn out_of_order_data_up_to_the_window_edge() {
    let data = stream(16);
    let mut r = Reassembly::new(16, 8);
    let o = put(&mut r, &data, 8, 16);
    assert!(!o.dropped);
    assert_eq!(blocks(&r), vec![(8, 16)]);
    let o = put(&mut r, &data, 0, 8);
    assert_eq!(o.advanced, 16);
    assert_eq!(r.window(), 0);
    assert_eq!(read_all(&mut r), data);
}

#[test]
fn range_limit_refuses_new_ranges_only() {
    let data = stream(70);
    let mut r = Reassembly::new(100, 2);
    put(&mut r, &data, 10, 20);
    put(&mut r, &data, 30, 40);
    let o = put(&mut r, &data, 50, 60);
    assert!(o.dropped && o.out_of_order && !o.duplicate);
    assert_eq!(o.new_bytes, 0);
    assert_eq!(r.range_count(), 2);
    assert_eq!(r.highest_received(), 40);

    // Extending a held range needs no new entry.
    let o = put(&mut r, &data, 40, 45);
    assert!(!o.dropped);
    assert_eq!(o.new_bytes, 5);
    // Merging two frees one, so the refused segment now fits.
    let o = put(&mut r, &data, 20, 30);
    assert!(!o.dropped && o.filled_gap);
    assert_eq!(r.range_count(), 1);
    let o = put(&mut r, &data, 50, 60);
    assert!(!o.dropped);
    assert_eq!(r.range_count(), 2);

    // In-order data is never refused for lack of range entries.
    let o = put(&mut r, &data, 0, 10);
    assert_eq!(o.advanced, 45);
    put(&mut r, &data, 45, 70);
    assert_eq!(read_all(&mut r), data);
}

#[test]
fn no_ranges_allowed_means_in_order_only() {
    let data = stream(20);
    let mut r = Reassembly::new(100, 0);
    assert!(put(&mut r, &data, 10, 20).dropped);
    assert!(!r.has_gaps());
    assert_eq!(put(&mut r, &data, 0, 20).advanced, 20);
    assert_eq!(read_all(&mut r), data);
}

#[test]
fn max_ranges_is_clamped_to_what_the_ring_can_hold() {
    assert_eq!(Reassembly::new(4, usize::MAX).max_ranges(), 3);
    assert_eq!(Reassembly::new(1000, 64).max_ranges(), 64);
}

#[test]
fn ring_wraps_without_corrupting_data() {
    let len = 5_000;
    let data = stream(len);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut r = Reassembly::new(23, 4);
    let mut got = Vec::new();
    let mut buf = [0; 16];
    while got.len() < len {
        // A sender that mostly stays inside the window but sometimes
        // overshoots it or resends old data.
        let base = r.next_offset() as usize;
        let lo = base.saturating_sub(4);
        let span = r.window() + 6;
        let start = (lo + (rng.next_u32() as usize % span)).min(len);
        let end = (start + 1 + rng.next_u32() as usize % 9).min(len);
        put(&mut r, &data, start, end);
        for (s, e) in blocks(&r) {
            for i in s..e {
                assert_eq!(r.byte_at(i), data[i as usize], "held byte {i}");
            }
        }
        if rng.next_u32() % 3 == 0 {
            let want = 1 + rng.next_u32() as usize % buf.len();
            let n = r.read(&mut buf[..want]);
            got.extend_from_slice(&buf[..n]);
        }
    }
    assert_eq!(got, data);
}

#[test]
fn first_sack_block_is_the_latest_segment() {
    let data = stream(70);
    let mut r = Reassembly::new(100, 8);
    put(&mut r, &data, 30, 40);
    put(&mut r, &data, 10, 20);
    put(&mut r, &data, 50, 60);
    assert_eq!(blocks(&r), vec![(50, 60), (10, 20), (30, 40)]);
    // A retransmission inside a held range triggers an ACK whose first
    // block must contain it.
    put(&mut r, &data, 32, 34);
    assert_eq!(blocks(&r), vec![(30, 40), (50, 60), (10, 20)]);
    // Extending a range is a change too.
    put(&mut r, &data, 60, 62);
    assert_eq!(blocks(&r), vec![(50, 62), (30, 40), (10, 20)]);
}

#[test]
fn merged_block_is_reported_first() {
    let data = stream(70);
    let mut r = Reassembly::new(100, 8);
    put(&mut r, &data, 10, 20);
    put(&mut r, &data, 30, 40);
    put(&mut r, &data, 50, 60);
    put(&mut r, &data, 20, 30);
    assert_eq!(blocks(&r), vec![(10, 40), (50, 60)]);
}

#[test]
fn in_order_segment_leaves_block_order_alone() {
    let data = stream(70);
    let mut r = Reassembly::new(100, 8);
    put(&mut r, &data, 30, 40);
    put(&mut r, &data, 50, 60);
    put(&mut r, &data, 10, 20);
    put(&mut r, &data, 0, 5);
    assert_eq!(blocks(&r), vec![(10, 20), (50, 60), (30, 40)]);
    // Filling up to the first range removes it from the blocks.
    put(&mut r, &data, 5, 10);
    assert_eq!(r.next_offset(), 20);
    assert_eq!(blocks(&r), vec![(50, 60), (30, 40)]);
}

#[test]
fn sack_blocks_fit_the_output() {
    let data = stream(70);
    let mut r = Reassembly::new(100, 8);
    put(&mut r, &data, 10, 20);
    put(&mut r, &data, 30, 40);
    put(&mut r, &data, 50, 60);
    let mut out = [(0, 0); 2];
    assert_eq!(r.sack_blocks(&mut out), 2);
    assert_eq!(out, [(50, 60), (30, 40)]);
    assert_eq!(r.sack_blocks(&mut []), 0);
}

#[test]
fn odd_input_does_not_panic() {
    let mut r = Reassembly::new(0, 64);
    assert_eq!(r.window(), 0);
    assert!(r.insert(0, &[1, 2, 3]).dropped);
    assert!(r.insert(5, &[1]).dropped);
    assert_eq!(r.read(&mut [0; 4]), 0);

    let mut r = Reassembly::new(16, 4);
    let o = r.insert(u64::MAX - 2, &[9; 10]);
    assert!(o.dropped && o.out_of_order);
    let o = r.insert(5, &[]);
    assert_eq!(
        o,
        InsertOutcome {
            out_of_order: true,
            ..InsertOutcome::default()
        }
    );
    let o = r.insert(0, &[]);
    assert_eq!(o, InsertOutcome::default());
    assert_eq!(r.read(&mut []), 0);
    assert_eq!(r.highest_received(), 0);
}

/// Checks the structural invariants after one insert.
fn check_invariants(
    r: &Reassembly,
    data: &[u8],
    seg: (usize, usize),
    next_before: u64,
    o: &InsertOutcome,
) -> Result<(), TestCaseError> {
    let next = r.next_offset();
    prop_assert_eq!(r.readable() + r.window(), r.capacity());
    prop_assert!(next >= next_before);
    prop_assert_eq!(o.advanced, next - next_before);
    prop_assert!(o.new_bytes <= (seg.1 - seg.0) as u64);
    if o.duplicate {
        prop_assert!(o.new_bytes == 0 && !o.dropped);
    }
    prop_assert!(r.highest_received() >= next);

    let mut out = [(0, 0); 64];
    let n = r.sack_blocks(&mut out);
    let got = &out[..n];
    prop_assert_eq!(n, r.range_count());
    prop_assert_eq!(r.has_gaps(), n > 0);
    let window_end = next + r.window() as u64;
    for &(s, e) in got {
        prop_assert!(next < s && s < e && e <= window_end, "block {s}..{e}");
        prop_assert!(e as usize <= data.len());
        prop_assert!(e <= r.highest_received());
        for i in s..e {
            prop_assert_eq!(r.byte_at(i), data[i as usize]);
        }
    }
    // The order is every range by its latest change, newest first, for
    // any number of blocks asked for (the recent-change list must give
    // what a pass over all ranges gives).
    let mut by_stamp: Vec<&Range> = r.ranges.iter().collect();
    by_stamp.sort_unstable_by_key(|x| core::cmp::Reverse(x.stamp));
    let reference: Vec<(u64, u64)> = by_stamp.iter().map(|x| (x.start, x.end)).collect();
    prop_assert_eq!(got, &reference[..]);
    for k in 1..=4 {
        let mut few = [(0, 0); 4];
        let m = r.sack_blocks(&mut few[..k]);
        prop_assert_eq!(&few[..m], &reference[..m.min(reference.len())]);
        prop_assert_eq!(m, k.min(reference.len()));
    }
    let mut sorted = got.to_vec();
    sorted.sort_unstable();
    for w in sorted.windows(2) {
        prop_assert!(w[0].1 < w[1].0, "blocks overlap or touch: {:?}", sorted);
    }
    // An accepted out-of-order segment is in the first block.
    if o.out_of_order && !o.dropped && seg.1 > seg.0 {
        prop_assert!(got[0].0 <= seg.0 as u64 && seg.1 as u64 <= got[0].1);
    }
    Ok(())
}

proptest! {
    #![proptest_config(crate::test_support::proptest_config(256, 0x4ea5_5e3b))]
    #[test]
    fn any_arrival_order_reassembles(
        data in prop::collection::vec(any::<u8>(), 0..1500),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..40),
        extra in prop::collection::vec((any::<prop::sample::Index>(), 1usize..200), 0..20),
        dups in prop::collection::vec(any::<prop::sample::Index>(), 0..20),
        order_seed in any::<u64>(),
        reads in prop::collection::vec(0usize..300, 1..50),
        capacity in 1usize..600,
        max_ranges in 0usize..24,
        shared in prop::collection::vec(any::<bool>(), 1..64),
    ) {
        let len = data.len();
        let mut points: Vec<usize> = cuts.iter().map(|c| c.index(len + 1)).collect();
        points.extend([0, len]);
        points.sort_unstable();
        points.dedup();
        let mut segs: Vec<(usize, usize)> = points.windows(2).map(|w| (w[0], w[1])).collect();
        let partition = segs.clone();
        if !partition.is_empty() {
            segs.extend(dups.iter().map(|d| partition[d.index(partition.len())]));
        }
        for (at, n) in &extra {
            let s = at.index(len + 1);
            let e = (s + n).min(len);
            if e > s {
                segs.push((s, e));
            }
        }
        // Fisher-Yates with a seeded generator: proptest picks the order.
        let mut rng = ChaCha8Rng::seed_from_u64(order_seed);
        for i in (1..segs.len()).rev() {
            let j = rng.next_u32() as usize % (i + 1);
            segs.swap(i, j);
        }

        let mut r = Reassembly::new(capacity, max_ranges);
        // Fed the same segments, always copied: a payload kept by
        // reference must change nothing that can be observed.
        let mut twin = Reassembly::new(capacity, max_ranges);
        let source = Bytes::from(data.clone());
        let mut twin_buf = vec![0; 300];
        let mut insert_i = 0;
        let mut got = Vec::with_capacity(len);
        let mut buf = vec![0; 300];
        let mut read_i = 0;
        let mut rounds = 0;
        // Refused bytes come back in the next round, as retransmissions
        // would. Each round after a full read advances by at least one byte.
        while got.len() < len {
            rounds += 1;
            prop_assert!(rounds <= len + 2, "no progress");
            for &seg in &segs {
                let next_before = r.next_offset();
                let o = if shared[insert_i % shared.len()] {
                    r.insert_shared(seg.0 as u64, &source.slice(seg.0..seg.1))
                } else {
                    put(&mut r, &data, seg.0, seg.1)
                };
                insert_i += 1;
                prop_assert_eq!(o, put(&mut twin, &data, seg.0, seg.1));
                check_invariants(&r, &data, seg, next_before, &o)?;
                let want = reads[read_i % reads.len()];
                read_i += 1;
                let n = r.read(&mut buf[..want]);
                prop_assert_eq!(n, twin.read(&mut twin_buf[..want]));
                prop_assert_eq!(&buf[..n], &twin_buf[..n]);
                got.extend_from_slice(&buf[..n]);
            }
            loop {
                let n = r.read(&mut buf);
                prop_assert_eq!(n, twin.read(&mut twin_buf));
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
        }
        prop_assert_eq!(got, data);
        prop_assert!(!r.has_gaps());
    }
}

#[test]
fn the_ring_grows_with_the_window_and_keeps_every_held_byte() {
    // A 1 MiB buffer starts with a small ring and grows as segments land
    // further out, out of order and while the application reads: every
    // byte must come out as sent, across growth and wrap-around.
    let cap = 1 << 20;
    let total = 4 * cap;
    let data: Vec<u8> = (0..total).map(|i| (i * 7 % 251) as u8).collect();
    let mut r = Reassembly::new(cap, 1024);
    let mut out = Vec::with_capacity(total);
    let mut buf = vec![0u8; 200_000];
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut step = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    r.insert(0, &data[..1000]);
    assert_eq!(r.buf.len(), INITIAL_RING_BYTES, "the ring starts small");
    while out.len() < total {
        for _ in 0..20 {
            let next = r.next_offset() as usize;
            let room = r.window();
            if next >= total || room == 0 {
                break;
            }
            let ahead = (step() as usize) % room.min(total - next);
            let at = next + ahead;
            let len = 1 + (step() as usize) % 3000;
            let end = (at + len).min(total);
            r.insert(at as u64, &data[at..end]);
        }
        // The hole at RCV.NXT is filled now and then.
        let next = r.next_offset() as usize;
        if next < total && step() % 3 == 0 {
            let end = (next + 1 + (step() as usize) % 5000).min(total);
            r.insert(next as u64, &data[next..end]);
        }
        let want = (step() as usize) % buf.len();
        let n = r.read(&mut buf[..want]);
        out.extend_from_slice(&buf[..n]);
    }
    assert!(out == data, "{} bytes out, or different", out.len());
    assert_eq!(r.buf.len(), cap, "the ring grew to the window it needed");
}

#[test]
fn held_range_names_the_range_around_a_byte() {
    let data = stream(100);
    let mut r = Reassembly::new(100, 8);
    put(&mut r, &data, 0, 10);
    put(&mut r, &data, 20, 30);
    put(&mut r, &data, 40, 50);
    assert_eq!(r.held_range(9), None, "in order, not held");
    assert_eq!(r.held_range(15), None, "a hole");
    assert_eq!(r.held_range(20), Some((20, 30)));
    assert_eq!(r.held_range(29), Some((20, 30)));
    assert_eq!(r.held_range(30), None);
    assert_eq!(r.held_range(49), Some((40, 50)));
    put(&mut r, &data, 30, 40);
    assert_eq!(r.held_range(25), Some((20, 50)), "merged");
    put(&mut r, &data, 10, 20);
    assert_eq!(r.held_range(25), None, "delivered");
}

#[test]
fn an_empty_ring_starts_again_at_its_first_slot() {
    // An application that reads each segment as it lands should keep
    // writing the same first slots (cache-warm) rather than sweep the
    // ring; held data, in order or not, must stay where it is.
    let data = stream(100_000);
    let mut r = Reassembly::new(1 << 20, 64);
    let mut out = Vec::new();
    for at in (0..30_000).step_by(1000) {
        put(&mut r, &data, at, at + 1000);
        assert_eq!(&r.buf[..1000], &data[at..at + 1000], "segment at {at}");
        out.extend(read_all(&mut r));
    }
    // A hole: the segment above it keeps the ring's base until the hole
    // is filled and everything is read.
    put(&mut r, &data, 31_000, 32_000);
    put(&mut r, &data, 30_000, 31_000);
    assert_eq!(&r.buf[..2000], &data[30_000..32_000]);
    out.extend(read_all(&mut r));
    put(&mut r, &data, 32_000, 32_500);
    assert_eq!(&r.buf[..500], &data[32_000..32_500]);
    // Unread data also pins the base.
    put(&mut r, &data, 32_500, 33_000);
    assert_eq!(&r.buf[500..1000], &data[32_500..33_000]);
    out.extend(read_all(&mut r));
    assert!(out == data[..33_000]);
}

#[test]
fn in_order_shared_payloads_are_kept_by_reference() {
    let data = Bytes::from(stream(3000));
    let mut r = Reassembly::new(4000, 8);
    let o = r.insert_shared(0, &data.slice(0..1000));
    assert_eq!((o.advanced, o.new_bytes), (1000, 1000));
    // Overlapping the held part: only the new tail is kept.
    let o = r.insert_shared(500, &data.slice(500..2000));
    assert_eq!((o.advanced, o.new_bytes, o.duplicate), (1000, 1000, false));
    assert_eq!(r.chunk_bytes, 2000);
    assert!(r.buf.is_empty(), "nothing was copied into the ring");
    let mut out = vec![0; 700];
    assert_eq!(r.read(&mut out), 700);
    assert_eq!(&out[..], &data[..700]);
    assert_eq!(r.readable(), 1300);
    assert_eq!(r.window(), 4000 - 1300);
}

#[test]
fn a_hole_behind_shared_chunks_goes_to_the_ring_above_them() {
    let data = Bytes::from(stream(3000));
    let mut r = Reassembly::new(3000, 8);
    r.insert_shared(0, &data.slice(0..1000));
    // Out of order: copied into the ring, which starts above the chunks.
    let o = r.insert_shared(1500, &data.slice(1500..2000));
    assert!(o.out_of_order);
    assert_eq!(r.ring_floor(), 1000);
    // The hole's filler is copied too (the ring holds data), and so is
    // in-order data behind it until the ring is read empty.
    let o = r.insert_shared(1000, &data.slice(1000..1500));
    assert!(o.filled_gap);
    assert_eq!(o.advanced, 1000);
    r.insert_shared(2000, &data.slice(2000..2500));
    assert_eq!(r.chunk_bytes, 1000);
    assert_eq!(read_all(&mut r), &data[..2500]);
    // Drained: shared again, and the ring stays untouched.
    r.insert_shared(2500, &data.slice(2500..3000));
    assert_eq!(r.chunk_bytes, 500);
    assert_eq!(read_all(&mut r), &data[2500..]);
}

#[test]
fn a_shared_payload_past_the_window_is_trimmed_like_a_copied_one() {
    let data = Bytes::from(stream(300));
    let mut r = Reassembly::new(100, 8);
    let o = r.insert_shared(0, &data.slice(0..150));
    assert_eq!((o.advanced, o.dropped), (100, true));
    assert_eq!(r.window(), 0);
    let o = r.insert_shared(100, &data.slice(100..150));
    assert_eq!((o.advanced, o.dropped, o.duplicate), (0, true, false));
    assert_eq!(read_all(&mut r), &data[..100]);
}

#[test]
fn read_chunk_hands_out_shared_chunks_then_copies_ring_bytes() {
    let data = Bytes::from(stream(3000));
    let mut r = Reassembly::new(3000, 8);
    assert_eq!(r.read_chunk(100), None);
    let held = data.slice(0..1000);
    r.insert_shared(0, &held);
    // Out of order, then filled: ring bytes above the chunk.
    r.insert(1500, &data[1500..2000]);
    r.insert(1000, &data[1000..1500]);
    let first = r.read_chunk(600).unwrap();
    assert_eq!(&first[..], &data[..600]);
    assert_eq!(first.as_ptr(), held.as_ptr(), "handed out without a copy");
    assert_eq!(&r.read_chunk(5000).unwrap()[..], &data[600..1000]);
    assert_eq!(&r.read_chunk(700).unwrap()[..], &data[1000..1700]);
    assert_eq!(&r.read_chunk(5000).unwrap()[..], &data[1700..2000]);
    assert_eq!(r.read_chunk(5000), None);
    assert_eq!(r.read_chunk(0), None);
    assert_eq!(r.window(), 3000);
}

#[test]
fn range_bookkeeping_grows_with_the_ranges_held() {
    // A 16 MiB window of 1448-byte segments allows thousands of ranges;
    // a connection must not pay for them before it holds any.
    let mut r = Reassembly::new(16 << 20, (16 << 20) / 1448 + 1);
    assert_eq!(r.ranges.capacity(), 0, "nothing reserved up front");
    let data = stream(40_000);
    for k in 0..5 {
        // Every other 1 000 bytes from 1 000 on: five separate ranges.
        let start = 1_000 + 2_000 * k;
        let out = put(&mut r, &data, start, start + 1_000);
        assert!(out.out_of_order && out.new_bytes == 1_000, "{out:?}");
    }
    assert_eq!(blocks(&r).len(), 5);
    assert!(r.ranges.capacity() < 64, "{}", r.ranges.capacity());
    // Filling the holes reads everything in order.
    for k in 0..5 {
        put(&mut r, &data, 2_000 * k, 2_000 * k + 1_000);
    }
    assert_eq!(read_all(&mut r), data[..10_000]);
}
