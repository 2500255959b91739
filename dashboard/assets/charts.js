// Interactive charts (uPlot): every .chart[data-chart] in #charts loads its data from
// `${data-base}/${kind}`; drag zooms (the server decimates the new range), Shift+drag, the arrow
// buttons or the arrow keys pan (never past the data), + / - zoom, double-click, "reset" or 0
// shows everything, legend entries toggle series (click, or Enter / Space when focused). The
// charts with a time axis zoom together; window.dashboardZoom(from, to, sender) zooms them all
// (the "show in charts" rows of the page). A chart with data-inline="ID" draws the data the page
// carries in the JSON script element ID (an object by chart kind) instead of fetching it, and
// zooms without asking the server. Charts of one zoom_group zoom together like those of time.
// Series may carry per point error bars (err: [lo, hi]), a tooltip text (tips) and a reference
// (refs): a click on such a point, or ↑ ↓ then Enter on a focused chart, sends the chart a
// "chartpoint" event whose detail is { ref, label, x }.
(function () {
  "use strict";
  const section = document.getElementById("charts");
  if (!section || typeof uPlot === "undefined") return;
  const base = section.dataset.base;
  const inlineData = {};
  function inline(id) {
    if (!(id in inlineData)) {
      const e = document.getElementById(id);
      inlineData[id] = e ? JSON.parse(e.textContent) : {};
    }
    return inlineData[id];
  }
  // The charts that zoom with `d`'s (null: none but itself).
  function zoomGroup(d) {
    if (!d) return null;
    return d.zoom_group || (d.time_axis ? "time" : null);
  }
  let sender = section.dataset.sender;
  const EVENT_COLORS = {
    failover: "#d62728", spurious_failover: "#e377c2", outage: "#ff7f0e",
    failback: "#2ca02c", timeout: "#9467bd", median: "#000000",
    // Lifecycle events (timeline chart).
    handshake: "#4a5568", shutdown: "#0b7a75", abort: "#c0253a", error: "#b35c00", after_end: "#7f7f7f",
  };
  const SHORT = {
    failover: "failover", spurious_failover: "spurious failover", outage: "outage start",
    failback: "failback", timeout: "timeout",
  };
  const BAND_COLORS = {
    active: "rgba(44,160,44,0.25)", outage: "rgba(214,39,40,0.35)", spurious: "rgba(227,119,194,0.45)",
    stall: "rgba(148,103,189,0.18)",
  };

  function fmt(v, digits) {
    if (v == null || !isFinite(v)) return "";
    return (Math.round(v * 10 ** digits) / 10 ** digits).toString();
  }

  // Decimals that tell apart ticks `incr` apart (uPlot's default shows at most 3: a millisecond
  // window then repeats one label).
  function decimals(incr) {
    let d = 0;
    while (d < 12 && Math.abs(Math.round(incr * 10 ** d) - incr * 10 ** d) > 1e-6) d++;
    return d;
  }
  function tickValues(u, splits, axisIdx, space, incr) {
    const d = decimals(incr);
    return splits.map((v) => (v == null ? "" : v.toFixed(d)));
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }

  class Chart {
    constructor(root) {
      this.root = root;
      this.kind = root.dataset.chart;
      this.seq = 0;
      this.u = null;
      this.data = null;
      this.programmatic = false;
      this.title = el("h3", "chart-title", this.kind);
      const bar = el("div", "chart-bar");
      const mk = (label, title, fn) => {
        const b = el("button", "chart-btn", label);
        b.type = "button";
        b.title = title;
        b.addEventListener("click", fn);
        bar.appendChild(b);
        return b;
      };
      mk("◀", "pan left (← key)", () => this.pan(-0.5)).setAttribute("aria-label", "pan left");
      mk("▶", "pan right (→ key)", () => this.pan(0.5)).setAttribute("aria-label", "pan right");
      mk("zoom in", "zoom in ×2 (+ key)", () => this.zoomIn());
      mk("zoom out", "zoom out ×2 (− key)", () => this.zoomOut());
      mk("reset", "show the whole range", () => this.reset());
      this.rangeText = el("span", "chart-range");
      bar.appendChild(this.rangeText);
      this.status = el("span", "chart-status");
      bar.appendChild(this.status);
      this.plot = el("div", "chart-plot");
      this.plot.tabIndex = 0;
      this.plot.setAttribute("role", "group");
      this.plot.setAttribute("aria-label", `${this.kind} chart: ← → pan, + − zoom, 0 shows everything`);
      this.plot.addEventListener("keydown", (e) => this.key(e));
      this.inline = root.dataset.inline || null;
      this.sel = -1;
      this.tip = el("div", "chart-tip");
      this.tip.hidden = true;
      this.foot = el("p", "chart-foot");
      root.replaceChildren(this.title, bar, this.plot, this.foot);
      this.plot.appendChild(this.tip);
      this.load(null, null);
    }

    url(from, to) {
      const p = new URLSearchParams();
      if (from != null) p.set("from", from);
      if (to != null) p.set("to", to);
      p.set("width", Math.max(100, Math.round(this.plot.clientWidth || 800)));
      if (sender != null && sender !== "") p.set("sender", sender);
      return `${base}/${this.kind}?${p}`;
    }

    async load(from, to) {
      // A load supersedes a zoom still waiting on its timer (a reset right after a drag wins).
      clearTimeout(this.timer);
      const seq = ++this.seq;
      if (this.inline) {
        const d = inline(this.inline)[this.kind];
        if (!d) { this.status.textContent = "no data"; return; }
        const r = [from == null ? d.full[0] : from, to == null ? d.full[1] : to];
        this.render({ ...d, range: r });
        delete this.root.dataset.loading;
        return;
      }
      this.status.textContent = "loading…";
      this.root.dataset.loading = "1";
      try {
        const r = await fetch(this.url(from, to), { headers: { Accept: "application/json" } });
        const d = await r.json();
        if (seq !== this.seq) return;
        if (!r.ok) throw new Error(d.error || r.statusText);
        this.render(d);
        this.status.textContent = "";
      } catch (e) {
        if (seq === this.seq) this.status.textContent = "error: " + e.message;
      } finally {
        if (seq === this.seq) delete this.root.dataset.loading;
      }
    }

    // A window of the same width moved inside the data's extent (no negative time).
    clamp(from, to) {
      const [f0, f1] = this.data.full;
      const w = Math.min(to - from, f1 - f0);
      if (from < f0) { from = f0; to = f0 + w; }
      if (to > f1) { to = f1; from = Math.max(f0, f1 - w); }
      return [from, to];
    }

    // The new range for every chart of the page that shares this one's axis.
    view(from, to) {
      const g = zoomGroup(this.data);
      if (!g) return this.load(from, to);
      for (const c of charts) if (zoomGroup(c.data) === g) c.load(from, to);
    }

    pan(frac) {
      if (!this.u) return;
      const { min, max } = this.u.scales.x;
      const d = (max - min) * frac;
      this.view(...this.clamp(min + d, max + d));
    }

    zoomIn() {
      if (!this.u) return;
      const { min, max } = this.u.scales.x;
      const c = (min + max) / 2;
      const w = (max - min) / 4;
      this.view(c - w, c + w);
    }

    zoomOut() {
      if (!this.u) return;
      const { min, max } = this.u.scales.x;
      const w = max - min;
      const full = this.data.full;
      this.view(Math.max(full[0], min - w / 2), Math.min(full[1], max + w / 2));
    }

    reset() {
      const g = zoomGroup(this.data);
      if (g) {
        for (const c of charts) if (zoomGroup(c.data) === g) c.load(null, null);
      } else {
        this.load(null, null);
      }
    }

    key(e) {
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      const k = e.key;
      if (k === "ArrowLeft") this.pan(-0.25);
      else if (k === "ArrowRight") this.pan(0.25);
      else if (k === "+" || k === "=") this.zoomIn();
      else if (k === "-" || k === "_") this.zoomOut();
      else if (k === "0" || k === "Home") this.reset();
      else if ((k === "ArrowDown" || k === "ArrowUp") && this.pointList().length) this.step(k === "ArrowDown" ? 1 : -1);
      else if (k === "Enter" && this.sel >= 0) this.openPoint(this.pointList()[this.sel]);
      else return;
      e.preventDefault();
    }

    opts(d) {
      const self = this;
      const series = [{ label: d.x_label, value: (u, v) => fmt(v, 6) }];
      for (const s of d.series) {
        const o = { label: s.label, stroke: s.color, width: 1.5, spanGaps: s.style !== "points" };
        if (s.style === "linepoints") {
          o.points = { show: true, size: 7, width: 1, stroke: s.color, fill: s.color };
        } else if (s.style === "points") {
          o.paths = () => null;
          o.points = { show: true, size: 5, width: 1, stroke: s.color, fill: s.color };
        } else if (s.style === "step") {
          o.paths = uPlot.paths.stepped({ align: 1 });
          o.points = { show: false };
        } else if (s.style === "bars") {
          o.paths = uPlot.paths.bars({ size: [0.9, Infinity] });
          o.fill = s.color + "99";
          o.points = { show: false };
        } else {
          o.points = { show: false };
        }
        series.push(o);
      }
      const lanes = d.lanes || [];
      const yAxis = { label: d.y_label, size: lanes.length ? 120 : 60, values: tickValues };
      const yScale = { auto: true };
      // Error bars stay inside the plot: the y range covers them.
      if (d.series.some((s) => s.err)) {
        yScale.range = (u, mn, mx) => {
          let lo = mn, hi = mx;
          d.series.forEach((s, i) => {
            if (!s.err || !u.series[i + 1].show) return;
            for (const e of s.err) if (e) { lo = lo == null ? e[0] : Math.min(lo, e[0]); hi = hi == null ? e[1] : Math.max(hi, e[1]); }
          });
          if (lo == null || hi == null) return [0, 1];
          const pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.1 || 1;
          return [lo >= 0 && lo - pad < 0 ? 0 : lo - pad, hi + pad];
        };
      }
      if (lanes.length) {
        yAxis.splits = () => lanes.map((_, i) => i);
        yAxis.values = (u, splits) => splits.map((v) => lanes[v] || "");
        yScale.auto = false;
        yScale.range = [-0.6, lanes.length - 0.4];
      }
      return {
        width: Math.max(300, this.plot.clientWidth || 800),
        height: lanes.length ? 90 + 60 * lanes.length : 320,
        series,
        scales: { x: { time: false }, y: yScale },
        axes: [{ label: d.x_label, values: tickValues, space: 60 }, yAxis],
        legend: { live: false },
        cursor: {
          drag: { x: true, y: false, setScale: true },
          bind: {
            dblclick: () => () => { self.reset(); return null; },
            mousedown: (u, targ, handler) => (e) => {
              if (e.shiftKey) { self.startPan(e); return null; }
              return handler(e);
            },
          },
        },
        hooks: {
          setScale: [(u, key) => {
            if (key !== "x" || self.programmatic) return;
            self.showRange();
            clearTimeout(self.timer);
            self.root.dataset.loading = "1"; // pending until the zoomed range is fetched
            self.seq++; // a fetch already in flight must not draw over the new range
            self.timer = setTimeout(() => self.view(u.scales.x.min, u.scales.x.max), 150);
          }],
          draw: [(u) => self.drawOverlay(u)],
          setCursor: [(u) => self.tooltip(u)],
        },
      };
    }

    startPan(e) {
      const u = this.u;
      const x0 = e.clientX;
      const { min, max } = u.scales.x;
      const perPx = (max - min) / u.over.clientWidth;
      const move = (ev) => {
        const dt = (x0 - ev.clientX) * perPx;
        const [a, b] = this.clamp(min + dt, max + dt);
        this.programmatic = true;
        u.setScale("x", { min: a, max: b });
        this.programmatic = false;
        this.showRange();
      };
      const up = () => {
        window.removeEventListener("mousemove", move);
        window.removeEventListener("mouseup", up);
        this.view(u.scales.x.min, u.scales.x.max);
      };
      window.addEventListener("mousemove", move);
      window.addEventListener("mouseup", up);
    }

    render(d) {
      this.data = d;
      this.title.textContent = d.title;
      const sig = d.series.map((s) => s.label + s.style).join("|") + "|" + (d.lanes || []).join(",");
      const data = [d.x, ...d.series.map((s) => s.y)];
      if (!this.u || this.sig !== sig) {
        const shown = this.u ? this.u.series.map((s) => s.show) : null;
        if (this.u) this.u.destroy();
        this.u = new uPlot(this.opts(d), data, this.plot);
        this.sig = sig;
        this.sel = -1;
        this.pointClicks();
        if (shown) shown.forEach((s, i) => { if (i > 0 && !s) this.u.setSeries(i, { show: false }); });
        this.legendKeys();
      } else {
        this.programmatic = true;
        this.u.setData(data, false);
        this.programmatic = false;
      }
      this.programmatic = true;
      this.u.setScale("x", { min: d.range[0], max: d.range[1] });
      this.programmatic = false;
      this.showRange();
      const shown = d.series.reduce((n, s) => n + s.y.filter((v) => v != null).length, 0);
      const total = d.series.reduce((n, s) => n + s.total, 0);
      let foot = d.note ? d.note + ". " : "";
      foot += d.decimated ? `${shown} of ${total} points shown (min/max per pixel; ${d.reduction || "retransmissions and events all kept"}).` : "";
      this.foot.textContent = foot;
    }

    showRange() {
      const { min, max } = this.u.scales.x;
      this.root.dataset.from = min;
      this.root.dataset.to = max;
      const unit = this.data && this.data.time_axis ? " s" : "";
      this.rangeText.textContent = `${fmt(min, 6)} – ${fmt(max, 6)}${unit}`;
    }

    drawOverlay(u) {
      const d = this.data;
      if (!d) return;
      const ctx = u.ctx;
      const { left, top, width, height } = u.bbox;
      ctx.save();
      ctx.beginPath();
      ctx.rect(left, top, width, height);
      ctx.clip();
      for (const b of d.bands || []) {
        const x1 = u.valToPos(b.from, "x", true);
        const x2 = u.valToPos(b.to, "x", true);
        ctx.fillStyle = BAND_COLORS[b.kind] || "rgba(0,0,0,0.1)";
        if (b.full_height) {
          ctx.fillRect(x1, top, Math.max(1, x2 - x1), height);
          continue;
        }
        const yc = u.valToPos(b.lane, "y", true);
        const h = Math.abs(u.valToPos(0, "y", true) - u.valToPos(0.45, "y", true));
        ctx.fillRect(x1, yc - h / 2, Math.max(1, x2 - x1), h);
      }
      const dpr = devicePixelRatio;
      d.series.forEach((s, i) => {
        if (!s.err || !u.series[i + 1].show) return;
        ctx.strokeStyle = s.color;
        ctx.lineWidth = 1.5 * dpr;
        ctx.setLineDash([]);
        s.err.forEach((e, j) => {
          if (!e) return;
          const x = u.valToPos(d.x[j], "x", true);
          const y1 = u.valToPos(e[0], "y", true);
          const y2 = u.valToPos(e[1], "y", true);
          const c = 4 * dpr;
          ctx.beginPath();
          ctx.moveTo(x, y1); ctx.lineTo(x, y2);
          ctx.moveTo(x - c, y1); ctx.lineTo(x + c, y1);
          ctx.moveTo(x - c, y2); ctx.lineTo(x + c, y2);
          ctx.stroke();
        });
      });
      const p = this.sel >= 0 ? this.pointList()[this.sel] : null;
      if (p && u.series[p.si + 1].show) {
        ctx.strokeStyle = "#000";
        ctx.lineWidth = 2 * dpr;
        ctx.beginPath();
        ctx.arc(u.valToPos(d.x[p.idx], "x", true), u.valToPos(d.series[p.si].y[p.idx], "y", true), 7 * dpr, 0, 2 * Math.PI);
        ctx.stroke();
      }
      ctx.font = `${11 * dpr}px sans-serif`;
      ctx.textAlign = "left";
      ctx.textBaseline = "alphabetic";
      // Labels in up to three rows, each placed where it does not overlap the previous one of
      // its row (the tooltip always has the full text).
      const rowEnd = [-Infinity, -Infinity, -Infinity];
      const events = (d.events || []).slice().sort((a, b) => a.t - b.t);
      for (const ev of events) {
        const x = u.valToPos(ev.t, "x", true);
        if (x < left || x > left + width) continue;
        ctx.strokeStyle = EVENT_COLORS[ev.kind] || "#333";
        ctx.lineWidth = 1.5 * dpr;
        ctx.setLineDash(ev.kind === "outage" || ev.kind === "after_end" ? [6 * dpr, 4 * dpr] : []);
        ctx.beginPath();
        ctx.moveTo(x, top);
        ctx.lineTo(x, top + height);
        ctx.stroke();
        const text = SHORT[ev.kind] || ev.short || ev.label;
        const w = ctx.measureText(text).width;
        const right = x + 4 * dpr + w <= left + width;
        const x0 = right ? x + 4 * dpr : x - 4 * dpr - w;
        const row = rowEnd.findIndex((end) => x0 > end + 6 * dpr);
        if (row < 0) continue;
        rowEnd[row] = x0 + w;
        ctx.fillStyle = ctx.strokeStyle;
        ctx.fillText(text, x0, top + (12 + 13 * row) * dpr);
      }
      ctx.restore();
    }

    tooltip(u) {
      const idx = u.cursor.idx;
      const d = this.data;
      const left = u.cursor.left;
      if (idx == null || !d || left == null || left < 0) { this.tip.hidden = true; return; }
      const lines = [];
      const xv = u.posToVal(left, "x");
      lines.push(`${d.x_label}: ${fmt(d.x[idx], 6)}`);
      const lanes = d.lanes || [];
      d.series.forEach((s, i) => {
        if (!u.series[i + 1].show) return;
        const v = s.y[idx];
        if (v == null) return;
        const fr = s.frames[idx];
        const frame = fr != null ? ` (frame ${fr})` : "";
        // On a chart of lanes the value is the lane: name the path, not its index.
        const lane = lanes.length ? lanes[Math.round(v)] : null;
        if (lanes.length) lines.push(`${s.label}${lane && !s.label.endsWith(lane) ? ` on ${lane}` : ""}${frame}`);
        else if (s.tips && s.tips[idx]) lines.push(`${s.label}: ${s.tips[idx]}`);
        else lines.push(`${s.label}: ${fmt(v, 3)}${frame}`);
      });
      const px = (u.over.clientWidth || 1) / (u.scales.x.max - u.scales.x.min);
      for (const ev of d.events || []) {
        if (Math.abs(ev.t - xv) * px < 5) {
          lines.push(`${ev.label} at ${fmt(ev.t, 6)}${ev.frame != null ? ` (frame ${ev.frame})` : ""}`);
        }
      }
      for (const b of d.bands || []) {
        const yv = u.posToVal(u.cursor.top, "y");
        if (xv >= b.from && xv <= b.to && (b.full_height || Math.abs(yv - b.lane) < 0.25)) lines.push(b.label);
      }
      if (lines.length < 2) { this.tip.hidden = true; return; }
      this.tip.textContent = lines.join("\n");
      this.tip.hidden = false;
      const overLeft = u.over.offsetLeft;
      const x = overLeft + left + 14;
      // Left of the cursor when it would not fit on its right (long series names).
      const w = this.tip.offsetWidth || 260;
      this.tip.style.left = Math.max(0, x + w > this.plot.clientWidth ? overLeft + left - 14 - w : x) + "px";
      this.tip.style.top = u.over.offsetTop + u.cursor.top + 14 + "px";
    }

    // The points that carry a reference, of the series shown, by series then x.
    pointList() {
      const d = this.data;
      const out = [];
      if (!d || !this.u) return out;
      d.series.forEach((s, si) => {
        if (!s.refs || !this.u.series[si + 1].show) return;
        s.refs.forEach((r, idx) => { if (r != null && s.y[idx] != null) out.push({ si, idx, ref: r }); });
      });
      return out;
    }

    // ↑ ↓: the next or previous point, its tooltip shown.
    step(dir) {
      const pts = this.pointList();
      this.sel = this.sel < 0 ? (dir > 0 ? 0 : pts.length - 1) : (this.sel + dir + pts.length) % pts.length;
      const p = pts[this.sel];
      const u = this.u;
      const x = this.data.x[p.idx];
      if (x < u.scales.x.min || x > u.scales.x.max) this.reset();
      this.root.dataset.point = p.ref;
      u.redraw(false, false);
      u.setCursor({ left: u.valToPos(x, "x"), top: u.valToPos(this.data.series[p.si].y[p.idx], "y") });
    }

    openPoint(p) {
      if (!p) return;
      const s = this.data.series[p.si];
      this.root.dispatchEvent(new CustomEvent("chartpoint", {
        bubbles: true,
        detail: { ref: p.ref, label: s.label, x: this.data.x[p.idx], chart: this.kind },
      }));
    }

    // A click (not a drag) within 20 px of a point with a reference opens it.
    pointClicks() {
      if (!this.data.series.some((s) => s.refs)) return;
      this.plot.setAttribute("aria-label", `${this.kind} chart: ← → pan, + − zoom, 0 shows everything, ↑ ↓ choose a point, Enter lists what is behind it`);
      const over = this.u.over;
      let down = null;
      over.addEventListener("mousedown", (e) => { down = [e.clientX, e.clientY]; });
      over.addEventListener("click", (e) => {
        if (down && Math.hypot(e.clientX - down[0], e.clientY - down[1]) > 3) return;
        const u = this.u;
        const r = over.getBoundingClientRect();
        const cx = e.clientX - r.left, cy = e.clientY - r.top;
        const pts = this.pointList();
        let best = -1, bd = 20;
        pts.forEach((p, i) => {
          const dx = u.valToPos(this.data.x[p.idx], "x") - cx;
          const dy = u.valToPos(this.data.series[p.si].y[p.idx], "y") - cy;
          const dist = Math.hypot(dx, dy);
          if (dist < bd) { bd = dist; best = i; }
        });
        if (best < 0) return;
        this.sel = best;
        this.root.dataset.point = pts[best].ref;
        u.redraw(false, false);
        this.openPoint(pts[best]);
      });
    }

    // Legend entries as buttons: Tab reaches them, Enter or Space shows / hides the series.
    legendKeys() {
      const rows = this.u.root.querySelectorAll(".u-legend tr.u-series");
      // Without a live legend uPlot makes no row for the x series.
      const first = this.u.series.length - rows.length;
      rows.forEach((row, r) => {
        const i = r + first;
        if (i === 0) return;
        const th = row.querySelector("th");
        if (!th) return;
        th.tabIndex = 0;
        th.setAttribute("role", "button");
        const sync = () => th.setAttribute("aria-pressed", String(this.u.series[i].show));
        sync();
        th.addEventListener("click", () => setTimeout(sync, 0));
        th.addEventListener("keydown", (e) => {
          if (e.key !== "Enter" && e.key !== " ") return;
          e.preventDefault();
          th.click();
        });
      });
    }

    resize() {
      if (this.u) this.u.setSize({ width: Math.max(300, this.plot.clientWidth), height: this.u.height });
    }
  }

  const charts = [];
  section.querySelectorAll(".chart[data-chart]").forEach((c) => charts.push(new Chart(c)));
  window.dashboardCharts = charts;
  // Zoom every chart with a time axis to [from, to] (padded by a quarter on each side, at least
  // 50 ms), for DATA sender `s` when given.
  window.dashboardZoom = (from, to, s) => {
    let changed = false;
    if (s != null && s !== "" && String(s) !== String(sender)) {
      const radio = section.querySelector(`input[name="sender"][value="${s}"]`);
      if (radio) {
        radio.checked = true;
        sender = s;
        changed = true;
      }
    }
    const pad = Math.max((to - from) / 4, 0.05);
    const timed = charts.filter((c) => c.data && c.data.time_axis);
    const ref = timed[0];
    let range = [from - pad, to + pad];
    if (ref) range = [Math.max(ref.data.full[0], range[0]), Math.min(ref.data.full[1], range[1])];
    for (const c of charts) {
      if (c.data && !c.data.time_axis) { if (changed) c.load(null, null); continue; }
      c.load(range[0], range[1]);
    }
    section.scrollIntoView({ block: "start" });
  };
  section.querySelectorAll('input[name="sender"]').forEach((r) =>
    r.addEventListener("change", () => {
      sender = r.value;
      charts.forEach((c) => c.reset());
    }));
  let rt;
  window.addEventListener("resize", () => {
    clearTimeout(rt);
    rt = setTimeout(() => charts.forEach((c) => c.resize()), 200);
  });
})();
