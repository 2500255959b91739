//! Server-side paging, sorting and filtering of a table (issue 16 part 1): the pager and the
//! sort headers shared by the capture page's association list and the association page's long
//! tables, and the state of one table as its query parameters give it (`{name}_offset`,
//! `{name}_limit`, `{name}_sort`, `{name}_order`, `{name}_q` on a page; the same without the
//! prefix in the API).

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::assoc_list::{encode, thousands};
use crate::error::AppError;
use crate::help::Def;

/// Rows of a table page unless `limit` says otherwise.
pub const TABLE_ROWS: usize = 50;
/// Most rows a page renders at once (`limit=all` is this many on a page).
pub const MAX_TABLE_ROWS: usize = 500;
/// The choices of the rows selector.
pub const LIMITS: [usize; 5] = [10, 25, 50, 100, 500];

/// First / previous / next / last links of a paginated list ("" where disabled).
pub struct Pager {
    /// What the pages are of (the navigation's `aria-label`).
    pub label: String,
    pub page: usize,
    pub pages: usize,
    pub links: Vec<(&'static str, String)>,
    /// Whether there is somewhere to go (more than one page, or an offset past the end).
    pub show: bool,
}

impl Pager {
    /// `link(offset)` is the address of the page starting at `offset`.
    pub fn new(
        label: impl Into<String>,
        offset: usize,
        limit: usize,
        matching: usize,
        link: impl Fn(usize) -> String,
    ) -> Pager {
        let limit = limit.max(1);
        let pages = matching.div_ceil(limit).max(1);
        let page = (offset / limit + 1).min(pages);
        let last_off = (pages - 1) * limit;
        let on = |cond: bool, off: usize| if cond { link(off) } else { String::new() };
        // Past the end, "previous" is the last page.
        let back = if offset >= matching {
            last_off
        } else {
            offset.saturating_sub(limit)
        };
        Pager {
            label: label.into(),
            page,
            pages,
            show: pages > 1 || offset > 0,
            links: vec![
                ("first", on(offset > 0, 0)),
                ("previous", on(offset > 0, back)),
                ("next", on(offset + limit < matching, offset + limit)),
                ("last", on(offset + limit < matching, last_off)),
            ],
        }
    }
}

/// A sortable column header: a link that sorts on the server.
pub struct SortHeader {
    pub label: String,
    /// The figure's definition (link and tooltip beside the sort link).
    pub def: Def,
    pub num: bool,
    /// "" for a column that does not sort.
    pub href: String,
    /// "ascending" / "descending" on the sorted column, "" elsewhere (aria-sort).
    pub aria: &'static str,
    /// " ▲" / " ▼" on the sorted column.
    pub arrow: &'static str,
}

impl SortHeader {
    pub fn new(label: String, def: Def, num: bool, href: String, sorted: Option<bool>) -> Self {
        SortHeader {
            label,
            def,
            num,
            href,
            aria: match sorted {
                None => "",
                Some(false) => "ascending",
                Some(true) => "descending",
            },
            arrow: match sorted {
                None => "",
                Some(false) => " ▲",
                Some(true) => " ▼",
            },
        }
    }
}

/// A column of a server-sorted table.
pub struct Col {
    /// The header's words ("" for the figure's own label in `docs/definitions.toml`).
    pub label: &'static str,
    /// Sort key ("" when the column does not sort).
    pub key: &'static str,
    pub num: bool,
    /// The figure defined in `docs/definitions.toml` ("" for none).
    pub fig: &'static str,
    /// The first click sorts the largest first.
    pub desc_first: bool,
}

/// `Col` in one line: label, key, numeric, figure, largest first.
pub const fn col(
    label: &'static str,
    key: &'static str,
    num: bool,
    fig: &'static str,
    desc_first: bool,
) -> Col {
    Col {
        label,
        key,
        num,
        fig,
        desc_first,
    }
}

/// A value a table sorts by: numbers (none first) or text.
#[derive(Debug, PartialEq, PartialOrd)]
pub enum SortVal {
    N(Option<f64>),
    S(String),
}

fn cmp_vals(a: &SortVal, b: &SortVal) -> Ordering {
    match (a, b) {
        (SortVal::N(x), SortVal::N(y)) => match (x, y) {
            (Some(x), Some(y)) => x.total_cmp(y),
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        },
        (SortVal::S(x), SortVal::S(y)) => x.cmp(y),
        (SortVal::N(_), SortVal::S(_)) => Ordering::Less,
        (SortVal::S(_), SortVal::N(_)) => Ordering::Greater,
    }
}

/// One table's page, sort and search as the query gives them.
#[derive(Debug, Clone)]
pub struct TableState {
    /// The table's name ("timeouts0"): its parameters' prefix on a page.
    pub name: String,
    pub offset: usize,
    /// None: every row (`limit=all` in the API).
    pub limit: Option<usize>,
    pub sort: &'static str,
    pub desc: bool,
    /// Text search, lower case ("" for none).
    pub q: String,
    default_sort: &'static str,
    default_limit: usize,
}

fn value<'a>(params: &'a HashMap<String, String>, key: &str) -> Option<&'a str> {
    params.get(key).map(|s| s.trim()).filter(|s| !s.is_empty())
}

impl TableState {
    /// Reads `{prefix}offset`, `{prefix}limit` (a number or `all`), `{prefix}sort` (a key of
    /// `cols`), `{prefix}order` (asc / desc) and `{prefix}q`; an empty value (an HTML form's) is
    /// none. `max_limit` caps the limit (a page's rows); 400 with the parameter's name otherwise.
    pub fn parse(
        params: &HashMap<String, String>,
        prefix: &str,
        name: &str,
        cols: &[Col],
        default_sort: &'static str,
        default_limit: usize,
        max_limit: Option<usize>,
    ) -> Result<TableState, AppError> {
        let key = |k: &str| format!("{prefix}{k}");
        let bad = |k: &str, v: &str, why: &str| {
            AppError::BadRequest(format!("bad {}: {v:?} ({why})", key(k)))
        };
        let offset = match value(params, &key("offset")) {
            Some(v) => v
                .parse()
                .map_err(|_| bad("offset", v, "a row number from 0"))?,
            None => 0,
        };
        let limit = match value(params, &key("limit")) {
            Some("all") => max_limit,
            Some(v) => Some(
                v.parse::<usize>()
                    .map_err(|_| bad("limit", v, "a number of rows, or all"))?,
            ),
            None => Some(default_limit),
        };
        let limit = match (limit, max_limit) {
            (Some(l), Some(m)) => Some(l.min(m)),
            (l, _) => l,
        };
        let sort = match value(params, &key("sort")) {
            Some(s) => cols
                .iter()
                .map(|c| c.key)
                .find(|k| !k.is_empty() && *k == s)
                .ok_or_else(|| {
                    let keys: Vec<&str> = cols
                        .iter()
                        .map(|c| c.key)
                        .filter(|k| !k.is_empty())
                        .collect();
                    bad("sort", s, &format!("one of {}", keys.join(", ")))
                })?,
            None => default_sort,
        };
        let desc = match value(params, &key("order")) {
            Some("desc") => true,
            Some("asc") | None => false,
            Some(o) => return Err(bad("order", o, "asc or desc")),
        };
        Ok(TableState {
            name: name.to_string(),
            offset,
            limit,
            sort,
            desc,
            q: value(params, &key("q")).unwrap_or("").to_lowercase(),
            default_sort,
            default_limit,
        })
    }

    /// Whether the query says anything of this table (then its collapsed table shows open).
    pub fn is_default(&self) -> bool {
        self.offset == 0
            && self.limit == Some(self.default_limit)
            && self.sort == self.default_sort
            && !self.desc
            && self.q.is_empty()
    }

    /// This table's query parameters that differ from the defaults, at `offset` and with
    /// `sort` (key, descending) when given.
    pub fn parts(&self, offset: usize, sort: Option<(&str, bool)>) -> Vec<(String, String)> {
        let (s, desc) = sort.unwrap_or((self.sort, self.desc));
        let n = &self.name;
        let mut out = Vec::new();
        if !self.q.is_empty() {
            out.push((format!("{n}_q"), self.q.clone()));
        }
        if s != self.default_sort || desc {
            out.push((format!("{n}_sort"), s.to_string()));
            out.push((
                format!("{n}_order"),
                if desc { "desc" } else { "asc" }.to_string(),
            ));
        }
        if let Some(l) = self.limit.filter(|l| *l != self.default_limit) {
            out.push((format!("{n}_limit"), l.to_string()));
        }
        if offset > 0 {
            out.push((format!("{n}_offset"), offset.to_string()));
        }
        out
    }
}

/// The rows of one page: indices into the table's items, in the page's order.
#[derive(Debug)]
pub struct Selected {
    pub idx: Vec<usize>,
    /// Rows of the table.
    pub total: usize,
    /// Rows that match the search.
    pub matching: usize,
    /// The first row's position among the matching ones (the offset asked, at most `matching`).
    pub offset: usize,
}

/// Filters `items` by the search (every word of it in `hay(item)`, lower case), sorts them by
/// `val(sort key, item)` (ties in the items' order) and cuts the page.
pub fn select<T>(
    items: &[T],
    st: &TableState,
    val: impl Fn(&str, &T) -> SortVal,
    hay: impl Fn(&T) -> String,
) -> Selected {
    let words: Vec<&str> = st.q.split_whitespace().collect();
    let idx: Vec<usize> = (0..items.len())
        .filter(|&i| {
            words.is_empty() || {
                let h = hay(&items[i]).to_lowercase();
                words.iter().all(|w| h.contains(w))
            }
        })
        .collect();
    // A stable sort: ties keep the items' order (the report's).
    let keys: Vec<SortVal> = idx.iter().map(|&i| val(st.sort, &items[i])).collect();
    let mut order: Vec<usize> = (0..idx.len()).collect();
    order.sort_by(|&x, &y| {
        let o = cmp_vals(&keys[x], &keys[y]);
        if st.desc {
            o.reverse()
        } else {
            o
        }
    });
    let idx: Vec<usize> = order.into_iter().map(|k| idx[k]).collect();
    let matching = idx.len();
    let offset = st.offset.min(matching);
    let end = st
        .limit
        .map_or(matching, |l| offset.saturating_add(l).min(matching));
    Selected {
        idx: idx[offset..end].to_vec(),
        total: items.len(),
        matching,
        offset,
    }
}

/// "rows 1–50 of 647", "rows 1–3 of 3 that match “rto” (of 647)", "no row matches “x” (of
/// 647)", "no row past 647 (the offset is past the end)".
pub fn counts_text(sel: &Selected, q: &str) -> String {
    let n = |v: usize| thousands(v as u64);
    let of = if q.is_empty() {
        format!("of {}", n(sel.total))
    } else {
        format!(
            "of {} that match “{q}” (of {})",
            n(sel.matching),
            n(sel.total)
        )
    };
    if !sel.idx.is_empty() {
        return format!(
            "rows {}–{} {of}",
            n(sel.offset + 1),
            n(sel.offset + sel.idx.len())
        );
    }
    if sel.matching == 0 && !q.is_empty() {
        return format!("no row matches “{q}” (of {})", n(sel.total));
    }
    format!(
        "no row from {} on: {} row{} in all",
        n(sel.offset + 1),
        n(sel.matching),
        if sel.matching == 1 { "" } else { "s" }
    )
}

/// What a template needs of one paginated table: counts, pager, sort headers, search form.
pub struct TableView {
    pub name: String,
    /// What its rows are ("T3-rtx timeouts of DATA sender 0").
    pub what: String,
    /// The id of the element the table's links scroll to.
    pub anchor: String,
    pub counts: String,
    pub pager: Pager,
    pub headers: Vec<SortHeader>,
    pub q: String,
    pub limit: usize,
    pub limits: Vec<usize>,
    /// The other query parameters (other tables', this one's sort) for the search form.
    pub hidden: Vec<(String, String)>,
    /// The page's address with this table's parameters removed.
    pub clear: String,
    /// The page's address, for the form.
    pub action: String,
    /// Whether the query set anything of this table (a collapsed table opens).
    pub open: bool,
    /// Whether the table is long enough for the search form and the pager.
    pub controls: bool,
}

/// `base?k=v&...#anchor` with `parts` (every table's parameters).
pub fn href(base: &str, parts: &[(String, String)], anchor: &str) -> String {
    let q: Vec<String> = parts
        .iter()
        .map(|(k, v)| format!("{k}={}", encode(v)))
        .collect();
    let hash = if anchor.is_empty() {
        String::new()
    } else {
        format!("#{anchor}")
    };
    if q.is_empty() {
        format!("{base}{hash}")
    } else {
        format!("{base}?{}{hash}", q.join("&"))
    }
}

impl TableView {
    /// The view of table `states[i]` of the page at `base`, whose other tables keep their
    /// parameters in every link. `what` names the rows ("T3-rtx timeouts"); `controls_over`:
    /// longer tables get the search form and the pager.
    pub fn new(
        base: &str,
        states: &[TableState],
        i: usize,
        sel: &Selected,
        cols: &[Col],
        what: &str,
        controls_over: usize,
    ) -> TableView {
        let st = &states[i];
        let anchor = format!("{}-table", st.name);
        let others = |f: &dyn Fn(&TableState) -> Vec<(String, String)>| {
            let mut out = Vec::new();
            for (k, s) in states.iter().enumerate() {
                if k == i {
                    out.extend(f(s));
                } else {
                    out.extend(s.parts(s.offset, None));
                }
            }
            out
        };
        let link = |offset: usize, sort: Option<(&str, bool)>| {
            href(base, &others(&|s| s.parts(offset, sort)), &anchor)
        };
        let headers = cols
            .iter()
            .map(|c| {
                let def = if c.label.is_empty() {
                    Def::of(c.fig)
                } else {
                    Def::new(c.fig, c.label)
                };
                let label = def.text.clone();
                if c.key.is_empty() {
                    return SortHeader::new(label, def, c.num, String::new(), None);
                }
                let current = st.sort == c.key;
                let desc = if current { !st.desc } else { c.desc_first };
                let sorted = current.then_some(st.desc);
                SortHeader::new(label, def, c.num, link(0, Some((c.key, desc))), sorted)
            })
            .collect();
        let limit = st.limit.unwrap_or(MAX_TABLE_ROWS).max(1);
        let pager = Pager::new(
            format!("pages of the {what}"),
            sel.offset,
            limit,
            sel.matching,
            |off| link(off, None),
        );
        let hidden = others(&|s| {
            let mut p = s.parts(0, None);
            p.retain(|(k, _)| !k.ends_with("_q") && !k.ends_with("_limit"));
            p
        });
        let mut limits: Vec<usize> = LIMITS.to_vec();
        if !limits.contains(&limit) {
            limits.push(limit);
            limits.sort_unstable();
        }
        TableView {
            name: st.name.clone(),
            what: what.to_string(),
            counts: counts_text(sel, &st.q),
            pager,
            headers,
            q: st.q.clone(),
            limit,
            limits,
            hidden,
            clear: href(base, &others(&|_| Vec::new()), &anchor),
            action: format!("{base}#{anchor}"),
            open: !st.is_default(),
            controls: sel.total > controls_over,
            anchor,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLS: [Col; 2] = [
        col("t", "time", true, "", false),
        col("n", "n", true, "", true),
    ];

    fn state(q: &[(&str, &str)]) -> Result<TableState, AppError> {
        let p: HashMap<String, String> = q
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        TableState::parse(&p, "x_", "x", &COLS, "time", 10, Some(MAX_TABLE_ROWS))
    }

    #[test]
    fn pages_sort_and_search() {
        let items: Vec<(f64, f64)> = (0..25).map(|i| (i as f64, (i % 7) as f64)).collect();
        let val = |k: &str, x: &(f64, f64)| SortVal::N(Some(if k == "n" { x.1 } else { x.0 }));
        let hay = |x: &(f64, f64)| format!("row {}", x.0);
        let st = state(&[("x_offset", "20")]).unwrap();
        let s = select(&items, &st, val, hay);
        assert_eq!(s.idx, vec![20, 21, 22, 23, 24]);
        assert_eq!(counts_text(&s, ""), "rows 21–25 of 25");
        let st = state(&[("x_sort", "n"), ("x_order", "desc")]).unwrap();
        let s = select(&items, &st, val, hay);
        assert_eq!(&s.idx[..4], &[6, 13, 20, 5]);
        let st = state(&[("x_q", "row 2"), ("x_limit", "all")]).unwrap();
        let s = select(&items, &st, val, hay);
        assert_eq!(s.matching, 7);
        assert_eq!(
            counts_text(&s, &st.q),
            "rows 1–7 of 7 that match “row 2” (of 25)"
        );
        let st = state(&[("x_offset", "99")]).unwrap();
        let s = select(&items, &st, val, hay);
        assert!(s.idx.is_empty() && s.offset == 25);
        assert_eq!(counts_text(&s, ""), "no row from 26 on: 25 rows in all");
        for bad in [
            ("x_offset", "-1"),
            ("x_limit", "many"),
            ("x_sort", "bogus"),
            ("x_order", "up"),
        ] {
            let e = state(&[bad]).unwrap_err().to_string();
            assert!(e.contains(bad.0), "{e}");
        }
        assert_eq!(state(&[("x_q", ""), ("x_offset", " ")]).unwrap().offset, 0);
    }

    #[test]
    fn pager_links() {
        let p = Pager::new("p", 50, 50, 120, |o| format!("o={o}"));
        assert_eq!((p.page, p.pages), (2, 3));
        let l: Vec<&str> = p.links.iter().map(|x| x.1.as_str()).collect();
        assert_eq!(l, vec!["o=0", "o=0", "o=100", "o=100"]);
        let p = Pager::new("p", 500, 50, 120, |o| format!("o={o}"));
        assert_eq!(p.page, 3);
        assert_eq!(p.links[1].1, "o=100");
        assert!(p.links[2].1.is_empty() && p.links[3].1.is_empty());
    }
}
