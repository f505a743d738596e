//! CPU per data segment of the sans-IO core, end to end: the sender
//! building and checksumming the segment, the receiver parsing,
//! reassembling and deciding whether to ACK, the ACK's encoding and
//! parsing, and the sender's ACK processing. Two established connections
//! exchange bytes over an in-bench link with a fixed delay; nothing is
//! allocated per packet (the link recycles its buffers) and the receiving
//! application reads into one scratch buffer, so what is measured is the
//! core's own cost. Criterion reports data segments per second; the
//! strategies are peers in the same process.
//!
//! `cargo bench --bench segment_cost`; the `ns_per_segment` lines printed
//! first give the figure per segment and as a ratio to AE's.
//! `4w-nochecksum` is 4W with checksums off on both ends: the difference
//! to `4w` is what the two checksum passes over each segment cost.
//! `default` is `Config::default()` (the default strategy,
//! `4w-adaptive+spread+sparse-holes`); `default-nonon` is the same without
//! the ACK nonce: the difference is what the nonce's hash, option bytes
//! and echo tracking cost. The `-shared` lines hand the application's
//! block to the connection by reference (`Connection::write_shared`), as
//! a bulk sender may: the difference is the copy into the send buffer.
//! `4w-zerocopy` also hands each arriving segment to the receiver by
//! reference (`Connection::handle_segment_shared`) and its application
//! takes the data out the same way (`Connection::read_chunk`), as the UDP
//! endpoint and `ackwise perf` do: no payload copy is left in the core.

use ackwise::connection::{AckNonceMode, AckPolicyConfig, AckRequestConfig, Config, Connection};
use ackwise::testing::TestRng;
use ackwise::time::Instant;
use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::collections::VecDeque;
use std::time::Duration;

/// Bytes pushed per measured iteration.
const CHUNK_BYTES: usize = 4 << 20;

/// One-way delay of the link: long enough for a real RTT, short enough
/// that the window, not the delay, sets the pace.
const DELAY: Duration = Duration::from_micros(100);

/// Serialization time of one packet on the link (1448-byte segments at
/// about 10 Gbit/s): segments arrive one by one, so the receiver decides
/// on each as it would on a real link.
const PACKET_TIME: Duration = Duration::from_nanos(1_200);

/// Two established connections and the link between them.
struct Pair {
    /// The client's application hands its block over by reference
    /// (`Connection::write_shared`) instead of copying it.
    shared_writes: bool,
    /// Segments reach the server by reference and its application reads
    /// them out as chunks (`Connection::read_chunk`).
    shared_reads: bool,
    client: Connection,
    server: Connection,
    now: Instant,
    /// Segments in flight each way: (arrival, buffer index, length).
    to_server: VecDeque<(Instant, usize, usize)>,
    to_client: VecDeque<(Instant, usize, usize)>,
    buffers: Vec<Vec<u8>>,
    free: Vec<usize>,
    payload: Bytes,
    scratch: Vec<u8>,
    /// Bytes the client's application has written so far.
    written: u64,
}

impl Pair {
    fn new(config: &Config, copies: Copies) -> Pair {
        let mut rng = TestRng::seed_from_u64(1);
        let now = Instant::ZERO;
        let mut client = Connection::connect(config.clone(), now, 40_000, 80, &mut rng).unwrap();
        let mut buf = vec![0u8; 2048];
        let n = client.poll_transmit(now, &mut buf).expect("SYN");
        let server = Connection::accept(config.clone(), now, &buf[..n], &mut rng).unwrap();
        let mut pair = Pair {
            shared_writes: copies != Copies::Both,
            shared_reads: copies == Copies::None,
            client,
            server,
            now,
            to_server: VecDeque::new(),
            to_client: VecDeque::new(),
            buffers: Vec::new(),
            free: Vec::new(),
            payload: Bytes::from(vec![0xa5; 64 << 10]),
            scratch: vec![0; 64 << 10],
            written: 0,
        };
        // Handshake and a first transfer: buffers grown, windows open.
        pair.push(CHUNK_BYTES);
        pair
    }

    fn buffer(&mut self) -> usize {
        self.free.pop().unwrap_or_else(|| {
            self.buffers.push(vec![0u8; 2048]);
            self.buffers.len() - 1
        })
    }

    /// Moves every segment either side wants to send onto the link.
    fn transmit(&mut self) {
        loop {
            let b = self.buffer();
            let mut buf = std::mem::take(&mut self.buffers[b]);
            let sent = if let Some(n) = self.client.poll_transmit(self.now, &mut buf) {
                let at = arrival(&self.to_server, self.now);
                self.to_server.push_back((at, b, n));
                true
            } else if let Some(n) = self.server.poll_transmit(self.now, &mut buf) {
                let at = arrival(&self.to_client, self.now);
                self.to_client.push_back((at, b, n));
                true
            } else {
                false
            };
            self.buffers[b] = buf;
            if !sent {
                self.free.push(b);
                return;
            }
        }
    }

    /// Delivers what has arrived by now, one packet at a time with the
    /// answers it draws sent before the next; the server's application
    /// reads everything at once.
    fn deliver(&mut self) {
        while let Some(&(at, b, n)) = self.to_server.front() {
            if at > self.now {
                break;
            }
            self.to_server.pop_front();
            if self.shared_reads {
                let whole = Bytes::from(std::mem::take(&mut self.buffers[b]));
                let _ = self
                    .server
                    .handle_segment_shared(self.now, &whole.slice(..n), false);
                while self.server.read_chunk(usize::MAX).is_some() {}
                // Everything was read, so no slice of the buffer is left:
                // it goes back to the link as it is.
                self.buffers[b] = whole
                    .try_into_mut()
                    .map_or_else(|_| vec![0u8; 2048], Vec::from);
            } else {
                let _ = self.server.handle_segment(self.now, &self.buffers[b][..n]);
                while self.server.read(&mut self.scratch) > 0 {}
            }
            self.free.push(b);
            self.transmit();
        }
        while let Some(&(at, b, n)) = self.to_client.front() {
            if at > self.now {
                break;
            }
            self.to_client.pop_front();
            let _ = self.client.handle_segment(self.now, &self.buffers[b][..n]);
            self.free.push(b);
            self.transmit();
        }
    }

    /// Pushes `bytes` from the client's application to the server's;
    /// returns the data segments that took.
    fn push(&mut self, bytes: usize) -> u64 {
        let before = self.client.stats().data_segments_sent;
        let mut left = bytes;
        loop {
            while left > 0 {
                let block = self.payload.slice(..left.min(self.payload.len()));
                let n = if self.shared_writes {
                    self.client.write_shared(block)
                } else {
                    self.client.write(&block)
                };
                if n == 0 {
                    break;
                }
                left -= n;
                self.written += n as u64;
            }
            self.transmit();
            self.deliver();
            self.transmit();
            if left == 0 && self.server.stats().bytes_delivered >= self.written {
                break;
            }
            let next_arrival = [self.to_server.front(), self.to_client.front()]
                .into_iter()
                .flatten()
                .map(|&(at, _, _)| at)
                .min();
            let timers = [self.client.poll_timeout(), self.server.poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            let Some(next) = [next_arrival, timers].into_iter().flatten().min() else {
                break;
            };
            self.now = next.max(self.now);
            self.client.handle_timeout(self.now);
            self.server.handle_timeout(self.now);
        }
        self.client.stats().data_segments_sent - before
    }
}

/// When a packet sent at `now` arrives: after the one queued before it
/// has been serialized, plus the delay.
fn arrival(queue: &VecDeque<(Instant, usize, usize)>, now: Instant) -> Instant {
    let free_at = queue
        .back()
        .map_or(now, |&(at, _, _)| (at - DELAY + PACKET_TIME).max(now));
    free_at + DELAY
}

/// Which payload copies a pair makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Copies {
    /// Into the send buffer and out of the receive buffer.
    Both,
    /// Out of the receive buffer only (shared writes).
    ReceiveOnly,
    /// None: shared writes, segments and reads.
    None,
}

/// The strategies, each with the payload copies its ends make.
fn strategies() -> Vec<(&'static str, Config, Copies)> {
    let base = Config {
        send_buffer: 4 << 20,
        recv_buffer: 4 << 20,
        ..Config::default()
    };
    let four_w = Config {
        request_acks: AckRequestConfig::PerWindow {
            acks: 4,
            every_segment_in_slow_start: false,
        },
        ..base.clone()
    };
    vec![
        (
            "ae",
            Config {
                ack_policy: AckPolicyConfig::Every,
                ack_requests: false,
                request_acks: AckRequestConfig::None,
                ..base.clone()
            },
            Copies::Both,
        ),
        ("4w", four_w.clone(), Copies::Both),
        ("default", base.clone(), Copies::Both),
        (
            "default-nonon",
            Config {
                ack_nonce: AckNonceMode::Off,
                ..base
            },
            Copies::Both,
        ),
        (
            "4w-nochecksum",
            Config {
                checksums: false,
                ..four_w.clone()
            },
            Copies::Both,
        ),
        ("4w-shared", four_w.clone(), Copies::ReceiveOnly),
        (
            "4w-nocsum-shared",
            Config {
                checksums: false,
                ..four_w.clone()
            },
            Copies::ReceiveOnly,
        ),
        ("4w-zerocopy", four_w.clone(), Copies::None),
        (
            "4w-nocsum-zerocopy",
            Config {
                checksums: false,
                ..four_w
            },
            Copies::None,
        ),
    ]
}

/// Wall time per data segment over 20 pushes of [`CHUNK_BYTES`] on a warm
/// pair, with the ACKs per 100 segments that strategy drew.
fn ns_per_segment(pair: &mut Pair) -> (f64, f64) {
    let start = std::time::Instant::now();
    let (segments_before, acks_before) = (
        pair.client.stats().data_segments_sent,
        pair.server.stats().acks_sent,
    );
    let mut total = 0;
    for _ in 0..20 {
        total += pair.push(CHUNK_BYTES);
    }
    let ns = start.elapsed().as_nanos() as f64 / total as f64;
    let segments = pair.client.stats().data_segments_sent - segments_before;
    let acks = pair.server.stats().acks_sent - acks_before;
    (ns, acks as f64 * 100.0 / segments.max(1) as f64)
}

fn bench(c: &mut Criterion) {
    // The same figures as criterion's, per segment and as ratios to AE
    // measured in this process a moment before.
    let mut ae_ns = None;
    for (name, config, copies) in strategies() {
        let mut pair = Pair::new(&config, copies);
        let (ns, acks) = ns_per_segment(&mut pair);
        let ratio = ns / *ae_ns.get_or_insert(ns);
        println!("ns_per_segment {name:14} {ns:6.0} ns  {ratio:5.2} x ae  ({acks:.1} ACKs per 100 segments)");
    }
    let mut group = c.benchmark_group("segment_cost");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(8));
    for (name, config, copies) in strategies() {
        let mut pair = Pair::new(&config, copies);
        let segments = pair.push(CHUNK_BYTES);
        group.throughput(Throughput::Elements(segments));
        group.bench_function(name, |b| b.iter(|| pair.push(CHUNK_BYTES)));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
