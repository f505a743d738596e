//! File transfer over any byte stream: ackwise streams, kernel TCP or an
//! in-memory pipe.
//!
//! A sender ([`send_files`]) announces each file with a small header (its
//! name and length), streams the content, then its SHA-256 digest; the
//! receiver ([`receive_files`]) answers each header (may the content
//! come?) and each digest (did the file land?). Several files travel one
//! after another on one connection; the wire format is in [`protocol`].
//!
//! The receiver never leaves a truncated or corrupted file under the real
//! name: content goes to `.NAME.ackwise-partial-PID-RANDOM` in the output
//! directory, which is synced and renamed only after the digest matched,
//! and removed on a digest mismatch, a full disk or a cancelled task.
//! When the connection breaks mid-file (sender gone or stopped, path
//! lost), what arrived is kept for [`ReceiveOptions::keep_partial`] and
//! the next transfer of the same file resumes from it once the sender has
//! checked its digest ([`protocol`] version 3). What a killed receiver
//! leaves behind is swept by the next one ([`sweep_partials`], which
//! [`serve`] runs at start and then every idle timeout). An existing file
//! is never replaced unless [`ReceiveOptions::overwrite`] says so.
//!
//! The transfer loops are generic over `AsyncRead + AsyncWrite`; the
//! [`StatsSource`] trait lets an ackwise stream show its ACK counters in
//! progress and summaries, and lets every other stream show none. An
//! [`Observer`] hears of progress; [`Console`] draws it on stderr.
//!
//! Around them, [`run_send`] and [`serve`] are `ackwise send` and
//! `ackwise recv`: they dial or listen on an ackwise [`Endpoint`] (or
//! kernel TCP, for comparison) configured by [`strategy_config`] from a
//! lab strategy name. `examples/file_server.rs` and
//! `examples/file_client.rs` show the same with the pieces spelled out.
//!
//! [`Endpoint`]: crate::net::Endpoint
//!
//! ```
//! use ackwise::net::transfer::{self, ReceiveOptions, SendOptions, Silent};
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), transfer::TransferError> {
//! let dir = std::env::temp_dir().join(format!("ackwise-doc-{}", std::process::id()));
//! let (src, out) = (dir.join("src"), dir.join("out"));
//! std::fs::create_dir_all(&src).unwrap();
//! std::fs::create_dir_all(&out).unwrap();
//! std::fs::write(src.join("hello.txt"), b"hello, ackwise").unwrap();
//!
//! // Opened (and checked) before any connection exists.
//! let files = transfer::open_files(&[src.join("hello.txt")])?;
//! let (mut a, mut b) = tokio::io::duplex(64 * 1024);
//! let receiver = tokio::spawn(async move {
//!     transfer::receive_files(&mut b, &ReceiveOptions::new(out), &mut Silent).await
//! });
//! let sent = transfer::send_files(&mut a, files, &SendOptions::default(), &mut Silent).await?;
//! assert!(sent.all_ok());
//! receiver.await.unwrap()?;
//! assert_eq!(std::fs::read(dir.join("out/hello.txt")).unwrap(), b"hello, ackwise");
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok(())
//! # }
//! ```

mod app;
pub mod auth;
mod error;
mod progress;
pub mod protocol;
#[cfg(feature = "quic-net")]
pub mod quic;
mod receive;
mod send;
mod sweep;
mod watch;

pub use app::{
    check_mss, run_send, run_send_until, serve, strategy_config, SendPlan, ServePlan, Transport,
    DEFAULT_MSS, MIN_MSS,
};
pub use error::TransferError;
pub use progress::{
    fmt_rate, Console, ConsoleMode, Direction, FileReport, Observer, Silent, StatsSource, Summary,
    PROGRESS_INTERVAL,
};
pub use protocol::{validate_name, NameError, ProtocolError, Verdict};
pub use receive::{receive_files, ReceiveOptions, DEFAULT_KEEP_PARTIAL};
pub use send::{open_files, send_files, OutgoingFile, SendOptions};
pub use sweep::{stale_age, sweep_partials};

/// Bytes handed between the network task and the file thread at a time.
pub(crate) const CHUNK_BYTES: usize = 256 * 1024;

/// Hashes `file` from its current position for at most `limit_bytes`
/// (less if it ends first): the bytes read and their SHA-256 state. Both
/// ends of a resumption hash a file's first bytes this way: the receiver
/// what it kept, the sender the same length of its own file.
pub(crate) fn hash_prefix(
    file: &mut std::fs::File,
    limit_bytes: u64,
) -> std::io::Result<(u64, sha2::Sha256)> {
    use sha2::Digest;
    use std::io::Read;
    let mut hasher = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut read = 0u64;
    while read < limit_bytes {
        let want = usize::try_from((limit_bytes - read).min(buf.len() as u64)).unwrap_or(buf.len());
        match file.read(&mut buf[..want]) {
            Ok(0) => break,
            Ok(n) => {
                hasher.update(&buf[..n]);
                read += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok((read, hasher))
}
