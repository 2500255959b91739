//! Encrypted traffic the reading stage counts because SCTP may run inside it, out of sight:
//! DTLS over UDP (WebRTC data channels, RFC 8261) and IPsec ESP over IP or UDP (a security
//! gateway's tunnel, as NDS/IP puts S1-MME, N2 and Diameter links, 3GPP TS 33.210). Each is told
//! in one capture warning, so that a capture without associations says why.

use std::net::{IpAddr, SocketAddr};

use crate::decimal::plural;
use crate::net;

/// IP protocol number of ESP (RFC 4303 2, IANA).
pub(crate) const IPPROTO_ESP: u8 = 50;
/// UDP port of ESP in UDP (RFC 3948 2.2) and of IKE behind a NAT (RFC 7296 2.23).
const NAT_T_PORT: u16 = 4500;
/// Flows (or security associations) told apart per capture: memory stays bounded on a capture
/// of many.
const MAX_FLOWS: usize = 64;

/// Packets of one kind: how many, the first one (frame and what the warning names of it) and the
/// distinct flows, up to `MAX_FLOWS`.
#[derive(Debug, Clone)]
pub(crate) struct Seen<F, K> {
    pub packets: u64,
    pub first: Option<(u64, F)>,
    flows: Vec<K>,
    /// More flows than `MAX_FLOWS` were seen.
    pub more_flows: bool,
}

impl<F, K> Default for Seen<F, K> {
    fn default() -> Self {
        Seen {
            packets: 0,
            first: None,
            flows: Vec::new(),
            more_flows: false,
        }
    }
}

impl<F, K: PartialEq> Seen<F, K> {
    fn packet(&mut self, frame: u64, first: F, flow: K) {
        self.packets += 1;
        if self.first.is_none() {
            self.first = Some((frame, first));
        }
        if !self.flows.contains(&flow) {
            if self.flows.len() < MAX_FLOWS {
                self.flows.push(flow);
            } else {
                self.more_flows = true;
            }
        }
    }

    /// "3 flows", "more than 64 flows".
    fn flows_text(&self, one: &str, many: &str) -> String {
        if self.more_flows {
            format!("more than {} {many}", self.flows.len())
        } else {
            plural(self.flows.len() as u64, one, many)
        }
    }
}

/// UDP packets carrying DTLS records: the first one's source and destination; flows are address
/// and port pairs, either direction.
pub(crate) type DtlsSeen = Seen<(SocketAddr, SocketAddr), (SocketAddr, SocketAddr)>;

/// ESP packets: the first one's source, destination, SPI and whether it came in UDP; a flow is a
/// security association (destination and SPI, RFC 4301 4.1).
pub(crate) type EspSeen = Seen<(IpAddr, IpAddr, u32, bool), (IpAddr, u32)>;

/// The Security Parameters Index that starts an ESP header (RFC 4303 2.1), if there are its 4
/// bytes.
fn spi(esp: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(esp.get(..4)?.try_into().ok()?))
}

/// What the reading stage counts of encrypted traffic.
#[derive(Debug, Clone, Default)]
pub(crate) struct Encrypted {
    pub dtls: DtlsSeen,
    pub esp: EspSeen,
}

impl Encrypted {
    /// A UDP datagram that is not SCTP's: DTLS records (`net::transport::dtls_record`), or ESP in
    /// UDP on port 4500 (RFC 3948 2.2: an SPI, never 0; four zero bytes mark IKE, one 0xFF byte
    /// a NAT-keepalive, 2.3).
    /// `cut`: the capture cut the datagram.
    pub fn udp(
        &mut self,
        frame: u64,
        (src, dst): (IpAddr, IpAddr),
        (sp, dp): (u16, u16),
        payload: &[u8],
        cut: bool,
    ) {
        if sp == NAT_T_PORT || dp == NAT_T_PORT {
            if let Some(spi) = spi(payload).filter(|&s| s != 0 && payload.len() >= 8) {
                self.esp.packet(frame, (src, dst, spi, true), (dst, spi));
            }
            return;
        }
        if net::transport::dtls_record(payload, cut) {
            let (src, dst) = (SocketAddr::new(src, sp), SocketAddr::new(dst, dp));
            let flow = if src <= dst { (src, dst) } else { (dst, src) };
            self.dtls.packet(frame, (src, dst), flow);
        }
    }

    /// An ESP packet (IP protocol 50): its SPI is the first 4 bytes (RFC 4303 2.1).
    pub fn esp(&mut self, frame: u64, src: IpAddr, dst: IpAddr, payload: &[u8]) {
        let spi = spi(payload).unwrap_or(0);
        self.esp.packet(frame, (src, dst, spi, false), (dst, spi));
    }

    /// The capture warnings: one for DTLS, one for ESP, when seen.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some((frame, (src, dst))) = self.dtls.first {
            let packets = plural(self.dtls.packets, "UDP packet", "UDP packets");
            let flows = self.dtls.flows_text("flow", "flows");
            out.push(format!("{packets} in {flows} carry DTLS records (RFC 6347), the first in frame {frame} ({src} -> {dst}): WebRTC data channels run their SCTP inside DTLS (RFC 8261), encrypted; if these are such channels, their associations cannot be analysed from this capture: capture the SCTP before encryption, or run it over UDP without DTLS (--sctp-udp-port)"));
        }
        if let Some((frame, (src, dst, spi, udp))) = self.esp.first {
            let packets = plural(self.esp.packets, "IPsec ESP packet", "IPsec ESP packets");
            let sas = self
                .esp
                .flows_text("security association", "security associations");
            let how = if udp { ", in UDP port 4500" } else { "" };
            out.push(format!("{packets} (RFC 4303) in {sas}, the first in frame {frame} ({src} -> {dst}, SPI 0x{spi:08x}{how}): what they carry is encrypted; if SCTP runs inside (an S1-MME, N2 or Diameter link protected by NDS/IP, 3GPP TS 33.210), its associations cannot be analysed from this capture: capture on the inner side of the security gateway, or before encryption"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn esp_is_counted_by_security_association_over_ip_and_udp() {
        let mut e = Encrypted::default();
        let (a, b) = (addr("192.0.2.1"), addr("192.0.2.2"));
        // SPI then sequence number (RFC 4303 2.1).
        e.esp(7, a, b, &[0x10, 0, 0xA0, 0x01, 0, 0, 0, 1, 0xAA]);
        e.esp(8, b, a, &[0x20, 0, 0xB0, 0x02, 0, 0, 0, 1, 0xBB]);
        e.esp(9, a, b, &[0x10, 0, 0xA0, 0x01, 0, 0, 0, 2, 0xAA]);
        assert_eq!(e.esp.packets, 3);
        let w = e.warnings();
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with("3 IPsec ESP packets (RFC 4303) in 2 security associations, the first in frame 7 (192.0.2.1 -> 192.0.2.2, SPI 0x1000a001): what they carry is encrypted"),
            "{}",
            w[0]
        );
        // In UDP port 4500: ESP, but not IKE (non-ESP marker) nor a NAT-keepalive.
        let mut e = Encrypted::default();
        let ip = (a, b);
        e.udp(
            1,
            ip,
            (4500, 4500),
            &[0, 0, 0, 0, 0x21, 0x20, 0x22, 0x08],
            false,
        );
        e.udp(2, ip, (4500, 4500), &[0xFF], false);
        assert!(e.warnings().is_empty());
        e.udp(
            3,
            ip,
            (4500, 4500),
            &[0x10, 0, 0xA0, 0x01, 0, 0, 0, 1],
            false,
        );
        assert!(e.warnings()[0].contains("SPI 0x1000a001, in UDP port 4500"));
        // Other UDP is neither.
        e.udp(
            4,
            ip,
            (5060, 5060),
            &[0x10, 0, 0xA0, 0x01, 0, 0, 0, 1],
            false,
        );
        assert_eq!(e.esp.packets, 1);
    }

    #[test]
    fn flows_are_bounded() {
        let mut e = Encrypted::default();
        for spi in 1..=(MAX_FLOWS as u32 + 5) {
            e.esp(
                u64::from(spi),
                addr("10.0.0.1"),
                addr("10.0.0.2"),
                &spi.to_be_bytes(),
            );
        }
        assert!(e.warnings()[0].contains("in more than 64 security associations"));
    }
}
