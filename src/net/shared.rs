//! State shared between the endpoint's driver task and the stream handles.
//!
//! Each connection sits behind its own short-held `std::sync::Mutex`; the
//! driver locks it to feed segments, run timers and collect segments to
//! send, a [`Stream`](super::Stream) locks it to copy bytes in or out. A
//! handle that changed something the driver must act on (new data to send,
//! a window opened by reading, a close) queues its connection on the
//! [`DriverLink`] and wakes the driver; the queue flag makes that one
//! atomic swap when the connection is already queued.

use crate::connection::{CloseReason, Connection, State};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Waker;
use tokio::sync::Notify;

/// One connection as both sides see it.
#[derive(Debug)]
pub(crate) struct ConnShared {
    pub(crate) state: Mutex<ConnState>,
    /// Already on the driver's dirty list.
    queued: AtomicBool,
    /// Where the peer is.
    pub(crate) remote: SocketAddr,
    /// The connection's port pair (fixed for its life).
    pub(crate) local_port: u16,
    pub(crate) remote_port: u16,
    /// The span every event of this connection is recorded in.
    pub(crate) span: tracing::Span,
}

/// The mutable part of a connection.
#[derive(Debug)]
pub(crate) struct ConnState {
    pub(crate) conn: Connection,
    pub(crate) read_waker: Option<Waker>,
    /// Woken for send capacity, the end of the handshake, the FIN's
    /// acknowledgment and the end of the connection.
    pub(crate) write_waker: Option<Waker>,
    /// The handshake completed.
    pub(crate) connected: bool,
    /// How the connection ended, once it has.
    pub(crate) closed: Option<CloseReason>,
    /// The driver is gone: nothing will move any more.
    pub(crate) endpoint_gone: bool,
}

impl ConnShared {
    pub(crate) fn new(conn: Connection, remote: SocketAddr) -> Arc<Self> {
        let (local_port, remote_port) = (conn.local_port(), conn.remote_port());
        let span = tracing::info_span!(
            "conn",
            remote = %remote,
            local_port = conn.local_port(),
            remote_port = conn.remote_port()
        );
        Arc::new(ConnShared {
            state: Mutex::new(ConnState {
                conn,
                read_waker: None,
                write_waker: None,
                connected: false,
                closed: None,
                endpoint_gone: false,
            }),
            queued: AtomicBool::new(false),
            remote,
            local_port,
            remote_port,
            span,
        })
    }

    /// Locks the state. A panic while the lock was held cannot leave a
    /// connection half-updated in a way that matters more than the panic
    /// itself, so a poisoned lock is used as is.
    pub(crate) fn lock(&self) -> MutexGuard<'_, ConnState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl ConnState {
    /// Wakes both handles' tasks.
    pub(crate) fn wake_all(&mut self) {
        if let Some(w) = self.read_waker.take() {
            w.wake();
        }
        if let Some(w) = self.write_waker.take() {
            w.wake();
        }
    }

    /// Our FIN went out and the peer acknowledged it (with every byte
    /// before it).
    pub(crate) fn fin_acknowledged(&self) -> bool {
        match self.conn.state() {
            State::FinWait2 | State::TimeWait => true,
            State::Closed => self.closed == Some(CloseReason::Normal),
            _ => false,
        }
    }
}

/// How stream handles reach the driver.
#[derive(Debug, Default)]
pub(crate) struct DriverLink {
    dirty: Mutex<Vec<Arc<ConnShared>>>,
    pub(crate) notify: Notify,
}

impl DriverLink {
    /// Asks the driver to look at `conn` soon.
    pub(crate) fn queue(&self, conn: &Arc<ConnShared>) {
        if !conn.queued.swap(true, Ordering::AcqRel) {
            self.dirty
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(conn.clone());
            self.notify.notify_one();
        }
    }

    /// Takes the queued connections, appending them to `out`.
    pub(crate) fn drain(&self, out: &mut Vec<Arc<ConnShared>>) {
        let mut dirty = self.dirty.lock().unwrap_or_else(|e| e.into_inner());
        for c in dirty.drain(..) {
            c.queued.store(false, Ordering::Release);
            out.push(c);
        }
    }
}
