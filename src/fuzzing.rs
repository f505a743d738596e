//! Fuzz harnesses, shared by the cargo-fuzz targets under `fuzz/` (run
//! on nightly for hours) and by `tests/fuzz_corpus.rs`, which replays the
//! checked-in corpus and a few thousand seeded inputs through the same
//! functions on stable, so that every CI run exercises every target.
//!
//! Each harness takes arbitrary bytes, must never panic, and checks what
//! can be checked whatever the input:
//!
//! - [`connection`]: a live connection between two [`Connection`]s driven
//!   by the input as a program (writes, reads, closes, aborts, time
//!   steps, deliveries, drops, duplicates, mutated and forged segments):
//!   with no forged or mutated segment, every byte read is the byte the
//!   peer wrote at that offset, and when the listening side declines the
//!   ACK nonce no ACK of it is refused for naming a point where no
//!   segment ends; with them, the connections must still never panic and
//!   never hold more than their buffers.
//! - [`reassembly`]: arbitrary inserts and reads against a byte-per-offset
//!   model of the receive buffer.
//! - [`segment`]: parse, and emit then parse again unchanged.
//! - [`syn_cookie`]: every SYN comes back through its cookie with the
//!   same options; any other segment checked as a cookie must not panic.
//! - `scenario_toml` (feature `lab`): a scenario file is parsed and
//!   checked or refused with an error.
//! - `transfer_header` (features `lab` and `tokio`): a file-transfer
//!   header is read or refused, and what is read encodes back to the
//!   bytes it came from.
//! - `relay_datagrams` (features `lab` and `tokio`): the relay's two
//!   emulated links, with ACK filtering or ACK delay control on the
//!   reverse one as the input chooses, fed arbitrary datagrams and pure
//!   ACKs of several clients: a datagram leaves unchanged and to the
//!   client it came for, or not at all, and queues stay within their
//!   buffers.

use crate::connection::{AckNonceMode, Config, Connection};
use crate::receiver::Reassembly;
use crate::testing::TestRng;
use crate::time::{Duration, Instant};
use crate::wire::{Checksum, SegmentRepr};
use bytes::Bytes;
use std::collections::VecDeque;

/// Byte `i` of what each side writes: both sides' streams are known, so
/// a read can be checked without keeping what was written.
fn stream_byte(side: usize, offset: u64) -> u8 {
    ((offset.wrapping_mul(31)).wrapping_add(side as u64 * 101) % 251) as u8
}

/// The input, read as a program: one byte at a time, zero when it runs
/// out.
struct Program<'a> {
    data: &'a [u8],
    at: usize,
}

impl Program<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }
    fn done(&self) -> bool {
        self.at >= self.data.len()
    }
}

/// A live connection driven by `data`; see the module docs. Returns the
/// bytes read by both sides together.
pub fn connection(data: &[u8]) -> u64 {
    let mut p = Program { data, at: 0 };
    let mut config = Config {
        send_buffer: 64 * 1024,
        recv_buffer: 64 * 1024,
        idle_timeout: None,
        ..Config::default()
    };
    // The first byte picks a few settings, so the corpus covers them.
    let flags = p.byte();
    config.mss = 200 + u16::from(flags & 0x0f) * 100;
    config.nagle = flags & 0x10 != 0;
    // The listening side may decline the nonce, so that the client cuts
    // segments and checks the ends its ACKs name.
    let server_config = Config {
        ack_nonce: if flags & 0x20 != 0 {
            AckNonceMode::Off
        } else {
            config.ack_nonce
        },
        ..config.clone()
    };
    let mut rng = TestRng::seed_from_u64(u64::from(flags));
    let mut now = Instant::from_millis(1);
    let Ok(client) = Connection::connect(config.clone(), now, 40_000, 80, &mut rng) else {
        return 0;
    };
    let mut conns: [Option<Connection>; 2] = [Some(client), None];
    // Segments in flight towards side 0 and side 1.
    let mut wires: [VecDeque<Vec<u8>>; 2] = [VecDeque::new(), VecDeque::new()];
    let mut written = [0u64; 2];
    let mut read = [0u64; 2];
    let mut forged = false;
    let mut buf = vec![0u8; 70_000];
    while !p.done() {
        let op = p.byte();
        let side = usize::from(op >> 7);
        match op & 0x0f {
            // Write a run of the side's stream.
            0 | 1 => {
                if let Some(c) = conns[side].as_mut() {
                    let len = usize::from(p.byte()) * 64;
                    let chunk: Vec<u8> = (0..len as u64)
                        .map(|i| stream_byte(side, written[side] + i))
                        .collect();
                    written[side] += c.write(&chunk) as u64;
                }
            }
            // Read, checking every byte against the peer's stream: 2
            // copies, 3 takes a chunk (by reference where held so).
            2 | 3 => {
                if let Some(c) = conns[side].as_mut() {
                    let want = usize::from(p.byte()) * 64 + 1;
                    let n = if op & 0x0f == 2 {
                        c.read(&mut buf[..want])
                    } else {
                        let chunk = c.read_chunk(want).unwrap_or_default();
                        assert!(chunk.len() <= want, "a chunk longer than asked for");
                        buf[..chunk.len()].copy_from_slice(&chunk);
                        chunk.len()
                    };
                    if !forged {
                        for (i, &b) in buf[..n].iter().enumerate() {
                            let at = read[side] + i as u64;
                            assert_eq!(b, stream_byte(1 - side, at), "byte {at} of side {side}");
                        }
                    }
                    read[side] += n as u64;
                    assert!(
                        read[side] <= written[1 - side] || forged,
                        "read past the peer's writes"
                    );
                }
            }
            // Collect what a side has to send.
            4 | 5 => {
                if let Some(c) = conns[side].as_mut() {
                    while let Some(n) = c.poll_transmit(now, &mut buf) {
                        wires[1 - side].push_back(buf[..n].to_vec());
                        if wires[1 - side].len() > 4096 {
                            break;
                        }
                    }
                }
            }
            // Deliver, drop, duplicate or reorder the next segment
            // towards a side.
            6 | 7 => {
                let how = p.byte();
                let Some(seg) = wires[side].pop_front() else {
                    continue;
                };
                match how & 3 {
                    0 => {}
                    1 => wires[side].push_back(seg.clone()),
                    2 => {
                        wires[side].push_back(seg);
                        continue;
                    }
                    _ => {}
                }
                if how & 3 == 3 {
                    continue; // dropped
                }
                deliver(&mut conns, side, &server_config, now, &seg, &mut rng);
            }
            // Let time pass, firing due timers on both sides.
            8 => {
                now = now
                    .checked_add(Duration::from_millis(u64::from(p.byte()) * 8))
                    .unwrap_or(now);
                for c in conns.iter_mut().flatten() {
                    if c.poll_timeout().is_some_and(|t| t <= now) {
                        c.handle_timeout(now);
                    }
                }
            }
            // A mutated copy of the next segment towards a side.
            9 => {
                if let Some(mut seg) = wires[side].front().cloned() {
                    let at = usize::from(p.byte()) % seg.len().max(1);
                    if let Some(b) = seg.get_mut(at) {
                        *b ^= p.byte() | 1;
                    }
                    forged = true;
                    deliver(&mut conns, side, &server_config, now, &seg, &mut rng);
                }
            }
            // A segment made of the next input bytes.
            10 => {
                let len = usize::from(p.byte() % 80);
                let seg: Vec<u8> = (0..len).map(|_| p.byte()).collect();
                forged = true;
                deliver(&mut conns, side, &server_config, now, &seg, &mut rng);
            }
            11 => {
                if let Some(c) = conns[side].as_mut() {
                    c.close();
                }
            }
            12 if op & 0x40 != 0 => {
                if let Some(c) = conns[side].as_mut() {
                    c.abort();
                }
            }
            _ => {
                for c in conns.iter_mut().flatten() {
                    while c.poll_event().is_some() {}
                }
            }
        }
        for c in conns.iter().flatten() {
            assert!(
                c.readable() <= config.recv_buffer,
                "holds more than its buffer"
            );
            assert!(
                forged || c.stats().segment_end_failures == 0,
                "an honest peer's ACK was refused for naming a point where no segment ends"
            );
        }
    }
    read[0] + read[1]
}

/// Hands `seg` to `side` by one of the three ways of receiving, chosen by
/// its length so that each meets every kind of input: by reference, as a
/// slice, or as header and payload apart (split where its data offset
/// says the header ends, wherever that is); a SYN for side 1 before it
/// exists opens it.
fn deliver(
    conns: &mut [Option<Connection>; 2],
    side: usize,
    config: &Config,
    now: Instant,
    seg: &[u8],
    rng: &mut TestRng,
) {
    match conns[side].as_mut() {
        Some(c) if seg.len().is_multiple_of(2) => {
            let _ = c.handle_segment_shared(now, &Bytes::copy_from_slice(seg), false);
        }
        Some(c) if seg.len() % 4 == 1 => {
            let at = seg
                .get(12)
                .map_or(seg.len(), |b| usize::from(b >> 4) * 4)
                .min(seg.len());
            let payload = Bytes::copy_from_slice(&seg[at..]);
            let _ = c.handle_segment_parts(now, &seg[..at], &payload, false);
        }
        Some(c) => {
            let _ = c.handle_segment(now, seg);
        }
        None => {
            if let Ok(c) = Connection::accept(config.clone(), now, seg, rng) {
                conns[side] = Some(c);
            }
        }
    }
}

/// Inserts and reads driven by `data`, against a model that records the
/// byte at every offset inserted; see the module docs.
pub fn reassembly(data: &[u8]) {
    let mut p = Program { data, at: 0 };
    let capacity = 64 + usize::from(p.byte()) * 64;
    let mut r = Reassembly::new(capacity, 1 + usize::from(p.byte() % 8));
    let byte_at = |o: u64| (o.wrapping_mul(7) % 253) as u8;
    let mut delivered = 0u64;
    let mut out = vec![0u8; 20_000];
    while !p.done() {
        let op = p.byte();
        if op & 1 == 0 {
            let offset = delivered + u64::from(p.byte()) * 16 + u64::from(p.byte());
            // Some inserts start below what was read (retransmissions).
            let offset = offset.saturating_sub(u64::from(p.byte() % 4) * 200);
            let len = usize::from(p.byte()) * 8;
            let seg: Vec<u8> = (0..len as u64).map(|i| byte_at(offset + i)).collect();
            let before = r.next_offset();
            // Bit 1 hands the payload over by reference.
            let outcome = if op & 2 == 0 {
                r.insert(offset, &seg)
            } else {
                r.insert_shared(offset, &Bytes::from(seg))
            };
            assert_eq!(r.next_offset(), before + outcome.advanced);
            assert!(r.readable() <= r.capacity());
        } else {
            let want = usize::from(p.byte()) * 64 + 1;
            let n = if op & 2 == 0 {
                r.read(&mut out[..want])
            } else {
                let chunk = r.read_chunk(want).unwrap_or_default();
                assert!(chunk.len() <= want);
                out[..chunk.len()].copy_from_slice(&chunk);
                chunk.len()
            };
            for (i, &b) in out[..n].iter().enumerate() {
                assert_eq!(
                    b,
                    byte_at(delivered + i as u64),
                    "offset {}",
                    delivered + i as u64
                );
            }
            delivered += n as u64;
        }
        let mut blocks = [(0u64, 0u64); 4];
        let k = r.sack_blocks(&mut blocks);
        for &(lo, hi) in &blocks[..k] {
            assert!(
                lo < hi && lo > r.next_offset(),
                "SACK block {lo}..{hi} at {}",
                r.next_offset()
            );
        }
    }
}

/// Parse, and emit then parse again unchanged.
pub fn segment(data: &[u8]) {
    let Ok(repr) = SegmentRepr::parse(data, Checksum::Ignore) else {
        return;
    };
    let mut buf = vec![0u8; repr.buffer_len()];
    let n = repr
        .emit(&mut buf, Checksum::Ignore)
        .expect("a parsed segment must emit");
    assert_eq!(n, buf.len(), "emit length disagrees with buffer_len");
    let again = SegmentRepr::parse(&buf, Checksum::Ignore).expect("re-parse");
    assert_eq!(again, repr, "parse/emit not idempotent");
}

/// SYN cookies (`connection::syn_cookie`): the input's first 8 bytes
/// pick the time, the rest is a segment arriving at a listening end. A
/// SYN the parser accepts must come back through its cookie: answered,
/// its SYN-ACK's ACK must check and open an established connection. Any
/// other segment is checked as a returning cookie and must not panic;
/// what it opens, if anything, must be established.
pub fn syn_cookie(data: &[u8]) {
    use crate::connection::syn_cookie::{SynCookies, Tuple};
    use crate::wire::{Flags, Options, SeqNum, Timestamps};
    let (clock, seg) = data.split_at(data.len().min(8));
    let mut ms = [0u8; 8];
    ms[..clock.len()].copy_from_slice(clock);
    // Up to about 35 years of milliseconds, so the counter wraps too.
    let now = Instant::from_millis(u64::from_le_bytes(ms) >> 24);
    let mut rng = TestRng::seed_from_u64(0x5eed);
    let cookies = SynCookies::new(&mut rng);
    let config = Config {
        checksums: false,
        ..Config::default()
    };
    let Ok(repr) = SegmentRepr::parse(seg, Checksum::Ignore) else {
        return;
    };
    let tuple = Tuple {
        peer: "192.0.2.1:9".parse().expect("an address"),
        peer_port: repr.src_port,
        local_port: repr.dst_port,
    };
    let f = repr.flags;
    if !(f.contains(Flags::SYN) && !f.contains(Flags::ACK) && !f.contains(Flags::RST)) {
        if let Some(v) = cookies.check(now, &tuple, &repr, Checksum::Ignore) {
            if let Ok(c) = Connection::accept_cookie_ack(
                config,
                now,
                &v.syn,
                v.iss,
                v.ts_offset,
                (seg, false),
                &mut rng,
            ) {
                assert!(c.is_established());
            }
        }
        return;
    }
    let v = cookies
        .answer(now, &tuple, &repr, config.timestamps, Checksum::Ignore)
        .expect("every parsed SYN can be answered");
    let Ok(mut answering) =
        Connection::accept_stateless(config.clone(), now, &v.syn, v.iss, v.ts_offset, &mut rng)
    else {
        return;
    };
    let mut buf = [0u8; 256];
    let n = answering.poll_transmit(now, &mut buf).expect("a SYN-ACK");
    let syn_ack = SegmentRepr::parse(&buf[..n], Checksum::Ignore).expect("our SYN-ACK parses");
    // The client's ACK, as an honest client would send it.
    let ack = SegmentRepr {
        src_port: repr.src_port,
        dst_port: repr.dst_port,
        seq: SeqNum(repr.seq.0.wrapping_add(1)),
        ack: SeqNum(syn_ack.seq.0.wrapping_add(1)),
        flags: Flags::ACK,
        window: 1000,
        options: Options {
            timestamps: syn_ack.options.timestamps.map(|t| Timestamps {
                tsval: 1,
                tsecr: t.tsval,
            }),
            ..Options::default()
        },
        payload: &[],
    };
    let mut ack_bytes = vec![0u8; ack.buffer_len()];
    ack.emit(&mut ack_bytes, Checksum::Ignore)
        .expect("an ACK emits");
    let later = now + Duration::from_millis(100);
    let back = cookies
        .check(later, &tuple, &ack, Checksum::Ignore)
        .expect("a fresh cookie checks");
    let c = Connection::accept_cookie_ack(
        config,
        later,
        &back.syn,
        back.iss,
        back.ts_offset,
        (&ack_bytes, false),
        &mut rng,
    )
    .expect("the cookie opens the connection");
    assert!(c.is_established());
    assert_eq!(
        c.negotiated(),
        answering.negotiated(),
        "the cookie lost part of the offer"
    );
}

/// A scenario file: parsed and checked, or refused with an error.
#[cfg(feature = "lab")]
pub fn scenario_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(file) = crate::lab::scenario::ScenarioFile::from_toml(text) {
        let _ = file.to_scenario();
    }
}

/// A file-transfer header: read or refused; a header that reads encodes
/// back to the bytes it was read from (at the versions written: 2 for a
/// sender that cannot resume, the current one for one that can).
#[cfg(all(feature = "lab", feature = "tokio"))]
pub fn transfer_header(data: &[u8]) {
    use crate::net::transfer::protocol;
    let Ok(rt) = tokio::runtime::Builder::new_current_thread().build() else {
        return;
    };
    let mut reader = data;
    let read = rt.block_on(protocol::read_header(&mut reader));
    if let Ok(Ok(Some(header))) = read {
        let used = data.len() - reader.len();
        if matches!(data.get(4), Some(&v) if v == 2 || v == protocol::VERSION) {
            let again = protocol::encode_header(&header).expect("a header read encodes");
            assert_eq!(again, data[..used], "read/encode not idempotent");
        }
    }
}

/// The relay's datagram path; see the module docs. Returns how many
/// datagrams left the links.
#[cfg(all(feature = "lab", feature = "tokio"))]
pub fn relay_datagrams(data: &[u8]) -> u64 {
    use crate::relay::ack_management::{delay_control_hook, filter_queue};
    use crate::relay::link::EmulatedLink;
    use crate::relay::{parse_ack_filter, AckManagement, LinkConfig, QueueKind, RelayConfig};
    use std::collections::HashMap;
    use std::net::SocketAddr;

    let mut p = Program { data, at: 0 };
    let setup = p.byte();
    let filters = ["classic", "delayed", "per-flow", "per-flow-rr", "static:4"];
    let filter = (setup & 0x08 != 0)
        .then(|| parse_ack_filter("--ack-filter", filters[usize::from(setup) % filters.len()]).ok())
        .flatten();
    let delay_control = (setup & 0x10 != 0)
        .then(|| crate::relay::parse_delay_control("--ack-delay-control", "3kB,0.5").ok())
        .flatten();
    let link = |rate_bps: u64, buffer: usize| LinkConfig {
        queue: if setup & 0x20 != 0 {
            QueueKind::Red
        } else {
            QueueKind::DropTail
        },
        loss: if setup & 0x40 != 0 { 0.05 } else { 0.0 },
        reorder: if setup & 0x80 != 0 { 0.05 } else { 0.0 },
        ..LinkConfig::new(rate_bps, Duration::from_millis(5), buffer)
    };
    let config = RelayConfig {
        listen: SocketAddr::from(([127, 0, 0, 1], 9000)),
        to: SocketAddr::from(([127, 0, 0, 1], 9001)),
        forward: link(10_000_000, 4 + usize::from(p.byte() % 60)),
        reverse: link(
            64_000 + u64::from(p.byte()) * 10_000,
            2 + usize::from(p.byte() % 30),
        ),
        seed: u64::from(setup),
        ack_management: AckManagement {
            filter,
            delay_control,
        },
    };
    let mut hook = delay_control_hook(&config);
    let mut forward = EmulatedLink::new(config.forward.clone(), config.seed, false);
    let mut reverse = EmulatedLink::new(config.reverse.clone(), config.seed ^ 1, hook.is_some());
    if let Some(q) = filter_queue(&config) {
        reverse.set_discipline(q);
    }
    let clients: Vec<SocketAddr> = (0..3)
        .map(|i| SocketAddr::from(([127, 0, 0, 2 + i], 40_000)))
        .collect();
    // What arrived and has not left, per (client, bytes), per direction.
    let mut pending: [HashMap<(SocketAddr, Vec<u8>), u32>; 2] = [HashMap::new(), HashMap::new()];
    let mut now = Instant::from_millis(1);
    let mut delivered = 0u64;
    while !p.done() {
        let op = p.byte();
        let client = clients[usize::from(op >> 6) % clients.len()];
        let reverse_side = op & 0x20 != 0;
        match op & 0x07 {
            // A pure ACK: filtering and delay control act on these.
            0..=2 => {
                let mut seg = vec![0u8; 20];
                seg[0..2].copy_from_slice(&80u16.to_be_bytes());
                seg[2..4].copy_from_slice(&(40_000 + u16::from(op >> 6)).to_be_bytes());
                seg[8..12].copy_from_slice(&(u32::from(p.byte()) * 1448).to_be_bytes());
                seg[12] = 5 << 4;
                seg[13] = 0x10;
                seg[14] = 0x40;
                if p.byte() & 1 == 1 {
                    // A SACK option now and then.
                    seg[12] = 8 << 4;
                    seg.extend_from_slice(&[1, 1, 5, 10]);
                    seg.extend_from_slice(&(u32::from(p.byte()) * 3000).to_be_bytes());
                    seg.extend_from_slice(&(u32::from(p.byte()) * 3000 + 1448).to_be_bytes());
                }
                *pending[1].entry((client, seg.clone())).or_default() += 1;
                let fq = (forward.queue_packets(), forward.queue_bytes());
                reverse.arrive(now, client, seg, hook.as_deref_mut(), fq);
            }
            // Arbitrary bytes, either way.
            3 | 4 => {
                let len = usize::from(p.byte() % 96);
                let bytes: Vec<u8> = (0..len).map(|_| p.byte()).collect();
                let side = usize::from(reverse_side);
                *pending[side].entry((client, bytes.clone())).or_default() += 1;
                if reverse_side {
                    let fq = (forward.queue_packets(), forward.queue_bytes());
                    reverse.arrive(now, client, bytes, hook.as_deref_mut(), fq);
                } else {
                    forward.arrive(now, client, bytes, None, (0, 0));
                }
            }
            _ => {
                now = now
                    .checked_add(Duration::from_micros(u64::from(p.byte()) * 500))
                    .unwrap_or(now);
            }
        }
        forward.advance(now, None);
        reverse.advance(now, hook.as_deref_mut());
        for (side, l) in [(0usize, &mut forward), (1, &mut reverse)] {
            while let Some((to, bytes)) = l.pop_due(now) {
                let left = pending[side]
                    .get_mut(&(to, bytes))
                    .expect("a datagram left that did not arrive, or changed on the way");
                *left = left
                    .checked_sub(1)
                    .expect("a datagram left more often than it arrived");
                delivered += 1;
            }
        }
        assert!(forward.queue_packets() <= config.forward.buffer_packets);
        assert!(reverse.queue_packets() <= config.reverse.buffer_packets);
    }
    delivered
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program that opens the connection and moves data both ways
    /// without forging anything: the checks must see bytes arrive.
    #[test]
    fn an_honest_program_moves_bytes_and_checks_them() {
        let mut prog = vec![0x00];
        // handshake: client sends SYN, server answers, client ACKs
        prog.extend_from_slice(&[4, 0x86, 0, 0x85, 7, 0]);
        for _ in 0..20 {
            prog.extend_from_slice(&[
                0, 8, 0x80, 8, 4, 0x85, 0x86, 0, 0x86, 0, 7, 0, 7, 0, 2, 200, 0x82, 200, 8, 5,
            ]);
        }
        assert!(connection(&prog) > 10_000);
        reassembly(&[3, 2, 0, 0, 0, 0, 10, 1, 5]);
        segment(&[0; 20]);
    }
}
