//! Which half-open connection gives way when a SYN finds no room: the
//! endpoint's defence against SYN floods (issue 14, "endpoint under
//! flood").
//!
//! A half-open connection (SYN answered, handshake not complete) costs the
//! endpoint a table entry and a timer until the handshake times out. A
//! flood of SYNs that never complete would fill the table and keep real
//! clients out for as long as the flood lasts. Instead the endpoint keeps
//! at most a fixed number of half-open connections, and at most a smaller
//! number per peer address, and a SYN that finds either limit reached
//! takes the place of an older half-open connection:
//!
//! - of its own peer, if that peer is at its limit (a flood from one
//!   address only ever displaces itself);
//! - otherwise of the peer holding the most half-open connections, its
//!   oldest one.
//!
//! A real client's handshake then survives a flood from another address
//! however fast that flood is. A flood from many spoofed addresses
//! displaces the oldest entries of whichever address holds most; each
//! real client's entry is then at risk only once the total limit is
//! reached, and retransmits its SYN if it lost its place.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::net::SocketAddr;

/// The half-open connections of an endpoint, per peer, oldest first.
#[derive(Debug)]
pub(crate) struct HalfOpen<K> {
    by_peer: HashMap<SocketAddr, VecDeque<K>>,
    /// Half-open connections now (the queues may also hold keys of
    /// connections that have since completed or closed; they are skipped
    /// when met).
    count: usize,
    max_total: usize,
    max_per_peer: usize,
}

/// What a new SYN may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Room<K> {
    /// Open a connection.
    Free,
    /// Open one after dropping this half-open connection.
    Evict(K),
    /// Nothing to drop: refuse the SYN.
    Full,
}

impl<K: Copy + Eq + Hash> HalfOpen<K> {
    pub(crate) fn new(max_total: usize, max_per_peer: usize) -> Self {
        HalfOpen {
            by_peer: HashMap::new(),
            count: 0,
            max_total: max_total.max(1),
            max_per_peer: max_per_peer.max(1),
        }
    }

    /// Half-open connections now.
    #[cfg(test)]
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// Whether a SYN from `peer` fits as things are: under both limits
    /// and in a table that is not full (stale keys of `peer` are dropped
    /// on the way).
    pub(crate) fn has_room(
        &mut self,
        peer: SocketAddr,
        table_full: bool,
        is_half_open: impl Fn(&K) -> bool,
    ) -> bool {
        if let Some(queue) = self.by_peer.get_mut(&peer) {
            if queue.len() >= self.max_per_peer {
                queue.retain(|k| is_half_open(k));
                if queue.len() >= self.max_per_peer {
                    return false;
                }
            }
        }
        self.count < self.max_total && !table_full
    }

    /// Where a SYN from `peer` fits. `table_full` says the endpoint's
    /// whole connection table is full; `is_half_open` says whether a
    /// remembered key still names a half-open connection. The key returned
    /// in [`Room::Evict`] has been forgotten here already: the caller drops
    /// the connection.
    pub(crate) fn room_for(
        &mut self,
        peer: SocketAddr,
        table_full: bool,
        is_half_open: impl Fn(&K) -> bool,
    ) -> Room<K> {
        if let Some(queue) = self.by_peer.get_mut(&peer) {
            if queue.len() >= self.max_per_peer {
                queue.retain(|k| is_half_open(k));
                if queue.len() >= self.max_per_peer {
                    return self
                        .evict_from(peer, &is_half_open)
                        .map_or(Room::Full, Room::Evict);
                }
            }
        }
        if self.count < self.max_total && !table_full {
            return Room::Free;
        }
        loop {
            let Some(largest) = self
                .by_peer
                .iter()
                .max_by_key(|(_, q)| q.len())
                .map(|(p, _)| *p)
            else {
                return Room::Full;
            };
            if let Some(key) = self.evict_from(largest, &is_half_open) {
                return Room::Evict(key);
            }
        }
    }

    /// Forgets and returns the oldest key of `peer` that is still half
    /// open, dropping stale keys before it (and the queue, once empty).
    fn evict_from(&mut self, peer: SocketAddr, is_half_open: &impl Fn(&K) -> bool) -> Option<K> {
        let queue = self.by_peer.get_mut(&peer)?;
        let mut found = None;
        while let Some(key) = queue.pop_front() {
            if is_half_open(&key) {
                found = Some(key);
                break;
            }
        }
        if queue.is_empty() {
            self.by_peer.remove(&peer);
        }
        if found.is_some() {
            self.count -= 1;
        }
        found
    }

    /// A half-open connection `key` from `peer` was opened.
    pub(crate) fn add(&mut self, peer: SocketAddr, key: K) {
        self.by_peer.entry(peer).or_default().push_back(key);
        self.count += 1;
    }

    /// A half-open connection from `peer` completed or closed; `is_half_open`
    /// as for [`room_for`](Self::room_for), already false for this one.
    /// Its key leaves the queue lazily, but no queue outgrows twice the
    /// per-peer limit.
    pub(crate) fn left(&mut self, peer: SocketAddr, is_half_open: impl Fn(&K) -> bool) {
        self.count = self.count.saturating_sub(1);
        if let Some(queue) = self.by_peer.get_mut(&peer) {
            if queue.len() > 2 * self.max_per_peer || self.count == 0 {
                queue.retain(|k| is_half_open(k));
            }
            if queue.is_empty() {
                self.by_peer.remove(&peer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn peer(n: u16) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 1], n))
    }

    #[test]
    fn a_flooding_peer_displaces_only_itself() {
        let mut h = HalfOpen::new(100, 10);
        let live: HashSet<u32> = (0..10_000).collect();
        // A real client's half-open connection.
        assert_eq!(h.room_for(peer(1), false, |k| live.contains(k)), Room::Free);
        h.add(peer(1), 9_999);
        for k in 0..1_000 {
            let room = h.room_for(peer(2), false, |k| live.contains(k));
            if k < 10 {
                assert_eq!(room, Room::Free);
            } else {
                assert_eq!(room, Room::Evict(k - 10), "SYN {k}");
            }
            h.add(peer(2), k);
        }
        assert_eq!(h.count(), 11);
        assert_eq!(h.by_peer[&peer(1)], [9_999]);
    }

    #[test]
    fn at_the_total_limit_the_largest_peer_gives_way() {
        let mut h = HalfOpen::new(4, 3);
        let live: HashSet<u32> = (0..100).collect();
        for (p, k) in [(1, 0), (2, 1), (2, 2), (2, 3)] {
            assert_eq!(h.room_for(peer(p), false, |k| live.contains(k)), Room::Free);
            h.add(peer(p), k);
        }
        assert_eq!(
            h.room_for(peer(3), false, |k| live.contains(k)),
            Room::Evict(1)
        );
        h.add(peer(3), 4);
        // A full table with only stale keys left: the SYN is refused.
        let mut h = HalfOpen::new(1, 1);
        h.add(peer(1), 7);
        h.left(peer(1), |_| true);
        assert_eq!(h.room_for(peer(2), true, |_| false), Room::Full);
    }

    #[test]
    fn completed_connections_are_not_evicted_and_free_their_place() {
        let mut h = HalfOpen::new(2, 2);
        let mut live: HashSet<u32> = HashSet::new();
        for k in 0..2 {
            live.insert(k);
            h.room_for(peer(1), false, |k| live.contains(k));
            h.add(peer(1), k);
        }
        // Connection 0 completes its handshake.
        live.remove(&0);
        h.left(peer(1), |k| live.contains(k));
        assert_eq!(h.count(), 1);
        assert_eq!(h.room_for(peer(2), false, |k| live.contains(k)), Room::Free);
        h.add(peer(2), 2);
        live.insert(2);
        // At the limit again: peer 1's stale key 0 is skipped, 1 goes.
        assert_eq!(
            h.room_for(peer(3), false, |k| live.contains(k)),
            Room::Evict(1)
        );
    }
}
