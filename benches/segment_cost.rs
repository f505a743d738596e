//! CPU per data segment of the sans-IO core, end to end: the sender
//! building and checksumming the segment, the receiver parsing,
//! reassembling and deciding whether to ACK, the ACK's encoding and
//! parsing, and the sender's ACK processing. Two established connections
//! exchange bytes over an in-bench link with a fixed delay; nothing is
//! allocated per packet (the link recycles its buffers) and the receiving
//! application reads into one scratch buffer, so what is measured is the
//! core's own cost. The bench drives the ends as a driver does: an end is
//! polled for segments after something happened to it (its application
//! wrote, a segment arrived for it, its timer fired) and its timer is run
//! only once due. Criterion reports data segments per second; the
//! strategies are peers in the same process.
//!
//! `SEGMENT_COST_PROFILE=4w cargo bench --bench segment_cost` runs only
//! that strategy's per-segment measurement, three times, and exits: a
//! short, fixed workload for a profiler (`perf record`, or `valgrind
//! --tool=callgrind` for instruction counts that do not depend on the
//! machine's load).
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
//! The other lines run with 4 MiB socket buffers, so thousands of
//! segments are in flight: with the link's buffers that is more data
//! than a core's L2 cache holds, and the copies and checksums wait on
//! memory. `ae-256k` and `4w-256k` are `ae` and `4w` with 256 KiB buffers
//! (about 180 segments in flight): the difference is what the larger
//! working set costs.

use ackwise::connection::{AckNonceMode, AckPolicyConfig, AckRequestConfig, Config, Connection};
use ackwise::testing::TestRng;
use ackwise::time::Instant;
use bytes::{Bytes, BytesMut};
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
    buffers: Vec<BytesMut>,
    free: Vec<usize>,
    payload: Bytes,
    scratch: Vec<u8>,
    /// Bytes the client's application has written so far.
    written: u64,
    /// Bytes the server's application has read so far.
    read: u64,
}

/// One end of the pair.
#[derive(Debug, Clone, Copy)]
enum End {
    Client,
    Server,
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
            read: 0,
        };
        // Handshake (the server answers the SYN) and a first transfer:
        // buffers grown, windows open.
        pair.transmit(End::Server);
        pair.push(CHUNK_BYTES);
        pair
    }

    fn buffer(&mut self) -> usize {
        self.free.pop().unwrap_or_else(|| {
            self.buffers.push(link_buffer());
            self.buffers.len() - 1
        })
    }

    /// Moves every segment one end wants to send onto the link. Like a
    /// driver, the bench polls an end after something happened to it (the
    /// application wrote, a segment arrived, a timer fired), until it has
    /// nothing more to send.
    fn transmit(&mut self, end: End) {
        loop {
            let b = self.buffer();
            let mut buf = std::mem::take(&mut self.buffers[b]);
            let (conn, queue) = match end {
                End::Client => (&mut self.client, &mut self.to_server),
                End::Server => (&mut self.server, &mut self.to_client),
            };
            let sent = conn.poll_transmit(self.now, &mut buf);
            if let Some(n) = sent {
                let at = arrival(queue, self.now);
                queue.push_back((at, b, n));
            }
            self.buffers[b] = buf;
            if sent.is_none() {
                self.free.push(b);
                return;
            }
        }
    }

    /// Fires the timers of both ends that are due by now.
    fn timers(&mut self) {
        for end in [End::Client, End::Server] {
            let conn = match end {
                End::Client => &mut self.client,
                End::Server => &mut self.server,
            };
            if conn.poll_timeout().is_some_and(|t| t <= self.now) {
                conn.handle_timeout(self.now);
                self.transmit(end);
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
                let whole = std::mem::take(&mut self.buffers[b]).freeze();
                let _ = self
                    .server
                    .handle_segment_shared(self.now, &whole.slice(..n), false);
                while let Some(chunk) = self.server.read_chunk(usize::MAX) {
                    self.read += chunk.len() as u64;
                }
                // Everything was read, so no slice of the buffer is left:
                // it goes back to the link as it is, as the UDP driver
                // takes its receive slots back.
                self.buffers[b] = whole.try_into_mut().unwrap_or_else(|_| link_buffer());
            } else {
                let _ = self.server.handle_segment(self.now, &self.buffers[b][..n]);
                loop {
                    let n = self.server.read(&mut self.scratch);
                    if n == 0 {
                        break;
                    }
                    self.read += n as u64;
                }
            }
            self.free.push(b);
            self.transmit(End::Server);
        }
        while let Some(&(at, b, n)) = self.to_client.front() {
            if at > self.now {
                break;
            }
            self.to_client.pop_front();
            let _ = self.client.handle_segment(self.now, &self.buffers[b][..n]);
            self.free.push(b);
            self.transmit(End::Client);
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
            self.transmit(End::Client);
            self.deliver();
            if left == 0 && self.read >= self.written {
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
            self.timers();
        }
        self.client.stats().data_segments_sent - before
    }
}

/// A buffer of the bench's link. Made shared once, so that handing it to
/// the receiver by reference (`freeze`, `slice`) and taking it back
/// (`try_into_mut`) only count references, as the UDP driver's receive
/// slots do after their first loan, and never allocate.
fn link_buffer() -> BytesMut {
    let mut buf = BytesMut::zeroed(2048);
    drop(buf.split_off(2048));
    buf
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
    let ae = Config {
        ack_policy: AckPolicyConfig::Every,
        ack_requests: false,
        request_acks: AckRequestConfig::None,
        ..base.clone()
    };
    vec![
        ("ae", ae.clone(), Copies::Both),
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
                ..four_w.clone()
            },
            Copies::None,
        ),
        ("ae-256k", small_buffers(&ae), Copies::Both),
        ("4w-256k", small_buffers(&four_w), Copies::Both),
    ]
}

/// `config` with 256 KiB socket buffers: a window of at most about 180
/// segments instead of thousands, so that the data in flight (send buffer, link
/// buffers, receive ring) stays within a core's L2 cache.
fn small_buffers(config: &Config) -> Config {
    Config {
        send_buffer: 256 << 10,
        recv_buffer: 256 << 10,
        ..config.clone()
    }
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
    if let Ok(only) = std::env::var("SEGMENT_COST_PROFILE") {
        let Some((name, config, copies)) = strategies().into_iter().find(|s| s.0 == only) else {
            eprintln!("SEGMENT_COST_PROFILE: no strategy {only:?} in this bench");
            std::process::exit(2);
        };
        let mut pair = Pair::new(&config, copies);
        for _ in 0..3 {
            let (ns, acks) = ns_per_segment(&mut pair);
            println!("{name} {ns:.0} ns per segment ({acks:.1} ACKs per 100 segments)");
        }
        std::process::exit(0);
    }
    let mut ae_ns = None;
    for (name, config, copies) in strategies() {
        let mut pair = Pair::new(&config, copies);
        let (ns, acks) = ns_per_segment(&mut pair);
        let ratio = ns / *ae_ns.get_or_insert(ns);
        println!("ns_per_segment {name:18} {ns:6.0} ns  {ratio:5.2} x ae  ({acks:.1} ACKs per 100 segments)");
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
