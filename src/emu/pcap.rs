//! Captures of emulated links: the capture format is
//! [`crate::pcap`]'s; this module names the hosts. Each flow's two ends
//! get IPv4 addresses of their own, so every flow is its own TCP
//! conversation in Wireshark even when all of them use the same ports.

pub use crate::pcap::{PcapWriter, LINKTYPE_RAW, PCAP_MAGIC};
use smoltcp::wire::Ipv4Address;

/// The address of flow `flow`'s client (`server == false`) or server:
/// 10.0.x.y, counting up from 10.0.0.1.
pub fn host_address(flow: u32, server: bool) -> Ipv4Address {
    let n = 0x0a00_0000u32 + 1 + 2 * (flow & 0x7fff) + u32::from(server);
    let [a, b, c, d] = n.to_be_bytes();
    Ipv4Address::new(a, b, c, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_flow_has_two_addresses_of_its_own() {
        assert_eq!(host_address(0, false), Ipv4Address::new(10, 0, 0, 1));
        assert_eq!(host_address(0, true), Ipv4Address::new(10, 0, 0, 2));
        assert_eq!(host_address(200, false), Ipv4Address::new(10, 0, 1, 145));
    }
}
