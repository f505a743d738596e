//! Sending a datagram (or a GSO batch of them) from several pieces of
//! memory: `sendmsg(2)` with an I/O vector, so that a segment's header can
//! come from the driver's arena and its payload straight from the
//! connection's send buffer (see
//! [`Connection::poll_transmit_gather`](crate::connection::Connection::poll_transmit_gather)).
//! The kernel copies every piece into the packet once, as it copies a
//! single buffer; what is saved is the copy of the payload into that
//! buffer, about a quarter of a bulk sender's CPU on loopback.
//!
//! Linux only (the control messages are Linux's: `UDP_SEGMENT` for GSO,
//! `IP_TOS` / `IPV6_TCLASS` for the ECN codepoint); elsewhere
//! [`SUPPORTED`] is false and the driver copies as before.

use std::io::{self, IoSlice};
use std::net::SocketAddr;

/// Whether this platform sends gathered datagrams.
pub(crate) const SUPPORTED: bool = cfg!(target_os = "linux");

/// Sends `pieces`, concatenated, to `dest` from `socket` (of the same
/// address family): one datagram, or with `segment_size` a GSO batch the
/// kernel cuts into datagrams of that many bytes (the last may be
/// shorter). `tos` is the IP header's traffic-class byte (the ECN bits).
/// Returns the bytes sent.
#[cfg(target_os = "linux")]
pub(crate) fn send<S: std::os::fd::AsFd>(
    socket: &S,
    dest: SocketAddr,
    pieces: &[IoSlice<'_>],
    segment_size: Option<u16>,
    tos: u8,
) -> io::Result<usize> {
    let addr = socket2::SockAddr::from(dest);
    let mut control = Control::new();
    if dest.is_ipv4() {
        control.push(
            libc::IPPROTO_IP,
            libc::IP_TOS,
            &i32::from(tos).to_ne_bytes(),
        );
    } else {
        control.push(
            libc::IPPROTO_IPV6,
            libc::IPV6_TCLASS,
            &i32::from(tos).to_ne_bytes(),
        );
    }
    if let Some(size) = segment_size {
        control.push(libc::SOL_UDP, libc::UDP_SEGMENT, &size.to_ne_bytes());
    }
    let msg = socket2::MsgHdr::new()
        .with_addr(&addr)
        .with_buffers(pieces)
        .with_control(control.bytes());
    socket2::SockRef::from(socket).sendmsg(&msg, 0)
}

/// Control messages as `sendmsg(2)` reads them: each a `cmsghdr` (the
/// message's length as a `size_t`, then level and type as `int`s) and
/// its data, each part padded to the size of a `long` (Linux's
/// `CMSG_ALIGN`). The kernel copies the buffer before parsing it, so its
/// own alignment in memory does not matter.
#[cfg(target_os = "linux")]
struct Control {
    buf: [u8; 64],
    len: usize,
}

#[cfg(target_os = "linux")]
impl Control {
    fn new() -> Control {
        Control {
            buf: [0; 64],
            len: 0,
        }
    }

    const WORD: usize = std::mem::size_of::<usize>();
    const HEADER: usize = (Self::WORD + 8).next_multiple_of(Self::WORD);

    /// Appends one message; the two the driver sends fit easily.
    fn push(&mut self, level: i32, kind: i32, data: &[u8]) {
        let start = self.len;
        let end = start + Self::HEADER + data.len().next_multiple_of(Self::WORD);
        let buf = &mut self.buf[start..end];
        buf[..Self::WORD].copy_from_slice(&(Self::HEADER + data.len()).to_ne_bytes());
        buf[Self::WORD..Self::WORD + 4].copy_from_slice(&level.to_ne_bytes());
        buf[Self::WORD + 4..Self::WORD + 8].copy_from_slice(&kind.to_ne_bytes());
        buf[Self::HEADER..Self::HEADER + data.len()].copy_from_slice(data);
        self.len = end;
    }

    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Not available here: [`SUPPORTED`] is false, so the driver never calls
/// this.
#[cfg(not(target_os = "linux"))]
pub(crate) fn send<S>(
    _socket: &S,
    _dest: SocketAddr,
    _pieces: &[IoSlice<'_>],
    _segment_size: Option<u16>,
    _tos: u8,
) -> io::Result<usize> {
    Err(io::ErrorKind::Unsupported.into())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Pieces arrive as one datagram, and with a segment size as that
    /// many datagrams of it (GSO where the kernel has it).
    #[test]
    fn pieces_arrive_concatenated_and_cut_at_the_segment_size() {
        let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let dest = rx.local_addr().unwrap();
        let pieces = [
            IoSlice::new(b"head"),
            IoSlice::new(b"er+pay"),
            IoSlice::new(b""),
            IoSlice::new(b"load"),
        ];
        assert_eq!(send(&tx, dest, &pieces, None, 2).unwrap(), 14);
        let mut buf = [0u8; 64];
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"header+payload");

        let pieces = [
            IoSlice::new(b"aaaabb"),
            IoSlice::new(b"bbcccc"),
            IoSlice::new(b"dd"),
        ];
        match send(&tx, dest, &pieces, Some(4), 2) {
            Ok(sent) => {
                assert_eq!(sent, 14);
                for want in [&b"aaaa"[..], b"bbbb", b"cccc", b"dd"] {
                    let n = rx.recv(&mut buf).unwrap();
                    assert_eq!(&buf[..n], want);
                }
            }
            // A kernel without UDP GSO (before 4.18).
            Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{e}"),
        }
    }
}
