//! IP addresses as report text: the same text as `Display` (dotted quad, RFC 5952 for IPv6),
//! IPv4 written digit by digit (reports name every path, endpoint, timeout and failover by
//! address: through `Display`'s formatting machinery that was 2.6% of the pass).

use std::net::{IpAddr, Ipv4Addr};

/// `a.to_string()`, faster for IPv4.
pub fn ip_text(a: &IpAddr) -> String {
    match a {
        IpAddr::V4(v4) => {
            let mut buf = [0u8; 15];
            v4_text(v4, &mut buf).to_string()
        }
        IpAddr::V6(_) => a.to_string(),
    }
}

/// An address written into a text being formatted (`format!("{}", Ip(a))`): `ip_text` without a
/// string of its own.
#[derive(Debug, Clone, Copy)]
pub struct Ip(pub IpAddr);

impl std::fmt::Display for Ip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            IpAddr::V4(v4) => f.write_str(v4_text(v4, &mut [0u8; 15])),
            IpAddr::V6(_) => std::fmt::Display::fmt(&self.0, f),
        }
    }
}

/// The dotted quad of `v4`, written digit by digit into `buf`.
fn v4_text<'b>(v4: &Ipv4Addr, buf: &'b mut [u8; 15]) -> &'b str {
    let mut n = 0;
    for (i, o) in v4.octets().into_iter().enumerate() {
        if i > 0 {
            buf[n] = b'.';
            n += 1;
        }
        if o >= 100 {
            buf[n] = b'0' + o / 100;
            n += 1;
        }
        if o >= 10 {
            buf[n] = b'0' + o / 10 % 10;
            n += 1;
        }
        buf[n] = b'0' + o % 10;
        n += 1;
    }
    // Digits and dots only: ASCII.
    std::str::from_utf8(&buf[..n]).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_text_as_display() {
        for a in [
            "0.0.0.0",
            "10.201.1.2",
            "255.255.255.255",
            "100.9.10.99",
            "1.20.203.4",
            "::1",
            "2001:db8::8:800:200c:417a",
            "::ffff:10.0.0.1",
        ] {
            let ip: IpAddr = a.parse().unwrap();
            assert_eq!(ip_text(&ip), ip.to_string(), "{a}");
            assert_eq!(Ip(ip).to_string(), ip.to_string(), "{a}");
        }
        for o in 0..=255u8 {
            let ip = IpAddr::from([o, 255 - o, o / 3, o.wrapping_mul(7)]);
            assert_eq!(ip_text(&ip), ip.to_string());
            assert_eq!(Ip(ip).to_string(), ip.to_string());
        }
    }
}
