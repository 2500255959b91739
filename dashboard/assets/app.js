// Small helpers of every page: sortable tables, "show in charts" rows, copy buttons, delete
// buttons, and the polling of a capture whose analysis is still running.
(function () {
  "use strict";

  // Sortable tables: click a header to sort by that column (numbers numerically).
  function cellValue(td) {
    const raw = td.dataset.sort != null ? td.dataset.sort : td.textContent.trim();
    const n = parseFloat(raw.replace(/,/g, ""));
    return isNaN(n) || !/^[-+]?[\d.,]+(e[-+]?\d+)?(\s|$|%|\/)/i.test(raw) ? raw.toLowerCase() : n;
  }
  // Each header is reachable with Tab and sorts with Enter or Space (aria-sort tells the
  // order); a click on the header outside its definition link sorts too.
  document.querySelectorAll("table.sortable").forEach((table) => {
    const heads = table.querySelectorAll("thead th");
    heads.forEach((th, col) => {
      if (!th.textContent.trim()) return;
      th.classList.add("sort");
      th.tabIndex = 0;
      th.title = th.title || `sort by ${th.textContent.trim()} (click, or Enter)`;
      const sort = () => {
        const asc = th.dataset.dir !== "asc";
        heads.forEach((h) => { delete h.dataset.dir; h.removeAttribute("aria-sort"); });
        th.dataset.dir = asc ? "asc" : "desc";
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        rows.sort((a, b) => {
          const x = cellValue(a.cells[col]);
          const y = cellValue(b.cells[col]);
          const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
          return asc ? c : -c;
        });
        rows.forEach((r) => body.appendChild(r));
      };
      th.addEventListener("click", (e) => { if (!e.target.closest("a, button")) sort(); });
      th.addEventListener("keydown", (e) => {
        if (e.target !== th || (e.key !== "Enter" && e.key !== " ")) return;
        e.preventDefault();
        sort();
      });
    });
  });

  // "show in charts": a failover, timeout, stall or lifecycle row zooms every chart of the page
  // to its time (charts.js: window.dashboardZoom).
  function zoomTo(el) {
    if (!window.dashboardZoom) return;
    const t0 = Number(el.dataset.t0);
    const t1 = Number(el.dataset.t1);
    if (!isFinite(t0) || !isFinite(t1)) return;
    document.querySelectorAll(".zoomed").forEach((z) => z.classList.remove("zoomed"));
    el.classList.add("zoomed");
    window.dashboardZoom(t0, t1, el.dataset.sender);
  }
  document.addEventListener("click", (e) => {
    const z = e.target.closest(".zoomable");
    if (!z) return;
    if (e.target.closest("button.zoom-to") || !e.target.closest("a, button, summary, code, input")) zoomTo(z);
  });

  // Copy buttons (Wireshark display filters).
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    const ta = document.createElement("textarea");
    ta.value = text;
    document.body.appendChild(ta);
    ta.select();
    document.execCommand("copy");
    ta.remove();
    return Promise.resolve();
  }
  document.addEventListener("click", (e) => {
    const b = e.target.closest("button.copy");
    if (!b) return;
    copyText(b.dataset.copy).then(() => {
      const old = b.textContent;
      b.textContent = "copied";
      setTimeout(() => (b.textContent = old), 1200);
    });
  });

  // Delete buttons.
  document.addEventListener("click", async (e) => {
    const b = e.target.closest("button[data-delete]");
    if (!b) return;
    if (!confirm(`Delete ${b.dataset.name} and its results?`)) return;
    const r = await fetch(`/api/captures/${b.dataset.delete}`, { method: "DELETE" });
    if (!r.ok) {
      alert((await r.json().catch(() => ({}))).error || r.statusText);
      return;
    }
    const row = b.closest("tr[data-id]");
    if (row) row.remove();
    else location.href = "/";
  });

  // One line of progress: phase, bytes, packets and associations so far, time left.
  function progressText(p) {
    if (!p) return "";
    let s = p.detail || p.phase;
    if (p.phase === "reading" || p.phase === "writing_tables") {
      s += ` · ${p.packets.toLocaleString()} packets, ${p.associations.toLocaleString()} associations`;
      if (p.eta_s != null) s += ` · about ${Math.ceil(p.eta_s)} s left`;
    }
    return s;
  }
  window.sctpProgressText = progressText;

  // A capture still being analysed: poll until its summary is published, then show it.
  const pending = document.getElementById("pending");
  if (pending) {
    const id = pending.dataset.id;
    const status = document.getElementById("pending-status");
    const bar = document.getElementById("pending-progress");
    const detail = document.getElementById("pending-detail");
    const poll = async () => {
      const r = await fetch(`/api/captures/${id}?limit=0`);
      if (!r.ok) return;
      const c = await r.json();
      status.textContent = c.status;
      status.className = `status status-${c.status}`;
      if (c.progress && c.progress.total) {
        bar.value = c.progress.bytes / c.progress.total;
        detail.textContent = progressText(c.progress);
      }
      if (c.status === "done") location.reload();
      else if (c.status === "failed") detail.textContent = c.error || "failed";
      else setTimeout(poll, 500);
    };
    poll();
  }

  // The summary is shown, the tables are still being written: say how far, reload when ready.
  // `tables-pending` is shown by the server (no table yet); `tables-wait` (pages whose charts
  // need the tables) is shown here once the API says they are pending.
  const tablesPending = document.getElementById("tables-pending") || document.getElementById("tables-wait");
  if (tablesPending) {
    const id = tablesPending.dataset.id;
    const detail = document.getElementById(`${tablesPending.id}-detail`);
    const poll = async () => {
      const r = await fetch(`/api/captures/${id}?limit=0`);
      if (!r.ok) return;
      const c = await r.json();
      const t = c.tables ? c.tables.status : "pending";
      if (t === "ready") {
        if (!tablesPending.hidden) location.reload();
        return;
      }
      tablesPending.hidden = false;
      if (t === "failed") {
        detail.textContent = `failed: ${c.error || "unknown error"}`;
        return;
      }
      detail.textContent = progressText(c.progress);
      setTimeout(poll, 700);
    };
    poll();
  }
})();
