// Interactive charts (uPlot): every .chart[data-chart] in #charts loads its data from
// `${data-base}/${kind}`; drag zooms (the server decimates the new range), Shift+drag or the
// arrow buttons pan, double-click or "reset" shows everything, legend entries toggle series.
(function () {
  "use strict";
  const section = document.getElementById("charts");
  if (!section || typeof uPlot === "undefined") return;
  const base = section.dataset.base;
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
      mk("◀", "pan left", () => this.pan(-0.5));
      mk("▶", "pan right", () => this.pan(0.5));
      mk("zoom out", "zoom out ×2", () => this.zoomOut());
      mk("reset", "show the whole range", () => this.reset());
      this.rangeText = el("span", "chart-range");
      bar.appendChild(this.rangeText);
      this.status = el("span", "chart-status");
      bar.appendChild(this.status);
      this.plot = el("div", "chart-plot");
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

    pan(frac) {
      if (!this.u) return;
      const { min, max } = this.u.scales.x;
      const d = (max - min) * frac;
      this.load(min + d, max + d);
    }

    zoomOut() {
      if (!this.u) return;
      const { min, max } = this.u.scales.x;
      const w = max - min;
      const full = this.data.full;
      this.load(Math.max(full[0], min - w / 2), Math.min(full[1], max + w / 2));
    }

    reset() {
      this.load(null, null);
    }

    opts(d) {
      const self = this;
      const series = [{ label: d.x_label, value: (u, v) => fmt(v, 6) }];
      for (const s of d.series) {
        const o = { label: s.label, stroke: s.color, width: 1.5, spanGaps: s.style !== "points" };
        if (s.style === "points") {
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
      const yAxis = { label: d.y_label, size: lanes.length ? 120 : 60 };
      const yScale = { auto: true };
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
        axes: [{ label: d.x_label }, yAxis],
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
            self.timer = setTimeout(() => self.load(u.scales.x.min, u.scales.x.max), 150);
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
        this.programmatic = true;
        u.setScale("x", { min: min + dt, max: max + dt });
        this.programmatic = false;
        this.showRange();
      };
      const up = () => {
        window.removeEventListener("mousemove", move);
        window.removeEventListener("mouseup", up);
        this.load(u.scales.x.min, u.scales.x.max);
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
        if (shown) shown.forEach((s, i) => { if (i > 0 && !s) this.u.setSeries(i, { show: false }); });
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
      foot += d.decimated ? `${shown} of ${total} points shown (min/max per pixel; retransmissions and events all kept).` : "";
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
      d.series.forEach((s, i) => {
        if (!u.series[i + 1].show) return;
        const v = s.y[idx];
        if (v == null) return;
        const fr = s.frames[idx];
        lines.push(`${s.label}: ${fmt(v, 3)}${fr != null ? ` (frame ${fr})` : ""}`);
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
      this.tip.style.left = Math.min(x, this.plot.clientWidth - 260) + "px";
      this.tip.style.top = u.over.offsetTop + u.cursor.top + 14 + "px";
    }

    resize() {
      if (this.u) this.u.setSize({ width: Math.max(300, this.plot.clientWidth), height: this.u.height });
    }
  }

  const charts = Array.from(section.querySelectorAll(".chart[data-chart]")).map((c) => new Chart(c));
  window.dashboardCharts = charts;
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
