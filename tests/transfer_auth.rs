//! File transfer with a shared key (`--key-file`): files move only between
//! holders of the same key, each side is told clearly when the other has
//! none or another, and a header changed on the way is refused.
#![cfg(feature = "cli")]

use ackwise::net::transfer::auth::Key;
use ackwise::net::transfer::{
    self, ReceiveOptions, SendOptions, Silent, Summary, TransferError, Verdict,
};
use std::path::{Path, PathBuf};
use std::process::Command;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackwise-auth-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("out")).unwrap();
    dir
}

fn file(dir: &Path, name: &str, len: usize) -> (PathBuf, Vec<u8>) {
    let data: Vec<u8> = (0..len).map(|i| (i * 31 % 253) as u8).collect();
    let path = dir.join("src").join(name);
    std::fs::write(&path, &data).unwrap();
    (path, data)
}

fn key(byte: u8) -> Option<Key> {
    Some(Key::new(vec![byte; 32]).unwrap())
}

fn stored(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Sends `paths` from a sender holding `send_key` to a receiver holding
/// `recv_key`; with `flip`, the byte at that offset of the sender's stream
/// is changed on the way.
async fn transfer(
    dir: &Path,
    paths: &[PathBuf],
    send_key: Option<Key>,
    recv_key: Option<Key>,
    flip: Option<usize>,
) -> (
    Result<Summary, TransferError>,
    Result<Summary, TransferError>,
) {
    let (mut a, b) = tokio::io::duplex(64 * 1024);
    let (c, mut d) = tokio::io::duplex(64 * 1024);
    // The path between them: copies both ways, flipping one byte of the
    // sender's stream if asked.
    let path = tokio::spawn(async move {
        let (mut br, mut bw) = tokio::io::split(b);
        let (mut cr, mut cw) = tokio::io::split(c);
        let forward = async {
            let mut buf = vec![0u8; 4096];
            let mut at = 0usize;
            loop {
                let n = match br.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                if let Some(f) = flip {
                    if (at..at + n).contains(&f) {
                        buf[f - at] ^= 0x01;
                    }
                }
                at += n;
                if cw.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
            let _ = cw.shutdown().await;
        };
        let back = async {
            let _ = tokio::io::copy(&mut cr, &mut bw).await;
            let _ = bw.shutdown().await;
        };
        tokio::join!(forward, back);
    });
    let mut options = ReceiveOptions::new(dir.join("out"));
    options.key = recv_key;
    let receiver =
        tokio::spawn(async move { transfer::receive_files(&mut d, &options, &mut Silent).await });
    let files = transfer::open_files(paths).unwrap();
    let options = SendOptions {
        key: send_key,
        ..SendOptions::default()
    };
    let sent = transfer::send_files(&mut a, files, &options, &mut Silent).await;
    drop(a);
    let received = receiver.await.unwrap();
    let _ = path.await;
    (sent, received)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holders_of_the_same_key_transfer_intact_files() {
    let dir = scratch("same");
    let (p1, d1) = file(&dir, "one.bin", 300_000);
    let (p2, d2) = file(&dir, "two.bin", 0);
    let (sent, received) = transfer(&dir, &[p1, p2], key(7), key(7), None).await;
    let sent = sent.unwrap();
    assert!(sent.all_ok(), "{sent}");
    assert!(received.unwrap().all_ok());
    assert!(std::fs::read(dir.join("out/one.bin")).unwrap() == d1);
    assert!(std::fs::read(dir.join("out/two.bin")).unwrap() == d2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn different_keys_stop_the_sender_before_any_header() {
    let dir = scratch("differ");
    let (p, _) = file(&dir, "x.bin", 10_000);
    let (sent, received) = transfer(&dir, &[p], key(7), key(8), None).await;
    let e = sent.unwrap_err();
    assert!(matches!(e, TransferError::Authentication(_)), "{e}");
    assert!(e.to_string().contains("does not hold this key"), "{e}");
    assert!(received.is_err());
    assert!(stored(&dir).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyless_end_is_named_on_both_sides() {
    // The sender has a key, the receiver none.
    let dir = scratch("keyless-recv");
    let (p, _) = file(&dir, "x.bin", 10_000);
    let (sent, received) = transfer(&dir, std::slice::from_ref(&p), key(7), None, None).await;
    let e = sent.unwrap_err().to_string();
    assert!(e.contains("receiver holds no key"), "{e}");
    assert!(received.is_err());
    assert!(stored(&dir).is_empty());
    // The receiver has a key, the sender none: its file is refused.
    let (sent, received) = transfer(&dir, &[p], None, key(7), None).await;
    let report = sent.map(|s| s.files[0].verdict.clone());
    match report {
        Ok(Verdict::Unauthenticated(why)) => assert!(why.contains("--key-file"), "{why}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    let e = received.unwrap_err().to_string();
    assert!(e.contains("did not authenticate"), "{e}");
    assert!(stored(&dir).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_changed_on_the_way_is_refused_with_a_key_and_not_without() {
    let dir = scratch("tamper");
    let (p, _) = file(&dir, "name.bin", 10_000);
    // Authenticated: 21 bytes of hello and a 32-byte proof, then the
    // header: magic, version and name length (7 bytes), then the name.
    let (sent, received) = transfer(
        &dir,
        std::slice::from_ref(&p),
        key(7),
        key(7),
        Some(21 + 32 + 7),
    )
    .await;
    assert!(received.unwrap_err().to_string().contains("tag"));
    let verdict = sent.map(|s| s.files[0].verdict.clone());
    assert!(
        matches!(verdict, Ok(Verdict::Unauthenticated(_)) | Err(_)),
        "{verdict:?}"
    );
    assert!(stored(&dir).is_empty(), "{:?}", stored(&dir));
    // Without a key the same change goes unnoticed: the file lands under
    // the changed name ('n' ^ 1 = 'o').
    let (sent, _) = transfer(&dir, &[p], None, None, Some(7)).await;
    assert!(sent.unwrap().all_ok());
    assert_eq!(stored(&dir), vec!["oame.bin".to_string()]);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn ackwise(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ackwise"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn cli_listening_beyond_loopback_needs_a_key_or_insecure() {
    let dir = scratch("cli");
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    let r = ackwise(&["recv", "--listen", "0.0.0.0:0", "--out", out]);
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("--key-file") && err.contains("--insecure"),
        "{err}"
    );
    // A short key file is refused with its path.
    let short = dir.join("short.key");
    std::fs::write(&short, b"too short").unwrap();
    let r = ackwise(
        &["recv", "--listen", "0.0.0.0:0", "--out", out, "--key-file"]
            .iter()
            .copied()
            .chain([short.to_str().unwrap()])
            .collect::<Vec<_>>(),
    );
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("short.key") && err.contains("at least 16"),
        "{err}"
    );
    let r = ackwise(&[
        "send",
        "Cargo.toml",
        "--to",
        "127.0.0.1:9",
        "--key-file",
        "/nonexistent/k",
    ]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("/nonexistent/k"));
    std::fs::remove_dir_all(&dir).unwrap();
}
