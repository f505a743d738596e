//! The receiving end: each file goes to a temporary file in the output
//! directory and gets its real name only once its digest matched and it
//! was synced to disk.
//!
//! A transfer from a sender that can resume (protocol version 3) that
//! breaks off mid-file leaves its temporary file under a name made from
//! the file's name and length (`.NAME.ackwise-partial-resume-...`); the
//! next transfer of that name and length claims it and offers the sender
//! to go on from its end ([`protocol::Offer`]).

use super::auth::{self, Key, Session};
use super::error::{describe_store_error, TransferError};
use super::progress::{Direction, FileReport, Observer, StatsSource, Summary, PROGRESS_INTERVAL};
use super::protocol::{self, Header, Offer, ProtocolError, Verdict, DIGEST_BYTES, PARTIAL_MARKER};
use super::sweep;
use super::CHUNK_BYTES;
use crate::connection::AckPolicyConfig;
use crate::lab::Strategy;
use sha2::{Digest, Sha256};
use std::hash::{BuildHasher, RandomState};
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// Where and how the receiver stores files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiveOptions {
    /// The directory files land in (it must exist).
    pub out_dir: PathBuf,
    /// Replace an existing file of the same name. Off by default: the
    /// receiver then answers [`Verdict::Exists`] and stores nothing.
    pub overwrite: bool,
    /// A read that brings nothing for this long ends the connection with
    /// [`TransferError::Stalled`] (and removes the partial file).
    pub idle_timeout: Duration,
    /// `None`: acknowledge as the strategy the sender names in its header
    /// does (a polled receiver until then, which serves any sender).
    /// `Some`: this receiver's strategy; a sender naming a strategy whose
    /// receiver acknowledges differently is refused before any content
    /// moves, with a verdict that names both.
    pub strategy: Option<Strategy>,
    /// Take files only from senders that hold this shared key
    /// ([`super::auth`]); `None` takes them from anyone who can connect.
    pub key: Option<Key>,
    /// How long the bytes of a transfer that broke off are kept for its
    /// resumption, counted from their last write (the sweep removes them
    /// after that). Zero keeps nothing: every failure removes the partial
    /// file, as for senders that cannot resume.
    pub keep_partial: Duration,
}

impl ReceiveOptions {
    /// Files into `out_dir`, no overwriting, a 60 s idle timeout.
    pub fn new(out_dir: impl Into<PathBuf>) -> ReceiveOptions {
        ReceiveOptions {
            out_dir: out_dir.into(),
            overwrite: false,
            idle_timeout: Duration::from_secs(60),
            strategy: None,
            key: None,
            keep_partial: DEFAULT_KEEP_PARTIAL,
        }
    }

    /// Checks that the output directory exists and takes new files, so
    /// that a server reports a bad directory when it starts rather than
    /// at its first transfer.
    pub fn check_out_dir(&self) -> Result<(), TransferError> {
        let dir = self.out_dir.display().to_string();
        let bad = |reason: String| TransferError::OutputDir {
            dir: dir.clone(),
            reason,
        };
        let meta = std::fs::metadata(&self.out_dir).map_err(|e| bad(describe_store_error(&e)))?;
        if !meta.is_dir() {
            return Err(bad("not a directory".into()));
        }
        let probe = PartialFile::create(&self.out_dir, "probe")
            .map_err(|e| bad(describe_store_error(&e)))?;
        drop(probe);
        Ok(())
    }
}

/// How long [`ReceiveOptions::new`] keeps the bytes of a broken-off
/// transfer for its resumption: a day.
pub const DEFAULT_KEEP_PARTIAL: Duration = Duration::from_secs(24 * 3600);

/// The marker, after [`PARTIAL_MARKER`], of partial files kept for
/// resumption.
pub(crate) const RESUME_MARKER: &str = "resume-";

/// Where the bytes of a broken-off transfer of `name`, `length_bytes`
/// long, wait for its resumption: a hidden partial name (so never a real
/// name) made from the length and a digest of the whole name, since the
/// visible part is cut to 200 bytes.
fn resume_path(dir: &Path, name: &str, length_bytes: u64) -> PathBuf {
    let digest = Sha256::digest(name.as_bytes());
    let tag: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    dir.join(format!(
        ".{}{PARTIAL_MARKER}{RESUME_MARKER}{length_bytes}-{tag}",
        shown_part(name)
    ))
}

/// The part of `name` that temporary file names show: at most 200 bytes,
/// so that the dot and the suffix fit the usual 255-byte limit.
fn shown_part(name: &str) -> &str {
    let mut end = name.len().min(200);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// A temporary file that is removed when dropped unless it was renamed
/// to its real name: any early return, error or cancelled task (a
/// receiver stopped with Ctrl-C drops its tasks) cleans up.
#[derive(Debug)]
struct PartialFile {
    path: PathBuf,
    kept: bool,
}

impl PartialFile {
    /// Creates `.NAME.ackwise-partial-PID-RANDOM` in `dir`, never reusing
    /// an existing file.
    fn create(dir: &Path, name: &str) -> std::io::Result<(PartialFile, std::fs::File)> {
        let mut attempt = 0;
        loop {
            let random = RandomState::new().hash_one((std::process::id(), attempt));
            let suffix = sweep::partial_suffix(random);
            let path = dir.join(format!(".{}{PARTIAL_MARKER}{suffix}", shown_part(name)));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(file) => {
                    sweep::register(&path);
                    return Ok((PartialFile { path, kept: false }, file));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 8 => {
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Keeps the bytes written so far for a resumption: the file takes
    /// its resume name and is no longer removed on drop.
    fn keep_for_resume(&mut self, kept: &Path) {
        let empty = std::fs::metadata(&self.path).map_or(true, |m| m.len() == 0);
        if !empty && std::fs::rename(&self.path, kept).is_ok() {
            self.kept = true;
        }
    }
}

impl Drop for PartialFile {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
        sweep::unregister(&self.path);
    }
}

/// Receives files from `stream` until the sender closes its side at a
/// file boundary, then closes this side.
///
/// Each file is refused before its content when its name exists (unless
/// `options.overwrite`) or no temporary file can be made; otherwise its
/// content goes to a temporary file, which is synced and renamed only if
/// the digest that follows matches. A failure to store (disk full) keeps
/// reading the content so the next file can follow, and answers
/// [`Verdict::StoreFailed`]. The stream ending or failing in the middle
/// of a file, going silent for `options.idle_timeout`, or breaking the
/// protocol ends the connection with an error. The partial file is then
/// kept for a resumption when the sender can resume, the break came while
/// content or its digest was due, and `options.keep_partial` is not
/// zero; it is removed in every other case.
pub async fn receive_files<S>(
    stream: &mut S,
    options: &ReceiveOptions,
    observer: &mut dyn Observer,
) -> Result<Summary, TransferError>
where
    S: AsyncRead + AsyncWrite + Unpin + StatsSource,
{
    let started = Instant::now();
    let idle = options.idle_timeout;
    let mut reports = Vec::new();
    let mut session = match &options.key {
        Some(key) => Some(authenticate(stream, key, idle).await?),
        None => None,
    };
    loop {
        let read =
            TransferError::within(idle, "waiting for a header", protocol::read_header(stream));
        let header = match read.await? {
            Err(e) => {
                let verdict = match &e {
                    ProtocolError::Name(n) => Verdict::BadName(n.to_string()),
                    ProtocolError::AuthenticationOffered => Verdict::Unauthenticated(
                        "this receiver holds no key (started without --key-file): \
                         give it the sender's key, or send without --key-file"
                            .into(),
                    ),
                    other => Verdict::BadHeader(other.to_string()),
                };
                // The header may not have been read to its end, so the
                // stream is out of step: answer, then end the connection.
                let _ = protocol::write_verdict(stream, &verdict).await;
                let _ = stream.shutdown().await;
                return Err(e.into());
            }
            Ok(None) => break,
            Ok(Some(header)) => header,
        };
        if let Some(s) = session.as_mut() {
            let read = auth::check_header_tag(stream, s, &header);
            if !TransferError::within_step(idle, "waiting for a header", read).await? {
                let why = "a header did not carry the key's tag (changed on the way?)";
                return Err(auth::refuse(stream, why, why.into()).await);
            }
        }
        let report = receive_one(stream, header, options, session.as_mut(), observer).await?;
        observer.file_finished(&report);
        reports.push(report);
    }
    let _ = tokio::time::timeout(idle, stream.shutdown()).await;
    Ok(Summary {
        direction: Direction::Receive,
        files: reports,
        elapsed: started.elapsed(),
        stats: stream.transport_stats(),
    })
}

/// Runs the receiver's side of the key exchange: a sender that does not
/// open with it is refused, with a verdict saying why, before any header
/// is read.
async fn authenticate<S>(
    stream: &mut S,
    key: &Key,
    idle: Duration,
) -> Result<Session, TransferError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut magic = [0u8; 4];
    TransferError::within(
        idle,
        "waiting for the sender",
        stream.read_exact(&mut magic),
    )
    .await?;
    if magic != auth::AUTH_MAGIC {
        let told = "this receiver takes files only from senders holding its key: \
                    give the sender --key-file with the same key";
        let error = "the sender did not authenticate (started without --key-file?)";
        return Err(auth::refuse(stream, told, error.into()).await);
    }
    TransferError::within_step(
        idle,
        "authenticating",
        auth::authenticate_receiver(stream, key),
    )
    .await
}

async fn answer<S: AsyncWrite + Unpin>(
    stream: &mut S,
    verdict: &Verdict,
    idle: Duration,
) -> Result<(), TransferError> {
    TransferError::within(
        idle,
        "sending a verdict",
        protocol::write_verdict(stream, verdict),
    )
    .await
}

/// Reads into `buf` once, within `idle`; the end of the stream here is the
/// sender vanishing mid-file.
async fn read_some<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut [u8],
    idle: Duration,
) -> Result<usize, TransferError> {
    match TransferError::within(idle, "receiving", stream.read(buf)).await? {
        0 => Err(TransferError::PeerVanished),
        n => Ok(n),
    }
}

/// Takes the ACK policy of the strategy a header names, or refuses it:
/// `None` when the file may come. With no strategy of its own the
/// receiver follows; with one, it accepts a sender whose strategy's
/// receiver acknowledges the same way (every polled strategy shares one
/// receiver) and refuses the others, naming both.
fn follow_strategy<S: StatsSource>(
    stream: &mut S,
    named: Option<&str>,
    own: Option<Strategy>,
) -> Option<Verdict> {
    let named = named?;
    let theirs: Strategy = match named.parse() {
        Ok(s) => s,
        Err(_) => {
            return Some(Verdict::StrategyMismatch(format!(
                "this receiver does not know the sender's strategy `{named}`"
            )))
        }
    };
    let policy = receiver_policy(theirs);
    match own {
        Some(own) if receiver_policy(own) != policy => Some(Verdict::StrategyMismatch(format!(
            "the sender runs `{theirs}` but this receiver was started with --strategy {own}, \
             which acknowledges differently; give both ends the same strategy, or start \
             the receiver without --strategy to follow the sender"
        ))),
        Some(_) => None,
        // A transport without a switchable policy (kernel TCP, QUIC)
        // acknowledges its own way whatever the header says.
        None => {
            stream.set_ack_policy(policy);
            None
        }
    }
}

/// How the receiving end of `strategy` acknowledges.
fn receiver_policy(strategy: Strategy) -> AckPolicyConfig {
    super::strategy_config(strategy, super::DEFAULT_MSS).ack_policy
}

async fn receive_one<S>(
    stream: &mut S,
    header: Header,
    options: &ReceiveOptions,
    session: Option<&mut Session>,
    observer: &mut dyn Observer,
) -> Result<FileReport, TransferError>
where
    S: AsyncRead + AsyncWrite + Unpin + StatsSource,
{
    let started = Instant::now();
    let idle = options.idle_timeout;
    let Header {
        name,
        length_bytes,
        strategy,
        can_resume,
    } = header;
    let target = options.out_dir.join(&name);
    let refuse = follow_strategy(stream, strategy.as_deref(), options.strategy).or_else(|| {
        match std::fs::symlink_metadata(&target) {
            Ok(_) if !options.overwrite => Some(Verdict::Exists),
            Ok(meta) if meta.is_dir() => Some(Verdict::StoreFailed(
                "a directory of that name exists".into(),
            )),
            _ => None,
        }
    });
    let created = match refuse {
        Some(v) => Err(v),
        None => PartialFile::create(&options.out_dir, &name)
            .map_err(|e| Verdict::StoreFailed(describe_store_error(&e))),
    };
    let (mut partial, file) = match created {
        Ok(pair) => pair,
        Err(verdict) => {
            answer(stream, &verdict, idle).await?;
            return Ok(FileReport {
                name,
                bytes: 0,
                resumed_from_bytes: 0,
                elapsed: started.elapsed(),
                verdict,
            });
        }
    };
    answer(stream, &Verdict::Ok, idle).await?;
    let keep = can_resume && !options.keep_partial.is_zero();
    let kept = resume_path(&options.out_dir, &name, length_bytes);
    let (start, hasher, file) = if can_resume {
        match resume(stream, &partial, file, &kept, keep, length_bytes, idle).await {
            Ok(resumed) => resumed,
            Err(e) => {
                // Bytes claimed for this transfer go back for the next.
                if keep {
                    partial.keep_for_resume(&kept);
                }
                return Err(e);
            }
        }
    } else {
        (0, Sha256::new(), file)
    };
    observer.file_started(&name, length_bytes);

    // The file is written and hashed on a blocking thread while this task
    // reads the next chunk.
    let (chunks_tx, mut chunks) = mpsc::channel::<Vec<u8>>(4);
    let (spare_tx, spare) = std::sync::mpsc::channel::<Vec<u8>>();
    let writer = tokio::task::spawn_blocking(move || -> std::io::Result<[u8; DIGEST_BYTES]> {
        let mut file = file;
        let mut hasher = hasher;
        while let Some(buf) = chunks.blocking_recv() {
            hasher.update(&buf);
            file.write_all(&buf)?;
            let _ = spare_tx.send(buf);
        }
        // Durable before it gets its real name: a crash after the rename
        // must not leave a short file under it.
        file.sync_all()?;
        Ok(hasher.finalize().into())
    });

    let mut writer_alive = true;
    let mut left = length_bytes - start;
    let mut done = start;
    let mut last_report = Instant::now();
    let mut broke_off = None;
    'content: while left > 0 {
        let mut buf = spare.try_recv().unwrap_or_default();
        let want = usize::try_from(left.min(CHUNK_BYTES as u64)).unwrap_or(CHUNK_BYTES);
        buf.resize(want, 0);
        let mut filled = 0;
        while filled < want {
            match read_some(stream, &mut buf[filled..], idle).await {
                Ok(n) => filled += n,
                Err(e) => {
                    // What did arrive is kept for a resumption.
                    buf.truncate(filled);
                    if writer_alive && !buf.is_empty() {
                        let _ = chunks_tx.send(buf).await;
                    }
                    broke_off = Some(e);
                    break 'content;
                }
            }
            // A chunk takes 32 s at 64 kbit/s: report within it too.
            if last_report.elapsed() >= PROGRESS_INTERVAL {
                last_report = Instant::now();
                observer.progress(done + filled as u64, stream.transport_stats().as_ref());
            }
        }
        left -= want as u64;
        done += want as u64;
        // Once the writer failed (disk full) the content is still read,
        // and dropped, so that the stream stays in step for the verdict
        // and the next file.
        if writer_alive && chunks_tx.send(buf).await.is_err() {
            writer_alive = false;
        }
        if last_report.elapsed() >= PROGRESS_INTERVAL {
            last_report = Instant::now();
            observer.progress(done, stream.transport_stats().as_ref());
        }
    }
    let mut digest = [0u8; DIGEST_BYTES];
    let mut filled = 0;
    while broke_off.is_none() && filled < DIGEST_BYTES {
        match read_some(stream, &mut digest[filled..], idle).await {
            Ok(n) => filled += n,
            Err(e) => broke_off = Some(e),
        }
    }
    drop(chunks_tx);
    let written = writer.await;
    if let Some(e) = broke_off {
        // Synced by the writer; kept only when every byte reached it.
        if keep && writer_alive && matches!(written, Ok(Ok(_))) {
            partial.keep_for_resume(&kept);
        }
        return Err(e);
    }
    observer.progress(done, stream.transport_stats().as_ref());
    // With a key the digest travels as its tag. The tag is computed even
    // when the write failed, to keep the tag count in step with the
    // sender's.
    let expected = match (session, &written) {
        (Some(s), Ok(Ok(ours))) => Some(s.seal_digest(ours)),
        (Some(s), _) => {
            s.seal_digest(&[0; DIGEST_BYTES]);
            None
        }
        (None, Ok(Ok(ours))) => Some(*ours),
        (None, _) => None,
    };
    let verdict = match written {
        Ok(Ok(_)) if expected == Some(digest) => {
            match commit(&mut partial, &target, options.overwrite) {
                Ok(()) => Verdict::Ok,
                Err(v) => v,
            }
        }
        Ok(Ok(_)) => Verdict::DigestMismatch,
        Ok(Err(e)) => Verdict::StoreFailed(describe_store_error(&e)),
        Err(_) => Verdict::StoreFailed("the writing thread stopped".into()),
    };
    // Removes the temporary file unless it was committed.
    drop(partial);
    answer(stream, &verdict, idle).await?;
    Ok(FileReport {
        name,
        bytes: done - start,
        resumed_from_bytes: start,
        elapsed: started.elapsed(),
        verdict,
    })
}

/// The resumption exchange with a sender that can resume: claims the
/// bytes kept for this file (when `keep`), offers them, and reads where
/// the sender starts. Returns that offset, the SHA-256 state of the bytes
/// before it and the file to append to.
async fn resume<S>(
    stream: &mut S,
    partial: &PartialFile,
    file: std::fs::File,
    kept: &Path,
    keep: bool,
    length_bytes: u64,
    idle: Duration,
) -> Result<(u64, Sha256, std::fs::File), TransferError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let (held, prefix, file) = if keep {
        let (from, path) = (kept.to_path_buf(), partial.path.clone());
        // Hashing what is held reads it all: not on the runtime's threads.
        let claimed = tokio::task::spawn_blocking(move || claim(&from, &path, length_bytes))
            .await
            .map_err(|_| std::io::Error::other("the hashing thread stopped"))
            .and_then(|r| r);
        claimed.map_err(|e| store_failed(kept, &e))?
    } else {
        (0, Sha256::new(), file)
    };
    let offer = if held > 0 {
        Offer {
            held_bytes: held,
            digest: prefix.clone().finalize().into(),
        }
    } else {
        Offer::NOTHING
    };
    TransferError::within(
        idle,
        "sending an offer",
        protocol::write_offer(stream, &offer),
    )
    .await?;
    let start =
        TransferError::within(idle, "waiting for the sender's start", stream.read_u64()).await?;
    let mut file = file;
    let hasher = if start == held && held > 0 {
        prefix
    } else if start == 0 {
        Sha256::new()
    } else {
        return Err(ProtocolError::BadStart { start, held }.into());
    };
    let cut = file
        .set_len(start)
        .and_then(|()| file.seek(std::io::SeekFrom::Start(start)));
    cut.map_err(|e| store_failed(kept, &e))?;
    Ok((start, hasher, file))
}

/// A failure to reopen or cut a partial file during the resumption, after
/// the header was accepted: the stream cannot go on without a file.
fn store_failed(kept: &Path, e: &std::io::Error) -> TransferError {
    TransferError::OutputDir {
        dir: kept
            .parent()
            .map_or_else(String::new, |d| d.display().to_string()),
        reason: describe_store_error(e),
    }
}

/// Moves the bytes kept at `kept` onto `path` (a new, empty partial file
/// of this transfer), atomically, so that of two transfers of the same
/// file only one gets them. Returns how many bytes `path` then holds,
/// their SHA-256 state, and `path` opened for writing; a held length
/// above `length_bytes` cannot be a prefix and counts as nothing.
fn claim(
    kept: &Path,
    path: &Path,
    length_bytes: u64,
) -> std::io::Result<(u64, Sha256, std::fs::File)> {
    // The rename replaces the empty file; the open handle would still
    // point at the one replaced, so the file is opened again by name.
    let moved = std::fs::rename(kept, path).is_ok();
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)?;
    let (held, hasher) = if moved {
        super::hash_prefix(&mut file, u64::MAX)?
    } else {
        (0, Sha256::new())
    };
    if held > length_bytes {
        return Ok((0, Sha256::new(), file));
    }
    Ok((held, hasher, file))
}

/// Gives the synced temporary file its real name.
///
/// Without overwriting, a hard link claims the name atomically, so a file
/// that appeared under it during the transfer is never replaced; where
/// the file system has no hard links, an existence check and a rename do.
fn commit(partial: &mut PartialFile, target: &Path, overwrite: bool) -> Result<(), Verdict> {
    let stored = if overwrite {
        std::fs::rename(&partial.path, target)
    } else {
        match std::fs::hard_link(&partial.path, target) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(Verdict::Exists),
            Err(_) if std::fs::symlink_metadata(target).is_ok() => return Err(Verdict::Exists),
            Err(_) => std::fs::rename(&partial.path, target),
        }
    };
    stored.map_err(|e| Verdict::StoreFailed(describe_store_error(&e)))?;
    if !overwrite {
        // The link holds the content; the temporary name goes (if the
        // rename fallback ran, it is already gone).
        let _ = std::fs::remove_file(&partial.path);
    }
    partial.kept = true;
    // The new directory entry itself must reach the disk too.
    if let Some(dir) = target.parent() {
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}
