//! One source for what the figures mean: the README's "Figures and names" section is what
//! `docs/definitions.toml` gives (`dashboard::help::readme_section`), and every METRICS.md
//! section the file names is a heading of `../shared/METRICS.md` (when that file is present).
//! `UPDATE_DEFINITIONS=1 cargo test --workspace --test pages definitions::` rewrites the README section.

use std::path::{Path, PathBuf};

use dashboard::help::{defs, readme_section, README_BEGIN, README_END};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn readme_section_is_generated_from_the_definitions() {
    let path = root().join("README.md");
    let readme = std::fs::read_to_string(&path).expect("README.md");
    let begin = readme
        .find(README_BEGIN)
        .expect("README has the begin marker")
        + README_BEGIN.len();
    let end = readme.find(README_END).expect("README has the end marker");
    let want = format!("\n{}", readme_section());
    if std::env::var_os("UPDATE_DEFINITIONS").is_some() {
        let new = format!("{}{want}{}", &readme[..begin], &readme[end..]);
        std::fs::write(&path, new).expect("write README.md");
        return;
    }
    let have = &readme[begin..end];
    if have != want {
        let line = have
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(have.lines().count().min(want.lines().count()));
        panic!(
            "README.md's \"Figures and names\" differs from docs/definitions.toml at line {} of \
             the section:\n  README: {:?}\n  file:   {:?}\nrun UPDATE_DEFINITIONS=1 cargo test \
             --workspace --test pages definitions::",
            line + 1,
            have.lines().nth(line),
            want.lines().nth(line)
        );
    }
}

#[test]
fn sections_follow_metrics_md_headings() {
    let candidates = [
        root().join("../shared/METRICS.md"),
        PathBuf::from("/work/shared/METRICS.md"),
    ];
    let Some(p) = candidates.iter().find(|p| p.is_file()) else {
        eprintln!("skipped: ../shared/METRICS.md not found");
        return;
    };
    let metrics = std::fs::read_to_string(p).unwrap();
    let headings: Vec<&str> = metrics
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(str::trim)
        .collect();
    for s in &defs().section {
        assert!(
            headings.contains(&s.metrics.as_str()),
            "section {} names METRICS.md \"{}\", not a heading there ({headings:?})",
            s.id,
            s.metrics
        );
    }
}
