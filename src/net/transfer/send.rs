//! The sending end: files checked before any connection is made, then
//! sent one after another over one stream.

use super::auth::{self, Key, Session};
use super::error::TransferError;
use super::progress::{Direction, FileReport, Observer, StatsSource, Summary};
use super::protocol::{self, Header, Offer, Verdict, DIGEST_BYTES};
use super::watch::SendWatch;
use super::CHUNK_BYTES;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::io::{Read, Seek};
use std::path::Path;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// A file that exists, is readable and has a name that can travel: what
/// [`open_files`] hands to [`send_files`].
#[derive(Debug)]
pub struct OutgoingFile {
    path: String,
    name: String,
    length_bytes: u64,
    file: std::fs::File,
}

impl OutgoingFile {
    /// Opens `path` for sending: a regular, readable file whose last
    /// component is a valid name ([`protocol::validate_name`]).
    pub fn open(path: impl AsRef<Path>) -> Result<OutgoingFile, TransferError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let meta = std::fs::metadata(path).map_err(|e| TransferError::from_read(&shown, e))?;
        if meta.is_dir() {
            return Err(TransferError::IsDirectory { path: shown });
        }
        if !meta.is_file() {
            return Err(TransferError::NotAFile { path: shown });
        }
        let name = match path.file_name().map(|n| n.to_str()) {
            Some(Some(name)) => name.to_string(),
            Some(None) => {
                return Err(TransferError::BadName {
                    path: shown,
                    problem: protocol::NameError::NotUtf8,
                })
            }
            None => {
                return Err(TransferError::BadName {
                    path: shown,
                    problem: protocol::NameError::Empty,
                })
            }
        };
        protocol::validate_name(&name).map_err(|problem| TransferError::BadName {
            path: shown.clone(),
            problem,
        })?;
        let file = std::fs::File::open(path).map_err(|e| TransferError::from_read(&shown, e))?;
        Ok(OutgoingFile {
            path: shown,
            name,
            length_bytes: meta.len(),
            file,
        })
    }

    /// The path as given.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The name it travels under: the path's last component.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its length when it was opened.
    pub fn length_bytes(&self) -> u64 {
        self.length_bytes
    }
}

/// Opens every path with [`OutgoingFile::open`], so that a missing or
/// unreadable file is reported before any connection is made; two paths
/// with the same last component are refused (the second would meet the
/// first at the receiver).
pub fn open_files<P: AsRef<Path>>(paths: &[P]) -> Result<Vec<OutgoingFile>, TransferError> {
    let mut names = HashSet::new();
    let mut files = Vec::with_capacity(paths.len());
    for p in paths {
        let f = OutgoingFile::open(p)?;
        if !names.insert(f.name.clone()) {
            return Err(TransferError::DuplicateName {
                path: f.path,
                name: f.name,
            });
        }
        files.push(f);
    }
    Ok(files)
}

/// How the sender waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendOptions {
    /// The receiver acknowledging nothing new (and answering nothing) for
    /// this long ends the transfer with [`TransferError::Stalled`]. A
    /// slow transfer whose acknowledgments keep coming never times out,
    /// however long its queued data takes to drain. The receiver syncs a
    /// file to disk before its verdict, with nothing to acknowledge
    /// meanwhile, so this must cover that too.
    pub idle_timeout: Duration,
    /// The strategy named in every file header, a lab name such as `4w`:
    /// a receiver not told a strategy of its own then acknowledges as that
    /// strategy's receiver does, and one that was refuses a mismatch
    /// before any content moves. `None` names none (the receiver keeps its
    /// policy).
    pub strategy: Option<String>,
    /// Authenticate with this shared key ([`super::auth`]): the transfer
    /// starts only once the receiver has proved it holds the key, and
    /// every header and digest carries the key's tag. `None`: no
    /// authentication (a receiver that requires it refuses the files).
    pub key: Option<Key>,
}

impl Default for SendOptions {
    fn default() -> Self {
        SendOptions {
            idle_timeout: Duration::from_secs(60),
            strategy: None,
            key: None,
        }
    }
}

/// Sends `files` one after another over `stream`, then closes its sending
/// side (FIN) and waits for the receiver to close.
///
/// A file the receiver refuses or fails to store is recorded in the
/// summary and the next one follows; the connection stays in step because
/// the receiver answers each header before any content moves and each
/// digest before the next header. A stream error, a receiver that
/// acknowledges nothing for `options.idle_timeout`, a protocol violation or a file that
/// shrinks while it is read ends the whole transfer with an error (the
/// receiver then removes its partial file).
pub async fn send_files<S>(
    stream: &mut S,
    files: Vec<OutgoingFile>,
    options: &SendOptions,
    observer: &mut dyn Observer,
) -> Result<Summary, TransferError>
where
    S: AsyncRead + AsyncWrite + Unpin + StatsSource,
{
    let started = Instant::now();
    let mut watch = SendWatch::new(&*stream, options.idle_timeout, observer);
    let mut reports = Vec::with_capacity(files.len());
    let mut session = match &options.key {
        Some(key) => {
            let exchange = auth::authenticate_sender(stream, key);
            Some(
                TransferError::within_step(options.idle_timeout, "authenticating", exchange)
                    .await?,
            )
        }
        None => None,
    };
    for file in files {
        let strategy = options.strategy.as_deref();
        let report = send_one(stream, file, strategy, session.as_mut(), &mut watch).await?;
        watch.observer().file_finished(&report);
        reports.push(report);
    }
    // The FIN goes out after the last digest and verdict; the wait for
    // its acknowledgment is watched like any other.
    watch.run("closing", stream.shutdown()).await?;
    // The receiver closes once it has seen our FIN; waiting for that
    // means every byte and the FIN were acknowledged before the stream
    // is dropped. Every file already has its verdict, so a failure here
    // changes nothing.
    let mut sink = [0u8; 64];
    let _ = tokio::time::timeout(options.idle_timeout, async {
        while let Ok(n) = stream.read(&mut sink).await {
            if n == 0 {
                break;
            }
        }
    })
    .await;
    Ok(Summary {
        direction: Direction::Send,
        files: reports,
        elapsed: started.elapsed(),
        stats: stream.transport_stats(),
    })
}

async fn read_verdict<S: AsyncRead + Unpin>(
    stream: &mut S,
    watch: &mut SendWatch<'_>,
) -> Result<Verdict, TransferError> {
    let verdict = watch
        .run(
            "waiting for the receiver's verdict",
            protocol::read_verdict(stream),
        )
        .await??;
    watch.heard_from_peer();
    Ok(verdict)
}

async fn send_one<S>(
    stream: &mut S,
    file: OutgoingFile,
    strategy: Option<&str>,
    mut session: Option<&mut Session>,
    watch: &mut SendWatch<'_>,
) -> Result<FileReport, TransferError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let started = Instant::now();
    let header = Header {
        name: file.name.clone(),
        length_bytes: file.length_bytes,
        strategy: strategy.map(str::to_owned),
        can_resume: true,
    };
    watch
        .run("sending a header", protocol::write_header(stream, &header))
        .await?;
    watch.wrote(header.encoded_bytes());
    if let Some(s) = session.as_deref_mut() {
        let tag = s.header_tag(&header)?;
        write_all_watched(stream, &tag, watch).await?;
    }
    let verdict = read_verdict(stream, watch).await?;
    if !verdict.is_ok() {
        return Ok(FileReport {
            name: file.name,
            bytes: 0,
            resumed_from_bytes: 0,
            elapsed: started.elapsed(),
            verdict,
        });
    }
    let offer = watch
        .run(
            "waiting for the receiver's offer",
            protocol::read_offer(stream),
        )
        .await?;
    watch.heard_from_peer();
    let OutgoingFile {
        path,
        name,
        length_bytes,
        file: source,
    } = file;
    let checked = {
        let path = path.clone();
        tokio::task::spawn_blocking(move || check_held(source, &offer, length_bytes))
            .await
            .map_err(|_| std::io::Error::other("the reading thread stopped"))
            .and_then(|r| r)
            .map_err(|e| TransferError::from_read(&path, e))?
    };
    let (start, prefix, mut source) = checked;
    write_all_watched(stream, &start.to_be_bytes(), watch).await?;
    watch.start_file(&name, length_bytes, start);

    // The file is read and hashed on a blocking thread while this task
    // writes the previous chunk: the two cores share the work.
    let (chunks_tx, mut chunks) = mpsc::channel::<Vec<u8>>(4);
    let (spare_tx, spare) = std::sync::mpsc::channel::<Vec<u8>>();
    let reader = tokio::task::spawn_blocking(move || {
        let mut hasher = prefix;
        let mut left = length_bytes - start;
        while left > 0 {
            let mut buf = spare.try_recv().unwrap_or_default();
            let want = usize::try_from(left.min(CHUNK_BYTES as u64)).unwrap_or(CHUNK_BYTES);
            buf.resize(want, 0);
            let n = match source.read(&mut buf) {
                Ok(0) => return Err(ReadFailure::Shrank(length_bytes - left)),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(ReadFailure::Io(e)),
            };
            buf.truncate(n);
            hasher.update(&buf);
            left -= n as u64;
            if chunks_tx.blocking_send(buf).is_err() {
                // The sending task gave up; it reports why.
                return Err(ReadFailure::Abandoned);
            }
        }
        Ok(<[u8; DIGEST_BYTES]>::from(hasher.finalize()))
    });

    let mut written = 0u64;
    while let Some(buf) = chunks.recv().await {
        write_all_watched(stream, &buf, watch).await?;
        written += buf.len() as u64;
        let _ = spare_tx.send(buf);
    }
    let digest = match reader.await {
        Ok(Ok(digest)) => digest,
        Ok(Err(ReadFailure::Io(e))) => return Err(TransferError::from_read(&path, e)),
        Ok(Err(ReadFailure::Shrank(read_bytes))) => {
            return Err(TransferError::FileChanged {
                path,
                announced_bytes: length_bytes,
                read_bytes,
            })
        }
        Ok(Err(ReadFailure::Abandoned)) | Err(_) => {
            return Err(TransferError::ReadFile {
                path,
                source: std::io::Error::other("the reading thread stopped"),
            })
        }
    };
    // With a key, the digest travels as its tag: only a key holder can
    // make it match the content.
    let digest = match session {
        Some(s) => s.seal_digest(&digest),
        None => digest,
    };
    write_all_watched(stream, &digest, watch).await?;
    watch.run("sending", stream.flush()).await?;
    let verdict = read_verdict(stream, watch).await?;
    // The receiver read the whole content before its verdict; over a
    // stream without a probe the watch counts it written, and so it is.
    watch.report();
    Ok(FileReport {
        name,
        bytes: written,
        resumed_from_bytes: start,
        elapsed: started.elapsed(),
        verdict,
    })
}

/// Decides where the content starts after the receiver's `offer`: at the
/// end of the bytes it holds when the file's first bytes have the same
/// digest, else at 0. Returns the start, the SHA-256 state of the bytes
/// before it, and the file positioned there. A file shorter than the
/// offer simply does not match.
fn check_held(
    mut file: std::fs::File,
    offer: &Offer,
    length_bytes: u64,
) -> std::io::Result<(u64, Sha256, std::fs::File)> {
    if offer.held_bytes == 0 || offer.held_bytes > length_bytes {
        return Ok((0, Sha256::new(), file));
    }
    let (read, hasher) = super::hash_prefix(&mut file, offer.held_bytes)?;
    if read == offer.held_bytes
        && <[u8; DIGEST_BYTES]>::from(hasher.clone().finalize()) == offer.digest
    {
        return Ok((offer.held_bytes, hasher, file));
    }
    file.rewind()?;
    Ok((0, Sha256::new(), file))
}

enum ReadFailure {
    Io(std::io::Error),
    /// The file ended after this many bytes, before its announced length.
    Shrank(u64),
    Abandoned,
}

/// `write_all` under the watch: it gives up only when the receiver
/// acknowledges nothing for the idle timeout.
async fn write_all_watched<S: AsyncWrite + Unpin>(
    stream: &mut S,
    mut buf: &[u8],
    watch: &mut SendWatch<'_>,
) -> Result<(), TransferError> {
    while !buf.is_empty() {
        match watch.run("sending", stream.write(buf)).await? {
            0 => return Err(TransferError::PeerVanished),
            n => {
                watch.wrote(n);
                buf = &buf[n..];
            }
        }
    }
    Ok(())
}
