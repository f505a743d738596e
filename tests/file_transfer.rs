//! File transfer: files arrive intact or not at all.
//!
//! The protocol runs here over ackwise connections, in-memory pipes and
//! kernel TCP on 127.0.0.1; the CLI tests run the `ackwise` binary as a
//! user would.
//! Random contents come from a seeded generator; a failing test prints
//! its seed.
#![cfg(all(feature = "tokio", feature = "lab"))]
#![cfg(all(feature = "tokio", feature = "cli"))]

mod common;

use ackwise::connection::{AckPolicyConfig, HoleAcks};
use ackwise::lab::Strategy;
use ackwise::net::transfer::{
    self, protocol, ReceiveOptions, SendOptions, Silent, StatsSource, TransferError, Verdict,
};
use ackwise::net::Endpoint;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Child, Command, Stdio};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};

/// A fresh, empty directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackwise-xfer-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("out")).unwrap();
    dir
}

fn random_bytes(rng: &mut ChaCha8Rng, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    rng.fill_bytes(&mut v);
    v
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Writes random files of `sizes` into `dir/src`, returning their paths
/// and contents.
fn make_files(dir: &Path, seed: u64, sizes: &[usize]) -> (Vec<PathBuf>, Vec<(String, Vec<u8>)>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut paths = Vec::new();
    let mut contents = Vec::new();
    for (i, &size) in sizes.iter().enumerate() {
        let name = format!("file-{i}-{size}.bin");
        let data = random_bytes(&mut rng, size);
        let path = dir.join("src").join(&name);
        std::fs::write(&path, &data).unwrap();
        paths.push(path);
        contents.push((name, data));
    }
    (paths, contents)
}

// Sizes around the 256 KiB chunk boundary, an empty file and a few MB.
const SIZES: [usize; 6] = [0, 1, 262_143, 262_145, 1_000_000, 3_000_017];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_files_round_trip_over_a_pipe_with_matching_digests() {
    for seed in [1u64, 2] {
        let dir = scratch(&format!("pipe-{seed}"));
        let (paths, contents) = make_files(&dir, seed, &SIZES);
        let files = transfer::open_files(&paths).unwrap();
        // A small pipe makes both sides wait on each other often.
        let (mut a, mut b) = tokio::io::duplex(16 * 1024);
        let out = dir.join("out");
        let receiver = tokio::spawn(async move {
            transfer::receive_files(&mut b, &ReceiveOptions::new(out), &mut Silent).await
        });
        let sent = transfer::send_files(&mut a, files, &SendOptions::default(), &mut Silent)
            .await
            .unwrap();
        let received = receiver.await.unwrap().unwrap();
        assert!(sent.all_ok() && received.all_ok(), "seed {seed}");
        let total: usize = SIZES.iter().sum();
        assert_eq!(sent.stored_bytes(), total as u64, "seed {seed}");
        assert_eq!(received.stored_bytes(), total as u64, "seed {seed}");
        // Every file, byte for byte, and nothing else (no partial files).
        let mut names: Vec<String> = contents.iter().map(|(n, _)| n.clone()).collect();
        names.sort();
        assert_eq!(listing(&dir.join("out")), names, "seed {seed}");
        for (name, data) in &contents {
            let got = std::fs::read(dir.join("out").join(name)).unwrap();
            assert!(got == *data, "seed {seed}: {name} differs");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_files_round_trip_over_kernel_tcp_concurrently() {
    let dir = scratch("tcp");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let out = dir.join("out");
    // Four senders at once, each with its own files.
    let server = tokio::spawn(async move {
        let mut handles = Vec::new();
        for _ in 0..4 {
            let (mut s, _) = listener.accept().await.unwrap();
            let options = ReceiveOptions::new(out.clone());
            handles.push(tokio::spawn(async move {
                transfer::receive_files(&mut s, &options, &mut Silent).await
            }));
        }
        let mut summaries = Vec::new();
        for h in handles {
            summaries.push(h.await.unwrap().unwrap());
        }
        summaries
    });
    let mut clients = Vec::new();
    let mut expected = Vec::new();
    for k in 0..4u64 {
        let sub = dir.join(format!("c{k}"));
        std::fs::create_dir_all(sub.join("src")).unwrap();
        let sizes = [100_000 + k as usize * 77_777, 2_000_000 - k as usize];
        let (mut paths, contents) = make_files(&sub, 10 + k, &sizes);
        // Distinct names across senders.
        for (i, p) in paths.iter_mut().enumerate() {
            let renamed = p.with_file_name(format!("c{k}-{i}.bin"));
            std::fs::rename(&*p, &renamed).unwrap();
            *p = renamed;
            expected.push((format!("c{k}-{i}.bin"), contents[i].1.clone()));
        }
        clients.push(tokio::spawn(async move {
            let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
            let files = transfer::open_files(&paths).unwrap();
            transfer::send_files(&mut s, files, &SendOptions::default(), &mut Silent).await
        }));
    }
    for c in clients {
        let summary = c.await.unwrap().unwrap();
        assert!(summary.all_ok());
        // Kernel TCP keeps no ackwise counters, and says so.
        assert!(summary.stats.is_none());
        assert!(summary.to_string().contains("no ACK counters"), "{summary}");
    }
    for s in server.await.unwrap() {
        assert!(s.all_ok());
    }
    assert_eq!(listing(&dir.join("out")).len(), 8);
    for (name, data) in expected {
        assert!(
            std::fs::read(dir.join("out").join(&name)).unwrap() == data,
            "{name}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Flips one byte at a given offset of everything written through it:
/// the corruption an end-to-end digest exists to catch.
struct Corrupting<S> {
    inner: S,
    written: u64,
    flip_at: u64,
}

impl<S: AsyncRead + Unpin> AsyncRead for Corrupting<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Corrupting<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let start = self.written;
        let mut copy = buf.to_vec();
        if (start..start + buf.len() as u64).contains(&self.flip_at) {
            copy[(self.flip_at - start) as usize] ^= 0x40;
        }
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_write(cx, &copy) {
            Poll::Ready(Ok(n)) => {
                this.written += n as u64;
                Poll::Ready(Ok(n))
            }
            other => other,
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

impl<S> StatsSource for Corrupting<S> {}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupted_byte_is_caught_and_nothing_is_stored() {
    let dir = scratch("corrupt");
    let (paths, contents) = make_files(&dir, 7, &[500_000, 300_000]);
    let header_bytes = 4 + 1 + 2 + contents[0].0.len() as u64 + 8;
    let (a, mut b) = tokio::io::duplex(64 * 1024);
    // A byte in the middle of the first file's content.
    let mut a = Corrupting {
        inner: a,
        written: 0,
        flip_at: header_bytes + 123_456,
    };
    let out = dir.join("out");
    let receiver = tokio::spawn(async move {
        transfer::receive_files(&mut b, &ReceiveOptions::new(out), &mut Silent).await
    });
    let files = transfer::open_files(&paths).unwrap();
    let sent = transfer::send_files(&mut a, files, &SendOptions::default(), &mut Silent)
        .await
        .unwrap();
    let received = receiver.await.unwrap().unwrap();
    assert_eq!(sent.files[0].verdict, Verdict::DigestMismatch);
    assert_eq!(received.files[0].verdict, Verdict::DigestMismatch);
    // The connection stays in step: the second file still lands.
    assert_eq!(sent.files[1].verdict, Verdict::Ok);
    assert!(!sent.all_ok());
    assert_eq!(sent.stored_bytes(), 300_000);
    // Neither the real name nor a partial file is left for the first.
    assert_eq!(listing(&dir.join("out")), vec![contents[1].0.clone()]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sender_that_vanishes_mid_file_leaves_nothing_behind() {
    let dir = scratch("vanish");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let out = dir.join("out");
    let server = tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        transfer::receive_files(&mut s, &ReceiveOptions::new(out), &mut Silent).await
    });
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    header_accepted(&mut s, "big.bin", 10_000_000, false).await;
    s.write_all(&[7u8; 1_000_000]).await.unwrap();
    s.flush().await.unwrap();
    // Wait until the receiver has its partial file, then vanish.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while listing(&dir.join("out")).is_empty() {
        assert!(std::time::Instant::now() < deadline, "no partial file");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(listing(&dir.join("out"))[0].starts_with(".big.bin.ackwise-partial-"));
    drop(s);
    let err = server.await.unwrap().unwrap_err();
    assert!(matches!(err, TransferError::PeerVanished), "{err}");
    assert!(listing(&dir.join("out")).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Sends the first `sent` bytes of `content` under `name` by hand, as a
/// sender that can resume, to a receiver on a fresh TCP connection, then
/// vanishes; returns the receiver's result and the offer it made.
async fn break_off(
    options: ReceiveOptions,
    name: &str,
    content: &[u8],
    sent: &[u8],
) -> (Result<transfer::Summary, TransferError>, protocol::Offer) {
    let (server, mut s, offer) = resumable_header(options, name, content.len() as u64).await;
    s.write_all(&0u64.to_be_bytes()).await.unwrap();
    s.write_all(sent).await.unwrap();
    s.flush().await.unwrap();
    drop(s);
    (server.await.unwrap(), offer)
}

/// A receiver with `options` behind a fresh kernel TCP connection on
/// 127.0.0.1: its task and the sender's end of the stream.
async fn tcp_receiver(
    options: ReceiveOptions,
) -> (
    tokio::task::JoinHandle<Result<transfer::Summary, TransferError>>,
    tokio::net::TcpStream,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        transfer::receive_files(&mut s, &options, &mut Silent).await
    });
    let s = tokio::net::TcpStream::connect(addr).await.unwrap();
    (server, s)
}

/// Sends a header for `name` of `length_bytes` by hand (as a sender that
/// can resume or not) and checks that the receiver accepts it.
async fn header_accepted<S: AsyncRead + AsyncWrite + Unpin>(
    s: &mut S,
    name: &str,
    length_bytes: u64,
    can_resume: bool,
) {
    let header = protocol::Header {
        name: name.into(),
        length_bytes,
        strategy: None,
        can_resume,
    };
    protocol::write_header(s, &header).await.unwrap();
    assert_eq!(protocol::read_verdict(s).await.unwrap(), Ok(Verdict::Ok));
}

/// A receiver with `options` on a fresh TCP connection, and a header for
/// `name` of `length_bytes` sent to it by hand as a sender that can
/// resume; returns the receiver's task, the stream, and the receiver's
/// offer.
async fn resumable_header(
    options: ReceiveOptions,
    name: &str,
    length_bytes: u64,
) -> (
    tokio::task::JoinHandle<Result<transfer::Summary, TransferError>>,
    tokio::net::TcpStream,
    protocol::Offer,
) {
    let (server, mut s) = tcp_receiver(options).await;
    header_accepted(&mut s, name, length_bytes, true).await;
    let offer = protocol::read_offer(&mut s).await.unwrap();
    (server, s, offer)
}

/// Sends `path` with [`transfer::send_files`] to a receiver with
/// `options` on a fresh TCP connection; returns both summaries.
async fn send_over_tcp(
    path: &Path,
    options: ReceiveOptions,
) -> (transfer::Summary, transfer::Summary) {
    let (server, mut s) = tcp_receiver(options).await;
    let files = transfer::open_files(&[path]).unwrap();
    let sent = transfer::send_files(&mut s, files, &SendOptions::default(), &mut Silent)
        .await
        .unwrap();
    (sent, server.await.unwrap().unwrap())
}

/// The names in `dir` that hold bytes kept for a resumption.
fn kept(dir: &Path) -> Vec<String> {
    listing(dir)
        .into_iter()
        .filter(|n| n.contains(".ackwise-partial-resume-"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_off_file_resumes_from_what_the_receiver_kept() {
    let dir = scratch("resume");
    let out = dir.join("out");
    let (paths, contents) = make_files(&dir, 11, &[3_000_017]);
    let (name, content) = &contents[0];
    let held = 1_234_567;
    let options = ReceiveOptions::new(&out);
    let (first, offer) = break_off(options.clone(), name, content, &content[..held]).await;
    assert_eq!(offer, protocol::Offer::NOTHING);
    assert!(
        matches!(first, Err(TransferError::PeerVanished)),
        "{first:?}"
    );
    // Every byte that arrived is kept, under a name that is no real one.
    let kept_now = kept(&out);
    assert_eq!(listing(&out), kept_now);
    assert_eq!(kept_now.len(), 1, "{kept_now:?}");
    assert_eq!(
        std::fs::metadata(out.join(&kept_now[0])).unwrap().len(),
        held as u64
    );

    send_again(&paths[0], options, name, content, held).await;
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Sends `path` (whose content is `content`) to a receiver with `options`
/// and checks that both ends report it stored after `resumed` held bytes,
/// and that only the file is left in the output directory.
async fn send_again(
    path: &Path,
    options: ReceiveOptions,
    name: &str,
    content: &[u8],
    resumed: usize,
) {
    let out = options.out_dir.clone();
    let (sent, received) = send_over_tcp(path, options).await;
    for report in [&sent.files[0], &received.files[0]] {
        assert_eq!(report.verdict, Verdict::Ok);
        assert_eq!(report.resumed_from_bytes, resumed as u64);
        assert_eq!(report.bytes, (content.len() - resumed) as u64);
    }
    assert!(std::fs::read(out.join(name)).unwrap() == content);
    assert_eq!(listing(&out), vec![name.to_string()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_bytes_that_differ_from_the_senders_file_are_not_resumed() {
    let dir = scratch("resume-differs");
    let out = dir.join("out");
    let (paths, contents) = make_files(&dir, 12, &[700_001]);
    let (name, content) = &contents[0];
    let mut other = content[..300_000].to_vec();
    other[299_999] ^= 1;
    let options = ReceiveOptions::new(&out);
    let (first, _) = break_off(options.clone(), name, content, &other).await;
    assert!(first.is_err());
    assert_eq!(kept(&out).len(), 1);
    send_again(&paths[0], options, name, content, 0).await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_keeps_nothing_removes_a_broken_off_file() {
    let dir = scratch("resume-off");
    let out = dir.join("out");
    let (_, contents) = make_files(&dir, 13, &[400_000]);
    let (name, content) = &contents[0];
    let mut options = ReceiveOptions::new(&out);
    options.keep_partial = Duration::ZERO;
    let (first, _) = break_off(options, name, content, &content[..100_000]).await;
    assert!(
        matches!(first, Err(TransferError::PeerVanished)),
        "{first:?}"
    );
    assert!(listing(&out).is_empty(), "{:?}", listing(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_other_than_zero_or_the_offer_is_a_protocol_error() {
    let dir = scratch("resume-bad-start");
    let out = dir.join("out");
    let (server, mut s, offer) = resumable_header(ReceiveOptions::new(&out), "f.bin", 1000).await;
    assert_eq!(offer, protocol::Offer::NOTHING);
    s.write_all(&5u64.to_be_bytes()).await.unwrap();
    let err = server.await.unwrap().unwrap_err();
    assert!(
        matches!(
            err,
            TransferError::Protocol(protocol::ProtocolError::BadStart { start: 5, held: 0 })
        ),
        "{err}"
    );
    assert!(listing(&out).is_empty(), "{:?}", listing(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_silent_sender_times_out_and_leaves_nothing_behind() {
    let dir = scratch("silent");
    let (mut a, mut b) = tokio::io::duplex(64 * 1024);
    let mut options = ReceiveOptions::new(dir.join("out"));
    options.idle_timeout = Duration::from_millis(200);
    let receiver =
        tokio::spawn(async move { transfer::receive_files(&mut b, &options, &mut Silent).await });
    let header = protocol::Header {
        name: "slow.bin".into(),
        length_bytes: 1000,
        strategy: None,
        can_resume: false,
    };
    protocol::write_header(&mut a, &header).await.unwrap();
    a.write_all(&[1u8; 10]).await.unwrap();
    let err = receiver.await.unwrap().unwrap_err();
    assert!(matches!(err, TransferError::Stalled { .. }), "{err}");
    assert!(listing(&dir.join("out")).is_empty());
    drop(a);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn bad_names_are_refused_at_both_ends() {
    let dir = scratch("names");
    // The receiver refuses a name that would leave its directory, and
    // says why.
    for (bad, problem) in [
        ("../escape", "separator"),
        ("..", "`.` or `..`"),
        ("", "empty"),
        ("a\u{7}b", "control"),
    ] {
        let (mut a, mut b) = tokio::io::duplex(64 * 1024);
        let options = ReceiveOptions::new(dir.join("out"));
        let receiver =
            tokio::spawn(
                async move { transfer::receive_files(&mut b, &options, &mut Silent).await },
            );
        let header = protocol::Header {
            name: bad.into(),
            length_bytes: 3,
            strategy: None,
            can_resume: false,
        };
        protocol::write_header(&mut a, &header).await.unwrap();
        let verdict = protocol::read_verdict(&mut a).await.unwrap().unwrap();
        let Verdict::BadName(reason) = verdict else {
            panic!("{bad:?}: {verdict:?}");
        };
        assert!(reason.contains(problem), "{bad:?}: {reason}");
        let err = receiver.await.unwrap().unwrap_err();
        assert!(matches!(err, TransferError::Protocol(_)), "{err}");
    }
    assert!(listing(&dir.join("out")).is_empty());
    assert!(!dir.join("escape").exists());

    // The sender refuses what it cannot send before connecting.
    let err = transfer::open_files(&[dir.join("src/missing")]).unwrap_err();
    assert!(matches!(err, TransferError::NotFound { .. }), "{err}");
    let err = transfer::open_files(&[dir.join("src")]).unwrap_err();
    assert!(matches!(err, TransferError::IsDirectory { .. }), "{err}");
    let ctrl = dir.join("src").join("tab\there");
    std::fs::write(&ctrl, b"x").unwrap();
    let err = transfer::open_files(&[ctrl]).unwrap_err();
    assert!(matches!(err, TransferError::BadName { .. }), "{err}");
    std::fs::create_dir_all(dir.join("src/sub")).unwrap();
    std::fs::write(dir.join("src/same"), b"1").unwrap();
    std::fs::write(dir.join("src/sub/same"), b"2").unwrap();
    let err = transfer::open_files(&[dir.join("src/same"), dir.join("src/sub/same")]).unwrap_err();
    assert!(matches!(err, TransferError::DuplicateName { .. }), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn garbage_from_a_sender_never_panics_and_never_leaves_a_file() {
    let dir = scratch("garbage");
    let seed = 77;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for case in 0..300 {
        // Pure noise, or a valid start (magic, version, a name) followed
        // by noise: lengths, content and digests that make no sense.
        let mut input = Vec::new();
        if case % 2 == 1 {
            input.extend_from_slice(b"AWFT\x01\x00\x05a.bin");
        }
        let noise = (rng.next_u32() % 600) as usize;
        input.extend(random_bytes(&mut rng, noise));
        let (mut a, mut b) = tokio::io::duplex(4096);
        let mut options = ReceiveOptions::new(dir.join("out"));
        options.idle_timeout = Duration::from_secs(5);
        let receiver =
            tokio::spawn(
                async move { transfer::receive_files(&mut b, &options, &mut Silent).await },
            );
        // The receiver may stop reading (and drop its end) early.
        let _ = a.write_all(&input).await;
        let _ = a.shutdown().await;
        let outcome = receiver.await.expect("the receiver task must not panic");
        if let Ok(summary) = outcome {
            assert!(
                summary.files.iter().all(|f| !f.verdict.is_ok()),
                "seed {seed} case {case}: noise stored a file"
            );
        }
        assert!(
            listing(&dir.join("out")).is_empty(),
            "seed {seed} case {case}: {:?}",
            listing(&dir.join("out"))
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

async fn send_over_pipe(
    paths: &[PathBuf],
    options: ReceiveOptions,
) -> (transfer::Summary, transfer::Summary) {
    let (mut a, mut b) = tokio::io::duplex(64 * 1024);
    let receiver =
        tokio::spawn(async move { transfer::receive_files(&mut b, &options, &mut Silent).await });
    let files = transfer::open_files(paths).unwrap();
    let sent = transfer::send_files(&mut a, files, &SendOptions::default(), &mut Silent)
        .await
        .unwrap();
    (sent, receiver.await.unwrap().unwrap())
}

#[tokio::test]
async fn an_existing_file_is_kept_unless_overwriting_is_asked_for() {
    let dir = scratch("exists");
    let (paths, contents) = make_files(&dir, 3, &[10_000]);
    let target = dir.join("out").join(&contents[0].0);
    std::fs::write(&target, b"precious").unwrap();
    let (sent, _) = send_over_pipe(&paths, ReceiveOptions::new(dir.join("out"))).await;
    assert_eq!(sent.files[0].verdict, Verdict::Exists);
    assert_eq!(sent.files[0].bytes, 0, "refused before any content");
    assert_eq!(std::fs::read(&target).unwrap(), b"precious");
    let mut options = ReceiveOptions::new(dir.join("out"));
    options.overwrite = true;
    let (sent, _) = send_over_pipe(&paths, options).await;
    assert!(sent.all_ok());
    assert!(std::fs::read(&target).unwrap() == contents[0].1);
    assert_eq!(listing(&dir.join("out")).len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- over ackwise connections ----

/// A server endpoint for `strategy` on 127.0.0.1 and a client endpoint.
/// Loopback carries large segments; a 16 000-byte MSS keeps the tests
/// quick without hiding anything the protocol does.
fn ackwise_pair(strategy: Strategy) -> (Endpoint, Endpoint) {
    let config = transfer::strategy_config(strategy, 16_000);
    let server = Endpoint::server("127.0.0.1:0".parse().unwrap(), config).unwrap();
    let client = Endpoint::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    (server, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_files_round_trip_over_ackwise_with_its_counters() {
    for (seed, strategy) in [(21u64, Strategy::AE), (22, Strategy::W4)] {
        let dir = scratch(&format!("ackwise-{strategy}"));
        let (paths, contents) = make_files(&dir, seed, &SIZES);
        let (server, client) = ackwise_pair(strategy);
        let out = dir.join("out");
        let accepting = server.clone();
        let receiver = tokio::spawn(async move {
            let (mut stream, _) = accepting.accept().await.unwrap();
            transfer::receive_files(&mut stream, &ReceiveOptions::new(out), &mut Silent).await
        });
        let config = transfer::strategy_config(strategy, 16_000);
        let mut stream = client.connect(server.local_addr(), config).await.unwrap();
        let files = transfer::open_files(&paths).unwrap();
        let sent = transfer::send_files(&mut stream, files, &SendOptions::default(), &mut Silent)
            .await
            .unwrap();
        let received = receiver.await.unwrap().unwrap();
        assert!(sent.all_ok() && received.all_ok(), "seed {seed}");
        for (name, data) in &contents {
            let got = std::fs::read(dir.join("out").join(name)).unwrap();
            assert!(got == *data, "seed {seed}: {name} differs");
        }
        assert_eq!(listing(&dir.join("out")).len(), contents.len());
        // The summaries carry the connection's counters.
        let rs = received.stats.expect("ackwise streams have counters");
        let ss = sent.stats.expect("ackwise streams have counters");
        assert!(rs.bytes_delivered >= SIZES.iter().sum::<usize>() as u64);
        assert!(ss.pure_acks_received > 0);
        assert!(sent.to_string().contains("ACKs sent"), "{sent}");
        assert!(rs.pure_acks_sent > 0 && rs.data_segments_received > 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corruption_over_ackwise_is_caught_and_nothing_is_stored() {
    let dir = scratch("ackwise-corrupt");
    let (paths, contents) = make_files(&dir, 31, &[400_000]);
    let header_bytes = 4 + 1 + 2 + contents[0].0.len() as u64 + 8;
    let (server, client) = ackwise_pair(Strategy::W4);
    let out = dir.join("out");
    let accepting = server.clone();
    let receiver = tokio::spawn(async move {
        let (mut stream, _) = accepting.accept().await.unwrap();
        transfer::receive_files(&mut stream, &ReceiveOptions::new(out), &mut Silent).await
    });
    let config = transfer::strategy_config(Strategy::W4, 16_000);
    let stream = client.connect(server.local_addr(), config).await.unwrap();
    let mut stream = Corrupting {
        inner: stream,
        written: 0,
        flip_at: header_bytes + 399_999,
    };
    let files = transfer::open_files(&paths).unwrap();
    let sent = transfer::send_files(&mut stream, files, &SendOptions::default(), &mut Silent)
        .await
        .unwrap();
    assert_eq!(sent.files[0].verdict, Verdict::DigestMismatch);
    let received = receiver.await.unwrap().unwrap();
    assert_eq!(received.files[0].verdict, Verdict::DigestMismatch);
    assert!(listing(&dir.join("out")).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_takes_concurrent_senders_over_ackwise() {
    let dir = scratch("serve");
    // A port that was free a moment ago; `serve` binds it itself.
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let plan = transfer::ServePlan {
        listen: listen.clone(),
        transport: transfer::Transport::Ackwise,
        strategy: Strategy::W4,
        mss: 16_000,
        options: ReceiveOptions::new(dir.join("out")),
        console: transfer::ConsoleMode::Quiet,
        pcap: None,
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        transfer::serve(&plan, async {
            let _ = stopped.await;
        })
        .await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut senders = Vec::new();
    let mut expected = Vec::new();
    for k in 0..8u64 {
        let sub = dir.join(format!("s{k}"));
        std::fs::create_dir_all(sub.join("src")).unwrap();
        let size = 200_000 + 150_001 * k as usize;
        let (paths, contents) = make_files(&sub, 50 + k, &[size]);
        let path = sub.join("src").join(format!("s{k}.bin"));
        std::fs::rename(&paths[0], &path).unwrap();
        expected.push((format!("s{k}.bin"), contents[0].1.clone()));
        let plan = transfer::SendPlan {
            paths: vec![path],
            to: listen.clone(),
            transport: transfer::Transport::Ackwise,
            strategy: Strategy::W4,
            mss: 16_000,
            connect_timeout: Duration::from_secs(5),
            quic_cert_sha256: None,
            options: SendOptions::default(),
            console: transfer::ConsoleMode::Quiet,
            pcap: None,
        };
        senders.push(tokio::spawn(async move { transfer::run_send(&plan).await }));
    }
    for (k, s) in senders.into_iter().enumerate() {
        let summary = s
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("sender {k}: {e}"));
        assert!(summary.all_ok(), "sender {k}: {summary}");
    }
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    assert_eq!(listing(&dir.join("out")).len(), 8);
    for (name, data) in expected {
        assert!(
            std::fs::read(dir.join("out").join(&name)).unwrap() == data,
            "{name}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs `ackwise recv` (library form) with `receiver` as its strategy
/// (`None`: follow the sender) and sends one 3 MB file with `sender`;
/// returns the sender's summary.
async fn send_with_strategies(
    test: &str,
    receiver: Option<Strategy>,
    sender: Strategy,
) -> transfer::Summary {
    let dir = scratch(test);
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let mut options = ReceiveOptions::new(dir.join("out"));
    options.strategy = receiver;
    let plan = transfer::ServePlan {
        listen: listen.clone(),
        transport: transfer::Transport::Ackwise,
        strategy: receiver.unwrap_or(Strategy::DEFAULT),
        mss: 1400,
        options,
        console: transfer::ConsoleMode::Quiet,
        pcap: None,
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        transfer::serve(&plan, async {
            let _ = stopped.await;
        })
        .await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (paths, _) = make_files(&dir, 77, &[3_000_000]);
    let plan = transfer::SendPlan {
        paths,
        to: listen,
        transport: transfer::Transport::Ackwise,
        strategy: sender,
        mss: 1400,
        connect_timeout: Duration::from_secs(5),
        quic_cert_sha256: None,
        options: SendOptions::default(),
        console: transfer::ConsoleMode::Quiet,
        pcap: None,
    };
    let summary = transfer::run_send(&plan).await.unwrap();
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    summary
}

/// A receiving stream that records the ACK policies the receiver asks
/// its transport for.
struct PolicyRecorder {
    inner: tokio::io::DuplexStream,
    asked: std::sync::Arc<std::sync::Mutex<Vec<AckPolicyConfig>>>,
}

impl AsyncRead for PolicyRecorder {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for PolicyRecorder {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

impl StatsSource for PolicyRecorder {
    fn set_ack_policy(&mut self, policy: AckPolicyConfig) -> bool {
        self.asked.lock().unwrap().push(policy);
        true
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_without_a_strategy_follows_the_senders() {
    // The sender names `ae` in its headers; a receiver started without a
    // strategy of its own switches its transport to ACK-every-segment
    // before the content comes (the switch itself is tested in the
    // connection's unit tests), and to the polled policy for `4w`.
    for (strategy, expect) in [
        ("ae", AckPolicyConfig::Every),
        (
            "4w",
            AckPolicyConfig::Polled {
                fallback: Duration::from_millis(100),
                holes: HoleAcks::Every,
            },
        ),
    ] {
        let dir = scratch(&format!("follow-{strategy}"));
        let (paths, _) = make_files(&dir, 5, &[100_000, 7]);
        let files = transfer::open_files(&paths).unwrap();
        let (mut a, b) = tokio::io::duplex(64 * 1024);
        let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut b = PolicyRecorder {
            inner: b,
            asked: asked.clone(),
        };
        let out = dir.join("out");
        let receiver = tokio::spawn(async move {
            transfer::receive_files(&mut b, &ReceiveOptions::new(out), &mut Silent).await
        });
        let options = SendOptions {
            strategy: Some(strategy.into()),
            ..SendOptions::default()
        };
        let sent = transfer::send_files(&mut a, files, &options, &mut Silent)
            .await
            .unwrap();
        let received = receiver.await.unwrap().unwrap();
        assert!(sent.all_ok() && received.all_ok(), "{strategy}");
        assert_eq!(*asked.lock().unwrap(), vec![expect; 2], "{strategy}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_with_its_own_strategy_refuses_a_mismatch_and_names_both() {
    let summary = send_with_strategies("mismatch", Some(Strategy::AE), Strategy::W4).await;
    let verdict = &summary.files[0].verdict;
    let Verdict::StrategyMismatch(reason) = verdict else {
        panic!("expected a strategy mismatch, got {verdict}");
    };
    assert!(
        reason.contains("`4w`") && reason.contains("--strategy ae"),
        "{reason}"
    );
    assert_eq!(summary.files[0].bytes, 0);
    // Polled strategies share one receiver: 2w against a 4w receiver is
    // fine.
    let summary = send_with_strategies("same-policy", Some(Strategy::W4), Strategy::W2).await;
    assert!(summary.all_ok(), "{summary}");
}

/// Starts a file of `length_bytes` by hand, sends `sent_bytes` of it and
/// waits for the receiver's partial file to appear; returns the stream.
async fn half_sent(
    client: &Endpoint,
    server: &Endpoint,
    out: &Path,
    length_bytes: u64,
    sent_bytes: usize,
) -> ackwise::net::Stream {
    let config = transfer::strategy_config(Strategy::W4, 16_000);
    let mut s = client.connect(server.local_addr(), config).await.unwrap();
    header_accepted(&mut s, "half.bin", length_bytes, false).await;
    s.write_all(&vec![9u8; sent_bytes]).await.unwrap();
    s.flush().await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while listing(out).is_empty() {
        assert!(std::time::Instant::now() < deadline, "no partial file");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ackwise_sender_that_stops_mid_file_leaves_nothing_behind() {
    let dir = scratch("ackwise-vanish");
    let out = dir.join("out");
    let (server, client) = ackwise_pair(Strategy::W4);
    // Three ways to stop: close early (FIN), reset, and the whole client
    // endpoint dropped with the stream still open (its driver resets what
    // is left). A process killed outright is the CLI test's.
    for how in ["fin", "reset", "endpoint-dropped"] {
        let accepting = server.clone();
        let mut options = ReceiveOptions::new(out.clone());
        options.idle_timeout = Duration::from_millis(1500);
        let receiver = tokio::spawn(async move {
            let (mut stream, _) = accepting.accept().await.unwrap();
            transfer::receive_files(&mut stream, &options, &mut Silent).await
        });
        let vanishing = Endpoint::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let from = if how == "endpoint-dropped" {
            &vanishing
        } else {
            &client
        };
        let s = half_sent(from, &server, &out, 50_000_000, 300_000).await;
        assert!(listing(&out)[0].starts_with(".half.bin.ackwise-partial-"));
        match how {
            "fin" => drop(s),
            "reset" => {
                s.abort();
                drop(s);
            }
            _ => {
                // Forgotten, the stream cannot close gracefully (a FIN);
                // the endpoint goes with its socket.
                std::mem::forget(s);
                drop(vanishing);
            }
        }
        let err = receiver.await.unwrap().unwrap_err();
        match how {
            "fin" => assert!(matches!(err, TransferError::PeerVanished), "{how}: {err}"),
            "reset" => assert!(matches!(err, TransferError::Connection(_)), "{how}: {err}"),
            _ => assert!(
                matches!(
                    err,
                    TransferError::Stalled { .. } | TransferError::Connection(_)
                ),
                "{how}: {err}"
            ),
        }
        assert!(listing(&out).is_empty(), "{how}: {:?}", listing(&out));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- the command line ----

fn ackwise() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ackwise"))
}

/// The single `error:` line of a failed run.
fn error_line(out: &std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line expected: {stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    lines[0].to_string()
}

/// A free port on 127.0.0.1 with nothing listening (bound, then closed).
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn cli_missing_file_is_one_line_and_no_connection() {
    let dir = scratch("cli-missing");
    let missing = dir.join("src/nope.bin");
    let out = ackwise()
        .args(["send", missing.to_str().unwrap(), "--to"])
        .arg(format!("127.0.0.1:{}", closed_port()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let line = error_line(&out);
    // The file is checked first: the closed port is never mentioned.
    assert!(line.contains("nope.bin: file not found"), "{line}");
    let out = ackwise()
        .args([
            "send",
            dir.join("src").to_str().unwrap(),
            "--to",
            "127.0.0.1:9",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(error_line(&out).contains("is a directory"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cli_closed_port_fails_clearly_within_the_timeout() {
    let dir = scratch("cli-closed");
    let (paths, _) = make_files(&dir, 5, &[1000]);
    for transport in ["ackwise", "tcp"] {
        let started = std::time::Instant::now();
        let out = ackwise()
            .arg("send")
            .arg(&paths[0])
            .args(["--transport", transport, "--connect-timeout", "2s", "--to"])
            .arg(format!("127.0.0.1:{}", closed_port()))
            .output()
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(5), "{transport}");
        assert_eq!(out.status.code(), Some(1), "{transport}");
        let line = error_line(&out);
        assert!(line.contains("cannot connect to 127.0.0.1:"), "{line}");
        assert!(
            line.contains("connection refused") || line.contains("timed out after 2 s"),
            "{line}"
        );
    }
    // Nothing answers at all (a port with a silent UDP socket): the
    // timeout, not a hang.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let started = std::time::Instant::now();
    let out = ackwise()
        .arg("send")
        .arg(&paths[0])
        .args(["--connect-timeout", "1500ms", "--to"])
        .arg(silent.local_addr().unwrap().to_string())
        .output()
        .unwrap();
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(1400) && waited < Duration::from_secs(4));
    let line = error_line(&out);
    assert!(line.contains("timed out after 1500 ms"), "{line}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cli_bad_flags_are_one_line() {
    let out = ackwise()
        .args(["send", "x", "--to", "127.0.0.1:9", "--strategy", "9w"])
        .output()
        .unwrap();
    // A command line that cannot run: status 2, as for clap's own errors.
    assert_eq!(out.status.code(), Some(2));
    assert!(error_line(&out).contains("unknown strategy `9w`"));
    let out = ackwise().args(["send", "x", "--bogus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(error_line(&out).contains("--bogus"));
    let out = ackwise()
        .args([
            "recv",
            "--listen",
            "127.0.0.1:0",
            "--out",
            "/nonexistent/ackwise",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(error_line(&out).contains("output directory /nonexistent/ackwise"));
}

#[test]
fn cli_a_transport_mismatch_is_named_both_ways() {
    let dir = scratch("cli-transport-mismatch");
    let (paths, _) = make_files(&dir, 4, &[10_000]);
    std::fs::create_dir_all(dir.join("out-quic")).unwrap();
    std::fs::create_dir_all(dir.join("out-ackwise")).unwrap();
    // An ackwise sender at a QUIC receiver: the SYNs go unanswered, the
    // probe that follows gets QUIC's version negotiation.
    let quic = Server::start("quic", &dir.join("out-quic"));
    let out = ackwise()
        .arg("send")
        .arg(&paths[0])
        .args(["--to", &quic.addr, "--connect-timeout", "2s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let line = error_line(&out);
    assert!(
        line.contains("the receiver speaks QUIC") && line.contains("--transport quic"),
        "{line}"
    );
    // A QUIC sender at an ackwise receiver: answered at once with version
    // negotiation, before any certificate is looked at.
    let ackwise_server = Server::start("ackwise", &dir.join("out-ackwise"));
    let started = std::time::Instant::now();
    let out = ackwise()
        .arg("send")
        .arg(&paths[0])
        .args(["--to", &ackwise_server.addr, "--transport", "quic"])
        .args(["--strategy", "quic", "--quic-cert-sha256", &"0".repeat(64)])
        .args(["--connect-timeout", "5s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let line = error_line(&out);
    assert!(
        line.contains("does not speak QUIC") && line.contains("without --transport quic"),
        "{line}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "named only after {:?}",
        started.elapsed()
    );
    drop((quic, ackwise_server));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An `ackwise recv` child and the address it announced.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(transport: &str, out: &Path) -> Server {
        // A killed sender is noticed after two silent seconds.
        Server::start_with(transport, out, "2s")
    }

    fn start_with(transport: &str, out: &Path, idle_timeout: &str) -> Server {
        Server::start_with_args(transport, out, idle_timeout, &[])
    }

    fn start_with_args(transport: &str, out: &Path, idle_timeout: &str, more: &[&str]) -> Server {
        let mut child = ackwise()
            .args(["recv", "--listen", "127.0.0.1:0", "--transport", transport])
            // Loopback takes large segments.
            .args(["--mss", "16000", "--idle-timeout", idle_timeout])
            .args(more)
            .arg("--out")
            .arg(out)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        let first = lines.next().unwrap().unwrap();
        // "receiving on 127.0.0.1:PORT (...) into DIR; Ctrl-C stops"
        let addr = first
            .strip_prefix("receiving on ")
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or_else(|| panic!("unexpected first line: {first}"))
            .to_string();
        // Keep draining so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Server { child, addr }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn round_trip_then_kill_the_sender(transport: &str) {
    let dir = scratch(&format!("cli-kill-{transport}"));
    let out = dir.join("out");
    let server = Server::start(transport, &out);
    let (paths, contents) = make_files(&dir, 9, &[2_000_000]);
    let sent = ackwise()
        .arg("send")
        .arg(&paths[0])
        .args([
            "--transport",
            transport,
            "--mss",
            "16000",
            "--to",
            &server.addr,
        ])
        .output()
        .unwrap();
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    let summary = String::from_utf8_lossy(&sent.stderr);
    assert!(
        summary.contains("sent 1/1 files, 2000000 bytes"),
        "{summary}"
    );
    let counters = if transport == "ackwise" {
        "ACKs sent"
    } else {
        "no ACK counters"
    };
    assert!(summary.contains(counters), "{summary}");
    assert!(std::fs::read(out.join(&contents[0].0)).unwrap() == contents[0].1);

    // A sender killed in the middle of a file larger than any buffer.
    let big = dir.join("src/big.bin");
    {
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(4 << 30).unwrap(); // sparse: costs no disk to read
    }
    let mut sender = ackwise()
        .arg("send")
        .arg(&big)
        .args(["--transport", transport, "--mss", "16000", "--quiet"])
        .args(["--to", &server.addr])
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    // Kill it once more than a megabyte sits in its partial file.
    loop {
        let started = listing(&out)
            .iter()
            .filter(|n| n.starts_with(".big.bin."))
            .any(|n| std::fs::metadata(out.join(n)).is_ok_and(|m| m.len() > 1 << 20));
        if started {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "transfer did not start"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    sender.kill().unwrap();
    sender.wait().unwrap();
    // What arrived waits for a resumption under its kept name, and
    // nothing else of the file is left: no real name, no live partial.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while listing(&out)
        .iter()
        .any(|n| n.contains("big.bin") && !n.contains(".ackwise-partial-resume-"))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "left behind: {:?}",
            listing(&out)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let kept_now = kept(&out);
    assert_eq!(kept_now.len(), 1, "{:?}", listing(&out));
    assert!(kept_now[0].starts_with(".big.bin."), "{kept_now:?}");
    let mut expected = vec![contents[0].0.clone(), kept_now[0].clone()];
    expected.sort();
    assert_eq!(listing(&out), expected);
    drop(server);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Starts sending a sparse 4 GiB file to `server` and returns the sender
/// once more than a megabyte of it sits in a partial file in `out`.
// The caller kills or waits for the child it is handed.
#[allow(clippy::zombie_processes)]
fn start_big_send(dir: &Path, out: &Path, server: &Server) -> Child {
    let big = dir.join("src/big.bin");
    {
        std::fs::create_dir_all(dir.join("src")).unwrap();
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(4 << 30).unwrap(); // sparse: costs no disk to read
    }
    let mut sender = ackwise()
        .arg("send")
        .arg(&big)
        .args(["--mss", "16000", "--quiet", "--to", &server.addr])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let started = listing(out)
            .iter()
            .filter(|n| n.starts_with(".big.bin."))
            .any(|n| std::fs::metadata(out.join(n)).is_ok_and(|m| m.len() > 1 << 20));
        if started {
            return sender;
        }
        if std::time::Instant::now() >= deadline {
            let _ = sender.kill();
            let _ = sender.wait();
            panic!("transfer did not start");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits up to `within` for `out` to hold no partial file.
fn partials_gone(out: &Path, within: Duration) -> Result<(), Vec<String>> {
    let deadline = std::time::Instant::now() + within;
    loop {
        let left: Vec<String> = listing(out)
            .into_iter()
            .filter(|n| n.contains(".ackwise-partial-"))
            .collect();
        if left.is_empty() {
            return Ok(());
        }
        if std::time::Instant::now() >= deadline {
            return Err(left);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn cli_ctrl_c_at_the_sender_resets_and_the_partial_goes_at_once() {
    let dir = scratch("cli-sigint");
    let out = dir.join("out");
    // The receiver would wait a minute for a silent sender: only the
    // sender's reset can remove the partial file within seconds. This
    // receiver keeps nothing for resumptions.
    let server = Server::start_with_args("ackwise", &out, "60s", &["--keep-partial", "0"]);
    let sender = start_big_send(&dir, &out, &server);
    let killed = Command::new("kill")
        .args(["-INT", &sender.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let result = sender.wait_with_output().unwrap();
    assert_eq!(result.status.code(), Some(130));
    let line = error_line(&result);
    assert!(line.contains("interrupted"), "{line}");
    partials_gone(&out, Duration::from_secs(5)).unwrap_or_else(|left| panic!("left: {left:?}"));
    drop(server);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cli_a_send_stopped_with_ctrl_c_resumes_where_it_stopped() {
    let dir = scratch("cli-resume");
    let out = dir.join("out");
    let server = Server::start("ackwise", &out);
    // 8 MB through a 20 Mbit/s relay: about 3 s, long enough to stop.
    let relay_port = common::free_udp_port();
    let mut relay = ackwise()
        .args(["relay", "--listen", &format!("127.0.0.1:{relay_port}")])
        .args(["--to", &server.addr, "--fwd-rate", "20mbit"])
        .args([
            "--rev-rate",
            "20mbit",
            "--fwd-delay",
            "5ms",
            "--rev-delay",
            "5ms",
        ])
        .args(["--buffer", "100"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_for_line(&mut relay, "ackwise relay:");
    let (paths, contents) = make_files(&dir, 21, &[8_000_000]);
    let (name, content) = &contents[0];
    let to = format!("127.0.0.1:{relay_port}");
    let sender = ackwise()
        .arg("send")
        .arg(&paths[0])
        .args(["--mss", "1400", "--quiet", "--to", &to])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !listing(&out)
        .iter()
        .any(|n| std::fs::metadata(out.join(n)).is_ok_and(|m| m.len() > 2_000_000))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "transfer did not start"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let stopped = Command::new("kill")
        .args(["-INT", &sender.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    assert_eq!(sender.wait_with_output().unwrap().status.code(), Some(130));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while kept(&out).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "nothing kept: {:?}",
            listing(&out)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let held = std::fs::metadata(out.join(&kept(&out)[0])).unwrap().len();
    assert!(held > 2_000_000 && held < 8_000_000, "{held}");

    let again = ackwise()
        .arg("send")
        .arg(&paths[0])
        .args(["--mss", "1400", "--to", &to])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{said}");
    assert!(
        said.contains(&format!("(resumed after {held} held bytes)")),
        "{said}"
    );
    assert!(std::fs::read(out.join(name)).unwrap() == *content);
    assert_eq!(listing(&out), vec![name.clone()]);
    let _ = relay.kill();
    let _ = relay.wait();
    drop(server);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cli_a_killed_receivers_partial_is_swept_by_the_next_one() {
    let dir = scratch("cli-kill-recv");
    let out = dir.join("out");
    let mut server = Server::start_with("ackwise", &out, "1s");
    let mut sender = start_big_send(&dir, &out, &server);
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let _ = sender.kill();
    let _ = sender.wait();
    // Nobody is left to remove it.
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        listing(&out).iter().any(|n| n.starts_with(".big.bin.")),
        "{:?}",
        listing(&out)
    );
    // The next receiver on the directory removes it: its writer is gone
    // and, twice the idle timeout on, nothing has touched it.
    let next = Server::start_with("ackwise", &out, "1s");
    partials_gone(&out, Duration::from_secs(6)).unwrap_or_else(|left| panic!("left: {left:?}"));
    drop(next);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cli_segment_sizes_that_cannot_fit_a_datagram_are_refused_up_front() {
    for mss in ["0", "63", "65448", "65535"] {
        for cmd in [
            vec!["send", "Cargo.toml", "--to", "127.0.0.1:9", "--mss", mss],
            vec![
                "recv",
                "--listen",
                "127.0.0.1:0",
                "--out",
                ".",
                "--mss",
                mss,
            ],
        ] {
            let out = ackwise().args(&cmd).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{cmd:?}");
            let line = error_line(&out);
            assert!(
                line.contains("--mss") && line.contains("UDP datagram"),
                "{line}"
            );
        }
    }
}

#[test]
fn cli_a_relay_forwarding_to_itself_is_refused() {
    let port = closed_port();
    let out = ackwise()
        .args(["relay", "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--to")
        .arg(format!("127.0.0.1:{port}"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(error_line(&out).contains("forwarding loop"));
}

#[test]
fn cli_a_relay_mtu_below_ipv4s_minimum_is_refused() {
    let out = ackwise()
        .args(["relay", "--listen", "127.0.0.1:0", "--to", "127.0.0.1:9"])
        .args(["--fwd-rate", "10mbit", "--rev-rate", "1mbit", "--mtu", "67"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = error_line(&out);
    assert!(line.contains("--mtu") && line.contains("68"), "{line}");
}

#[test]
fn cli_round_trip_and_a_killed_sender_leaves_no_file_over_ackwise() {
    round_trip_then_kill_the_sender("ackwise");
}

#[test]
fn cli_round_trip_and_a_killed_sender_leaves_no_file_over_tcp() {
    round_trip_then_kill_the_sender("tcp");
}

/// A 1 MiB tmpfs mounted on a fresh directory, unmounted when dropped;
/// `None` where this process may not mount (not root, no
/// CAP_SYS_ADMIN).
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(dir: &Path) -> Option<SmallDisk> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(dir)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| SmallDisk(dir.to_path_buf()))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn cli_full_disk_is_reported_and_leaves_nothing_behind() {
    let dir = scratch("cli-full");
    let Some(disk) = SmallDisk::mount(&dir.join("small")) else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    let server = Server::start("ackwise", &disk.0);
    let (paths, contents) = make_files(&dir, 41, &[2_000_000, 1000]);
    let out = ackwise()
        .arg("send")
        .args(&paths)
        .args(["--mss", "16000", "--to", &server.addr])
        .output()
        .unwrap();
    // The big file does not fit; the small one after it still lands.
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: ")
            && last.contains("file-0-2000000.bin")
            && last.contains("disk full"),
        "{stderr}"
    );
    assert_eq!(listing(&disk.0), vec![contents[1].0.clone()]);
    drop(server);
    drop(disk);
    std::fs::remove_dir_all(&dir).unwrap();
}
