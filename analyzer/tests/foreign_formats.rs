//! Captures in other tools' formats (written by Wireshark's editcap, `sample-traces/foreign/`)
//! are refused with an error that names the format and how to convert it, never read as
//! garbage; text is told as text. Where capinfos is installed, it reads the same files as the
//! format the truth names (so the files are what they claim).

use crate::common;

use analyzer::capture::{CaptureError, CaptureReader};

#[test]
fn other_tools_captures_are_named_with_the_conversion() {
    let (dir, truth) = common::folder_truth("foreign");
    let rows = truth.as_array().unwrap();
    assert_eq!(rows.len(), 10);
    let capinfos = std::process::Command::new("capinfos")
        .arg("-h")
        .output()
        .is_ok();
    for row in rows {
        let file = dir.join(row["file"].as_str().unwrap());
        let name = row["analyzer_names"].as_str().unwrap();
        let e = CaptureReader::open(&file)
            .err()
            .unwrap_or_else(|| panic!("{}: read as a capture", file.display()));
        assert!(
            matches!(e, CaptureError::OtherFormat { .. }),
            "{}: {e}",
            file.display()
        );
        let msg = e.to_string();
        assert!(msg.starts_with("bad magic 0x"), "{msg}");
        assert!(msg.contains(&format!("but a {name} capture")), "{msg}");
        assert!(msg.contains("editcap -F pcapng"), "{msg}");
        assert_eq!(e.offset(), Some(0));
        if capinfos {
            let out = std::process::Command::new("capinfos")
                .args(["-t", "-c"])
                .arg(&file)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            let want = row["capinfos_file_type"].as_str().unwrap();
            assert!(
                text.contains(want),
                "{}: capinfos says {text}",
                file.display()
            );
            assert!(text.contains("Number of packets:   5"), "{text}");
        }
    }
}

/// The error of a capture stream holding `text`, checked to be the text one.
fn text_error(text: &str) -> String {
    let e = CaptureReader::from_read(Box::new(std::io::Cursor::new(text.to_owned().into_bytes())))
        .err()
        .unwrap();
    assert!(matches!(e, CaptureError::Text { .. }), "{e}");
    assert_eq!(e.offset(), Some(0));
    e.to_string()
}

#[test]
fn a_text_export_is_told_as_text() {
    let text = "Frame 1: 98 bytes on wire (784 bits), 98 bytes captured (784 bits)\n    Encapsulation type: Ethernet (1)\n";
    assert_eq!(
        text_error(text),
        "bad magic 0x4672616d at offset 0: not a pcap or pcapng file but text (it starts \"Frame 1: 98 bytes on wire (784 bits), 98 bytes captured (784...\"): give the capture file itself, not a text export of it"
    );
}

#[test]
fn a_git_lfs_pointer_is_told_with_how_to_fetch_the_capture() {
    // What a clone without git-lfs holds in place of a capture tracked by LFS (spec v1).
    let pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:0e4f1c2d5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d\nsize 919240\n";
    assert_eq!(
        text_error(pointer),
        "bad magic 0x76657273 at offset 0: not a pcap or pcapng file but text (it starts \"version https://git-lfs.github.com/spec/v1\"): a Git LFS pointer, not the capture it stands for: fetch the capture (git lfs pull) and analyse that"
    );
}
