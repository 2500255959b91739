//! Minimal transport-layer helpers (UDP for SCTP-over-UDP encapsulation, DTLS records, TCP
//! ports).

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

/// Whether a UDP payload starts with a DTLS record (RFC 6347 4.1; DTLS 1.3 sends its handshake in
/// the same plaintext records, RFC 9147 4): content type 20-24 (change_cipher_spec, alert,
/// handshake, application_data, heartbeat), version DTLS 1.0 (0xFEFF) or 1.2 (0xFEFD), then
/// epoch, sequence number and a length that fits the datagram (unless the capture `cut` it).
/// WebRTC data channels carry their SCTP inside these records (RFC 8261), encrypted.
pub fn dtls_record(payload: &[u8], cut: bool) -> bool {
    let Some(h) = payload.get(..13) else {
        return false;
    };
    let len = usize::from(u16::from_be_bytes([h[11], h[12]]));
    matches!(h[0], 20..=24)
        && h[1] == 0xFE
        && matches!(h[2], 0xFF | 0xFD)
        && (cut || 13 + len <= payload.len())
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
    fn dtls_records_are_told_from_other_udp_payloads() {
        // A DTLS 1.2 ClientHello's record header (RFC 6347 4.1): handshake, 0xFEFD, epoch 0,
        // sequence 0, length 3, then the 3 bytes.
        let mut hello = vec![22, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 1, 0, 0];
        assert!(dtls_record(&hello, false));
        // DTLS 1.0 application data.
        hello[0] = 23;
        hello[2] = 0xFF;
        assert!(dtls_record(&hello, false));
        // The length past the datagram: no record, unless the capture cut the datagram.
        hello[12] = 200;
        assert!(!dtls_record(&hello, false));
        assert!(dtls_record(&hello, true));
        hello[12] = 3;
        // TLS's version (0x0303), another content type, too short: not DTLS.
        let mut tls = hello.clone();
        tls[1..3].copy_from_slice(&[3, 3]);
        assert!(!dtls_record(&tls, false));
        let mut other = hello.clone();
        other[0] = 26;
        assert!(!dtls_record(&other, false));
        assert!(!dtls_record(&hello[..12], true));
        // RTP (version 2: 0x80) and a STUN binding request (RFC 8489: 0x0001) are not DTLS
        // (RFC 7983 7: the first byte tells them apart).
        let rtp = [0x80, 0x60, 0, 1, 0, 0, 0, 0, 0xFE, 0xFD, 0, 0, 0, 0];
        assert!(!dtls_record(&rtp, true));
        let stun = [0, 1, 0, 0, 0x21, 0x12, 0xA4, 0x42, 0, 0, 0, 0, 0, 0];
        assert!(!dtls_record(&stun, true));
    }

    #[test]
    fn tcp_ports_read() {
        assert_eq!(tcp_ports(&[0, 80, 0x1f, 0x90]), Some((80, 8080)));
        assert_eq!(tcp_ports(&[0, 80, 0x1f]), None);
    }
}
