//! Chart data as the browser gets it: point series decimated server-side (min/max per pixel
//! bucket; "keep all" series such as retransmissions and events keep every point up to a few per
//! pixel column) and joined on one sorted x axis, the layout uPlot draws. The answer stays
//! bounded by the requested width whatever the number of series: when the joined axis times the
//! series would pass `CELLS_PER_PIXEL` cells per pixel, every series is reduced to the min and
//! max of each column of a coarser grid shared by all (issue 16 part 1).

use serde::Serialize;

/// Most pixel buckets a request may ask for.
pub const MAX_WIDTH: u32 = 4000;
pub const DEFAULT_WIDTH: u32 = 1000;
/// A "keep all" series keeps every point of the view while it has at most this many per pixel
/// column on average; past it, this many per column (spread over the column's y values, the
/// lowest and the highest among them).
const KEEP_PER_COLUMN: usize = 8;
/// Cells (x values times series) of an answer per pixel of width, at most: past it the series
/// are joined on a grid of fewer columns.
pub const CELLS_PER_PIXEL: usize = 16;
/// Columns of the shared grid at least (fewer series beyond `MAX_SERIES` keep it readable).
const MIN_COLUMNS: usize = 32;
/// Series a chart sends at most (the first ones: the callers put the important series first);
/// the others are named in `reduction`.
pub const MAX_SERIES: usize = 48;
/// Markers (events) and bands a chart sends at most: past it, those of one kind (and lane) that
/// fall in the same column of a grid over the view are sent as one, labelled with their count.
pub const MAX_MARKS: usize = 400;

/// Most cells (x values times series) an answer of `width` pixels holds.
pub fn cell_budget(width: u32) -> usize {
    CELLS_PER_PIXEL * (width as usize).max(256)
}

/// Colours of paths (and of associations on the compare page), in order.
pub const PALETTE: [&str; 8] = [
    "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#bcbd22", "#e377c2", "#7f7f7f",
];

pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// (x, y, frame)
type Point = (f64, f64, Option<u64>);

/// One series before decimation: (x, y, frame) points.
pub struct Pts {
    pub label: String,
    /// `points`, `line`, `linepoints` (a line through marked points), `step` or `bars`.
    pub style: &'static str,
    pub color: String,
    /// Keep every point in range (retransmissions, events): no decimation.
    pub keep_all: bool,
    pub pts: Vec<(f64, f64, Option<u64>)>,
}

impl Pts {
    pub fn new(label: impl Into<String>, style: &'static str, color: &str) -> Self {
        Pts {
            label: label.into(),
            style,
            color: color.to_string(),
            keep_all: false,
            pts: Vec::new(),
        }
    }

    pub fn keep_all(mut self) -> Self {
        self.keep_all = true;
        self
    }

    pub fn push(&mut self, x: f64, y: f64, frame: Option<u64>) {
        if x.is_finite() && y.is_finite() {
            self.pts.push((x, y, frame));
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Series {
    pub label: String,
    pub style: &'static str,
    pub color: String,
    pub y: Vec<Option<f64>>,
    pub frames: Vec<Option<u64>>,
    /// Points in the view before decimation.
    pub total: usize,
    /// Error bars: per x, the [low, high] drawn as a whisker through the point (a study's 95%
    /// confidence interval).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub err: Option<Vec<Option<[f64; 2]>>>,
    /// Per x, the tooltip's text for the point instead of its value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tips: Option<Vec<Option<String>>>,
    /// Per x, what a click on the point (or Enter on it) hands to the page: the chart's root
    /// gets a `chartpoint` event with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refs: Option<Vec<Option<String>>>,
}

/// A vertical marker (failover, failback, outage start, timeout, median ...).
#[derive(Debug, Serialize, Clone)]
pub struct Event {
    pub t: f64,
    pub kind: &'static str,
    pub label: String,
    pub frame: Option<u64>,
    /// Text drawn beside the marker when the kind has none of its own (lifecycle events: the
    /// chunk, e.g. "ABORT"); the label is the tooltip's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short: Option<String>,
}

/// A horizontal bar on a lane of the timeline (path state over time).
#[derive(Debug, Serialize, Clone)]
pub struct Band {
    pub from: f64,
    pub to: f64,
    pub lane: usize,
    pub kind: &'static str,
    pub label: String,
    /// Shade the whole plot height (a stall on the TSN chart), not one lane.
    pub full_height: bool,
}

#[derive(Debug, Serialize)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// The x axis is capture time (s): zooming asks the server for the new range.
    pub time_axis: bool,
    pub x: Vec<f64>,
    pub series: Vec<Series>,
    /// Whole x extent of the data, for "reset".
    pub full: [f64; 2],
    /// The x range this answer covers.
    pub range: [f64; 2],
    pub events: Vec<Event>,
    pub bands: Vec<Band>,
    /// Names of the y lanes (timeline): y = lane index.
    pub lanes: Vec<String>,
    /// Labels of y values (e.g. relative TSN), shown in tooltips as is.
    pub note: Option<String>,
    pub decimated: bool,
    /// What was reduced beyond min / max per pixel, in words ("retransmissions: at most 8 per
    /// pixel column", "joined on 120 columns", "3 more series not shown").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reduction: Option<String>,
    /// Charts of a page with the same group zoom and pan together (those with a time axis
    /// always do).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zoom_group: Option<String>,
    /// Pixel width the answer was built for (`fit_marks`).
    #[serde(skip)]
    pub width: u32,
}

impl Chart {
    /// Bounds the markers and bands by the view (issue 16 part 1): on a time axis those outside
    /// the range are left out and bands are cut to it; past `MAX_MARKS` markers (bands), the ones
    /// of one kind (and lane) in the same column of a grid over the view become one, labelled
    /// with how many it stands for ("37 × T3-rtx timeout on ...: first at ..."), and
    /// `reduction` says so. A pixel column cannot show two markers apart anyway.
    pub fn fit_marks(&mut self) {
        let [from, to] = self.range;
        if self.time_axis {
            self.events.retain(|e| e.t >= from && e.t <= to);
            self.bands.retain(|b| b.to >= from && b.from <= to);
            for b in &mut self.bands {
                b.from = b.from.max(from);
                b.to = b.to.min(to);
            }
        }
        let mut notes: Vec<String> = self.reduction.take().into_iter().collect();
        if self.events.len() > MAX_MARKS {
            let before = self.events.len();
            let cols;
            (self.events, cols) =
                group_events(std::mem::take(&mut self.events), self.range, self.width);
            notes.push(format!(
                "{before} markers shown as {} (those of one kind within 1/{cols} of the view \
                 together)",
                self.events.len()
            ));
        }
        if self.bands.len() > MAX_MARKS {
            let before = self.bands.len();
            let cols;
            (self.bands, cols) =
                group_bands(std::mem::take(&mut self.bands), self.range, self.width);
            notes.push(format!(
                "{before} bands shown as {} (those of one kind and lane starting within \
                 1/{cols} of the view joined)",
                self.bands.len()
            ));
        }
        self.reduction = (!notes.is_empty()).then(|| notes.join("; "));
    }
}

/// Columns of the grid markers (bands) are grouped on: as many as fit `MAX_MARKS` when each of
/// `kinds` (kind, lane) pairs fills every column, and no more than the pixels.
fn grid_columns(kinds: usize, width: u32) -> usize {
    (MAX_MARKS / kinds.max(1)).min(width as usize).max(1)
}

/// The grid column of `t` over `range` with `cols` columns.
fn grid_column(t: f64, [from, to]: [f64; 2], cols: usize) -> usize {
    let span = (to - from).max(1e-12);
    (((t - from) / span * cols as f64).max(0.0) as usize).min(cols - 1)
}

/// Groups items by key in first-seen order: each group's first item, how many it stands for.
fn group_by<T, K: std::hash::Hash + Eq>(items: Vec<T>, key: impl Fn(&T) -> K) -> Vec<(T, usize)> {
    let mut at: std::collections::HashMap<K, usize> = std::collections::HashMap::new();
    let mut out: Vec<(T, usize)> = Vec::new();
    for it in items {
        match at.entry(key(&it)) {
            std::collections::hash_map::Entry::Occupied(o) => out[*o.get()].1 += 1,
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(out.len());
                out.push((it, 1));
            }
        }
    }
    out
}

/// Markers of one kind in one grid column become the first of them, labelled with the count.
fn group_events(mut events: Vec<Event>, range: [f64; 2], width: u32) -> (Vec<Event>, usize) {
    events.sort_by(|a, b| a.t.total_cmp(&b.t));
    let mut kinds: Vec<&'static str> = events.iter().map(|e| e.kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    let cols = grid_columns(kinds.len(), width);
    let out = group_by(events, |e| (e.kind, grid_column(e.t, range, cols)))
        .into_iter()
        .map(|(mut e, n)| {
            if n > 1 {
                e.label = format!("{n} × {} (the first at {:.6} s)", e.label, e.t);
                e.short = e.short.map(|s| format!("{n} × {s}"));
            }
            e
        })
        .collect();
    (out, cols)
}

/// Bands of one kind and lane that start in one grid column join into one, from the first's
/// start to the latest end, labelled with the count.
fn group_bands(mut bands: Vec<Band>, range: [f64; 2], width: u32) -> (Vec<Band>, usize) {
    bands.sort_by(|a, b| a.from.total_cmp(&b.from));
    let mut kinds: Vec<(&'static str, usize, bool)> = bands
        .iter()
        .map(|b| (b.kind, b.lane, b.full_height))
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    let cols = grid_columns(kinds.len(), width);
    let key = |b: &Band| {
        (
            b.kind,
            b.lane,
            b.full_height,
            grid_column(b.from, range, cols),
        )
    };
    // The latest end of each group, before the groups are reduced to their first band.
    let mut ends: std::collections::HashMap<_, f64> = std::collections::HashMap::new();
    for b in &bands {
        let e = ends.entry(key(b)).or_insert(b.to);
        *e = e.max(b.to);
    }
    let out = group_by(bands, key)
        .into_iter()
        .map(|(mut b, n)| {
            b.to = ends[&key(&b)];
            if n > 1 {
                b.label = format!("{n} × {} (the first from {:.6} s)", b.label, b.from);
            }
            b
        })
        .collect();
    (out, cols)
}

/// The requested view: x range and pixel width.
#[derive(Debug, Clone, Copy)]
pub struct View {
    pub from: f64,
    pub to: f64,
    pub width: u32,
}

impl View {
    /// Clamps a request to the data extent `full` (a pan never shows negative time or time past
    /// the data).
    pub fn new(from: Option<f64>, to: Option<f64>, width: Option<u32>, full: [f64; 2]) -> View {
        let mut from = from.filter(|v| v.is_finite()).unwrap_or(full[0]);
        let mut to = to.filter(|v| v.is_finite()).unwrap_or(full[1]);
        if to < from {
            std::mem::swap(&mut from, &mut to);
        }
        from = from.clamp(full[0], full[1]);
        to = to.clamp(full[0], full[1]);
        if to - from < 1e-9 {
            to = from + 1e-3;
        }
        View {
            from,
            to,
            width: width.unwrap_or(DEFAULT_WIDTH).clamp(10, MAX_WIDTH),
        }
    }
}

/// Decimates one series to the view: in range (plus the neighbours outside for lines), then
/// min and max y per pixel bucket when there are more than two points per bucket.
fn decimate(p: &Pts, v: &View) -> (Vec<(f64, f64, Option<u64>)>, usize) {
    let mut pts = p.pts.clone();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let lo = pts.partition_point(|q| q.0 < v.from);
    let hi = pts.partition_point(|q| q.0 <= v.to);
    let lines = p.style != "points";
    let start = if lines { lo.saturating_sub(1) } else { lo };
    let end = if lines { (hi + 1).min(pts.len()) } else { hi };
    let in_view = &pts[start..end];
    let total = hi - lo;
    let buckets = v.width as usize;
    if in_view.len() <= 2 * buckets || (p.keep_all && in_view.len() <= KEEP_PER_COLUMN * buckets) {
        return (in_view.to_vec(), total);
    }
    if p.keep_all {
        return (per_column(in_view, v, buckets, KEEP_PER_COLUMN), total);
    }
    let span = v.to - v.from;
    let mut out = Vec::with_capacity(2 * buckets + 2);
    let mut cur: Option<(usize, usize, usize)> = None; // bucket, index of min, index of max
    let flush = |c: (usize, usize, usize), out: &mut Vec<(f64, f64, Option<u64>)>| {
        let (_, a, b) = c;
        let (i, j) = if a <= b { (a, b) } else { (b, a) };
        out.push(in_view[i]);
        if j != i {
            out.push(in_view[j]);
        }
    };
    for (i, q) in in_view.iter().enumerate() {
        let b = (((q.0 - v.from) / span) * buckets as f64).clamp(-1.0, buckets as f64) as isize;
        let b = (b + 1) as usize;
        match &mut cur {
            Some(c) if c.0 == b => {
                if q.1 < in_view[c.1].1 {
                    c.1 = i;
                }
                if q.1 > in_view[c.2].1 {
                    c.2 = i;
                }
            }
            _ => {
                if let Some(c) = cur.take() {
                    flush(c, &mut out);
                }
                cur = Some((b, i, i));
            }
        }
    }
    if let Some(c) = cur {
        flush(c, &mut out);
    }
    (out, total)
}

/// The pixel column (0 ..= buckets + 1: the neighbours outside the view at the ends) of `x`.
fn column(x: f64, v: &View, buckets: usize) -> usize {
    let span = v.to - v.from;
    let b = (((x - v.from) / span) * buckets as f64).clamp(-1.0, buckets as f64) as isize;
    (b + 1) as usize
}

/// At most `k` points per pixel column (`pts` in x order): all of a column that has no more,
/// else `k` spread over its y order (the lowest and the highest among them), in x order.
fn per_column(pts: &[Point], v: &View, buckets: usize, k: usize) -> Vec<Point> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < pts.len() {
        let c = column(pts[start].0, v, buckets);
        let mut end = start + 1;
        while end < pts.len() && column(pts[end].0, v, buckets) == c {
            end += 1;
        }
        let col = &pts[start..end];
        if col.len() <= k {
            out.extend_from_slice(col);
        } else {
            let mut by_y: Vec<usize> = (0..col.len()).collect();
            by_y.sort_by(|&a, &b| col[a].1.total_cmp(&col[b].1));
            let mut keep: Vec<usize> = (0..k)
                .map(|j| by_y[j * (col.len() - 1) / (k - 1).max(1)])
                .collect();
            keep.sort_unstable();
            keep.dedup();
            out.extend(keep.into_iter().map(|i| col[i]));
        }
        start = end;
    }
    out
}

/// One series on the shared grid of `cols` columns over the view: per column, its lowest and
/// highest point, at the column's first and second slot (a quarter and three quarters of the
/// column) in their time order, frames kept.
fn snap(pts: &[Point], v: &View, cols: usize) -> Vec<Point> {
    let w = (v.to - v.from) / cols as f64;
    let mut out: Vec<Point> = Vec::new();
    let mut start = 0;
    while start < pts.len() {
        let c = column(pts[start].0, v, cols);
        let mut end = start + 1;
        while end < pts.len() && column(pts[end].0, v, cols) == c {
            end += 1;
        }
        let col = &pts[start..end];
        let lo = (0..col.len()).min_by(|&a, &b| col[a].1.total_cmp(&col[b].1));
        let hi = (0..col.len()).max_by(|&a, &b| col[a].1.total_cmp(&col[b].1));
        let x0 = v.from + (c as f64 - 1.0) * w;
        if let (Some(lo), Some(hi)) = (lo, hi) {
            let (a, b) = if lo <= hi { (lo, hi) } else { (hi, lo) };
            out.push((x0 + 0.25 * w, col[a].1, col[a].2));
            if b != a {
                out.push((x0 + 0.75 * w, col[b].1, col[b].2));
            }
        }
        start = end;
    }
    out
}

/// Makes the x values of one series strictly increasing (several chunks of one packet share a
/// timestamp): each repeat moves by the smallest step that keeps the order, far below 1 ns.
fn make_unique(pts: &mut [(f64, f64, Option<u64>)]) {
    for i in 1..pts.len() {
        if pts[i].0 <= pts[i - 1].0 {
            let prev = pts[i - 1].0;
            pts[i].0 = prev + (prev.abs() * 1e-14).max(1e-12);
        }
    }
}

/// Decimates every series and joins them on one x axis, within `cell_budget(width)` cells.
pub fn build(
    title: impl Into<String>,
    x_label: &str,
    y_label: &str,
    mut series: Vec<Pts>,
    view: View,
    full: [f64; 2],
) -> Chart {
    let mut notes: Vec<String> = Vec::new();
    if series.len() > MAX_SERIES {
        let more = series.len() - MAX_SERIES;
        series.truncate(MAX_SERIES);
        notes.push(format!("{more} more series not shown"));
    }
    let mut dec = Vec::with_capacity(series.len());
    let mut decimated = false;
    let mut capped: Vec<&str> = Vec::new();
    for s in &series {
        let (pts, total) = decimate(s, &view);
        decimated |= pts.len() < total;
        if s.keep_all && pts.len() < total {
            capped.push(&s.label);
        }
        dec.push((pts, total));
    }
    if !capped.is_empty() {
        notes.push(format!(
            "{}: at most {KEEP_PER_COLUMN} points per pixel column",
            capped.join(", ")
        ));
    }
    // Every series has a cell per x of the joined axis: past the budget, one grid for all.
    let budget = cell_budget(view.width);
    // An empty series costs a cell per x too (a null).
    let n = dec.len().max(1);
    let joined = {
        let mut x: Vec<f64> = dec.iter().flat_map(|d| d.0.iter().map(|p| p.0)).collect();
        x.sort_by(f64::total_cmp);
        x.dedup();
        x.len()
    };
    if joined * n > budget {
        // Two slots per column, the two neighbours outside the view of line series included.
        let cols = (budget / (2 * n))
            .saturating_sub(2)
            .clamp(MIN_COLUMNS, view.width as usize);
        for d in &mut dec {
            d.0 = snap(&d.0, &view, cols);
        }
        decimated = true;
        notes.push(format!(
            "{n} series joined on {cols} columns (lowest and highest of each)"
        ));
    }
    for d in &mut dec {
        make_unique(&mut d.0);
    }
    let mut x: Vec<f64> = dec.iter().flat_map(|d| d.0.iter().map(|p| p.0)).collect();
    x.sort_by(f64::total_cmp);
    x.dedup();
    let out_series = series
        .into_iter()
        .zip(dec)
        .map(|(s, (pts, total))| {
            let mut y = vec![None; x.len()];
            let mut frames = vec![None; x.len()];
            for (px, py, pf) in pts {
                if let Ok(i) = x.binary_search_by(|v| v.total_cmp(&px)) {
                    y[i] = Some(py);
                    frames[i] = pf;
                }
            }
            Series {
                label: s.label,
                style: s.style,
                color: s.color,
                y,
                frames,
                total,
                err: None,
                tips: None,
                refs: None,
            }
        })
        .collect();
    Chart {
        title: title.into(),
        x_label: x_label.to_string(),
        y_label: y_label.to_string(),
        time_axis: true,
        x,
        series: out_series,
        full,
        range: [view.from, view.to],
        events: Vec::new(),
        bands: Vec::new(),
        lanes: Vec::new(),
        note: None,
        decimated,
        reduction: (!notes.is_empty()).then(|| notes.join("; ")),
        zoom_group: None,
        width: view.width,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimation_keeps_min_max_and_all_kept_points() {
        let mut dense = Pts::new("d", "points", "#000");
        for i in 0..100_000 {
            dense.push(i as f64 / 1000.0, (i % 7) as f64, Some(i));
        }
        let mut rtx = Pts::new("r", "points", "#f00").keep_all();
        for i in 0..3000 {
            rtx.push(i as f64 / 100.0, 1.0, Some(i));
        }
        let view = View::new(None, None, Some(500), [0.0, 100.0]);
        let c = build("t", "x", "y", vec![dense, rtx], view, [0.0, 100.0]);
        let n = |s: &Series| s.y.iter().filter(|v| v.is_some()).count();
        assert!(n(&c.series[0]) <= 1002, "{}", n(&c.series[0]));
        assert_eq!(n(&c.series[1]), 3000);
        let ys: Vec<f64> = c.series[0].y.iter().flatten().copied().collect();
        assert!(ys.contains(&0.0) && ys.contains(&6.0));
        assert!(c.x.windows(2).all(|w| w[0] < w[1]));
        assert!(c.decimated);
    }

    /// Many series joined on one axis, keep-all ones with many points: the answer stays within
    /// the cell budget of the width (x values times series), every series keeps its lowest and
    /// highest value, series past `MAX_SERIES` are left out and said so.
    #[test]
    fn many_series_stay_within_the_width() {
        let width = 800;
        let make = |n: usize, keep: usize| {
            let mut v = Vec::new();
            for k in 0..n {
                let mut p = Pts::new(format!("s{k}"), "points", "#000");
                for i in 0..20_000u64 {
                    // Each series its own x values (no two series share one).
                    let x = (i as f64 + k as f64 / (n + 1) as f64) / 200.0;
                    p.push(x, ((i * 7 + k as u64) % 1000) as f64, Some(i));
                }
                v.push(p);
            }
            for k in 0..keep {
                let mut p = Pts::new(format!("rtx{k}"), "points", "#f00").keep_all();
                for i in 0..50_000u64 {
                    p.push(i as f64 / 500.0 + k as f64 * 1e-6, (i % 97) as f64, Some(i));
                }
                v.push(p);
            }
            // Empty series (no point in the view) cost a null per x all the same.
            for k in 0..n.min(5) {
                v.push(Pts::new(format!("empty{k}"), "step", "#999"));
            }
            v
        };
        let full = [0.0, 100.0];
        let view = View::new(None, None, Some(width), full);
        for (n, keep) in [(1, 0), (0, 1), (3, 3), (30, 10), (100, 10)] {
            let c = build("t", "x", "y", make(n, keep), view, full);
            let cells = c.x.len() * c.series.len();
            assert!(
                cells <= cell_budget(width),
                "{n}+{keep} series: {} x {} = {cells} cells",
                c.x.len(),
                c.series.len()
            );
            assert!(c.series.len() <= MAX_SERIES);
            for s in c.series.iter().filter(|s| !s.label.starts_with("empty")) {
                let ys: Vec<f64> = s.y.iter().flatten().copied().collect();
                let (lo, hi) = if s.label.starts_with("rtx") {
                    (0.0, 96.0)
                } else {
                    (0.0, 999.0)
                };
                assert!(
                    ys.contains(&lo) && ys.contains(&hi),
                    "{}: {lo} {hi}",
                    s.label
                );
            }
            let bytes = serde_json::to_vec(&c).unwrap().len();
            assert!(bytes < 1 << 20, "{n}+{keep} series: {bytes} bytes");
            assert!(c.x.windows(2).all(|w| w[0] < w[1]));
            let all = n + keep + n.min(5);
            if all > MAX_SERIES {
                let r = c.reduction.clone().unwrap_or_default();
                assert!(
                    r.contains(&format!("{} more series not shown", all - MAX_SERIES)),
                    "{r}"
                );
            }
        }
        // A keep-all series alone keeps every point up to 8 per pixel column on average, then
        // 8 per column.
        let c = build("t", "x", "y", make(0, 1), view, full);
        let kept = c.series[0].y.iter().flatten().count();
        assert!(
            kept <= 8 * (width as usize + 2) && kept >= width as usize,
            "{kept}"
        );
        assert!(c
            .reduction
            .unwrap()
            .contains("at most 8 points per pixel column"));
    }

    /// Thousands of markers and bands (a flapping path's failovers and timeouts): those outside
    /// the view are left out, the rest stay within `MAX_MARKS`, one per kind and grid column,
    /// each group's first with its count; the counts add up to what was in the view.
    #[test]
    fn markers_and_bands_stay_within_the_view_and_the_cap() {
        let full = [0.0, 100.0];
        let view = View::new(Some(10.0), Some(60.0), Some(1000), full);
        let mut c = build("t", "x", "y", Vec::new(), view, full);
        for i in 0..20_000u64 {
            let t = i as f64 / 200.0;
            let kind = ["timeout", "failover", "failback"][i as usize % 3];
            c.events.push(Event {
                t,
                kind,
                label: format!("{kind} {i}"),
                frame: Some(i),
                short: None,
            });
            c.bands.push(Band {
                from: t,
                to: t + 0.004,
                lane: (i % 2) as usize,
                kind: "outage",
                label: format!("outage {i}"),
                full_height: false,
            });
        }
        let in_view = |t: f64| (10.0..=60.0).contains(&t);
        let events_in_view = (0..20_000u64)
            .filter(|i| in_view(*i as f64 / 200.0))
            .count();
        c.fit_marks();
        assert!(c.events.len() <= MAX_MARKS, "{}", c.events.len());
        assert!(c.bands.len() <= MAX_MARKS, "{}", c.bands.len());
        assert!(c.events.iter().all(|e| in_view(e.t)));
        assert!(c.bands.iter().all(|b| b.from >= 10.0 && b.to <= 60.0));
        let count = |label: &str| {
            label
                .split_once(" × ")
                .map_or(1, |(n, _)| n.parse::<usize>().unwrap())
        };
        let shown: usize = c.events.iter().map(|e| count(&e.label)).sum();
        assert_eq!(shown, events_in_view);
        // One marker per kind and column: no two of a kind closer than a column apart.
        for kind in ["timeout", "failover", "failback"] {
            let ts: Vec<f64> = c
                .events
                .iter()
                .filter(|e| e.kind == kind)
                .map(|e| e.t)
                .collect();
            assert!(ts.len() > 100, "{kind}: {}", ts.len());
            assert!(ts.windows(2).all(|w| w[0] < w[1]));
        }
        let r = c.reduction.clone().unwrap();
        assert!(
            r.contains("markers shown as") && r.contains("bands shown as"),
            "{r}"
        );
        // Few markers: all kept as they are.
        let mut c = build("t", "x", "y", Vec::new(), view, full);
        c.events.push(Event {
            t: 20.0,
            kind: "failover",
            label: "failover a → b".into(),
            frame: Some(1),
            short: None,
        });
        c.fit_marks();
        assert_eq!(c.events[0].label, "failover a → b");
        assert!(c.reduction.is_none());
    }

    #[test]
    fn same_timestamp_points_stay_distinct() {
        let mut s = Pts::new("d", "points", "#000");
        s.push(1.0, 10.0, Some(1));
        s.push(1.0, 11.0, Some(1));
        s.push(1.0, 12.0, Some(1));
        let c = build(
            "t",
            "x",
            "y",
            vec![s],
            View::new(None, None, None, [0.0, 2.0]),
            [0.0, 2.0],
        );
        assert_eq!(c.x.len(), 3);
        assert_eq!(c.series[0].y.iter().flatten().count(), 3);
    }

    #[test]
    fn views_stay_inside_the_data() {
        let full = [1.5, 9.0];
        let v = View::new(Some(-2.0), Some(3.0), None, full);
        assert_eq!((v.from, v.to), (1.5, 3.0));
        let v = View::new(Some(8.0), Some(20.0), None, full);
        assert_eq!((v.from, v.to), (8.0, 9.0));
        let v = View::new(None, None, None, full);
        assert_eq!((v.from, v.to), (1.5, 9.0));
    }
}
