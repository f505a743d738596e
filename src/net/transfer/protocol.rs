//! The file-transfer wire format: headers, verdicts and file names.
//!
//! Everything is big-endian. Per file, in order:
//!
//! ```text
//! sender   -> receiver  header:  "AWFT" | version u8 | name_len u16 | name | length u64
//!                                  | strategy_len u8 | strategy (ASCII; versions 2 and 3)
//! receiver -> sender    verdict: code u8 | reason_len u16 | reason (UTF-8)
//!   (only when the verdict is `ok` does the sender go on; version 3 only:)
//! receiver -> sender    offer:   held u64 | SHA-256 of the held bytes, 32 bytes
//! sender   -> receiver  start:   u64, 0 or `held`
//!   (all versions:)
//! sender   -> receiver  content: `length` bytes (`length - start` in version 3)
//! sender   -> receiver  digest:  SHA-256 of the whole content, 32 bytes
//! receiver -> sender    verdict: code u8 | reason_len u16 | reason
//! ```
//!
//! Version 3 resumes interrupted files. A receiver whose transfer from a
//! version 3 sender broke off mid-file keeps what it had written; when a
//! file of the same name and length comes again, its offer says how many
//! bytes it holds and their digest. The sender resumes from there when
//! the first `held` bytes of its file have that digest and starts from 0
//! otherwise (the offer is all zeros when nothing is held). The final
//! digest covers the whole file either way, so a held prefix that differs
//! from the sender's can never be stored under the real name.
//!
//! The strategy is the sender's lab name (`4w`, `ae`, ...), empty for
//! none: a receiver that was not told a strategy of its own takes its ACK
//! policy from it, one that was refuses a sender whose strategy needs
//! another policy. Version 1 headers (no strategy) are still read.
//!
//! The first verdict lets the receiver refuse a name or an existing file
//! before a single content byte moves; the second says whether the file
//! landed under its real name. Files follow each other on one connection;
//! the sender's FIN at a header boundary ends it.

use std::fmt;
use thiserror::Error;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The four bytes every header starts with.
pub const MAGIC: [u8; 4] = *b"AWFT";

/// The protocol version this module writes.
pub const VERSION: u8 = 3;

/// The first version whose senders can resume (offer and start).
pub const RESUME_VERSION: u8 = 3;

/// The oldest version this module still reads (headers without a
/// strategy).
pub const OLDEST_VERSION: u8 = 1;

/// Longest strategy name a header carries, in bytes.
pub const MAX_STRATEGY_BYTES: usize = 255;

/// Longest file name, in bytes of UTF-8 (the usual file-system limit).
pub const MAX_NAME_BYTES: usize = 255;

/// Longest reason text a verdict carries, in bytes; longer ones are cut.
pub const MAX_REASON_BYTES: usize = 1024;

/// Length of the SHA-256 digest that follows the content.
pub const DIGEST_BYTES: usize = 32;

/// What the sender announces before a file's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The file's name at the receiver (see [`validate_name`]).
    pub name: String,
    /// Content length.
    pub length_bytes: u64,
    /// The sender's strategy, a lab name, when it runs one.
    pub strategy: Option<String>,
    /// The sender takes part in resumption ([`Offer`]): written as
    /// version 3, read from versions 3 and later. A version 2 header
    /// (`false`) is what older ackwise senders send.
    pub can_resume: bool,
}

impl Header {
    /// Bytes the header takes on the wire: magic, version, name length,
    /// name, content length, strategy length, strategy.
    pub fn encoded_bytes(&self) -> usize {
        4 + 1 + 2 + self.name.len() + 8 + 1 + self.strategy.as_ref().map_or(0, String::len)
    }
}

/// Why a file name cannot be used at the receiver.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NameError {
    /// Nothing.
    #[error("the file name is empty")]
    Empty,
    /// Longer than [`MAX_NAME_BYTES`].
    #[error("the file name is {0} bytes long (at most {MAX_NAME_BYTES})")]
    TooLong(usize),
    /// Not UTF-8.
    #[error("the file name is not valid UTF-8")]
    NotUtf8,
    /// `/`, `\` or NUL: the name would reach outside the output directory.
    #[error("the file name contains a path separator or NUL")]
    Separator,
    /// `.` or `..`.
    #[error("the file name is `.` or `..`")]
    DotName,
    /// Control characters would garble terminals and logs.
    #[error("the file name contains a control character")]
    Control,
    /// The receiver's own temporary files use this marker.
    #[error("the file name contains `{}`", PARTIAL_MARKER)]
    Reserved,
}

/// Part of every temporary file name at the receiver; refused in real
/// names so that no transfer can collide with or overwrite another's
/// partial file.
pub const PARTIAL_MARKER: &str = ".ackwise-partial-";

/// Checks that `name` is one plain file name, safe to join to the output
/// directory: not empty, at most [`MAX_NAME_BYTES`], no separator, not `.`
/// or `..`, no control character, no [`PARTIAL_MARKER`].
///
/// `a..b` is accepted: without a separator, dots cannot leave the
/// directory.
pub fn validate_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(NameError::TooLong(name.len()));
    }
    if name.contains(['/', '\\', '\0']) {
        return Err(NameError::Separator);
    }
    if name == "." || name == ".." {
        return Err(NameError::DotName);
    }
    if name.chars().any(char::is_control) {
        return Err(NameError::Control);
    }
    if name.contains(PARTIAL_MARKER) {
        return Err(NameError::Reserved);
    }
    Ok(())
}

/// The peer broke the protocol.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProtocolError {
    /// The first bytes were not [`MAGIC`]: not an ackwise file sender.
    #[error("not an ackwise file transfer (bad magic {0:02x?})")]
    BadMagic([u8; 4]),
    /// A version this module does not speak.
    #[error("unsupported protocol version {0} (this side speaks {OLDEST_VERSION} to {VERSION})")]
    Version(u8),
    /// The strategy name is not printable ASCII.
    #[error("the strategy name is not printable ASCII")]
    StrategyName,
    /// The announced name is unusable.
    #[error("bad file name: {0}")]
    Name(NameError),
    /// The sender opened with an authentication exchange
    /// ([`super::auth`]) that this receiver, holding no key, cannot
    /// answer.
    #[error("the sender authenticates with a key (--key-file) and this receiver has none")]
    AuthenticationOffered,
    /// A version 3 sender started neither at 0 nor at the offered end of
    /// the held bytes.
    #[error("the sender resumes at byte {start}, but the receiver offered {held}")]
    BadStart {
        /// Where the sender said it starts.
        start: u64,
        /// What the receiver offered.
        held: u64,
    },
    /// A verdict code this module does not know.
    #[error("unknown verdict code {0}")]
    UnknownVerdict(u8),
    /// A verdict's reason is longer than [`MAX_REASON_BYTES`].
    #[error("verdict reason of {0} bytes (at most {MAX_REASON_BYTES})")]
    ReasonTooLong(usize),
}

/// The receiver's answer to a header (may the content come?) and to a
/// digest (did the file land?).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Header: send the content. Digest: the file is stored under its
    /// name.
    Ok,
    /// The digest did not match the content that arrived; nothing was
    /// stored.
    DigestMismatch,
    /// A file of that name exists and the receiver does not overwrite.
    Exists,
    /// The name is unusable (the reason says why).
    BadName(String),
    /// The header was malformed or of another version.
    BadHeader(String),
    /// The receiver could not store the file, e.g. its disk is full.
    StoreFailed(String),
    /// The receiver runs a strategy whose ACK policy differs from the
    /// one the sender's strategy needs, or does not know the sender's
    /// (the reason names both).
    StrategyMismatch(String),
    /// The two ends do not share a key (`--key-file`): one has none, or
    /// they differ (the reason says which).
    Unauthenticated(String),
}

impl Verdict {
    fn code(&self) -> u8 {
        match self {
            Verdict::Ok => 0,
            Verdict::DigestMismatch => 1,
            Verdict::Exists => 2,
            Verdict::BadName(_) => 3,
            Verdict::BadHeader(_) => 4,
            Verdict::StoreFailed(_) => 5,
            Verdict::StrategyMismatch(_) => 6,
            Verdict::Unauthenticated(_) => 7,
        }
    }

    fn reason(&self) -> &str {
        match self {
            Verdict::Ok | Verdict::DigestMismatch | Verdict::Exists => "",
            Verdict::BadName(r)
            | Verdict::BadHeader(r)
            | Verdict::StoreFailed(r)
            | Verdict::StrategyMismatch(r)
            | Verdict::Unauthenticated(r) => r,
        }
    }

    fn from_parts(code: u8, reason: String) -> Result<Verdict, ProtocolError> {
        Ok(match code {
            0 => Verdict::Ok,
            1 => Verdict::DigestMismatch,
            2 => Verdict::Exists,
            3 => Verdict::BadName(reason),
            4 => Verdict::BadHeader(reason),
            5 => Verdict::StoreFailed(reason),
            6 => Verdict::StrategyMismatch(reason),
            7 => Verdict::Unauthenticated(reason),
            other => return Err(ProtocolError::UnknownVerdict(other)),
        })
    }

    /// Whether this is [`Verdict::Ok`].
    pub fn is_ok(&self) -> bool {
        *self == Verdict::Ok
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Ok => f.write_str("ok"),
            Verdict::DigestMismatch => f.write_str("digest mismatch (the file was not stored)"),
            Verdict::Exists => f.write_str("a file of that name exists at the receiver"),
            Verdict::BadName(r) => write!(f, "bad file name: {r}"),
            Verdict::BadHeader(r) => write!(f, "bad header: {r}"),
            Verdict::StoreFailed(r) => write!(f, "cannot store the file: {r}"),
            Verdict::StrategyMismatch(r) => write!(f, "strategy mismatch: {r}"),
            Verdict::Unauthenticated(r) => write!(f, "not authenticated: {r}"),
        }
    }
}

/// Reads a header; `Ok(None)` when the stream ends cleanly before its
/// first byte (the sender has no more files). An end inside the header is
/// an `UnexpectedEof` I/O error.
pub async fn read_header<S: AsyncRead + Unpin>(
    stream: &mut S,
) -> std::io::Result<Result<Option<Header>, ProtocolError>> {
    let mut magic = [0u8; 4];
    let first = stream.read(&mut magic).await?;
    if first == 0 {
        return Ok(Ok(None));
    }
    stream.read_exact(&mut magic[first..]).await?;
    if magic == super::auth::AUTH_MAGIC {
        return Ok(Err(ProtocolError::AuthenticationOffered));
    }
    if magic != MAGIC {
        return Ok(Err(ProtocolError::BadMagic(magic)));
    }
    let version = stream.read_u8().await?;
    if !(OLDEST_VERSION..=VERSION).contains(&version) {
        return Ok(Err(ProtocolError::Version(version)));
    }
    let name_len = usize::from(stream.read_u16().await?);
    if name_len > MAX_NAME_BYTES {
        return Ok(Err(ProtocolError::Name(NameError::TooLong(name_len))));
    }
    let mut name = vec![0u8; name_len];
    stream.read_exact(&mut name).await?;
    let length_bytes = stream.read_u64().await?;
    let mut strategy = Vec::new();
    if version >= 2 {
        strategy.resize(usize::from(stream.read_u8().await?), 0);
        stream.read_exact(&mut strategy).await?;
    }
    let Ok(name) = String::from_utf8(name) else {
        return Ok(Err(ProtocolError::Name(NameError::NotUtf8)));
    };
    if let Err(e) = validate_name(&name) {
        return Ok(Err(ProtocolError::Name(e)));
    }
    if !strategy.iter().all(|b| b.is_ascii_graphic()) {
        return Ok(Err(ProtocolError::StrategyName));
    }
    // Printable ASCII is UTF-8.
    let strategy = (!strategy.is_empty()).then(|| String::from_utf8_lossy(&strategy).into_owned());
    Ok(Ok(Some(Header {
        name,
        length_bytes,
        strategy,
        can_resume: version >= RESUME_VERSION,
    })))
}

/// Writes `header` (whose name the caller validated) and flushes.
pub async fn write_header<S: AsyncWrite + Unpin>(
    stream: &mut S,
    header: &Header,
) -> std::io::Result<()> {
    let buf = encode_header(header)?;
    stream.write_all(&buf).await?;
    stream.flush().await
}

/// `header` as it travels (at [`VERSION`], or version 2 for a header that
/// cannot resume); an invalid one is an `InvalidInput` error.
pub fn encode_header(header: &Header) -> std::io::Result<Vec<u8>> {
    let name = header.name.as_bytes();
    let name_len = u16::try_from(name.len())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "file name too long"))?;
    let mut buf = Vec::with_capacity(header.encoded_bytes());
    buf.extend_from_slice(&MAGIC);
    buf.push(if header.can_resume { VERSION } else { 2 });
    buf.extend_from_slice(&name_len.to_be_bytes());
    buf.extend_from_slice(name);
    buf.extend_from_slice(&header.length_bytes.to_be_bytes());
    let strategy = header.strategy.as_deref().unwrap_or("").as_bytes();
    if strategy.len() > MAX_STRATEGY_BYTES || !strategy.iter().all(u8::is_ascii_graphic) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "strategy name not printable ASCII of at most 255 bytes",
        ));
    }
    // At most 255, checked above.
    buf.push(strategy.len() as u8);
    buf.extend_from_slice(strategy);
    Ok(buf)
}

/// Writes `verdict` and flushes; a reason longer than
/// [`MAX_REASON_BYTES`] is cut at a character boundary.
pub async fn write_verdict<S: AsyncWrite + Unpin>(
    stream: &mut S,
    verdict: &Verdict,
) -> std::io::Result<()> {
    let mut reason = verdict.reason();
    if reason.len() > MAX_REASON_BYTES {
        let mut end = MAX_REASON_BYTES;
        while !reason.is_char_boundary(end) {
            end -= 1;
        }
        reason = &reason[..end];
    }
    let mut buf = Vec::with_capacity(3 + reason.len());
    buf.push(verdict.code());
    // At most MAX_REASON_BYTES, so it fits.
    buf.extend_from_slice(&(reason.len() as u16).to_be_bytes());
    buf.extend_from_slice(reason.as_bytes());
    stream.write_all(&buf).await?;
    stream.flush().await
}

/// The receiver's offer after it accepted a version 3 header: how much of
/// the file it holds from an interrupted transfer, and the SHA-256 of
/// those bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offer {
    /// Bytes held, from the start of the file; 0 when nothing is.
    pub held_bytes: u64,
    /// SHA-256 of the held bytes (zeros when nothing is held).
    pub digest: [u8; DIGEST_BYTES],
}

impl Offer {
    /// Nothing held: the sender starts from 0.
    pub const NOTHING: Offer = Offer {
        held_bytes: 0,
        digest: [0; DIGEST_BYTES],
    };
}

/// Writes `offer` and flushes.
pub async fn write_offer<S: AsyncWrite + Unpin>(
    stream: &mut S,
    offer: &Offer,
) -> std::io::Result<()> {
    let mut buf = [0u8; 8 + DIGEST_BYTES];
    buf[..8].copy_from_slice(&offer.held_bytes.to_be_bytes());
    buf[8..].copy_from_slice(&offer.digest);
    stream.write_all(&buf).await?;
    stream.flush().await
}

/// Reads an offer.
pub async fn read_offer<S: AsyncRead + Unpin>(stream: &mut S) -> std::io::Result<Offer> {
    let held_bytes = stream.read_u64().await?;
    let mut digest = [0u8; DIGEST_BYTES];
    stream.read_exact(&mut digest).await?;
    Ok(Offer { held_bytes, digest })
}

/// Reads a verdict.
pub async fn read_verdict<S: AsyncRead + Unpin>(
    stream: &mut S,
) -> std::io::Result<Result<Verdict, ProtocolError>> {
    let code = stream.read_u8().await?;
    let len = usize::from(stream.read_u16().await?);
    if len > MAX_REASON_BYTES {
        return Ok(Err(ProtocolError::ReasonTooLong(len)));
    }
    let mut reason = vec![0u8; len];
    stream.read_exact(&mut reason).await?;
    let reason = String::from_utf8_lossy(&reason).into_owned();
    Ok(Verdict::from_parts(code, reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for good in ["a", "a.txt", "a..b", ".hidden", "données.bin", "x y"] {
            assert_eq!(validate_name(good), Ok(()), "{good}");
        }
        assert_eq!(validate_name(""), Err(NameError::Empty));
        assert_eq!(validate_name(".."), Err(NameError::DotName));
        assert_eq!(validate_name("."), Err(NameError::DotName));
        assert_eq!(validate_name("../x"), Err(NameError::Separator));
        assert_eq!(validate_name("a\\b"), Err(NameError::Separator));
        assert_eq!(validate_name("a\0b"), Err(NameError::Separator));
        assert_eq!(validate_name("a\nb"), Err(NameError::Control));
        assert_eq!(
            validate_name(".x.ackwise-partial-1"),
            Err(NameError::Reserved)
        );
        assert_eq!(
            validate_name(&"é".repeat(128)),
            Err(NameError::TooLong(256))
        );
    }

    #[tokio::test]
    async fn header_and_verdicts_round_trip() {
        let (mut a, mut b) = tokio::io::duplex(4096);
        let h = Header {
            name: "f.bin".into(),
            length_bytes: 1 << 40,
            strategy: Some("4w-adaptive+pacing".into()),
            can_resume: true,
        };
        write_header(&mut a, &h).await.unwrap();
        assert_eq!(read_header(&mut b).await.unwrap(), Ok(Some(h)));
        // A sender that cannot resume writes version 2, as before.
        let none = Header {
            name: "g".into(),
            length_bytes: 3,
            strategy: None,
            can_resume: false,
        };
        assert_eq!(encode_header(&none).unwrap()[4], 2);
        write_header(&mut a, &none).await.unwrap();
        assert_eq!(read_header(&mut b).await.unwrap(), Ok(Some(none)));
        let offer = Offer {
            held_bytes: (1 << 33) + 5,
            digest: [7; DIGEST_BYTES],
        };
        write_offer(&mut b, &offer).await.unwrap();
        write_offer(&mut b, &Offer::NOTHING).await.unwrap();
        assert_eq!(read_offer(&mut a).await.unwrap(), offer);
        assert_eq!(read_offer(&mut a).await.unwrap(), Offer::NOTHING);
        for v in [
            Verdict::Ok,
            Verdict::DigestMismatch,
            Verdict::Exists,
            Verdict::BadName("x".into()),
            Verdict::BadHeader("y".into()),
            Verdict::StoreFailed("disk full".into()),
        ] {
            write_verdict(&mut b, &v).await.unwrap();
            assert_eq!(read_verdict(&mut a).await.unwrap(), Ok(v));
        }
        // A long reason is cut, not refused.
        let long = Verdict::StoreFailed("é".repeat(1000));
        write_verdict(&mut b, &long).await.unwrap();
        let Ok(Verdict::StoreFailed(r)) = read_verdict(&mut a).await.unwrap() else {
            panic!("not a store failure");
        };
        assert!(r.len() <= MAX_REASON_BYTES && r.len() >= MAX_REASON_BYTES - 1);
        drop(a);
        assert_eq!(read_header(&mut b).await.unwrap(), Ok(None));
    }

    #[tokio::test]
    async fn bad_headers_are_typed_errors() {
        let (mut a, mut b) = tokio::io::duplex(4096);
        a.write_all(b"HTTP/1.1").await.unwrap();
        assert_eq!(
            read_header(&mut b).await.unwrap(),
            Err(ProtocolError::BadMagic(*b"HTTP"))
        );
        let (mut a, mut b) = tokio::io::duplex(4096);
        a.write_all(b"AWFT\x01\x00\x02..").await.unwrap();
        a.write_all(&5u64.to_be_bytes()).await.unwrap();
        assert_eq!(
            read_header(&mut b).await.unwrap(),
            Err(ProtocolError::Name(NameError::DotName))
        );
        let (mut a, mut b) = tokio::io::duplex(4096);
        a.write_all(b"AWFT\x04").await.unwrap();
        assert_eq!(
            read_header(&mut b).await.unwrap(),
            Err(ProtocolError::Version(4))
        );
        // A version 1 header (no strategy) still reads.
        let (mut a, mut b) = tokio::io::duplex(4096);
        a.write_all(b"AWFT\x01\x00\x01f").await.unwrap();
        a.write_all(&5u64.to_be_bytes()).await.unwrap();
        let h = read_header(&mut b).await.unwrap().unwrap().unwrap();
        assert_eq!(
            (h.name.as_str(), h.length_bytes, h.strategy),
            ("f", 5, None)
        );
        // A strategy name with a control character is refused.
        let (mut a, mut b) = tokio::io::duplex(4096);
        a.write_all(b"AWFT\x02\x00\x01f").await.unwrap();
        a.write_all(&5u64.to_be_bytes()).await.unwrap();
        a.write_all(b"\x024\n").await.unwrap();
        assert_eq!(
            read_header(&mut b).await.unwrap(),
            Err(ProtocolError::StrategyName)
        );
        // Cut inside the header: an I/O error, not a clean end.
        let (mut a, mut b) = tokio::io::duplex(4096);
        a.write_all(b"AWFT\x01\x00").await.unwrap();
        drop(a);
        let err = read_header(&mut b).await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
    }
}
