//! Command-line inputs: capture files as given, and directories searched (recursively, sorted) for
//! capture files by name.

use std::path::{Path, PathBuf};

/// File names taken from a directory: pcap, pcapng, cap, and their gzip-compressed forms.
pub fn is_capture_name(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    [".pcap", ".pcapng", ".cap"]
        .iter()
        .any(|e| name.ends_with(e))
}

/// Files stay as given (a non-capture name is still analysed, and fails clearly); each directory
/// is replaced by the capture files below it, sorted.
pub fn expand(inputs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in inputs {
        if p.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found);
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    out
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(&p, found),
            Ok(t) if t.is_file() && is_capture_name(&p) => found.push(p),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_directories() {
        assert!(is_capture_name(Path::new("a/b.pcap")));
        assert!(is_capture_name(Path::new("x.PCAPNG")));
        assert!(is_capture_name(Path::new("multi.pcap.gz")));
        assert!(!is_capture_name(Path::new("notes.txt")));
        assert!(!is_capture_name(Path::new("log.gz")));
        let dir = std::env::temp_dir().join(format!("sctp-inputs-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        for f in ["b.pcap", "sub/a.pcapng", "readme.md"] {
            std::fs::write(dir.join(f), b"x").unwrap();
        }
        let got = expand(&[dir.clone(), PathBuf::from("given.txt")]);
        assert_eq!(
            got,
            vec![
                dir.join("b.pcap"),
                dir.join("sub/a.pcapng"),
                PathBuf::from("given.txt")
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
