//! The kernel's own counters for one of its TCP sockets, read through
//! the socket-diagnostics netlink interface (`sock_diag`, what `ss -ti`
//! reads): `ackwise perf --transport tcp` reports how many segments the
//! kernel's receiver sent, beside ackwise's ACK count.
//!
//! One request names the socket by its four-tuple (`inet_diag_req_v2`,
//! linux/inet_diag.h) and asks for `INET_DIAG_INFO`, the socket's
//! `struct tcp_info` (linux/tcp.h); the fields read are at fixed offsets
//! that the kernel only ever extends past. Linux only: elsewhere, and on
//! any failure, the counters are unknown (`None`), never a guess.

use std::net::SocketAddr;

/// What the kernel counted for one TCP socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelTcpCounters {
    /// Segments the socket sent, all of them (`tcpi_segs_out`): for a
    /// receiver, its ACKs (and its SYN-ACK or FIN).
    pub segs_out: u64,
    /// Segments it received (`tcpi_segs_in`).
    pub segs_in: u64,
    /// Payload bytes it received (`tcpi_bytes_received`).
    pub bytes_received: u64,
}

/// The counters of the kernel's TCP socket from `local` to `remote`, if
/// the kernel has it and answers.
pub fn counters(local: SocketAddr, remote: SocketAddr) -> Option<KernelTcpCounters> {
    #[cfg(target_os = "linux")]
    {
        linux::query(local, remote).ok().flatten()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (local, remote);
        None
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::KernelTcpCounters;
    use socket2::{Domain, Protocol, Socket, Type};
    use std::io::{self, Read};
    use std::net::{IpAddr, SocketAddr};
    use std::time::Duration;

    const AF_NETLINK: i32 = 16;
    const NETLINK_SOCK_DIAG: i32 = 4;
    const SOCK_DIAG_BY_FAMILY: u16 = 20;
    const NLM_F_REQUEST: u16 = 1;
    const NLMSG_ERROR: u16 = 2;
    const NLMSG_HDR_BYTES: usize = 16;
    /// `struct inet_diag_msg`: family, state, timer, retrans, the 48-byte
    /// socket id, then expires, rqueue, wqueue, uid and inode.
    const DIAG_MSG_BYTES: usize = 72;
    const INET_DIAG_INFO: u16 = 2;
    const IPPROTO_TCP: u8 = 6;
    const AF_INET: u8 = 2;
    const AF_INET6: u8 = 10;
    /// `struct tcp_info` offsets (linux/tcp.h).
    const BYTES_RECEIVED_AT: usize = 128;
    const SEGS_OUT_AT: usize = 136;
    const SEGS_IN_AT: usize = 140;

    /// The request for the socket `local` -> `remote`: a netlink header and
    /// an `inet_diag_req_v2` with `INET_DIAG_INFO` asked for.
    pub(super) fn request(local: SocketAddr, remote: SocketAddr) -> Vec<u8> {
        let mut req = Vec::with_capacity(72);
        req.extend_from_slice(&72u32.to_ne_bytes());
        req.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
        req.extend_from_slice(&NLM_F_REQUEST.to_ne_bytes());
        req.extend_from_slice(&1u32.to_ne_bytes()); // sequence
        req.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel's
        let family = if local.is_ipv4() { AF_INET } else { AF_INET6 };
        req.extend_from_slice(&[family, IPPROTO_TCP, 1 << (INET_DIAG_INFO - 1), 0]);
        req.extend_from_slice(&u32::MAX.to_ne_bytes()); // every state
        req.extend_from_slice(&local.port().to_be_bytes());
        req.extend_from_slice(&remote.port().to_be_bytes());
        for ip in [local.ip(), remote.ip()] {
            let mut field = [0u8; 16];
            match ip {
                IpAddr::V4(v4) => field[..4].copy_from_slice(&v4.octets()),
                IpAddr::V6(v6) => field.copy_from_slice(&v6.octets()),
            }
            req.extend_from_slice(&field);
        }
        req.extend_from_slice(&0u32.to_ne_bytes()); // any interface
        req.extend_from_slice(&[0xff; 8]); // INET_DIAG_NOCOOKIE
        req
    }

    /// The counters in the kernel's answer, if it names the socket with
    /// these ports (the lookup falls back to a listener, whose remote port
    /// is 0) and carries its `tcp_info`.
    pub(super) fn parse(answer: &[u8], ports: (u16, u16)) -> Option<KernelTcpCounters> {
        let u16_at =
            |b: &[u8], at: usize| b.get(at..at + 2).map(|s| u16::from_ne_bytes([s[0], s[1]]));
        let u32_at = |b: &[u8], at: usize| {
            b.get(at..at + 4)
                .map(|s| u32::from_ne_bytes([s[0], s[1], s[2], s[3]]))
        };
        let len = u32_at(answer, 0)? as usize;
        if u16_at(answer, 4)? == NLMSG_ERROR || len > answer.len() {
            return None;
        }
        let id = NLMSG_HDR_BYTES + 4;
        let port = |at: usize| {
            answer
                .get(at..at + 2)
                .map(|s| u16::from_be_bytes([s[0], s[1]]))
        };
        if (port(id)?, port(id + 2)?) != ports {
            return None;
        }
        let mut at = NLMSG_HDR_BYTES + DIAG_MSG_BYTES;
        while at + 4 <= len {
            let attr_len = usize::from(u16_at(answer, at)?);
            if attr_len < 4 || at + attr_len > len {
                return None;
            }
            if u16_at(answer, at + 2)? == INET_DIAG_INFO {
                let info = &answer[at + 4..at + attr_len];
                let u64_at = |off: usize| {
                    info.get(off..off + 8)
                        .map(|s| u64::from_ne_bytes(s.try_into().expect("8 bytes")))
                };
                return Some(KernelTcpCounters {
                    segs_out: u64::from(u32_at(info, SEGS_OUT_AT)?),
                    segs_in: u64::from(u32_at(info, SEGS_IN_AT)?),
                    bytes_received: u64_at(BYTES_RECEIVED_AT)?,
                });
            }
            at += attr_len.next_multiple_of(4);
        }
        None
    }

    pub(super) fn query(
        local: SocketAddr,
        remote: SocketAddr,
    ) -> io::Result<Option<KernelTcpCounters>> {
        let socket = Socket::new(
            Domain::from(AF_NETLINK),
            Type::DGRAM,
            Some(Protocol::from(NETLINK_SOCK_DIAG)),
        )?;
        socket.set_read_timeout(Some(Duration::from_secs(1)))?;
        // Unconnected, a netlink socket's datagrams go to the kernel.
        socket.send(&request(local, remote))?;
        let mut answer = vec![0u8; 8192];
        let n = (&socket).read(&mut answer)?;
        Ok(parse(&answer[..n], (local.port(), remote.port())))
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn a_receivers_counters_are_its_own() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let data = vec![7u8; 300_000];
        let writer = std::thread::spawn(move || {
            client.write_all(&data).unwrap();
            client
        });
        let mut got = vec![0u8; 300_000];
        server.read_exact(&mut got).unwrap();
        let client = writer.join().unwrap();
        let c = counters(server.local_addr().unwrap(), server.peer_addr().unwrap())
            .expect("the kernel answers for its own socket");
        assert_eq!(c.bytes_received, 300_000);
        // At least its SYN-ACK and an ACK; far fewer than the data
        // segments it received only if it acknowledges in groups.
        assert!(c.segs_out >= 2 && c.segs_in >= 2, "{c:?}");
        // The sending side received nothing but ACKs.
        let s = counters(client.local_addr().unwrap(), client.peer_addr().unwrap()).unwrap();
        assert_eq!(s.bytes_received, 0);
        assert!(s.segs_out >= c.segs_in - 1, "{s:?} against {c:?}");
        // No such socket: unknown, not zero.
        let nowhere: SocketAddr = "127.0.0.1:9".parse().unwrap();
        assert_eq!(counters(server.local_addr().unwrap(), nowhere), None);
    }

    #[test]
    fn answers_that_do_not_carry_the_info_are_unknown() {
        let req = linux::request(
            "127.0.0.1:5201".parse().unwrap(),
            "127.0.0.1:40000".parse().unwrap(),
        );
        assert_eq!(req.len(), 72);
        // An error answer, a truncated one, one without attributes.
        let mut err = vec![0u8; 36];
        err[0..4].copy_from_slice(&36u32.to_ne_bytes());
        err[4..6].copy_from_slice(&2u16.to_ne_bytes());
        let ports = (5201, 40000);
        assert_eq!(linux::parse(&err, ports), None);
        assert_eq!(linux::parse(&[1, 2, 3], ports), None);
        let mut bare = vec![0u8; 88];
        bare[0..4].copy_from_slice(&88u32.to_ne_bytes());
        bare[4..6].copy_from_slice(&20u16.to_ne_bytes());
        bare[20..22].copy_from_slice(&5201u16.to_be_bytes());
        bare[22..24].copy_from_slice(&40000u16.to_be_bytes());
        assert_eq!(linux::parse(&bare, ports), None);
        // An attribute whose length runs past the message.
        let mut bad = bare.clone();
        bad.extend_from_slice(&[200, 0, 2, 0]);
        let n = bad.len() as u32;
        bad[0..4].copy_from_slice(&n.to_ne_bytes());
        assert_eq!(linux::parse(&bad, ports), None);
        // A whole answer with the info, and the same for other ports.
        let mut good = bare.clone();
        let mut info = vec![0u8; 160];
        info[128..136].copy_from_slice(&1234u64.to_ne_bytes());
        info[136..140].copy_from_slice(&5u32.to_ne_bytes());
        info[140..144].copy_from_slice(&9u32.to_ne_bytes());
        good.extend_from_slice(&164u16.to_ne_bytes());
        good.extend_from_slice(&2u16.to_ne_bytes());
        good.extend_from_slice(&info);
        let n = good.len() as u32;
        good[0..4].copy_from_slice(&n.to_ne_bytes());
        let want = KernelTcpCounters {
            segs_out: 5,
            segs_in: 9,
            bytes_received: 1234,
        };
        assert_eq!(linux::parse(&good, ports), Some(want));
        assert_eq!(linux::parse(&good, (5201, 0)), None, "a listener's answer");
    }
}
