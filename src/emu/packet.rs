//! Packets in flight and the pool that recycles them.
//!
//! Every packet lives in a slot of [`Pool`] from the moment a host emits it
//! until it is delivered or dropped; queues and events carry only the slot
//! index. Slots and their byte buffers are reused, so once the pool has
//! grown to the largest number of packets ever in flight nothing is
//! allocated per packet.

use super::elide::Elided;
use crate::time::Instant;

/// What a packet is, for counting and for middlebox hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketKind {
    /// A TCP segment carrying payload.
    Data,
    /// A TCP segment with no payload and none of SYN, FIN, RST.
    PureAck,
    /// SYN, FIN or RST without payload.
    Control,
    /// A cross-traffic datagram.
    Udp,
}

/// Who sent the packet and where it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// TCP flow `flow`; `to_server` tells the direction.
    Flow { flow: u32, to_server: bool },
    /// Cross-traffic source.
    Cross(u32),
}

#[derive(Debug)]
pub(crate) struct Packet {
    /// Encoded TCP segment in `buf[..len]` (unused for UDP). Empty
    /// until first used; it grows to what the slot has had to hold, which
    /// for a slot that only carried ACKs and elided data is the headers.
    pub buf: Vec<u8>,
    pub len: usize,
    /// Size on links: segment plus per-packet overhead.
    pub wire_bytes: u32,
    pub owner: Owner,
    pub kind: PacketKind,
    /// Index in the path of the next link to enter.
    pub hop: u16,
    pub ecn_capable: bool,
    /// Congestion Experienced, set by a marking queue.
    pub ce: bool,
    /// When the packet left its host.
    pub sent_at: Instant,
    /// Payload left out of `buf` because it is the flows' pattern (see
    /// [`super::elide`]); `buf[..len]` then holds the headers alone.
    pub elided: Elided,
    /// The key of this packet's random draws on the link it is crossing
    /// ([`super::draws`]); set as it enters a link that draws.
    pub draw_key: u64,
}

#[derive(Debug)]
pub(crate) struct Pool {
    pub packets: Vec<Packet>,
    free: Vec<u32>,
}

impl Pool {
    /// An empty pool.
    pub fn new() -> Pool {
        Pool {
            packets: Vec::new(),
            free: Vec::new(),
        }
    }

    pub fn alloc(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            return i;
        }
        self.packets.push(Packet {
            buf: Vec::new(),
            len: 0,
            wire_bytes: 0,
            owner: Owner::Cross(0),
            kind: PacketKind::Udp,
            hop: 0,
            ecn_capable: false,
            ce: false,
            sent_at: Instant::ZERO,
            elided: Elided::NONE,
            draw_key: 0,
        });
        (self.packets.len() - 1) as u32
    }

    pub fn release(&mut self, idx: u32) {
        self.free.push(idx);
    }

    pub fn get(&self, idx: u32) -> &Packet {
        &self.packets[idx as usize]
    }

    pub fn get_mut(&mut self, idx: u32) -> &mut Packet {
        &mut self.packets[idx as usize]
    }

    /// Slots ever created (the high-water mark of packets in flight).
    pub fn capacity(&self) -> usize {
        self.packets.len()
    }
}

/// A TCP segment's header length in bytes, from its data-offset field
/// (byte 12); `None` when the segment is too short to have that byte.
pub(crate) fn header_len(seg: &[u8]) -> Option<usize> {
    seg.get(12).map(|&b| usize::from(b >> 4) * 4)
}

/// Classifies an encoded TCP segment by peeking at its header: payload
/// length from the data offset, flags from byte 13. Avoids a full parse
/// per packet; a segment too short to have a header counts as control.
pub(crate) fn classify(seg: &[u8]) -> PacketKind {
    if seg.len() < 20 {
        return PacketKind::Control;
    }
    let header = header_len(seg).unwrap_or(0);
    let payload = seg.len().saturating_sub(header);
    // FIN 0x01, SYN 0x02, RST 0x04.
    let control = seg[13] & 0x07 != 0;
    if payload > 0 {
        PacketKind::Data
    } else if control {
        PacketKind::Control
    } else {
        PacketKind::PureAck
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_recycles_slots() {
        let mut p = Pool::new();
        let a = p.alloc();
        let b = p.alloc();
        p.release(a);
        assert_eq!(p.alloc(), a);
        assert_ne!(a, b);
        assert_eq!(p.capacity(), 2);
    }

    #[test]
    fn classify_reads_header() {
        let mut seg = [0u8; 24];
        seg[12] = 5 << 4;
        seg[13] = 0x10; // ACK
        assert_eq!(classify(&seg[..20]), PacketKind::PureAck);
        assert_eq!(classify(&seg), PacketKind::Data);
        seg[13] = 0x12; // SYN-ACK
        assert_eq!(classify(&seg[..20]), PacketKind::Control);
        assert_eq!(classify(&seg[..3]), PacketKind::Control);
    }
}
