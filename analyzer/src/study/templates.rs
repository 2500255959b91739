//! The ready-made studies (issue 17 section 2), one small TOML file each in `analyzer/studies/`
//! (`about`, `by`, `x`, `y`), named after what they reproduce.

use super::StudySpec;

/// (name, TOML text) of every template.
pub const TEMPLATES: &[(&str, &str)] = &[
    (
        "failover-vs-sack-delay",
        include_str!("../../studies/failover-vs-sack-delay.toml"),
    ),
    (
        "spurious-timeouts",
        include_str!("../../studies/spurious-timeouts.toml"),
    ),
    (
        "sctp-vs-tcp-loss",
        include_str!("../../studies/sctp-vs-tcp-loss.toml"),
    ),
    (
        "link-failure",
        include_str!("../../studies/link-failure.toml"),
    ),
    (
        "http-transfer",
        include_str!("../../studies/http-transfer.toml"),
    ),
];

/// The template `name`, parsed.
pub fn template(name: &str) -> Result<StudySpec, String> {
    let (_, text) = TEMPLATES.iter().find(|t| t.0 == name).ok_or_else(|| {
        let names: Vec<&str> = TEMPLATES.iter().map(|t| t.0).collect();
        format!(
            "no study template {name:?} (there are: {})",
            names.join(", ")
        )
    })?;
    let mut spec: StudySpec = toml::from_str(text).map_err(|e| format!("template {name}: {e}"))?;
    spec.name = Some(name.to_string());
    Ok(spec)
}
