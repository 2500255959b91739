//! What every figure and identifier means, from `docs/definitions.toml` (compiled in): the
//! `/help` page, the link and tooltip of each figure's label on the other pages (`Def`), the
//! human names of identifiers (`words`), and the README's "Figures and names" section
//! (`readme_section`, checked by `tests/definitions.rs`).

use std::sync::OnceLock;

use askama::Template;
use askama_web::WebTemplate;
use serde::Deserialize;

/// The definitions file, as compiled into the binary.
pub const SOURCE: &str = include_str!("../../docs/definitions.toml");

#[derive(Debug, Deserialize)]
pub struct Section {
    pub id: String,
    pub title: String,
    /// The METRICS.md heading the figures of this section follow.
    pub metrics: String,
}

#[derive(Debug, Deserialize)]
pub struct Figure {
    pub id: String,
    pub section: String,
    pub label: String,
    pub unit: String,
    pub meaning: String,
    pub definition: String,
    pub json: String,
    /// Comparison-row keys shown under this label.
    #[serde(default)]
    pub keys: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub struct NameValue {
    pub id: String,
    pub words: String,
    pub meaning: String,
}

#[derive(Debug, Deserialize)]
pub struct Names {
    pub id: String,
    pub title: String,
    pub value: Vec<NameValue>,
}

#[derive(Debug, Deserialize)]
pub struct Defs {
    pub section: Vec<Section>,
    pub figure: Vec<Figure>,
    pub names: Vec<Names>,
}

/// The parsed definitions (the file is part of the build: a parse error is a bug caught by the
/// unit test below).
pub fn defs() -> &'static Defs {
    static D: OnceLock<Defs> = OnceLock::new();
    D.get_or_init(|| toml::from_str(SOURCE).expect("docs/definitions.toml parses"))
}

pub fn figure(id: &str) -> Option<&'static Figure> {
    defs().figure.iter().find(|f| f.id == id)
}

/// The figure shown for a comparison row's JSON key (`ack_delay_ms`).
pub fn figure_by_key(key: &str) -> Option<&'static Figure> {
    defs()
        .figure
        .iter()
        .find(|f| f.keys.iter().any(|k| k == key))
}

/// The words for identifier `id` of kind `kind` (`failover_cause`, `sack_delay_exceeds_rto`);
/// an identifier the file does not name reads with spaces for underscores.
pub fn words(kind: &str, id: &str) -> String {
    name(kind, id).map_or_else(|| id.replace('_', " "), |v| v.words.clone())
}

pub fn name(kind: &str, id: &str) -> Option<&'static NameValue> {
    defs()
        .names
        .iter()
        .find(|n| n.id == kind)?
        .value
        .iter()
        .find(|v| v.id == id)
}

/// `/help#` anchor of a figure and of a name.
pub fn fig_anchor(id: &str) -> String {
    format!("fig-{id}")
}

pub fn name_anchor(kind: &str, id: &str) -> String {
    format!("name-{kind}-{id}")
}

/// A figure's label as a page shows it: a link to its definition with a tooltip (unit and
/// meaning). Without a definition it is plain text.
#[derive(Debug, Clone, Default)]
pub struct Def {
    pub text: String,
    pub href: String,
    pub tip: String,
}

impl Def {
    /// The label of figure `id`, worded `text` (a page may say "RTT min / median / p95 (n) ms").
    pub fn new(id: &str, text: impl Into<String>) -> Def {
        let text = text.into();
        match figure(id) {
            Some(f) => Def {
                text,
                href: format!("/help#{}", fig_anchor(&f.id)),
                tip: format!("{} — {}", f.unit, f.meaning),
            },
            None => Def {
                text,
                ..Def::default()
            },
        }
    }

    /// The label of figure `id` in the file's own words.
    pub fn of(id: &str) -> Def {
        Def::new(id, figure(id).map_or(id, |f| f.label.as_str()))
    }

    /// Plain text (a label that is not a figure: "frame", "Wireshark filter").
    pub fn plain(text: impl Into<String>) -> Def {
        Def {
            text: text.into(),
            ..Def::default()
        }
    }

    /// An identifier in words, linked to its entry among the names (`vantage`, `sender`).
    pub fn name(kind: &str, id: &str) -> Def {
        match name(kind, id) {
            Some(v) => Def {
                text: v.words.clone(),
                href: format!("/help#{}", name_anchor(kind, id)),
                tip: v.meaning.clone(),
            },
            None => Def::plain(id.replace('_', " ")),
        }
    }

    /// The label as HTML: `<a class="def" href title>text</a>`, or the escaped text.
    pub fn html(&self) -> String {
        if self.href.is_empty() {
            return escape(&self.text);
        }
        format!(
            "<a class=\"def\" href=\"{}\" title=\"{}\">{}</a>",
            escape(&self.href),
            escape(&self.tip),
            escape(&self.text)
        )
    }
}

impl std::fmt::Display for Def {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// `Def::new(id, text).html()`, for templates: `{{ crate::help::link("rtt", "RTT (ms)")|safe }}`.
pub fn link(id: &str, text: &str) -> String {
    Def::new(id, text).html()
}

/// `Def::of(id).html()`, for templates.
pub fn link_of(id: &str) -> String {
    Def::of(id).html()
}

/// Text for HTML built outside askama's templates (element text and quoted attributes; the
/// Studies page's SVG too).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

pub struct HelpSection {
    pub id: String,
    pub title: String,
    pub metrics: String,
    pub figures: Vec<&'static Figure>,
}

#[derive(Template, WebTemplate)]
#[template(path = "help.html")]
pub struct HelpPage {
    pub title: String,
    pub sections: Vec<HelpSection>,
    pub names: &'static [Names],
}

fn sections() -> Vec<HelpSection> {
    let d = defs();
    d.section
        .iter()
        .map(|s| HelpSection {
            id: s.id.clone(),
            title: s.title.clone(),
            metrics: s.metrics.clone(),
            figures: d.figure.iter().filter(|f| f.section == s.id).collect(),
        })
        .collect()
}

/// `GET /help`: every figure with its unit, meaning, definition and JSON field, by section,
/// then every identifier's words.
pub async fn help() -> HelpPage {
    HelpPage {
        title: "What the figures mean".into(),
        sections: sections(),
        names: &defs().names,
    }
}

/// Markers of the generated section in README.md.
pub const README_BEGIN: &str = "<!-- definitions: generated from docs/definitions.toml -->";
pub const README_END: &str = "<!-- definitions: end -->";

/// The README's "Figures and names" section body, between the markers (exclusive).
pub fn readme_section() -> String {
    let mut out = String::new();
    out.push_str(
        "Every figure the dashboard shows, as `docs/definitions.toml` defines it (the dashboard's \
         `/help` page and the tooltip of each label come from the same file; the sections follow \
         `../shared/METRICS.md`).\n",
    );
    for s in sections() {
        out.push_str(&format!(
            "\n**{}** (METRICS.md \"{}\")\n\n| figure | unit | meaning | JSON |\n|---|---|---|---|\n",
            s.title, s.metrics
        ));
        for f in s.figures {
            out.push_str(&format!(
                "| {} | {} | {} | `{}` |\n",
                cell(&f.label),
                cell(&f.unit),
                cell(&f.meaning),
                f.json.replace('|', "\\|")
            ));
        }
    }
    out.push_str("\n**Identifiers** (the JSON keeps the identifier, the pages show the words)\n\n| kind | identifier | words |\n|---|---|---|\n");
    for n in &defs().names {
        for v in &n.value {
            out.push_str(&format!(
                "| {} | `{}` | {} |\n",
                cell(&n.title),
                v.id,
                cell(&v.words)
            ));
        }
    }
    out
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_parse_and_refer_to_their_sections() {
        let d = defs();
        assert!(d.figure.len() > 40);
        for f in &d.figure {
            assert!(
                d.section.iter().any(|s| s.id == f.section),
                "figure {} names section {}",
                f.id,
                f.section
            );
            assert!(!f.meaning.is_empty() && !f.unit.is_empty(), "{}", f.id);
        }
        let mut ids: Vec<&str> = d.figure.iter().map(|f| f.id.as_str()).collect();
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "figure ids are unique");
        let mut keys: Vec<&str> = d
            .figure
            .iter()
            .flat_map(|f| f.keys.iter().map(String::as_str))
            .collect();
        keys.sort();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n, "a comparison key has one label");
    }

    #[test]
    fn labels_link_with_unit_and_meaning() {
        let d = Def::of("outage_start");
        assert_eq!(d.text, "outage start (s)");
        assert_eq!(d.href, "/help#fig-outage_start");
        assert!(d.tip.starts_with("s — First original on the old path"));
        assert!(d
            .html()
            .starts_with("<a class=\"def\" href=\"/help#fig-outage_start\""));
        assert_eq!(Def::new("no_such_figure", "x<y").html(), "x&lt;y");
        assert_eq!(
            words("failover_cause", "sack_delay_exceeds_rto"),
            "the peer's SACK delay exceeds this sender's RTO"
        );
        assert_eq!(words("failover_cause", "new_cause"), "new cause");
        assert_eq!(figure_by_key("ack_delay_ms").unwrap().id, "ack_delay");
    }
}
