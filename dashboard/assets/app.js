// Small helpers of every page: sortable tables, copy buttons, delete buttons, and the polling
// of a capture whose analysis is still running.
(function () {
  "use strict";

  // Sortable tables: click a header to sort by that column (numbers numerically).
  function cellValue(td) {
    const raw = td.dataset.sort != null ? td.dataset.sort : td.textContent.trim();
    const n = parseFloat(raw.replace(/,/g, ""));
    return isNaN(n) || !/^[-+]?[\d.,]+(e[-+]?\d+)?(\s|$|%|\/)/i.test(raw) ? raw.toLowerCase() : n;
  }
  document.querySelectorAll("table.sortable").forEach((table) => {
    table.querySelectorAll("thead th").forEach((th, col) => {
      th.classList.add("sort");
      th.title = "sort";
      th.addEventListener("click", () => {
        const asc = th.dataset.dir !== "asc";
        table.querySelectorAll("thead th").forEach((h) => delete h.dataset.dir);
        th.dataset.dir = asc ? "asc" : "desc";
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        rows.sort((a, b) => {
          const x = cellValue(a.cells[col]);
          const y = cellValue(b.cells[col]);
          const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
          return asc ? c : -c;
        });
        rows.forEach((r) => body.appendChild(r));
      });
    });
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
