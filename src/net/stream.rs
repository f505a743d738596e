//! [`Stream`]: one connection as a tokio byte stream.

use super::error::{close_error, endpoint_closed, NetError};
use super::shared::{ConnShared, DriverLink};
use crate::connection::{CloseReason, State, Stats};
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
/// acknowledged all of it. Use [`tokio::io::split`] for separate halves.
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
    write_shutdown: bool,
    /// Bytes read since the driver was last asked to look at the window.
    read_since_notify: usize,
    /// A quarter of the receive buffer: read this much and the driver hears
    /// of it, so that the window reopens for a slow reader.
    notify_threshold: usize,
}

impl Stream {
    pub(crate) fn new(shared: Arc<ConnShared>, link: Arc<DriverLink>) -> Stream {
        let notify_threshold = (shared.lock().conn.config().recv_buffer / 4).max(1);
        Stream {
            shared,
            link,
            write_shutdown: false,
            read_since_notify: 0,
            notify_threshold,
        }
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

    /// The connection's RFC 9293 state.
    pub fn state(&self) -> State {
        self.shared.lock().conn.state()
    }

    /// How the connection ended, once it has.
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.shared.lock().closed
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

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        let mut st = this.shared.lock();
        let buffered = st.conn.readable();
        let n = st.conn.read(buf.initialize_unfilled());
        if n > 0 {
            buf.advance(n);
            this.read_since_notify += n;
            // The window may have opened enough to matter: let the driver
            // send the update. While unread data fills at most half the
            // buffer, the window is wide open and the ACKs that data draws
            // carry its growth anyway; waking the driver for every read
            // would cost a task switch per read.
            if this.read_since_notify >= this.notify_threshold
                || buffered > 2 * this.notify_threshold
            {
                this.read_since_notify = 0;
                drop(st);
                this.link.queue(&this.shared);
            }
            return Poll::Ready(Ok(()));
        }
        if st.conn.peer_closed() {
            return Poll::Ready(Ok(()));
        }
        match st.closed {
            Some(CloseReason::Normal) => return Poll::Ready(Ok(())),
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

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.write_shutdown {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "stream already shut down for writing",
            )));
        }
        if data.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let mut st = this.shared.lock();
        if let Some(reason) = st.closed {
            return Poll::Ready(Err(close_error(reason)));
        }
        if st.endpoint_gone {
            return Poll::Ready(Err(endpoint_closed()));
        }
        let n = st.conn.write(data);
        if n > 0 {
            drop(st);
            this.link.queue(&this.shared);
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

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Written data is already in the connection's buffer, and the
        // driver sends it as the windows allow.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let mut st = this.shared.lock();
        if !this.write_shutdown {
            this.write_shutdown = true;
            st.conn.close();
            drop(st);
            this.link.queue(&this.shared);
            st = this.shared.lock();
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

impl Drop for Stream {
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        st.handle_dropped = true;
        if st.closed.is_none() && !st.endpoint_gone {
            st.conn.close();
        }
        drop(st);
        self.link.queue(&self.shared);
    }
}
