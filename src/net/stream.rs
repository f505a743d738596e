//! [`Stream`]: one connection as a tokio byte stream.

use super::error::{close_error, endpoint_closed, NetError};
use super::shared::{ConnShared, DriverLink};
use crate::connection::{CloseReason, Connection, State, Stats};
use bytes::{Buf, Bytes};
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A reliable, ordered byte stream over an ackwise connection, driven by
/// its [`Endpoint`](super::Endpoint).
///
/// Writing copies into the connection's send buffer and waits while it is
/// full (backpressure); reading copies out of the receive buffer and
/// returns 0 bytes once the peer's FIN has arrived and every byte before it
/// was read. [`AsyncWriteExt::shutdown`](tokio::io::AsyncWriteExt::shutdown)
/// sends a FIN after the written data and resolves when the peer has
/// acknowledged all of it. [`into_split`](Self::into_split) gives owned
/// halves for separate tasks; [`tokio::io::split`] works too.
///
/// Errors say how the connection ended: `ConnectionReset` (reset by the
/// peer), `TimedOut` (the peer went silent past the idle timeout or the
/// retransmission limit), `ConnectionAborted` (aborted here),
/// `NotConnected` (the endpoint shut down) and `BrokenPipe` (writing after
/// [`shutdown`](tokio::io::AsyncWriteExt::shutdown) or after a normal
/// close).
///
/// Dropping a stream closes it gracefully: a FIN follows the data already
/// written, and the endpoint keeps delivering it. [`abort`](Self::abort)
/// resets the connection instead.
#[derive(Debug)]
pub struct Stream {
    shared: Arc<ConnShared>,
    link: Arc<DriverLink>,
    reader: ReadSide,
    writer: WriteSide,
    /// Split into halves: the write half's drop closes the connection.
    split: bool,
}

/// The reading direction's own state.
#[derive(Debug)]
struct ReadSide {
    /// Bytes read since the driver was last asked to look at the window:
    /// at a quarter of the receive buffer's limit the driver hears of it,
    /// so that the window reopens for a slow reader.
    read_since_notify: usize,
}

/// The writing direction's own state.
#[derive(Debug, Default)]
struct WriteSide {
    shutdown: bool,
}

/// The reading half of a [`Stream`], from [`Stream::into_split`].
#[derive(Debug)]
pub struct OwnedReadHalf {
    shared: Arc<ConnShared>,
    link: Arc<DriverLink>,
    reader: ReadSide,
}

/// The writing half of a [`Stream`], from [`Stream::into_split`].
/// Dropping it closes the connection gracefully (a FIN follows the data),
/// as dropping the whole stream does.
#[derive(Debug)]
pub struct OwnedWriteHalf {
    shared: Arc<ConnShared>,
    link: Arc<DriverLink>,
    writer: WriteSide,
}

impl Stream {
    pub(crate) fn new(shared: Arc<ConnShared>, link: Arc<DriverLink>) -> Stream {
        Stream {
            shared,
            link,
            reader: ReadSide {
                read_since_notify: 0,
            },
            writer: WriteSide::default(),
            split: false,
        }
    }

    /// Splits the stream into halves that tasks can own separately
    /// (unlike [`tokio::io::split`], without a lock between them).
    pub fn into_split(mut self) -> (OwnedReadHalf, OwnedWriteHalf) {
        self.split = true;
        let read = OwnedReadHalf {
            shared: self.shared.clone(),
            link: self.link.clone(),
            reader: ReadSide {
                read_since_notify: self.reader.read_since_notify,
            },
        };
        let write = OwnedWriteHalf {
            shared: self.shared.clone(),
            link: self.link.clone(),
            writer: WriteSide {
                shutdown: self.writer.shutdown,
            },
        };
        (read, write)
    }

    /// The peer's socket address.
    pub fn remote_addr(&self) -> SocketAddr {
        self.shared.remote
    }

    /// The TCP-level (port-pair) local port of this connection.
    pub fn local_port(&self) -> u16 {
        self.shared.lock().conn.local_port()
    }

    /// The TCP-level remote port of this connection.
    pub fn remote_port(&self) -> u16 {
        self.shared.lock().conn.remote_port()
    }

    /// The connection's counters (segments, ACKs sent and received,
    /// retransmissions, congestion window, RTT).
    pub fn stats(&self) -> Stats {
        self.shared.lock().conn.stats()
    }

    /// A handle that reads how far the peer has acknowledged this
    /// stream's data, usable while the stream itself is busy in a write
    /// or a read.
    pub fn ack_probe(&self) -> AckProbe {
        AckProbe {
            shared: self.shared.clone(),
        }
    }

    /// What the handshake agreed: options, and the segment size
    /// (`peer_mss`), which on sockets is also what the path carries (see
    /// [`EndpointConfig::probe_path_mtu`](super::EndpointConfig::probe_path_mtu)).
    pub fn negotiated(&self) -> crate::connection::Negotiated {
        self.shared.lock().conn.negotiated()
    }

    /// The connection's RFC 9293 state.
    pub fn state(&self) -> State {
        self.shared.lock().conn.state()
    }

    /// How the connection ended, once it has.
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.shared.lock().closed
    }

    /// Switches how this end acknowledges what it receives (see
    /// [`Connection::set_ack_policy`](crate::connection::Connection::set_ack_policy)):
    /// a file receiver follows the strategy the sender names this way.
    pub fn set_ack_policy(
        &self,
        policy: crate::connection::AckPolicyConfig,
    ) -> Result<(), crate::connection::ConfigError> {
        self.shared.lock().conn.set_ack_policy(policy)
    }

    /// Resets the connection: a RST goes out and both directions fail
    /// from now on with `ConnectionAborted`.
    pub fn abort(&self) {
        self.shared.lock().conn.abort();
        self.link.queue(&self.shared);
    }

    /// Resolves once the handshake has completed, or with why it did not.
    pub(crate) fn poll_connected(&self, cx: &mut Context<'_>) -> Poll<Result<(), NetError>> {
        let mut st = self.shared.lock();
        if st.connected {
            return Poll::Ready(Ok(()));
        }
        let remote = self.shared.remote;
        if let Some(reason) = st.closed {
            return Poll::Ready(Err(match reason {
                CloseReason::Refused => NetError::ConnectionRefused { remote },
                reason => NetError::Closed { remote, reason },
            }));
        }
        if st.endpoint_gone {
            return Poll::Ready(Err(NetError::EndpointClosed));
        }
        st.write_waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// Reads a connection's send-side progress from outside its [`Stream`]:
/// what the peer has acknowledged, as against what was written. From
/// [`Stream::ack_probe`].
///
/// A file sender uses it to tell a slow but moving transfer (the
/// acknowledged count grows) from a dead one, and to show progress as
/// the bytes the receiver holds rather than the bytes queued.
#[derive(Debug, Clone)]
pub struct AckProbe {
    shared: Arc<ConnShared>,
}

impl AckProbe {
    /// Data bytes the peer has acknowledged since the connection opened
    /// (the FIN not counted).
    pub fn acknowledged_bytes(&self) -> u64 {
        let st = self.shared.lock();
        let sender = st.conn.sender();
        sender.snd_una().min(sender.data_end())
    }

    /// Data bytes written into the connection since it opened, sent or
    /// still queued.
    pub fn written_bytes(&self) -> u64 {
        self.shared.lock().conn.sender().data_end()
    }

    /// The connection's counters.
    pub fn stats(&self) -> Stats {
        self.shared.lock().conn.stats()
    }
}

impl ReadSide {
    fn poll_read(
        &mut self,
        shared: &Arc<ConnShared>,
        link: &DriverLink,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        self.poll_take(shared, link, cx, |conn| {
            let n = conn.read(buf.initialize_unfilled());
            buf.advance(n);
            (n > 0).then_some(((), n))
        })
        .map_ok(|_| ())
    }

    fn poll_read_chunk(
        &mut self,
        shared: &Arc<ConnShared>,
        link: &DriverLink,
        cx: &mut Context<'_>,
        max: usize,
    ) -> Poll<io::Result<Option<Bytes>>> {
        if max == 0 {
            return Poll::Ready(Ok(Some(Bytes::new())));
        }
        self.poll_take(shared, link, cx, |conn| {
            conn.read_chunk(max).map(|b| {
                let n = b.len();
                (b, n)
            })
        })
    }

    /// Takes what `take` reads from the connection (with its length), or
    /// `None` at the end of the stream, or waits for data.
    fn poll_take<T>(
        &mut self,
        shared: &Arc<ConnShared>,
        link: &DriverLink,
        cx: &mut Context<'_>,
        take: impl FnOnce(&mut Connection) -> Option<(T, usize)>,
    ) -> Poll<io::Result<Option<T>>> {
        let mut st = shared.lock();
        let buffered = st.conn.readable();
        // A quarter of what the window is offered out of (which grows
        // while autotuned).
        let notify_threshold = (st.conn.recv_buffer_limit() / 4).max(1);
        if let Some((taken, n)) = take(&mut st.conn) {
            self.read_since_notify += n;
            // The window may have opened enough to matter: let the driver
            // send the update. While unread data fills at most half the
            // buffer, the window is wide open and the ACKs that data draws
            // carry its growth anyway; waking the driver for every read
            // would cost a task switch per read.
            if self.read_since_notify >= notify_threshold || buffered > 2 * notify_threshold {
                self.read_since_notify = 0;
                drop(st);
                link.queue(shared);
            }
            return Poll::Ready(Ok(Some(taken)));
        }
        if st.conn.peer_closed() {
            return Poll::Ready(Ok(None));
        }
        match st.closed {
            Some(CloseReason::Normal) => return Poll::Ready(Ok(None)),
            Some(reason) => return Poll::Ready(Err(close_error(reason))),
            None => {}
        }
        if st.endpoint_gone {
            return Poll::Ready(Err(endpoint_closed()));
        }
        st.read_waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// What a write hands the connection.
#[derive(Clone, Copy)]
enum Payload<'a> {
    /// Bytes to copy into the send buffer.
    Copied(&'a [u8]),
    /// A buffer the send buffer keeps by reference.
    Shared(&'a Bytes),
}

impl Payload<'_> {
    fn len(self) -> usize {
        match self {
            Payload::Copied(b) => b.len(),
            Payload::Shared(b) => b.len(),
        }
    }
}

impl WriteSide {
    fn poll_write(
        &mut self,
        shared: &Arc<ConnShared>,
        link: &DriverLink,
        cx: &mut Context<'_>,
        data: Payload<'_>,
    ) -> Poll<io::Result<usize>> {
        if self.shutdown {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "stream already shut down for writing",
            )));
        }
        if data.len() == 0 {
            return Poll::Ready(Ok(0));
        }
        let mut st = shared.lock();
        if let Some(reason) = st.closed {
            return Poll::Ready(Err(close_error(reason)));
        }
        if st.endpoint_gone {
            return Poll::Ready(Err(endpoint_closed()));
        }
        let n = match data {
            Payload::Copied(bytes) => st.conn.write(bytes),
            Payload::Shared(bytes) => st.conn.write_shared(bytes.clone()),
        };
        if n > 0 {
            drop(st);
            link.queue(shared);
            return Poll::Ready(Ok(n));
        }
        match st.conn.state() {
            State::SynSent | State::SynReceived | State::Established | State::CloseWait => {
                // The send buffer is full: the driver wakes us when ACKs
                // have made room.
                st.write_waker = Some(cx.waker().clone());
                Poll::Pending
            }
            _ => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "connection is closing",
            ))),
        }
    }

    fn poll_shutdown(
        &mut self,
        shared: &Arc<ConnShared>,
        link: &DriverLink,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        let mut st = shared.lock();
        if !self.shutdown {
            self.shutdown = true;
            st.conn.close();
            drop(st);
            link.queue(shared);
            st = shared.lock();
        }
        if st.fin_acknowledged() {
            return Poll::Ready(Ok(()));
        }
        if let Some(reason) = st.closed {
            return Poll::Ready(Err(close_error(reason)));
        }
        if st.endpoint_gone {
            return Poll::Ready(Err(endpoint_closed()));
        }
        st.write_waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// `AsyncRead` and `AsyncWrite` for the stream and its halves, all through
/// `ReadSide` and `WriteSide`.
macro_rules! impl_read {
    ($t:ty) => {
        impl AsyncRead for $t {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                let this = self.get_mut();
                this.reader.poll_read(&this.shared, &this.link, cx, buf)
            }
        }

        impl $t {
            /// Reads the next in-order bytes, at most `max` of them,
            /// without copying them where the connection holds them by
            /// reference (data that arrived in order through the endpoint:
            /// see [`Connection::read_chunk`](crate::connection::Connection::read_chunk)).
            /// Waits for data like `read`; `None` at the end of the stream
            /// (and an empty buffer at once for `max` 0).
            ///
            /// ```no_run
            /// # async fn f(mut stream: ackwise::net::Stream) -> std::io::Result<()> {
            /// let mut total = 0;
            /// while let Some(chunk) = stream.read_chunk(1 << 20).await? {
            ///     total += chunk.len();
            /// }
            /// # Ok(()) }
            /// ```
            pub async fn read_chunk(&mut self, max: usize) -> io::Result<Option<Bytes>> {
                std::future::poll_fn(|cx| {
                    self.reader
                        .poll_read_chunk(&self.shared, &self.link, cx, max)
                })
                .await
            }
        }
    };
}

macro_rules! impl_write {
    ($t:ty) => {
        impl AsyncWrite for $t {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                data: &[u8],
            ) -> Poll<io::Result<usize>> {
                let this = self.get_mut();
                this.writer
                    .poll_write(&this.shared, &this.link, cx, Payload::Copied(data))
            }

            fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                // Written data is already in the connection's buffer, and
                // the driver sends it as the windows allow.
                Poll::Ready(Ok(()))
            }

            /// Sends a FIN after the written data; resolves once the peer
            /// has acknowledged all of it.
            fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                let this = self.get_mut();
                this.writer.poll_shutdown(&this.shared, &this.link, cx)
            }
        }

        impl $t {
            /// Queues `data` without copying it: the connection keeps a
            /// reference until the peer acknowledges the bytes
            /// ([`Connection::write_shared`](crate::connection::Connection::write_shared)).
            /// Waits for room like `write`; returns how many bytes were
            /// taken, the rest being `data.slice(n..)`.
            pub async fn write_shared(&mut self, data: &Bytes) -> io::Result<usize> {
                std::future::poll_fn(|cx| {
                    self.writer
                        .poll_write(&self.shared, &self.link, cx, Payload::Shared(data))
                })
                .await
            }

            /// Queues all of `data` without copying it (see
            /// [`write_shared`](Self::write_shared)).
            pub async fn write_all_shared(&mut self, mut data: Bytes) -> io::Result<()> {
                while !data.is_empty() {
                    let n = self.write_shared(&data).await?;
                    data.advance(n);
                }
                Ok(())
            }
        }
    };
}

impl_read!(Stream);
impl_read!(OwnedReadHalf);
impl_write!(Stream);
impl_write!(OwnedWriteHalf);

/// Closes the connection gracefully when its last writer goes away.
fn close_on_drop(shared: &Arc<ConnShared>, link: &DriverLink) {
    let mut st = shared.lock();
    if st.closed.is_none() && !st.endpoint_gone {
        st.conn.close();
    }
    drop(st);
    link.queue(shared);
}

impl Drop for Stream {
    fn drop(&mut self) {
        if !self.split {
            close_on_drop(&self.shared, &self.link);
        }
    }
}

impl Drop for OwnedWriteHalf {
    fn drop(&mut self) {
        close_on_drop(&self.shared, &self.link);
    }
}

impl OwnedReadHalf {
    /// The peer's socket address.
    pub fn remote_addr(&self) -> SocketAddr {
        self.shared.remote
    }

    /// The connection's counters.
    pub fn stats(&self) -> Stats {
        self.shared.lock().conn.stats()
    }
}

impl OwnedWriteHalf {
    /// The peer's socket address.
    pub fn remote_addr(&self) -> SocketAddr {
        self.shared.remote
    }

    /// The connection's counters.
    pub fn stats(&self) -> Stats {
        self.shared.lock().conn.stats()
    }

    /// Resets the connection (both halves fail from now on).
    pub fn abort(&self) {
        self.shared.lock().conn.abort();
        self.link.queue(&self.shared);
    }
}
