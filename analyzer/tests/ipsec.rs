//! SCTP inside IPsec ESP (`sample-traces/ipsec/`: fmt_sender.pcap's association encrypted by
//! scapy's ESP in tunnel mode, over IP and in UDP port 4500): no association can be seen, and
//! the capture's warning counts the ESP packets and security associations as the truth does.
//! Where tshark is installed, it decrypts them with the truth's keys and finds the SCTP inside,
//! so the warning's "if SCTP runs inside" is the case here.

use crate::common;

#[test]
fn esp_over_ip_and_udp_is_counted_and_named() {
    let (dir, truth) = common::folder_truth("ipsec");
    let caps = truth["captures"].as_array().unwrap();
    assert_eq!(caps.len(), 2);
    for t in caps {
        let file = t["file"].as_str().unwrap();
        let (c, _) = common::analyze(&dir.join(file));
        assert_eq!(c.sctp_packets, 0, "{file}");
        assert!(c.associations.is_empty(), "{file}");
        let esp: Vec<&String> = c.warnings.iter().filter(|w| w.contains("ESP")).collect();
        assert_eq!(esp.len(), 1, "{file}: {:?}", c.warnings);
        let (n, sas, first) = (
            t["esp_packets"].as_u64().unwrap(),
            t["security_associations"].as_u64().unwrap(),
            t["first_esp_frame"].as_u64().unwrap(),
        );
        let spi = t["spis"][0].as_str().unwrap().trim_start_matches("0x");
        let udp = if t["nat_t"].as_bool().unwrap() {
            ", in UDP port 4500"
        } else {
            ""
        };
        let want = format!(
            "{n} IPsec ESP packets (RFC 4303) in {sas} security associations, the first in frame {first} (192.0.2.1 -> 192.0.2.2, SPI 0x{spi:0>8}{udp}): what they carry is encrypted"
        );
        assert!(esp[0].starts_with(&want), "{file}: {}", esp[0]);
        if let Some(tshark) = common::tshark() {
            let key = |src: &str, dst: &str, spi: &str| {
                format!(
                    "uat:esp_sa:\"IPv4\",\"{src}\",\"{dst}\",\"{spi}\",\"AES-CBC [RFC3602]\",\"{}\",\"HMAC-SHA-256-128 [RFC4868]\",\"{}\"",
                    truth["encryption_key"].as_str().unwrap(),
                    truth["authentication_key"].as_str().unwrap()
                )
            };
            let spis = t["spis"].as_array().unwrap();
            let out = std::process::Command::new(tshark)
                .arg("-r")
                .arg(dir.join(file))
                .args(["-o", "esp.enable_encryption_decode:TRUE", "-o"])
                .arg(key("192.0.2.1", "192.0.2.2", spis[0].as_str().unwrap()))
                .arg("-o")
                .arg(key("192.0.2.2", "192.0.2.1", spis[1].as_str().unwrap()))
                .args(["-Y", "esp && sctp", "-T", "fields", "-e", "frame.number"])
                .output()
                .unwrap();
            let decrypted = String::from_utf8_lossy(&out.stdout).lines().count() as u64;
            assert_eq!(
                decrypted, n,
                "{file}: tshark decrypted {decrypted} SCTP packets"
            );
        }
    }
}
