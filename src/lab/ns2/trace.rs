//! The ns-2 packet trace as written by `trace-all` and `trace-queue` on
//! wired links: one event per line,
//!
//! ```text
//! + 0.100439 2 0 tcp 1040 ------- 0 2.0 3.0 1 2
//! ```
//!
//! that is event (`+` enqueue, `-` dequeue, i.e. start of transmission,
//! `r` arrival at the far node, `d` drop), time in seconds, the link's two
//! node ids, packet type, size in bytes, flags, flow id, source and
//! destination addresses (`node.port`), sequence number (the cumulative ACK
//! number for ACKs) and a unique packet id.
//!
//! The parser is strict: a line that is not in this shape is a
//! [`TraceError`] naming the line and the field, never a panic and never a
//! silently skipped event, because a miscounted trace would make the
//! cross-check compare the wrong figures.

use crate::time::Duration;
use thiserror::Error;

/// What happened to the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// `+`: entered the link's queue.
    Enqueue,
    /// `-`: left the queue and started transmission.
    Dequeue,
    /// `r`: arrived at the far end of the link.
    Receive,
    /// `d`: dropped by the queue.
    Drop,
}

/// The packet types the cross-check distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketType {
    /// `tcp`: a data segment (or the SYN, sequence number 0).
    Tcp,
    /// `ack`: an acknowledgment from a sink.
    Ack,
    /// Anything else (cbr, udp, ...).
    Other,
}

/// One parsed trace line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceEvent {
    /// The event.
    pub kind: EventKind,
    /// Simulated time since the start of the run.
    pub at: Duration,
    /// Node at the link's input.
    pub from_node: u32,
    /// Node at the link's output.
    pub to_node: u32,
    /// Packet type.
    pub packet: PacketType,
    /// Size on the link, bytes (headers included).
    pub size_bytes: u32,
    /// The agent's `fid_`.
    pub flow_id: i64,
    /// Node of the packet's source address.
    pub src_node: u32,
    /// Node of the packet's destination address.
    pub dst_node: u32,
    /// Sequence number, in packets (cumulative ACK number for ACKs; ns-2
    /// uses -1 for "nothing yet").
    pub seqno: i64,
    /// ns-2's unique packet id.
    pub uid: u64,
}

/// A trace line that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TraceError {
    /// The line does not have the 12 fields of a wired-link event.
    #[error("trace line {line}: expected 12 fields, found {found}")]
    FieldCount {
        /// 1-based line number
        line: usize,
        /// fields present
        found: usize,
    },
    /// A field does not hold a value of its kind.
    #[error("trace line {line}: bad {field} `{text}`")]
    BadField {
        /// 1-based line number
        line: usize,
        /// which field
        field: &'static str,
        /// what was there (shortened)
        text: String,
    },
    /// The trace could not be read.
    #[error("reading the trace: {0}")]
    Read(String),
}

fn bad(line: usize, field: &'static str, text: &str) -> TraceError {
    TraceError::BadField {
        line,
        field,
        text: text.chars().take(40).collect(),
    }
}

fn number<T: std::str::FromStr>(
    line: usize,
    field: &'static str,
    text: &str,
) -> Result<T, TraceError> {
    text.parse().map_err(|_| bad(line, field, text))
}

/// The node of a `node.port` address.
fn address_node(line: usize, field: &'static str, text: &str) -> Result<u32, TraceError> {
    let (node, port) = text.split_once('.').ok_or_else(|| bad(line, field, text))?;
    // The port is checked too: a mangled address must not pass as valid.
    let _: i64 = number(line, field, port)?;
    number(line, field, node)
}

/// Parses one trace line; `line` is its 1-based number, for errors.
pub fn parse_line(text: &str, line: usize) -> Result<TraceEvent, TraceError> {
    let mut fields = [""; 12];
    let mut found = 0;
    for f in text.split_ascii_whitespace() {
        if found < fields.len() {
            fields[found] = f;
        }
        found += 1;
    }
    if found != fields.len() {
        return Err(TraceError::FieldCount { line, found });
    }
    let kind = match fields[0] {
        "+" => EventKind::Enqueue,
        "-" => EventKind::Dequeue,
        "r" => EventKind::Receive,
        "d" => EventKind::Drop,
        other => return Err(bad(line, "event", other)),
    };
    let seconds: f64 = number(line, "time", fields[1])?;
    // try_from_secs_f64 rejects NaN, negative and overflowing values.
    let at = Duration::try_from_secs_f64(seconds).map_err(|_| bad(line, "time", fields[1]))?;
    let packet = match fields[4] {
        "tcp" => PacketType::Tcp,
        "ack" => PacketType::Ack,
        _ => PacketType::Other,
    };
    Ok(TraceEvent {
        kind,
        at,
        from_node: number(line, "from node", fields[2])?,
        to_node: number(line, "to node", fields[3])?,
        packet,
        size_bytes: number(line, "size", fields[5])?,
        flow_id: number(line, "flow id", fields[7])?,
        src_node: address_node(line, "source address", fields[8])?,
        dst_node: address_node(line, "destination address", fields[9])?,
        seqno: number(line, "sequence number", fields[10])?,
        uid: number(line, "packet id", fields[11])?,
    })
}

/// Calls `each` with every event of a trace, in file order; stops at the
/// first bad line or the first error `each` returns.
pub fn for_each_event<R, E>(
    reader: R,
    mut each: impl FnMut(&TraceEvent) -> Result<(), E>,
) -> Result<(), E>
where
    R: std::io::BufRead,
    E: From<TraceError>,
{
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| TraceError::Read(e.to_string()))?;
        if line.trim().is_empty() {
            continue;
        }
        each(&parse_line(&line, i + 1)?)?;
    }
    Ok(())
}
