//! Unit and property tests of the segment codec.
//!
//! Expected bytes are written out by hand from RFC 9293 / 2018 / 7323 /
//! 6994 rather than produced by the code under test.

use super::*;
use core::net::Ipv4Addr;
use proptest::prelude::*;

/// A 20-byte header with the given data offset (in 32-bit words), ACK set,
/// followed by `options` and `payload`. Options must fill the header.
fn raw_segment(data_offset: u8, options: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut v = vec![
        0x04,
        0xd2,
        0x16,
        0x2e, // ports 1234 -> 5678
        0x00,
        0x00,
        0x00,
        0x01, // seq 1
        0x00,
        0x00,
        0x00,
        0x02, // ack 2
        data_offset << 4,
        0x10, // data offset, ACK
        0x10,
        0x00, // window 4096
        0x00,
        0x00, // checksum
        0x00,
        0x00, // urgent pointer
    ];
    v.extend_from_slice(options);
    v.extend_from_slice(payload);
    v
}

/// Parses a header whose option area is exactly `options` (padded by the
/// caller to a multiple of 4), without checksum.
fn parse_options(options: &[u8]) -> Result<Options, WireError> {
    assert_eq!(options.len() % 4, 0, "test bug: options not padded");
    let bytes = raw_segment(5 + (options.len() / 4) as u8, options, b"");
    SegmentRepr::parse(&bytes, Checksum::Ignore).map(|s| s.options)
}

fn sack(blocks: &[(u32, u32)]) -> SackBlocks {
    let mut s = SackBlocks::new();
    for &(l, r) in blocks {
        assert!(s.push(SeqNum(l), SeqNum(r)));
    }
    s
}

fn repr<'a>(options: Options, payload: &'a [u8]) -> SegmentRepr<'a> {
    SegmentRepr {
        src_port: 0x1234,
        dst_port: 80,
        seq: SeqNum(0x0102_0304),
        ack: SeqNum(0x0a0b_0c0d),
        flags: Flags::ACK | Flags::PSH,
        window: 0xffff,
        options,
        payload,
    }
}

fn try_emit(r: &SegmentRepr<'_>) -> Result<usize, WireError> {
    r.emit(&mut [0u8; 100], Checksum::Ignore)
}

fn emit_vec(r: &SegmentRepr<'_>, checksum: Checksum) -> Vec<u8> {
    let mut buf = vec![0xaa; r.buffer_len() + 7];
    let n = r.emit(&mut buf, checksum).expect("emit");
    assert_eq!(n, r.buffer_len());
    assert_eq!(buf[n..], [0xaa; 7], "emit wrote past buffer_len");
    buf.truncate(n);
    buf
}

/// Independent RFC 1071 checksum over the IPv4 pseudo-header and segment.
fn reference_checksum(src: Ipv4Addr, dst: Ipv4Addr, segment: &[u8]) -> u16 {
    let mut data = Vec::new();
    data.extend_from_slice(&src.octets());
    data.extend_from_slice(&dst.octets());
    data.extend_from_slice(&[0, 6]);
    data.extend_from_slice(&(segment.len() as u16).to_be_bytes());
    data.extend_from_slice(segment);
    if data.len() % 2 == 1 {
        data.push(0);
    }
    let mut sum: u32 = data
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

// ---------------------------------------------------------------- layout

#[test]
fn known_data_segment_bytes() {
    let opts = Options {
        timestamps: Some(Timestamps { tsval: 1, tsecr: 2 }),
        sack: sack(&[(100, 200)]),
        ..Options::default()
    };
    let r = repr(opts, b"hi");
    let bytes = emit_vec(&r, Checksum::Ignore);
    #[rustfmt::skip]
    let expected: &[u8] = &[
        0x12, 0x34, 0x00, 0x50,       // ports 0x1234 -> 80
        0x01, 0x02, 0x03, 0x04,       // seq
        0x0a, 0x0b, 0x0c, 0x0d,       // ack
        0xb0, 0x18,                   // 11 words; ACK|PSH
        0xff, 0xff,                   // window
        0x00, 0x00, 0x00, 0x00,       // checksum (ignored), urgent
        0x01, 0x01, 0x08, 0x0a,       // NOP NOP TS len 10
        0x00, 0x00, 0x00, 0x01,       // tsval
        0x00, 0x00, 0x00, 0x02,       // tsecr
        0x01, 0x01, 0x05, 0x0a,       // NOP NOP SACK len 10
        0x00, 0x00, 0x00, 0x64,       // left 100
        0x00, 0x00, 0x00, 0xc8,       // right 200
        b'h', b'i',
    ];
    assert_eq!(bytes, expected);
    assert_eq!(r.header_len(), 44);
    assert_eq!(SegmentRepr::parse(&bytes, Checksum::Ignore), Ok(r));
}

#[test]
fn known_syn_bytes() {
    let opts = Options {
        mss: Some(1460),
        window_scale: Some(7),
        sack_permitted: true,
        timestamps: Some(Timestamps {
            tsval: 0xdead_beef,
            tsecr: 0,
        }),
        ack_request: Some(AckRequest::Supported),
        ..Options::default()
    };
    let bytes = emitted_syn(opts, Flags::SYN | Flags::ECE | Flags::CWR);
    #[rustfmt::skip]
    let expected_options: &[u8] = &[
        0x02, 0x04, 0x05, 0xb4,       // MSS 1460
        0x01, 0x03, 0x03, 0x07,       // NOP WS 7
        0x04, 0x02, 0x08, 0x0a,       // SACK-permitted, TS len 10
        0xde, 0xad, 0xbe, 0xef,       // tsval
        0x00, 0x00, 0x00, 0x00,       // tsecr
        0xfd, 0x04, 0xac, 0xc5,       // kind 253 len 4 ExID 0xACC5
    ];
    assert_eq!(bytes[12], 0xb0, "data offset 11 words");
    assert_eq!(bytes[13], 0xc2, "SYN|ECE|CWR");
    assert_eq!(&bytes[20..], expected_options);
}

/// A payload-less segment with `opts` and `flags`, emitted, checked to
/// parse back the same.
fn emitted_syn(opts: Options, flags: Flags) -> Vec<u8> {
    let mut r = repr(opts, b"");
    r.flags = flags;
    let bytes = emit_vec(&r, Checksum::Ignore);
    assert_eq!(SegmentRepr::parse(&bytes, Checksum::Ignore), Ok(r));
    bytes
}

#[test]
fn syn_with_every_offer_fits_aligned() {
    // What an ackwise client's SYN on a UDP endpoint carries.
    let opts = Options {
        mss: Some(65_447),
        window_scale: Some(9),
        sack_permitted: true,
        timestamps: Some(Timestamps {
            tsval: 0x0102_0304,
            tsecr: 0,
        }),
        ack_request: Some(AckRequest::Supported),
        ack_nonce: Some(AckNonce::Permitted),
        checksum_omission: true,
        ..Options::default()
    };
    let bytes = emitted_syn(opts, Flags::SYN);
    #[rustfmt::skip]
    let expected_options: &[u8] = &[
        0x02, 0x04, 0xff, 0xa7,       // MSS 65447
        0x01, 0x03, 0x03, 0x09,       // NOP WS 9
        0x04, 0x02, 0x08, 0x0a,       // SACK-permitted, TS len 10
        0x01, 0x02, 0x03, 0x04,       // tsval
        0x00, 0x00, 0x00, 0x00,       // tsecr
        0xfd, 0x04, 0xac, 0xc5,       // ACK request supported
        0xfd, 0x04, 0xac, 0xc6,       // ACK nonce permitted
        0xfd, 0x04, 0xac, 0xc8,       // checksum omission offered
    ];
    assert_eq!(&bytes[20..], expected_options);
}

#[test]
fn countdown_is_followed_by_sack_without_nops() {
    let opts = Options {
        ack_request: Some(AckRequest::Countdown(0x0102)),
        sack: sack(&[(1, 2)]),
        ..Options::default()
    };
    let bytes = emit_vec(&repr(opts, b""), Checksum::Ignore);
    #[rustfmt::skip]
    let expected_options: &[u8] = &[
        0xfd, 0x06, 0xac, 0xc5, 0x01, 0x02, // countdown 0x0102
        0x05, 0x0a,                         // SACK len 10, blocks aligned
        0, 0, 0, 1, 0, 0, 0, 2,
    ];
    assert_eq!(&bytes[20..], expected_options);

    // Without SACK the six bytes are padded with EOL.
    let opts = Options {
        ack_request: Some(AckRequest::Countdown(7)),
        ..Options::default()
    };
    let bytes = emit_vec(&repr(opts, b""), Checksum::Ignore);
    assert_eq!(
        &bytes[20..],
        &[0xfd, 0x06, 0xac, 0xc5, 0x00, 0x07, 0x00, 0x00]
    );
}

#[test]
fn emit_overwrites_garbage_and_ignore_leaves_checksum_zero() {
    let opts = Options {
        window_scale: Some(3),
        ..Options::default()
    };
    let r = repr(opts, b"x");
    let mut buf = [0xffu8; 64];
    let n = r.emit(&mut buf, Checksum::Ignore).unwrap();
    assert_eq!(n, 25);
    assert_eq!(&buf[12..20], &[0x60, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
    assert_eq!(&buf[20..25], &[0x01, 0x03, 0x03, 0x03, b'x']);
    assert_eq!(buf[25], 0xff, "nothing written past the segment");
}

#[test]
fn checksum_matches_reference_implementation() {
    let src = Ipv4Addr::new(10, 0, 0, 1);
    let dst = Ipv4Addr::new(192, 168, 7, 200);
    for payload in [&b""[..], b"a", b"odd-length payload!", &[0xff; 1500][..]] {
        let r = repr(Options::default(), payload);
        let bytes = emit_vec(&r, Checksum::Ipv4 { src, dst });
        let mut zeroed = bytes.clone();
        zeroed[16] = 0;
        zeroed[17] = 0;
        let expect = reference_checksum(src, dst, &zeroed);
        assert_eq!(u16::from_be_bytes([bytes[16], bytes[17]]), expect);
        assert_eq!(
            SegmentRepr::parse(&bytes, Checksum::Ipv4 { src, dst }),
            Ok(r)
        );
    }
}

#[test]
fn bad_checksum_detected() {
    let src = Ipv4Addr::new(1, 2, 3, 4);
    let dst = Ipv4Addr::new(5, 6, 7, 8);
    let r = repr(Options::default(), b"payload");
    let good = emit_vec(&r, Checksum::Ipv4 { src, dst });
    assert!(SegmentRepr::parse(&good, Checksum::Ipv4 { src, dst }).is_ok());

    let mut flipped = good.clone();
    *flipped.last_mut().unwrap() ^= 0x01;
    assert_eq!(
        SegmentRepr::parse(&flipped, Checksum::Ipv4 { src, dst }),
        Err(WireError::BadChecksum)
    );
    // Ignore really ignores it.
    assert!(SegmentRepr::parse(&flipped, Checksum::Ignore).is_ok());
    // Wrong pseudo-header (addresses swapped with a different sum).
    assert_eq!(
        SegmentRepr::parse(&good, Checksum::UNSPECIFIED),
        Err(WireError::BadChecksum)
    );
    // A segment emitted with Ignore has a zero checksum, which is wrong.
    let unsummed = emit_vec(&r, Checksum::Ignore);
    assert_eq!(
        SegmentRepr::parse(&unsummed, Checksum::Ipv4 { src, dst }),
        Err(WireError::BadChecksum)
    );
}

#[test]
fn all_flag_combinations_round_trip() {
    for bits in 0..=255u8 {
        let mut r = repr(Options::default(), b"");
        r.flags = Flags(bits);
        let bytes = emit_vec(&r, Checksum::Ignore);
        assert_eq!(bytes[13], bits, "flag byte for {bits:#04x}");
        assert_eq!(bytes[12] & 0x0f, 0, "reserved and NS bits zero");
        let parsed = SegmentRepr::parse(&bytes, Checksum::Ignore).unwrap();
        assert_eq!(parsed.flags, Flags(bits));
    }
    let ece_cwr = raw_segment(5, &[], b"");
    let mut ece_cwr = ece_cwr;
    ece_cwr[13] = 0xc0;
    let parsed = SegmentRepr::parse(&ece_cwr, Checksum::Ignore).unwrap();
    assert!(parsed.flags.contains(Flags::ECE) && parsed.flags.contains(Flags::CWR));
    assert!(!parsed.flags.contains(Flags::ACK));
}

#[test]
fn emit_buffer_too_small() {
    let r = repr(Options::default(), b"abc");
    let mut buf = [0u8; 22];
    assert_eq!(
        r.emit(&mut buf, Checksum::Ignore),
        Err(WireError::BufferTooSmall { need: 23, have: 22 })
    );
}

// ------------------------------------------------------- malformed input

#[test]
fn truncated_header() {
    for len in [0, 1, 19] {
        let bytes = vec![0u8; len];
        assert_eq!(
            SegmentRepr::parse(&bytes, Checksum::Ignore),
            Err(WireError::Truncated { len })
        );
    }
}

#[test]
fn data_offset_below_five() {
    let bytes = raw_segment(4, &[], b"");
    assert_eq!(
        SegmentRepr::parse(&bytes, Checksum::Ignore),
        Err(WireError::BadDataOffset {
            header_len: 16,
            len: 20
        })
    );
    let bytes = raw_segment(0, &[], b"abcd");
    assert_eq!(
        SegmentRepr::parse(&bytes, Checksum::Ignore),
        Err(WireError::BadDataOffset {
            header_len: 0,
            len: 24
        })
    );
}

#[test]
fn data_offset_past_end() {
    // Claims 24 bytes of header in a 23-byte segment.
    let bytes = raw_segment(6, &[1, 1, 1], b"");
    assert_eq!(
        SegmentRepr::parse(&bytes, Checksum::Ignore),
        Err(WireError::BadDataOffset {
            header_len: 24,
            len: 23
        })
    );
    let bytes = raw_segment(15, &[], b"");
    assert_eq!(
        SegmentRepr::parse(&bytes, Checksum::Ignore),
        Err(WireError::BadDataOffset {
            header_len: 60,
            len: 20
        })
    );
}

#[test]
fn option_overrun() {
    // Kind with no room for its length byte.
    assert_eq!(
        parse_options(&[1, 1, 1, 2]),
        Err(WireError::OptionOverrun { kind: 2 })
    );
    assert_eq!(
        parse_options(&[1, 1, 1, 99]),
        Err(WireError::OptionOverrun { kind: 99 })
    );
    // Length running past the header end into the payload area.
    assert_eq!(
        parse_options(&[8, 10, 0, 0, 0, 0, 0, 0]),
        Err(WireError::OptionOverrun { kind: 8 })
    );
    assert_eq!(
        parse_options(&[1, 1, 99, 3]),
        Err(WireError::OptionOverrun { kind: 99 })
    );
}

#[test]
fn option_length_zero_or_one() {
    for len in [0u8, 1] {
        for kind in [99u8, 2, 5, 253, 254] {
            assert_eq!(
                parse_options(&[kind, len, 0, 0]),
                Err(WireError::BadOptionLength { kind, len }),
                "kind {kind} len {len}"
            );
        }
    }
}

#[test]
fn wrong_length_for_known_kind() {
    let cases: &[(&[u8], u8, u8)] = &[
        (&[2, 3, 5, 1], 2, 3), // MSS needs 4
        (&[2, 6, 0, 0, 0, 0, 0, 0], 2, 6),
        (&[3, 4, 7, 0], 3, 4), // window scale needs 3
        (&[3, 2, 0, 0], 3, 2),
        (&[4, 3, 0, 0], 4, 3),             // SACK-permitted needs 2
        (&[8, 8, 0, 0, 0, 0, 0, 0], 8, 8), // timestamps need 10
        (&[5, 2, 0, 0], 5, 2),             // SACK needs at least one block
    ];
    for &(opts, kind, len) in cases {
        assert_eq!(
            parse_options(opts),
            Err(WireError::BadOptionLength { kind, len }),
            "{opts:?}"
        );
    }
}

#[test]
fn sack_with_five_blocks() {
    let mut opts = vec![5, 42];
    opts.resize(40, 0);
    assert_eq!(
        parse_options(&opts),
        Err(WireError::TooManySackBlocks { blocks: 5 })
    );
    let mut opts = vec![1, 1, 5, 2 + 8 * 31];
    opts.resize(8, 0);
    assert_eq!(
        parse_options(&opts),
        Err(WireError::TooManySackBlocks { blocks: 31 })
    );
}

#[test]
fn sack_length_not_a_whole_block() {
    let mut opts = vec![5, 11];
    opts.resize(12, 0);
    assert_eq!(
        parse_options(&opts),
        Err(WireError::BadOptionLength { kind: 5, len: 11 })
    );
}

#[test]
fn our_exid_with_wrong_length() {
    let opts = [253, 5, 0xac, 0xc5, 0, 0, 0, 0];
    assert_eq!(
        parse_options(&opts),
        Err(WireError::BadOptionLength { kind: 253, len: 5 })
    );
    // 8 bytes is a sender-window announcement; 7 and 10 are nothing.
    let opts = [253, 7, 0xac, 0xc5, 0, 0, 0, 0];
    assert_eq!(
        parse_options(&opts),
        Err(WireError::BadOptionLength { kind: 253, len: 7 })
    );
    let opts = [253, 10, 0xac, 0xc5, 0, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(
        parse_options(&opts),
        Err(WireError::BadOptionLength { kind: 253, len: 10 })
    );
    // The checksum-omission offer carries no value.
    let opts = [253, 6, 0xac, 0xc8, 0, 0, 0, 0];
    assert_eq!(
        parse_options(&opts),
        Err(WireError::BadOptionLength { kind: 253, len: 6 })
    );
}

// ------------------------------------------------------- accepted input

#[test]
fn four_block_sack_from_peer_parsed_whole() {
    #[rustfmt::skip]
    let opts = [
        1, 1, 5, 34,
        0, 0, 0, 1, 0, 0, 0, 2,
        0, 0, 0, 3, 0, 0, 0, 4,
        0, 0, 0, 5, 0, 0, 0, 6,
        0xff, 0xff, 0xff, 0xff, 0, 0, 0, 8,
    ];
    let parsed = parse_options(&opts).unwrap();
    assert_eq!(
        parsed.sack.as_slice(),
        sack(&[(1, 2), (3, 4), (5, 6), (u32::MAX, 8)]).as_slice()
    );
    // ...and emitted whole again: 36 bytes of options.
    let r = repr(parsed, b"");
    assert_eq!(r.header_len(), 56);
    assert_eq!(&emit_vec(&r, Checksum::Ignore)[20..], &opts);
}

#[test]
fn unknown_and_foreign_experimental_options_skipped() {
    #[rustfmt::skip]
    let opts = [
        30, 6, 1, 2, 3, 4,            // unknown kind 30 (MPTCP-like)
        254, 4, 0xac, 0xc5,           // kind 254, even with our ExID
        253, 6, 0x12, 0x34, 0, 1,     // kind 253, someone else's ExID
        253, 2,                       // kind 253 too short for an ExID
        253, 3, 0xac,                 // kind 253 too short for an ExID
        2, 4, 0x05, 0xdc,             // MSS 1500
        99, 2,                        // unknown, empty
        1, 0, 0xff, 0xff, 0xff,       // NOP, EOL, garbage after EOL
    ];
    let parsed = parse_options(&opts).unwrap();
    assert_eq!(
        parsed,
        Options {
            mss: Some(1500),
            ..Options::default()
        }
    );
}

#[test]
fn ack_request_variants_parsed() {
    assert_eq!(
        parse_options(&[253, 4, 0xac, 0xc5]).unwrap().ack_request,
        Some(AckRequest::Supported)
    );
    assert_eq!(
        parse_options(&[253, 6, 0xac, 0xc5, 0xbe, 0xef, 0, 0])
            .unwrap()
            .ack_request,
        Some(AckRequest::Countdown(0xbeef))
    );
    assert_eq!(
        parse_options(&[253, 8, 0xac, 0xc5, 0, 1, 0x02, 0x03])
            .unwrap()
            .ack_request,
        Some(AckRequest::SenderWindow(0x0001_0203))
    );
}

#[test]
fn window_scale_clamped_to_fourteen() {
    for shift in [14u8, 15, 200, 255] {
        let parsed = parse_options(&[1, 3, 3, shift]).unwrap();
        assert_eq!(parsed.window_scale, Some(14), "shift {shift}");
    }
    let r = repr(
        Options {
            window_scale: Some(99),
            ..Options::default()
        },
        b"",
    );
    assert_eq!(
        emit_vec(&r, Checksum::Ignore)[23],
        14,
        "clamped on emit too"
    );
}

#[test]
fn duplicate_options_last_wins() {
    #[rustfmt::skip]
    let opts = [
        2, 4, 0, 1,
        2, 4, 0, 2,
        1, 1, 5, 10, 0, 0, 0, 1, 0, 0, 0, 2,
        1, 1, 5, 10, 0, 0, 0, 3, 0, 0, 0, 4,
    ];
    let parsed = parse_options(&opts).unwrap();
    assert_eq!(parsed.mss, Some(2));
    assert_eq!(parsed.sack.as_slice(), sack(&[(3, 4)]).as_slice());
}

// ------------------------------------------------------- SACK truncation

#[test]
fn sack_truncated_beside_timestamps() {
    let four = sack(&[(1, 2), (3, 4), (5, 6), (7, 8)]);
    let opts = Options {
        timestamps: Some(Timestamps {
            tsval: 9,
            tsecr: 10,
        }),
        sack: four,
        ..Options::default()
    };
    assert_eq!(opts.sack_capacity(), 3);
    let r = repr(opts, b"data");
    assert_eq!(r.header_len(), 60);
    let bytes = emit_vec(&r, Checksum::Ignore);
    assert_eq!(&bytes[32..36], &[1, 1, 5, 26], "NOP NOP SACK of 3 blocks");
    let parsed = SegmentRepr::parse(&bytes, Checksum::Ignore).unwrap();
    assert_eq!(parsed.options.sack.as_slice(), &four.as_slice()[..3]);
    assert_eq!(parsed.payload, b"data");

    // A countdown takes room for one more block.
    let opts = Options {
        ack_request: Some(AckRequest::Countdown(3)),
        ..opts
    };
    assert_eq!(opts.sack_capacity(), 2);
    let bytes = emit_vec(&repr(opts, b""), Checksum::Ignore);
    let parsed = SegmentRepr::parse(&bytes, Checksum::Ignore).unwrap();
    assert_eq!(parsed.options.sack.as_slice(), &four.as_slice()[..2]);

    // Alone, all four fit.
    let opts = Options {
        sack: four,
        ..Options::default()
    };
    assert_eq!(opts.sack_capacity(), 4);
    assert_eq!(opts.encoded_len(), 36);
}

#[test]
fn alignment_dropped_rather_than_a_sack_block() {
    // Timestamps + Supported + 3 blocks is 10 + 4 + 26 = 40 bytes packed,
    // 44 aligned: the packed form is used and keeps all three blocks.
    let three = sack(&[(1, 2), (3, 4), (5, 6)]);
    let opts = Options {
        timestamps: Some(Timestamps { tsval: 1, tsecr: 2 }),
        ack_request: Some(AckRequest::Supported),
        sack: three,
        ..Options::default()
    };
    let r = repr(opts, b"");
    assert_eq!(r.header_len(), 60);
    let bytes = emit_vec(&r, Checksum::Ignore);
    assert_eq!(&bytes[20..22], &[8, 10], "timestamps first, no NOPs");
    assert_eq!(&bytes[30..36], &[253, 4, 0xac, 0xc5, 5, 26]);
    assert_eq!(SegmentRepr::parse(&bytes, Checksum::Ignore), Ok(r));
}

/// Option bytes of each option without any alignment, the model the tests
/// use to predict how many SACK blocks fit.
fn packed_len(o: &Options) -> usize {
    4 * usize::from(o.mss.is_some())
        + 3 * usize::from(o.window_scale.is_some())
        + 2 * usize::from(o.sack_permitted)
        + 10 * usize::from(o.timestamps.is_some())
        + match o.ack_request {
            None => 0,
            Some(AckRequest::Supported) => 4,
            Some(AckRequest::Countdown(_)) => 6,
            Some(AckRequest::SenderWindow(_)) => 8,
        }
        + match o.ack_nonce {
            None => 0,
            Some(AckNonce::Permitted) => 4,
            Some(AckNonce::Nonce(_)) => 6,
        }
        + match (o.nonce_echo, o.arrival_echo) {
            (None, _) => 0,
            (Some(_), None) => 6,
            (Some(_), Some(_)) => 8,
        }
        + 4 * usize::from(o.checksum_omission)
}

/// SACK blocks of `o` that emit keeps: as many as fit packed.
fn expected_sack_blocks(o: &Options) -> usize {
    let room = MAX_OPTIONS_LEN - packed_len(o);
    let fit = if room >= 10 { (room - 2) / 8 } else { 0 };
    fit.min(o.sack.len())
}

#[test]
fn every_option_combination_emits_consistently() {
    // The largest option set of a segment after the handshake, aligned:
    // what `Options::write` counts on to emit in one pass.
    let busiest = Options {
        timestamps: Some(Timestamps { tsval: 1, tsecr: 2 }),
        ack_request: Some(AckRequest::SenderWindow(u32::MAX)),
        ack_nonce: Some(AckNonce::Nonce(7)),
        nonce_echo: Some(9),
        arrival_echo: Some(10),
        ..Options::default()
    };
    assert_eq!(busiest.encoded_len(), 36);
    let blocks = [(10, 20), (30, 40), (50, 60), (70, 80)];
    let requests = [
        None,
        Some(AckRequest::Supported),
        Some(AckRequest::Countdown(5)),
        Some(AckRequest::SenderWindow(77)),
    ];
    let nonces = [
        (None, None, None),
        (Some(AckNonce::Permitted), None, None),
        (Some(AckNonce::Nonce(0xbeef)), None, None),
        (None, Some(0x1234), None),
        (Some(AckNonce::Nonce(7)), Some(9), None),
        (None, Some(9), Some(0xfedc)),
        (Some(AckNonce::Nonce(7)), Some(9), Some(10)),
    ];
    for bits in 0..32u8 {
        for (ack_request, (ack_nonce, nonce_echo, arrival_echo)) in requests
            .into_iter()
            .flat_map(|r| nonces.into_iter().map(move |n| (r, n)))
        {
            for n in 0..=4 {
                let opts = Options {
                    mss: (bits & 1 != 0).then_some(536),
                    window_scale: (bits & 2 != 0).then_some(14),
                    sack_permitted: bits & 4 != 0,
                    timestamps: (bits & 8 != 0).then_some(Timestamps { tsval: 1, tsecr: 2 }),
                    ack_request,
                    ack_nonce,
                    nonce_echo,
                    arrival_echo,
                    sack: sack(&blocks[..n]),
                    checksum_omission: bits & 16 != 0,
                };
                if packed_len(&opts) > MAX_OPTIONS_LEN {
                    // SYN options beside a data segment's or an ACK's:
                    // a segment nobody sends, and more than 40 bytes.
                    let syn_options = opts.mss.is_some()
                        || opts.window_scale.is_some()
                        || opts.sack_permitted
                        || opts.checksum_omission;
                    assert!(syn_options, "{opts:?}");
                    assert_eq!(
                        try_emit(&repr(opts, b"p")),
                        Err(WireError::OptionsTooLong {
                            len: packed_len(&opts).next_multiple_of(4)
                        })
                    );
                    continue;
                }
                let r = repr(opts, b"p");
                let bytes = emit_vec(&r, Checksum::Ignore);
                let hl = r.header_len();
                assert!(hl.is_multiple_of(4) && hl <= 60, "{opts:?}: {hl}");
                assert_eq!(usize::from(bytes[12] >> 4) * 4, hl, "{opts:?}");
                let k = expected_sack_blocks(&opts);
                assert_eq!(opts.sack_capacity().min(n), k, "{opts:?}");
                let parsed = SegmentRepr::parse(&bytes, Checksum::Ignore).unwrap();
                let mut want = r;
                want.options.sack.truncate(k);
                assert_eq!(parsed, want);
            }
        }
    }
}

// ------------------------------------------------------------- proptest

fn arb_options() -> impl Strategy<Value = Options> {
    let ack_request = prop_oneof![
        Just(None),
        Just(Some(AckRequest::Supported)),
        any::<u16>().prop_map(|n| Some(AckRequest::Countdown(n))),
        any::<u32>().prop_map(|w| Some(AckRequest::SenderWindow(w))),
    ];
    (
        proptest::option::of(any::<u16>()),
        proptest::option::of(0u8..=14),
        any::<bool>(),
        proptest::collection::vec(any::<(u32, u32)>(), 0..=4),
        proptest::option::of(any::<(u32, u32)>()),
        ack_request,
        prop_oneof![
            Just(None),
            Just(Some(AckNonce::Permitted)),
            any::<u16>().prop_map(|n| Some(AckNonce::Nonce(n))),
        ],
        proptest::option::of((any::<u16>(), proptest::option::of(any::<u16>()))),
        any::<bool>(),
    )
        .prop_map(
            |(
                mss,
                window_scale,
                sack_permitted,
                blocks,
                ts,
                ack_request,
                ack_nonce,
                echoes,
                checksum_omission,
            )| {
                let mut o = Options {
                    mss,
                    window_scale,
                    sack_permitted,
                    sack: sack(&blocks),
                    timestamps: ts.map(|(tsval, tsecr)| Timestamps { tsval, tsecr }),
                    ack_request,
                    ack_nonce,
                    nonce_echo: echoes.map(|(e, _)| e),
                    arrival_echo: echoes.and_then(|(_, a)| a),
                    checksum_omission,
                };
                // Every option at once is more than 40 bytes; the SYN-only
                // ones never meet the echoes on the wire.
                if packed_len(&o) > MAX_OPTIONS_LEN {
                    o.mss = None;
                }
                if packed_len(&o) > MAX_OPTIONS_LEN {
                    o.checksum_omission = false;
                }
                o
            },
        )
}

proptest! {
    #![proptest_config(crate::test_support::proptest_config(512, 0x3c0_dec))]

    #[test]
    fn emit_then_parse_round_trips(
        src_port in any::<u16>(),
        dst_port in any::<u16>(),
        seq in any::<u32>(),
        ack in any::<u32>(),
        flags in any::<u8>(),
        window in any::<u16>(),
        options in arb_options(),
        payload in proptest::collection::vec(any::<u8>(), 0..=1500),
        src in any::<[u8; 4]>(),
        dst in any::<[u8; 4]>(),
    ) {
        let input = SegmentRepr {
            src_port,
            dst_port,
            seq: SeqNum(seq),
            ack: SeqNum(ack),
            flags: Flags(flags),
            window,
            options,
            payload: &payload,
        };
        let checksum = Checksum::Ipv4 { src: Ipv4Addr::from(src), dst: Ipv4Addr::from(dst) };
        let mut buf = vec![0u8; 60 + payload.len()];
        let n = input.emit(&mut buf, checksum).unwrap();
        prop_assert_eq!(n, input.buffer_len());
        prop_assert_eq!(n, input.header_len() + payload.len());
        let parsed = SegmentRepr::parse(&buf[..n], checksum).unwrap();

        let k = expected_sack_blocks(&options);
        prop_assert_eq!(parsed.options.sack.as_slice(), &options.sack.as_slice()[..k]);
        let mut expected = input;
        expected.options.sack.truncate(k);
        prop_assert_eq!(parsed, expected);
    }
}

#[test]
fn reset_reply_follows_rfc_9293_3_10_7_1() {
    // With ACK: the reset takes its sequence number from the ACK field.
    let mut seg = repr(Options::default(), b"abc");
    let rst = seg.reset_reply().unwrap();
    assert_eq!((rst.src_port, rst.dst_port), (seg.dst_port, seg.src_port));
    assert_eq!(
        (rst.seq, rst.ack, rst.flags),
        (seg.ack, SeqNum(0), Flags::RST)
    );
    assert!(rst.payload.is_empty());
    // Without ACK: seq 0, acknowledging the payload plus SYN and FIN.
    seg.flags = Flags::SYN | Flags::FIN;
    let rst = seg.reset_reply().unwrap();
    assert_eq!(
        (rst.seq, rst.ack, rst.flags),
        (SeqNum(0), seg.seq.add(5), Flags::RST | Flags::ACK)
    );
    // A reset is never answered.
    seg.flags = Flags::RST | Flags::ACK;
    assert!(seg.reset_reply().is_none());
}

#[test]
fn the_empty_constants_are_the_defaults() {
    assert_eq!(Options::EMPTY, Options::default());
    let zero = SegmentRepr {
        src_port: 0,
        dst_port: 0,
        seq: SeqNum(0),
        ack: SeqNum(0),
        flags: Flags::default(),
        window: 0,
        options: Options::default(),
        payload: &[],
    };
    assert_eq!(SegmentRepr::EMPTY, zero);
}

#[test]
fn parsing_in_place_gives_what_parse_returns() {
    let options = Options {
        timestamps: Some(Timestamps { tsval: 7, tsecr: 9 }),
        sack: sack(&[(100, 200), (300, 400)]),
        ..Options::default()
    };
    let payload = [0x5a; 33];
    let mut buf = [0u8; 200];
    let n = repr(options, &payload)
        .emit(&mut buf, Checksum::Ignore)
        .unwrap();
    let mut seg = SegmentRepr::EMPTY;
    seg.parse_from(&buf[..n], Checksum::Ignore).unwrap();
    assert_eq!(
        seg,
        SegmentRepr::parse(&buf[..n], Checksum::Ignore).unwrap()
    );
    assert_eq!(seg, repr(options, &payload));
    for bad in [&buf[..10], &[0x10u8; 20][..]] {
        let mut seg = SegmentRepr::EMPTY;
        assert_eq!(
            seg.parse_from(bad, Checksum::Ignore),
            SegmentRepr::parse(bad, Checksum::Ignore).map(|_| ())
        );
    }
}
