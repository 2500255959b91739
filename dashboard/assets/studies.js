// Studies page: a chart point (charts.js "chartpoint": a click, or ↑ ↓ then Enter on a focused
// chart) lists the captures behind it, copied from its table row (`study-row-N`), each linking
// to its capture page; focus moves to the list so Tab reaches the links.
(function () {
  "use strict";
  const panel = document.getElementById("study-point");
  const charts = document.getElementById("charts");
  if (!panel || !charts) return;
  const title = document.getElementById("study-point-title");
  const list = document.getElementById("study-point-captures");
  const rowLink = document.getElementById("study-point-row");
  let opener = null;

  function show(ref, label, x, metric) {
    const row = document.getElementById(ref);
    if (!row) return;
    const src = row.querySelector("ul.study-captures");
    const n = src ? src.children.length : 0;
    title.textContent = `${metric}, ${label}, x = ${x}: ${n} capture${n === 1 ? "" : "s"}`;
    list.replaceChildren(...(src ? Array.from(src.children).map((li) => li.cloneNode(true)) : []));
    rowLink.href = `#${ref}`;
    panel.dataset.ref = ref;
    document.querySelectorAll("tr.zoomed").forEach((r) => r.classList.remove("zoomed"));
    row.classList.add("zoomed");
    panel.hidden = false;
    title.focus();
  }

  charts.addEventListener("chartpoint", (e) => {
    opener = e.target.querySelector(".chart-plot");
    const d = e.detail;
    show(d.ref, d.label, d.x, d.chart);
  });
  rowLink.addEventListener("click", () => {
    const row = document.getElementById(panel.dataset.ref);
    const det = row && row.querySelector("details");
    if (det) det.open = true;
  });
  document.getElementById("study-point-close").addEventListener("click", () => {
    panel.hidden = true;
    if (opener) opener.focus();
  });
})();
