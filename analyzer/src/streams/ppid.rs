//! SCTP Payload Protocol Identifiers by name, and the well-known SCTP ports of the upper layers:
//! the one table of PPIDs and ports the analyzer uses.
//!
//! Source of the PPIDs: IANA, "Stream Control Transmission Protocol (SCTP) Parameters", registry
//! "SCTP Payload Protocol Identifiers" (<https://www.iana.org/assignments/sctp-parameters/>),
//! values 1-73 as Wireshark's `epan/sctpppids.c` copies them (IANA as of 2021-02-22; Wireshark
//! 4.0 names the same numbers) and as the 3GPP specifications cite them (TS 38.412 7: NGAP 60,
//! NGAP over DTLS 66; TS 38.472 7: F1AP 62, F1AP over DTLS 68). 26 is unassigned; 0 means "not
//! specified by the upper layer" (RFC 9260 3.3.1).
//!
//! Source of the ports: the IANA "Service Name and Transport Protocol Port Number" registry
//! (sctp entries) and the specifications named per entry. Only ports that name one signalling
//! protocol are listed (not echo / discard and the like, which test tools borrow).

/// One registered PPID: its registry name, the protocol family an association carrying it runs
/// (the `upper_layer` name), and where the protocol defines its use over SCTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ppid {
    pub ppid: u32,
    pub name: &'static str,
    pub protocol: &'static str,
    pub reference: &'static str,
}

const fn p(ppid: u32, name: &'static str, protocol: &'static str, reference: &'static str) -> Ppid {
    Ppid {
        ppid,
        name,
        protocol,
        reference,
    }
}

/// The IANA registry, indexed by value (entry `i` has `ppid == i`; 0 and 26 are placeholders).
const REGISTRY: [Ppid; 74] = [
    p(0, "", "", "RFC 9260 3.3.1"),
    p(1, "IUA", "IUA", "RFC 4233"),
    p(2, "M2UA", "M2UA", "RFC 3331"),
    p(3, "M3UA", "M3UA", "RFC 4666"),
    p(4, "SUA", "SUA", "RFC 3868"),
    p(5, "M2PA", "M2PA", "RFC 4165"),
    p(6, "V5UA", "V5UA", "RFC 3807"),
    p(7, "H.248", "H.248", "ITU-T H.248"),
    p(8, "BICC", "BICC", "ITU-T Q.1902.1 / Q.2150.3"),
    p(9, "TALI", "TALI", "RFC 3094"),
    p(10, "DUA", "DUA", "RFC 4129"),
    p(11, "ASAP", "ASAP", "RFC 5352"),
    p(12, "ENRP", "ENRP", "RFC 5353"),
    p(13, "H.323", "H.323", "ITU-T H.323"),
    p(14, "Q.IPC", "Q.IPC", "ITU-T Q.2631.1"),
    p(15, "SIMCO", "SIMCO", "draft-kiesel-midcom-simco-sctp"),
    p(16, "DDP Segment Chunk", "DDP", "RFC 5043"),
    p(17, "DDP Stream Session Control", "DDP", "RFC 5043"),
    p(18, "S1AP", "S1AP", "3GPP TS 36.412"),
    p(19, "RUA", "RUA", "3GPP TS 25.468"),
    p(20, "HNBAP", "HNBAP", "3GPP TS 25.469"),
    p(21, "ForCES-HP", "ForCES", "RFC 5811"),
    p(22, "ForCES-MP", "ForCES", "RFC 5811"),
    p(23, "ForCES-LP", "ForCES", "RFC 5811"),
    p(24, "SBc-AP", "SBc-AP", "3GPP TS 29.168"),
    p(25, "NBAP", "NBAP", "3GPP TS 25.433"),
    p(26, "", "", "unassigned"),
    p(27, "X2AP", "X2AP", "3GPP TS 36.422"),
    p(28, "IRCP", "IRCP", "Inter Router Capability Protocol"),
    p(29, "LCS-AP", "LCS-AP", "3GPP TS 29.171"),
    p(30, "MPICH2", "MPICH2", "MPICH2"),
    p(31, "SABP", "SABP", "3GPP TS 25.419"),
    p(32, "Fractal Generator Protocol", "FGP", "RSerPool demo"),
    p(33, "Ping Pong Protocol", "PPP", "RSerPool demo"),
    p(34, "CalcApp", "CalcApp", "RSerPool demo"),
    p(35, "Scripting Service Protocol", "SSP", "RSerPool demo"),
    p(36, "NetPerfMeter Control", "NetPerfMeter", "NetPerfMeter"),
    p(37, "NetPerfMeter Data", "NetPerfMeter", "NetPerfMeter"),
    p(38, "Echo", "Echo", "RFC 862 over SCTP"),
    p(39, "Discard", "Discard", "RFC 863 over SCTP"),
    p(40, "Daytime", "Daytime", "RFC 867 over SCTP"),
    p(41, "Character Generator", "Chargen", "RFC 864 over SCTP"),
    p(42, "3GPP RNA", "RNA", "3GPP TS 25.471"),
    p(43, "M2AP", "M2AP", "3GPP TS 36.443"),
    p(44, "M3AP", "M3AP", "3GPP TS 36.444"),
    p(45, "SSH over SCTP", "SSH", "RFC 4253 over SCTP"),
    p(46, "Diameter", "Diameter", "RFC 6733"),
    p(47, "Diameter-DTLS", "Diameter", "RFC 6733"),
    p(48, "R14P", "R14P", "R14P (BER-encoded ASN.1)"),
    p(49, "GDT", "GDT", "Generic Data Transfer"),
    p(50, "WebRTC DCEP", "WebRTC", "RFC 8832"),
    p(51, "WebRTC String", "WebRTC", "RFC 8831"),
    p(
        52,
        "WebRTC Binary Partial (deprecated)",
        "WebRTC",
        "RFC 8831",
    ),
    p(53, "WebRTC Binary", "WebRTC", "RFC 8831"),
    p(
        54,
        "WebRTC String Partial (deprecated)",
        "WebRTC",
        "RFC 8831",
    ),
    p(55, "3GPP PUA", "PUA", "3GPP"),
    p(56, "WebRTC String Empty", "WebRTC", "RFC 8831"),
    p(57, "WebRTC Binary Empty", "WebRTC", "RFC 8831"),
    p(58, "XwAP", "XwAP", "3GPP TS 36.462"),
    p(59, "Xw-CP", "Xw-CP", "3GPP TS 36.462"),
    p(60, "NGAP", "NGAP", "3GPP TS 38.412"),
    p(61, "XnAP", "XnAP", "3GPP TS 38.422"),
    p(62, "F1AP", "F1AP", "3GPP TS 38.472"),
    p(63, "HTTP/SCTP", "HTTP", "HTTP over SCTP"),
    p(64, "E1AP", "E1AP", "3GPP TS 38.462"),
    p(
        65,
        "ELE2 Lawful Interception",
        "ELE2",
        "ETSI lawful interception",
    ),
    p(66, "NGAP over DTLS", "NGAP", "3GPP TS 38.412"),
    p(67, "XnAP over DTLS", "XnAP", "3GPP TS 38.422"),
    p(68, "F1AP over DTLS", "F1AP", "3GPP TS 38.472"),
    p(69, "E1AP over DTLS", "E1AP", "3GPP TS 38.462"),
    p(70, "E2-CP", "E2AP", "O-RAN E2"),
    p(71, "E2-UP", "E2AP", "O-RAN E2"),
    p(72, "E2-DU", "E2AP", "O-RAN E2"),
    p(73, "W1AP", "W1AP", "3GPP TS 37.472"),
];

/// The registry entry of a PPID; None for 0 (not specified), unassigned and unknown values.
pub fn lookup(ppid: u32) -> Option<&'static Ppid> {
    let e = REGISTRY.get(usize::try_from(ppid).ok()?)?;
    (!e.name.is_empty()).then_some(e)
}

/// The registry name of a PPID ("NGAP", "M3UA", ...); None for 0 and unregistered values.
pub fn name(ppid: u32) -> Option<&'static str> {
    lookup(ppid).map(|e| e.name)
}

/// A well-known SCTP port: the protocol served there and, when that protocol registers a PPID for
/// its traffic, that PPID (its DATA with PPID 0 is then flagged `ppid_missing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Port {
    pub port: u16,
    pub protocol: &'static str,
    pub ppid: Option<u32>,
    pub reference: &'static str,
}

const fn port(
    port: u16,
    protocol: &'static str,
    ppid: Option<u32>,
    reference: &'static str,
) -> Port {
    Port {
        port,
        protocol,
        ppid,
        reference,
    }
}

/// Well-known SCTP ports, sorted by port (binary search).
const PORTS: [Port; 27] = [
    port(80, "HTTP", None, "IANA http/sctp"),
    port(2904, "M2UA", Some(2), "RFC 3331"),
    port(2905, "M3UA", Some(3), "RFC 4666"),
    port(2944, "H.248", Some(7), "IANA megaco-h248/sctp"),
    port(2945, "H.248", Some(7), "IANA h248-binary/sctp"),
    port(3565, "M2PA", Some(5), "RFC 4165"),
    port(3863, "ASAP", Some(11), "RFC 5352"),
    port(3868, "Diameter", Some(46), "RFC 6733"),
    port(5000, "WebRTC", None, "RFC 8841 default sctp-port"),
    port(5060, "SIP", None, "RFC 4168"),
    port(5061, "SIP", None, "RFC 4168 (TLS)"),
    port(5675, "V5UA", Some(6), "RFC 3807"),
    port(5868, "Diameter", Some(47), "RFC 6733 (DTLS)"),
    port(6704, "ForCES", Some(21), "RFC 5811 (high priority)"),
    port(6705, "ForCES", Some(22), "RFC 5811 (medium priority)"),
    port(6706, "ForCES", Some(23), "RFC 5811 (low priority)"),
    port(9900, "IUA", Some(1), "RFC 4233"),
    port(9901, "ENRP", Some(12), "RFC 5353"),
    port(14001, "SUA", Some(4), "RFC 3868"),
    port(29118, "SGsAP", None, "3GPP TS 29.118"),
    port(29168, "SBc-AP", Some(24), "3GPP TS 29.168"),
    port(36412, "S1AP", Some(18), "3GPP TS 36.412"),
    port(36422, "X2AP", Some(27), "3GPP TS 36.422"),
    port(38412, "NGAP", Some(60), "3GPP TS 38.412"),
    port(38422, "XnAP", Some(61), "3GPP TS 38.422"),
    port(38462, "E1AP", Some(64), "3GPP TS 38.462"),
    port(38472, "F1AP", Some(62), "3GPP TS 38.472"),
];

/// The well-known port entry, if any. Port 5000 (WebRTC data channels, RFC 8841) names WebRTC only
/// when both ends use it (`both`), being a common default of test tools.
pub fn port_lookup(p: u16) -> Option<&'static Port> {
    let i = PORTS.binary_search_by_key(&p, |e| e.port).ok()?;
    PORTS.get(i)
}

/// The well-known port of an association's two ports: the second (the INIT's receiver when the
/// handshake was captured, usually the server) first. Port 5000 counts only when both ends use
/// it (WebRTC's default on both sides, RFC 8841 5.1; test tools use it on one side).
pub fn assoc_port(ports: [u16; 2]) -> Option<&'static Port> {
    [ports[1], ports[0]]
        .into_iter()
        .filter_map(port_lookup)
        .find(|e| e.port != 5000 || ports[0] == ports[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_is_indexed_by_value_and_names_the_issue_list() {
        for (i, e) in REGISTRY.iter().enumerate() {
            assert_eq!(e.ppid as usize, i);
        }
        let want = [
            (1, "IUA"),
            (2, "M2UA"),
            (3, "M3UA"),
            (4, "SUA"),
            (5, "M2PA"),
            (6, "V5UA"),
            (7, "H.248"),
            (8, "BICC"),
            (18, "S1AP"),
            (19, "RUA"),
            (20, "HNBAP"),
            (21, "ForCES-HP"),
            (23, "ForCES-LP"),
            (24, "SBc-AP"),
            (27, "X2AP"),
            (29, "LCS-AP"),
            (31, "SABP"),
            (43, "M2AP"),
            (44, "M3AP"),
            (46, "Diameter"),
            (47, "Diameter-DTLS"),
            (50, "WebRTC DCEP"),
            (57, "WebRTC Binary Empty"),
            (60, "NGAP"),
            (61, "XnAP"),
            (62, "F1AP"),
            (63, "HTTP/SCTP"),
            (64, "E1AP"),
            (65, "ELE2 Lawful Interception"),
            (66, "NGAP over DTLS"),
            (73, "W1AP"),
        ];
        for (v, n) in want {
            assert_eq!(name(v), Some(n), "PPID {v}");
        }
        assert_eq!(name(0), None);
        assert_eq!(name(26), None);
        assert_eq!(name(74), None);
        assert_eq!(name(u32::MAX), None);
        assert_eq!(lookup(22).map(|e| e.protocol), Some("ForCES"));
        assert_eq!(lookup(47).map(|e| e.protocol), Some("Diameter"));
    }

    #[test]
    fn ports_are_sorted_and_5000_needs_both_ends() {
        assert!(PORTS.windows(2).all(|w| w[0].port < w[1].port));
        assert_eq!(
            assoc_port([40000, 38412]).map(|p| (p.protocol, p.ppid)),
            Some(("NGAP", Some(60)))
        );
        assert_eq!(assoc_port([36412, 55413]).map(|p| p.protocol), Some("S1AP"));
        assert_eq!(assoc_port([5000, 5001]), None);
        assert_eq!(assoc_port([5000, 5000]).map(|p| p.protocol), Some("WebRTC"));
        assert_eq!(assoc_port([5001, 5002]), None);
    }
}
