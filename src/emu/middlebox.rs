//! The seam for reverse-path middleboxes: ACK filtering (paper 000,
//! Barakat & Altman) and ACK delay control (paper 001, Wu et al.) sit at a
//! link's input and see each packet before the queue does.
//!
//! This module provides only the hook and a no-op default; the mechanisms
//! themselves are a later issue. A hook may pass a packet, drop it, or hold
//! it back for a while (it is then queued without being shown to the hook
//! again). Replacing packets already queued needs queue surgery that
//! [`LinkQueue`] does not offer yet.

use super::packet::PacketKind;
use super::queue::LinkQueue;
use crate::time::{Duration, Instant};
use std::fmt::Debug;

/// What a hook sees of an arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketInfo {
    /// TCP flow index, `None` for cross traffic.
    pub flow: Option<u32>,
    /// Travelling from client to server (data direction).
    pub toward_server: bool,
    /// Data, pure ACK, control or UDP.
    pub kind: PacketKind,
    /// Size on the link, bytes.
    pub bytes: u32,
}

/// A hook's decision about an arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookAction {
    /// Offer it to the queue now.
    Pass,
    /// Discard it (counted as a hook drop on the link).
    Drop,
    /// Offer it to the queue after this long.
    Delay(Duration),
}

/// A middlebox at a link input.
pub trait LinkHook: Debug {
    /// Called for every packet arriving at the link, before enqueue, with a
    /// read-only view of the queue.
    fn on_arrival(&mut self, now: Instant, pkt: &PacketInfo, queue: &dyn LinkQueue) -> HookAction;
}

/// The default hook: passes everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHook;

impl LinkHook for NoHook {
    fn on_arrival(&mut self, _: Instant, _: &PacketInfo, _: &dyn LinkQueue) -> HookAction {
        HookAction::Pass
    }
}
