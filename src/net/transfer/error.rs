//! What can go wrong in a file transfer, as one line each.

use super::app::MIN_MSS;
use super::protocol::{NameError, ProtocolError, Verdict};
use std::io;
use std::time::Duration;
use thiserror::Error;

/// A file transfer failed; the message is one line meant for a user.
#[derive(Debug, Error)]
pub enum TransferError {
    /// A file to send does not exist.
    #[error("{path}: file not found")]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// A file to send cannot be opened for reading.
    #[error("{path}: permission denied")]
    PermissionDenied {
        /// The path as given.
        path: String,
    },
    /// A path to send names a directory.
    #[error("{path}: is a directory (send the files in it)")]
    IsDirectory {
        /// The path as given.
        path: String,
    },
    /// A path to send names a device, socket or pipe.
    #[error("{path}: not a regular file")]
    NotAFile {
        /// The path as given.
        path: String,
    },
    /// A file's name cannot travel (not UTF-8, too long, ...).
    #[error("{path}: {problem}")]
    BadName {
        /// The path as given.
        path: String,
        /// What is wrong with its last component.
        problem: NameError,
    },
    /// Two files to send have the same name.
    #[error("{path}: another file named `{name}` is already being sent")]
    DuplicateName {
        /// The path as given.
        path: String,
        /// The name both have.
        name: String,
    },
    /// Reading a file to send failed.
    #[error("{path}: {source}")]
    ReadFile {
        /// The path as given.
        path: String,
        /// The operating system's error.
        source: io::Error,
    },
    /// A file shrank while it was sent; the receiver discards it.
    #[error("{path}: the file changed while it was sent ({announced_bytes} bytes announced, {read_bytes} read)")]
    FileChanged {
        /// The path as given.
        path: String,
        /// Length announced in the header.
        announced_bytes: u64,
        /// Bytes there were to read.
        read_bytes: u64,
    },
    /// The receiver's output directory is unusable.
    #[error("output directory {dir}: {reason}")]
    OutputDir {
        /// The directory.
        dir: String,
        /// Why.
        reason: String,
    },
    /// No connection could be made.
    #[error("cannot connect to {addr}: {reason}")]
    Connect {
        /// The address dialled.
        addr: String,
        /// What the transport said (refused, unreachable, ...).
        reason: String,
    },
    /// The connection was not established within the timeout.
    #[error("cannot connect to {addr}: timed out after {}", fmt_duration(*after))]
    ConnectTimeout {
        /// The address dialled.
        addr: String,
        /// The timeout.
        after: Duration,
    },
    /// The segment size cannot work on a UDP socket: below the
    /// connection's minimum, or too large for one datagram.
    #[error("segment size {mss} bytes: must be between {} and {} (a segment and its header must fit one UDP datagram)", MIN_MSS, crate::net::MAX_MSS)]
    SegmentSize {
        /// The size asked for.
        mss: u16,
    },
    /// Binding the listening address failed.
    #[error("cannot listen on {addr}: {reason}")]
    Listen {
        /// The address.
        addr: String,
        /// Why.
        reason: String,
    },
    /// The connection failed in the middle (reset, timed out, endpoint
    /// closed).
    #[error("connection failed: {0}")]
    Connection(#[source] io::Error),
    /// The peer closed the connection in the middle of a file or before
    /// its verdict.
    #[error("the peer closed the connection in the middle of a transfer")]
    PeerVanished,
    /// Nothing moved for too long.
    #[error("the peer went silent for {} while {what}", fmt_duration(*after))]
    Stalled {
        /// What this side was waiting for.
        what: &'static str,
        /// The idle timeout.
        after: Duration,
    },
    /// The transfer was stopped here (Ctrl-C); the receiver was told
    /// with a reset and keeps what arrived of the file in progress for a
    /// resumption (an older receiver, or one with `--keep-partial 0`,
    /// discards it).
    #[error("interrupted; sending the file again resumes where it stopped")]
    Interrupted,
    /// The peer broke the protocol.
    #[error("protocol error: {0}")]
    Protocol(#[from] ProtocolError),
    /// The two ends do not share a key (`--key-file`), or a header or
    /// digest did not carry the key's tag.
    #[error("authentication failed: {0}")]
    Authentication(String),
    /// The receiver turned a file down or could not store it.
    #[error("{name}: the receiver says: {verdict}")]
    Rejected {
        /// The file's name.
        name: String,
        /// The receiver's verdict.
        verdict: Verdict,
    },
}

impl TransferError {
    /// Classifies an I/O error of the stream: an early end is the peer
    /// vanishing, anything else a connection failure.
    pub(crate) fn from_stream(e: io::Error) -> TransferError {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            TransferError::PeerVanished
        } else {
            TransferError::Connection(e)
        }
    }

    /// Runs one stream operation within `idle`: running out of time is
    /// [`TransferError::Stalled`] doing `what`, an I/O error is classified
    /// by [`from_stream`](Self::from_stream).
    pub(crate) async fn within<T>(
        idle: Duration,
        what: &'static str,
        op: impl std::future::Future<Output = io::Result<T>>,
    ) -> Result<T, TransferError> {
        tokio::time::timeout(idle, op)
            .await
            .map_err(|_| TransferError::Stalled { what, after: idle })?
            .map_err(TransferError::from_stream)
    }

    /// [`within`](Self::within) for a step that has its own transfer
    /// errors (the key exchange, a tag check): running out of time is
    /// [`TransferError::Stalled`] doing `what`.
    pub(crate) async fn within_step<T>(
        idle: Duration,
        what: &'static str,
        op: impl std::future::Future<Output = Result<T, TransferError>>,
    ) -> Result<T, TransferError> {
        tokio::time::timeout(idle, op)
            .await
            .map_err(|_| TransferError::Stalled { what, after: idle })?
    }

    /// Classifies an error opening or reading a file to send.
    pub(crate) fn from_read(path: &str, e: io::Error) -> TransferError {
        let path = path.to_string();
        match e.kind() {
            io::ErrorKind::NotFound => TransferError::NotFound { path },
            io::ErrorKind::PermissionDenied => TransferError::PermissionDenied { path },
            io::ErrorKind::IsADirectory => TransferError::IsDirectory { path },
            _ => TransferError::ReadFile { path, source: e },
        }
    }
}

/// The words a user sees for a local storage error: "disk full" rather
/// than the operating system's phrasing.
pub(crate) fn describe_store_error(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::StorageFull => "disk full".into(),
        io::ErrorKind::QuotaExceeded => "disk quota exceeded".into(),
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        io::ErrorKind::ReadOnlyFilesystem => "read-only file system".into(),
        _ => e.to_string(),
    }
}

pub(crate) fn fmt_duration(d: Duration) -> String {
    if d.as_secs() >= 1 && d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}
