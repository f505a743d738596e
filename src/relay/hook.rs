//! The seam for reverse-path middleboxes.
//!
//! ACK filtering (paper 000) and ACK delay control (paper 001) act on the
//! server-to-client link, where ACKs travel when the client sends data. A
//! [`ReverseHook`] sees every datagram arriving at that link before the
//! queue does, together with:
//!
//! - the datagram's bytes and, when it is one, its parsed pure ACK
//!   ([`PureAck`]), and which client it belongs to (flows through the relay
//!   are told apart by client address, then by ports);
//! - a [`QueueView`] of the datagrams already waiting, head first, each
//!   with its parsed pure ACK, from which the hook may remove entries (the
//!   filter's "a newer ACK stands in for an older one", decided with
//!   [`may_replace`](crate::ack_path::may_replace));
//! - the forward link's queue length, the signal ACK delay control
//!   throttles on.
//!
//! It then passes the arrival, drops it, or delays it. It is also told of
//! every departure from the reverse link (for a rate estimator such as
//! [`TswRate`](crate::estimators::TswRate)). What a hook drops, removes
//! and delays is counted in the reverse direction's
//! [`DirectionStats`](super::DirectionStats).

use super::link::{Datagram, Slab};
use crate::ack_path::PureAck;
use crate::emu::queue::LinkQueue;
use crate::time::{Duration, Instant};
use std::collections::VecDeque;
use std::fmt::Debug;
use std::net::SocketAddr;

/// A datagram arriving at the reverse link.
#[derive(Debug, Clone, Copy)]
pub struct Arrival<'a> {
    /// The client it is travelling to.
    pub client: SocketAddr,
    /// The datagram (one TCP segment in ackwise's wire format, or anything
    /// else the server sent).
    pub datagram: &'a [u8],
    /// The pure ACK it carries, if it parses as one.
    pub pure_ack: Option<PureAck>,
    /// Datagrams waiting in the forward link's queue.
    pub forward_queue_packets: usize,
    /// Bytes waiting in the forward link's queue (payloads only).
    pub forward_queue_bytes: u64,
}

/// A hook's decision about an arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookAction {
    /// Offer it to the queue now.
    Pass,
    /// Discard it (counted as a hook drop).
    Drop,
    /// Offer it to the queue after this long, without showing it to the
    /// hook again (counted as hook-delayed).
    Delay(Duration),
}

/// A middlebox at the reverse link's input.
pub trait ReverseHook: Send + Debug {
    /// Decides about `arrival` at `now`; may remove queued datagrams
    /// through `queue`.
    fn on_arrival(
        &mut self,
        now: Instant,
        arrival: &Arrival<'_>,
        queue: &mut QueueView<'_>,
    ) -> HookAction;

    /// The reverse link finished serialising a datagram of `link_bytes`
    /// (payload plus UDP/IP overhead) at `at`. Called whether or not the
    /// datagram is then lost on the way.
    fn on_departure(&mut self, at: Instant, link_bytes: u32) {
        let _ = (at, link_bytes);
    }
}

/// One datagram waiting in the reverse queue.
#[derive(Debug, Clone, Copy)]
pub struct QueuedDatagram<'a> {
    /// The client it is travelling to.
    pub client: SocketAddr,
    /// Its bytes.
    pub datagram: &'a [u8],
    /// Its pure ACK, if it is one.
    pub pure_ack: Option<PureAck>,
    /// When it entered the queue.
    pub enqueued: Instant,
}

impl<'a> QueuedDatagram<'a> {
    fn of(d: &'a Datagram) -> QueuedDatagram<'a> {
        QueuedDatagram {
            client: d.client,
            datagram: &d.data,
            pure_ack: d.pure_ack,
            enqueued: d.enqueued,
        }
    }
}

/// The datagrams waiting in a link's queue, head (next to leave) first,
/// with the means to remove one.
///
/// Removal works for FIFO disciplines (DropTail, RED): the discipline
/// decides admission and counts occupancy, while the order lives beside
/// it, so removing entry `i` takes it out of the order and one slot out of
/// the discipline's count. A discipline that orders and removes packets
/// itself (the ACK-filtering buffer) refuses a hook's removals: the view
/// is then read-only.
pub struct QueueView<'a> {
    pub(super) now: Instant,
    pub(super) fifo: &'a mut VecDeque<u32>,
    pub(super) slab: &'a mut Slab,
    pub(super) discipline: &'a mut (dyn LinkQueue + Send),
    pub(super) queued_bytes: &'a mut u64,
    pub(super) removed: &'a mut u64,
}

impl Debug for QueueView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueueView")
            .field("len", &self.fifo.len())
            .finish_non_exhaustive()
    }
}

impl QueueView<'_> {
    /// Datagrams waiting.
    pub fn len(&self) -> usize {
        self.fifo.len()
    }

    /// Nothing is waiting.
    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }

    /// Payload bytes waiting.
    pub fn len_bytes(&self) -> u64 {
        *self.queued_bytes
    }

    /// The `index`-th waiting datagram, 0 being the head.
    pub fn get(&self, index: usize) -> Option<QueuedDatagram<'_>> {
        let id = *self.fifo.get(index)?;
        self.slab.get(id).map(QueuedDatagram::of)
    }

    /// The waiting datagrams, head first.
    pub fn iter(&self) -> impl Iterator<Item = QueuedDatagram<'_>> {
        let (fifo, slab): (&VecDeque<u32>, &Slab) = (self.fifo, self.slab);
        fifo.iter()
            .filter_map(move |&id| slab.get(id).map(QueuedDatagram::of))
    }

    /// Removes the `index`-th waiting datagram (counted as hook-removed);
    /// false if there is none.
    pub fn remove(&mut self, index: usize) -> bool {
        if !self.discipline.serves_in_arrival_order() {
            return false;
        }
        let Some(id) = self.fifo.remove(index) else {
            return false;
        };
        // Any descriptor will do: the discipline only counts them.
        let _ = self.discipline.dequeue(self.now);
        if let Some(d) = self.slab.take(id) {
            *self.queued_bytes -= d.data.len() as u64;
        }
        *self.removed += 1;
        true
    }
}

/// The default: no middlebox.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHook;

impl ReverseHook for NoHook {
    fn on_arrival(&mut self, _: Instant, _: &Arrival<'_>, _: &mut QueueView<'_>) -> HookAction {
        HookAction::Pass
    }
}
