//! Heap held by idle established connections, counted by a global
//! allocator: after a handshake only, and after a transfer both ways
//! whose bytes have all been read.

use ackwise::connection::{Config, Connection};
use ackwise::testing::TestRng;
use ackwise::time::Instant;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering::Relaxed};

/// The system allocator, keeping a count of the bytes live.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Relaxed);
        System.dealloc(ptr, layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Relaxed);
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size as isize - layout.size() as isize, Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Moves every segment each end has to send to the other, until neither
/// has any, at `now`.
fn shuttle(a: &mut Connection, b: &mut Connection, now: Instant, buf: &mut [u8]) {
    loop {
        let mut moved = false;
        while let Some(n) = a.poll_transmit(now, buf) {
            let _ = b.handle_segment(now, &buf[..n]);
            moved = true;
        }
        while let Some(n) = b.poll_transmit(now, buf) {
            let _ = a.handle_segment(now, &buf[..n]);
            moved = true;
        }
        if !moved {
            return;
        }
    }
}

/// An established pair, after `bytes` each way were sent and read.
fn idle_pair(
    rng: &mut TestRng,
    bytes: usize,
    release: bool,
    buf: &mut [u8],
) -> (Connection, Connection) {
    let config = Config::default();
    let mut now = Instant::ZERO;
    let mut c = Connection::connect(config.clone(), now, 40_000, 80, rng).unwrap();
    let n = c.poll_transmit(now, buf).unwrap();
    let mut s = Connection::accept(config, now, &buf[..n], rng).unwrap();
    shuttle(&mut c, &mut s, now, buf);
    assert!(c.is_established() && s.is_established());
    let chunk = vec![0x42u8; 64 << 10];
    let mut sink = vec![0u8; 64 << 10];
    let (mut sent, mut read) = ([0usize; 2], [0usize; 2]);
    while read[0] < bytes || read[1] < bytes {
        now += ackwise::time::Duration::from_millis(1);
        sent[0] += c.write(&chunk[..(bytes - sent[0]).min(chunk.len())]);
        sent[1] += s.write(&chunk[..(bytes - sent[1]).min(chunk.len())]);
        shuttle(&mut c, &mut s, now, buf);
        read[0] += s.read(&mut sink);
        read[1] += c.read(&mut sink);
        c.handle_timeout(now);
        s.handle_timeout(now);
    }
    // Let the last ACKs (delayed ones included) go out.
    now += ackwise::time::Duration::from_secs(1);
    c.handle_timeout(now);
    s.handle_timeout(now);
    shuttle(&mut c, &mut s, now, buf);
    assert_eq!(c.sender().snd_una(), bytes as u64);
    assert_eq!(s.sender().snd_una(), bytes as u64);
    if release {
        c.release_idle_memory();
        s.release_idle_memory();
    }
    (c, s)
}

/// Bytes of heap per idle connection over `pairs` pairs.
fn per_connection(pairs: usize, bytes: usize, release: bool) -> isize {
    let mut rng = TestRng::seed_from_u64(7);
    let mut buf = vec![0u8; 2048];
    let before = LIVE.load(Relaxed);
    let held: Vec<_> = (0..pairs)
        .map(|_| idle_pair(&mut rng, bytes, release, &mut buf))
        .collect();
    let after = LIVE.load(Relaxed);
    let per = (after - before) / (2 * pairs as isize);
    drop(held);
    per
}

/// The tests count one global figure: they run one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn idle_connections_hold_at_most_64_kib_each() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let fresh = per_connection(50, 0, false);
    let kept = per_connection(50, 1 << 20, false);
    let released = per_connection(50, 1 << 20, true);
    println!(
        "heap per idle connection: {fresh} B after the handshake; after 1 MiB each way \
         {kept} B, {released} B once release_idle_memory ran"
    );
    assert!(fresh <= 64 << 10, "{fresh} B after the handshake");
    assert!(released <= 64 << 10, "{released} B after a transfer");
}

/// The endpoint's sweep gives idle connections' buffers back: ten
/// connections that each moved 1 MiB, then stood still, with everything
/// read.
#[cfg(feature = "tokio")]
#[test]
fn an_endpoint_gives_idle_connections_buffers_back() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // A runtime of its own, gone (its threads' memory with it) before the
    // other test may count.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(endpoint_sweep());
}

#[cfg(feature = "tokio")]
async fn endpoint_sweep() {
    use ackwise::net::{Endpoint, EndpointConfig};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const CONNS: usize = 10;
    const BYTES: usize = 1 << 20;
    let release = std::time::Duration::from_millis(200);
    let endpoint_config = |server| EndpointConfig {
        server,
        idle_release: Some(release),
        ..EndpointConfig::default()
    };
    let server = Endpoint::with_config(
        "127.0.0.1:0".parse().unwrap(),
        endpoint_config(Some(Config::default())),
    )
    .unwrap();
    let addr = server.local_addr();
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some((mut stream, _)) = server.accept().await {
            let done = done_tx.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 << 10];
                let mut got = 0;
                while got < BYTES {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => got += n,
                    }
                }
                drop(buf);
                let _ = done.send(got);
                // Held open, idle, until the test ends.
                std::future::pending::<()>().await;
                drop(stream);
            });
        }
    });
    let client =
        Endpoint::with_config("127.0.0.1:0".parse().unwrap(), endpoint_config(None)).unwrap();
    // The endpoints' own buffers (receive batch, send arena) are not the
    // connections'.
    let base = LIVE.load(Relaxed);
    let data = vec![0x17u8; BYTES];
    let mut streams = Vec::new();
    for _ in 0..CONNS {
        let mut s = client.connect(addr, Config::default()).await.unwrap();
        s.write_all(&data).await.unwrap();
        streams.push(s);
    }
    drop(data);
    for _ in 0..CONNS {
        assert_eq!(done_rx.recv().await, Some(BYTES));
    }
    // Every byte is read; give the last ACKs a moment to land, then
    // measure before and after the sweep.
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let busy = LIVE.load(Relaxed);
    tokio::time::sleep(release * 6).await;
    let idle = LIVE.load(Relaxed);
    let per = |live: isize| (live - base) / (2 * CONNS as isize);
    println!(
        "endpoint heap per connection (its stream, table entry and tasks included): \
         {} B just after the transfer, {} B after the idle sweep",
        per(busy),
        per(idle)
    );
    assert!(per(idle) <= 64 << 10, "{} B per idle connection", per(idle));
    assert!(
        per(busy) - per(idle) > 50 << 10,
        "the sweep gave back too little"
    );
}
