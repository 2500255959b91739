//! Minimal transport-layer helpers (UDP for SCTP-over-UDP encapsulation, TCP ports).

/// UDP (RFC 768): (source port, destination port, payload). The payload is cut to the UDP
/// Length field (header included) and to what was captured. A Length of 0 (RFC 2675 jumbogram
/// over IPv6, or a checksum-offload capture) means "the rest of the IP payload". None when the
/// 8-byte header is not there or the Length is below 8.
pub fn udp(payload: &[u8]) -> Option<(u16, u16, &[u8])> {
    let h = payload.get(..8)?;
    let src = u16::from_be_bytes([h[0], h[1]]);
    let dst = u16::from_be_bytes([h[2], h[3]]);
    let len = usize::from(u16::from_be_bytes([h[4], h[5]]));
    let end = match len {
        0 => payload.len(),
        1..=7 => return None,
        n => n.min(payload.len()),
    };
    Some((src, dst, &payload[8..end]))
}

/// TCP (RFC 9293 3.1): (source port, destination port), the first four header bytes.
pub fn tcp_ports(payload: &[u8]) -> Option<(u16, u16)> {
    let h = payload.get(..4)?;
    Some((
        u16::from_be_bytes([h[0], h[1]]),
        u16::from_be_bytes([h[2], h[3]]),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udp_cut_to_length() {
        let mut p = vec![0x26, 0xab, 0x13, 0x88, 0, 12, 0, 0, 1, 2, 3, 4, 0, 0];
        assert_eq!(udp(&p), Some((9899, 5000, &[1u8, 2, 3, 4][..])));
        // Captured less than announced.
        assert_eq!(udp(&p[..10]), Some((9899, 5000, &[1u8, 2][..])));
        p[5] = 0;
        assert_eq!(udp(&p).map(|u| u.2.len()), Some(6));
        p[5] = 7;
        assert_eq!(udp(&p), None);
        assert_eq!(udp(&p[..7]), None);
    }

    #[test]
    fn tcp_ports_read() {
        assert_eq!(tcp_ports(&[0, 80, 0x1f, 0x90]), Some((80, 8080)));
        assert_eq!(tcp_ports(&[0, 80, 0x1f]), None);
    }
}
