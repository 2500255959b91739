//! A real VXLAN capture (`sample-traces/tunnel`, made by `generate-vxlan.sh`: usrsctp over the
//! Linux kernel's VXLAN device, the underlay and the overlay captured at once): the underlay's
//! analysis, every packet taken out of its tunnel, is the overlay's.

use crate::common;

use serde_json::Value;

fn report(name: &str) -> Value {
    let (_, r) = common::analyze(&common::samples_dir().join("tunnel").join(name));
    serde_json::to_value(&r).unwrap()
}

/// `v` without the keys of times relative to the capture's first frame (`*_s`): the underlay
/// capture starts with frames the overlay has not (ARP, neighbour discovery).
fn untimed(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !k.ends_with("_s"))
                .map(|(k, x)| (k.clone(), untimed(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(untimed).collect()),
        x => x.clone(),
    }
}

/// An association's figures that do not depend on which interface's clock stamped the packets.
fn shape(a: &Value) -> Value {
    let dirs: Vec<Value> = a["directions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            serde_json::json!({
                "sender": d["sender"],
                "vantage": d["vantage"],
                "data_chunks": d["data_chunks"],
                "data_packets": d["data_packets"],
                "retransmissions": d["retransmissions"],
                "timeouts": d["timeouts"].as_array().map(|t| t.len()),
                "streams": untimed(&d["streams"]),
                "sack_delay_n": d["sack_delay_ms"]["n"],
                "sack_every": d["sack_every"],
            })
        })
        .collect();
    let paths: Vec<Value> = a["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            serde_json::json!({
                "src": p["src"], "dst": p["dst"], "packets": p["packets"],
                "data_chunks": p["data_chunks"], "rtt_n": p["rtt_ms"]["n"],
                "hb_rtt_n": p["hb_rtt_ms"]["n"],
            })
        })
        .collect();
    serde_json::json!({
        "endpoints": a["endpoints"],
        "chunks": a["chunks"],
        "end_kind": a["end"]["kind"],
        "end_by": a["end"]["by"],
        "handshake_seen": a["handshake_seen"],
        "upper_layer": a["upper_layer"],
        "streams_negotiated": a["streams_negotiated"],
        "events": a["events"].as_array().map(|e| e.iter().map(|x| x["kind"].clone()).collect::<Vec<_>>()),
        "paths": paths,
        "directions": dirs,
    })
}

#[test]
fn a_vxlan_underlay_reads_as_its_overlay() {
    let under = report("vxlan_underlay.pcap");
    let over = report("vxlan_overlay.pcap");
    // Every SCTP packet of the overlay was found inside the underlay's UDP datagrams.
    assert_eq!(under["sctp_packets"], over["sctp_packets"]);
    assert!(under["sctp_packets"].as_u64().unwrap() > 200);
    let (ua, oa) = (
        under["associations"].as_array().unwrap(),
        over["associations"].as_array().unwrap(),
    );
    assert_eq!(ua.len(), 1);
    assert_eq!(ua.len(), oa.len());
    for (u, o) in ua.iter().zip(oa) {
        assert_eq!(shape(u), shape(o));
        // The same timing within the two interfaces' capture stamps (tens of microseconds).
        for (du, d_o) in u["directions"]
            .as_array()
            .unwrap()
            .iter()
            .zip(o["directions"].as_array().unwrap())
        {
            let (x, y) = (du["base_rtt_ms"].as_f64(), d_o["base_rtt_ms"].as_f64());
            if let (Some(x), Some(y)) = (x, y) {
                assert!((x - y).abs() < 0.5, "base RTT {x} against {y}");
            }
        }
    }
    // The user is told the packets came out of a tunnel; the overlay has nothing to tell.
    let warns = under["warnings"].to_string();
    assert!(warns.contains("VXLAN"), "{warns}");
    // And which tunnel: VNI 42 between the underlay's addresses, both ways.
    assert!(
        warns.contains("VXLAN VNI 42 192.0.2.1 -> 192.0.2.2"),
        "{warns}"
    );
    assert!(
        warns.contains("VXLAN VNI 42 192.0.2.2 -> 192.0.2.1"),
        "{warns}"
    );
    assert!(!over["warnings"].to_string().contains("tunnel"));
}

#[test]
fn the_vxlan_underlay_chunk_totals_are_tsharks() {
    if common::tshark().is_none() {
        eprintln!("tshark absent: skipped");
        return;
    }
    let path = common::samples_dir().join("tunnel/vxlan_underlay.pcap");
    let (want, _) = crate::public_tshark::tshark_counts(&path);
    let r = report("vxlan_underlay.pcap");
    let got: std::collections::BTreeMap<String, u64> = r["associations"][0]["chunks"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect();
    assert_eq!(got, want);
}
