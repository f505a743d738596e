//! Shared-key authentication of file transfers (`--key-file`).
//!
//! Both ends hold the same secret key. Before the first header each proves
//! to the other that it holds it, without sending it, and every header and
//! every content digest after that carries a tag only a key holder can
//! make, so a receiver takes files only from senders that hold its key,
//! a sender sends only to a receiver that holds it, and content changed
//! on the way (or a header replayed from another connection) is refused.
//! Confidentiality is not the aim: the content travels in clear (QUIC's
//! TLS is the encrypted option).
//!
//! The exchange, after the connection opens (HMAC is HMAC-SHA256,
//! RFC 2104; `|` is concatenation):
//!
//! ```text
//! sender   -> receiver  "AWAU" | version 1 | Ns (16 random bytes)
//! receiver -> sender    verdict (ok, or why not) | Nr (16 random bytes)
//!                         | HMAC(K, "ackwise auth 1 receiver" | Ns | Nr)
//! sender   -> receiver  HMAC(K, "ackwise auth 1 sender" | Ns | Nr)
//! ```
//!
//! Both then derive the session key `S = HMAC(K, "ackwise auth 1 session"
//! | Ns | Nr)`. The n-th tag of the connection (n from 0, headers and
//! digests counted together) is `HMAC(S, n | label | data)`: after each
//! header the sender writes the header's tag, and in place of the plain
//! SHA-256 digest of the content it writes the digest's tag. The receiver
//! computes both and refuses anything that differs. A receiver whose key
//! the sender's proof does not match answers the sender's first header
//! with a refusal; a sender that gets a wrong proof stops before sending
//! a header.

use super::error::TransferError;
use super::protocol::{self, Header, Verdict, DIGEST_BYTES};
use sha2::{Digest, Sha256};
use std::path::Path;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The four bytes that open an authenticated transfer.
pub const AUTH_MAGIC: [u8; 4] = *b"AWAU";
/// The version of the exchange above.
pub const AUTH_VERSION: u8 = 1;
/// Fewest key bytes accepted: a shorter key is guessable.
pub const MIN_KEY_BYTES: usize = 16;
/// Largest key file read.
const MAX_KEY_BYTES: usize = 4096;
const NONCE_BYTES: usize = 16;
const SHA256_BLOCK: usize = 64;

/// A shared secret key. Its bytes never appear in `Debug` output.
#[derive(Clone, PartialEq, Eq)]
pub struct Key(Vec<u8>);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({} bytes)", self.0.len())
    }
}

impl Key {
    /// A key of these bytes, at least [`MIN_KEY_BYTES`] of them.
    pub fn new(bytes: Vec<u8>) -> Result<Key, String> {
        if bytes.len() < MIN_KEY_BYTES {
            return Err(format!(
                "a key needs at least {MIN_KEY_BYTES} bytes, this one has {} \
                 (make one with `head -c 32 /dev/urandom > FILE`)",
                bytes.len()
            ));
        }
        Ok(Key(bytes))
    }

    /// Reads a key file: its whole content is the key (a trailing newline
    /// included, so keep the file as written).
    pub fn from_file(path: &Path) -> Result<Key, String> {
        let shown = path.display();
        let meta = std::fs::metadata(path).map_err(|e| format!("{shown}: {e}"))?;
        if meta.len() > MAX_KEY_BYTES as u64 {
            return Err(format!(
                "{shown}: a key file holds at most {MAX_KEY_BYTES} bytes"
            ));
        }
        let bytes = std::fs::read(path).map_err(|e| format!("{shown}: {e}"))?;
        Key::new(bytes).map_err(|e| format!("{shown}: {e}"))
    }
}

/// HMAC-SHA256 (RFC 2104) of the concatenation of `parts`.
fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut block = [0u8; SHA256_BLOCK];
    if key.len() > SHA256_BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let mut inner = Sha256::new();
    inner.update(pad(0x36));
    for p in parts {
        inner.update(p);
    }
    let mut outer = Sha256::new();
    outer.update(pad(0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// Compares without stopping at the first difference, so the time taken
/// says nothing about how much of a forged tag was right.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn nonce() -> Result<[u8; NONCE_BYTES], TransferError> {
    let mut n = [0u8; NONCE_BYTES];
    getrandom::fill(&mut n).map_err(|e| {
        TransferError::Connection(std::io::Error::other(format!(
            "no random bytes for the authentication: {e}"
        )))
    })?;
    Ok(n)
}

/// An authenticated connection's tagging state.
#[derive(Debug)]
pub struct Session {
    key: [u8; 32],
    next: u64,
}

impl Session {
    fn new(key: &Key, ns: &[u8], nr: &[u8]) -> Session {
        Session {
            key: hmac(&key.0, &[b"ackwise auth 1 session", ns, nr]),
            next: 0,
        }
    }

    fn tag(&mut self, label: &[u8], data: &[u8]) -> [u8; 32] {
        let n = self.next.to_be_bytes();
        self.next += 1;
        hmac(&self.key, &[&n, label, data])
    }

    /// The tag that follows `header` on the wire.
    pub fn header_tag(&mut self, header: &Header) -> Result<[u8; 32], TransferError> {
        let bytes = protocol::encode_header(header).map_err(TransferError::Connection)?;
        Ok(self.tag(b"header", &bytes))
    }

    /// What travels in place of the content's SHA-256 `digest`.
    pub fn seal_digest(&mut self, digest: &[u8; DIGEST_BYTES]) -> [u8; DIGEST_BYTES] {
        self.tag(b"digest", digest)
    }
}

/// The sender's side of the exchange: proves the key, checks the
/// receiver's proof, and returns the session.
pub async fn authenticate_sender<S>(stream: &mut S, key: &Key) -> Result<Session, TransferError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let ns = nonce()?;
    let mut hello = Vec::with_capacity(5 + NONCE_BYTES);
    hello.extend_from_slice(&AUTH_MAGIC);
    hello.push(AUTH_VERSION);
    hello.extend_from_slice(&ns);
    stream
        .write_all(&hello)
        .await
        .map_err(TransferError::from_stream)?;
    stream.flush().await.map_err(TransferError::from_stream)?;
    let verdict = protocol::read_verdict(stream)
        .await
        .map_err(TransferError::from_stream)??;
    if !verdict.is_ok() {
        return Err(TransferError::Authentication(verdict.to_string()));
    }
    let mut nr = [0u8; NONCE_BYTES];
    let mut proof = [0u8; 32];
    stream
        .read_exact(&mut nr)
        .await
        .map_err(TransferError::from_stream)?;
    stream
        .read_exact(&mut proof)
        .await
        .map_err(TransferError::from_stream)?;
    if !same(
        &proof,
        &hmac(&key.0, &[b"ackwise auth 1 receiver", &ns, &nr]),
    ) {
        return Err(TransferError::Authentication(
            "the receiver does not hold this key".into(),
        ));
    }
    let mine = hmac(&key.0, &[b"ackwise auth 1 sender", &ns, &nr]);
    stream
        .write_all(&mine)
        .await
        .map_err(TransferError::from_stream)?;
    Ok(Session::new(key, &ns, &nr))
}

/// The receiver's side, after the sender's [`AUTH_MAGIC`] was read:
/// answers with its proof and checks the sender's. On a wrong proof the
/// sender is told why (as the verdict on its first header) and the error
/// returned.
pub async fn authenticate_receiver<S>(stream: &mut S, key: &Key) -> Result<Session, TransferError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let version = stream.read_u8().await.map_err(TransferError::from_stream)?;
    let mut ns = [0u8; NONCE_BYTES];
    stream
        .read_exact(&mut ns)
        .await
        .map_err(TransferError::from_stream)?;
    if version != AUTH_VERSION {
        let why = format!(
            "authentication version {version} unknown here (this side speaks {AUTH_VERSION})"
        );
        return Err(refuse(stream, &why, why.clone()).await);
    }
    let nr = nonce()?;
    let mut reply = Vec::with_capacity(3 + NONCE_BYTES + 32);
    reply.extend_from_slice(&[0, 0, 0]); // verdict ok, no reason
    reply.extend_from_slice(&nr);
    reply.extend_from_slice(&hmac(&key.0, &[b"ackwise auth 1 receiver", &ns, &nr]));
    stream
        .write_all(&reply)
        .await
        .map_err(TransferError::from_stream)?;
    stream.flush().await.map_err(TransferError::from_stream)?;
    let mut proof = [0u8; 32];
    stream
        .read_exact(&mut proof)
        .await
        .map_err(TransferError::from_stream)?;
    if !same(&proof, &hmac(&key.0, &[b"ackwise auth 1 sender", &ns, &nr])) {
        let why = "the sender does not hold this receiver's key";
        return Err(refuse(stream, why, why.into()).await);
    }
    Ok(Session::new(key, &ns, &nr))
}

/// Refuses the sender: tells it `told` as a verdict, closes this side,
/// and returns the receiver's own error, saying `error`.
pub(crate) async fn refuse<S: AsyncWrite + Unpin>(
    stream: &mut S,
    told: &str,
    error: String,
) -> TransferError {
    let _ = protocol::write_verdict(stream, &Verdict::Unauthenticated(told.into())).await;
    let _ = stream.shutdown().await;
    TransferError::Authentication(error)
}

/// Reads a header's tag and checks it.
pub async fn check_header_tag<S: AsyncRead + Unpin>(
    stream: &mut S,
    session: &mut Session,
    header: &Header,
) -> Result<bool, TransferError> {
    let mut tag = [0u8; 32];
    stream
        .read_exact(&mut tag)
        .await
        .map_err(TransferError::from_stream)?;
    Ok(same(&tag, &session.header_tag(header)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2: a short key.
        assert_eq!(
            hex(&hmac(b"Jefe", &[b"what do ya want ", b"for nothing?"])),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block is hashed first.
        assert_eq!(
            hex(&hmac(
                &[0xaa; 131],
                &[b"Test Using Larger Than Block-Size Key - Hash Key First"]
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn keys_are_long_enough_and_never_printed() {
        assert!(Key::new(vec![1; 15]).unwrap_err().contains("at least 16"));
        let k = Key::new(vec![0x42; 32]).unwrap();
        assert_eq!(format!("{k:?}"), "Key(32 bytes)");
        let e = Key::from_file(Path::new("/nonexistent/key")).unwrap_err();
        assert!(e.contains("/nonexistent/key"), "{e}");
    }

    #[test]
    fn tags_depend_on_the_session_the_order_and_the_data() {
        let key = Key::new(vec![7; 32]).unwrap();
        let digest = [3u8; 32];
        let mut a = Session::new(&key, &[1; 16], &[2; 16]);
        let mut b = Session::new(&key, &[1; 16], &[2; 16]);
        let first = a.seal_digest(&digest);
        assert_eq!(first, b.seal_digest(&digest));
        // The next tag of the same data differs: no replay in place.
        assert_ne!(first, a.seal_digest(&digest));
        // Another connection's nonces give other tags.
        let mut c = Session::new(&key, &[1; 16], &[9; 16]);
        assert_ne!(first, c.seal_digest(&digest));
        assert!(same(&first, &first) && !same(&first, &digest));
    }
}
