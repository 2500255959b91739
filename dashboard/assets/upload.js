// Upload widget: drag-and-drop or file picker, one XMLHttpRequest per file (upload progress),
// then polling of GET /api/captures/{id} (analysis progress) until the results page opens.
(function () {
  "use strict";
  const root = document.getElementById("upload");
  if (!root) return;
  const max = Number(root.dataset.max);
  const drop = document.getElementById("drop");
  const input = document.getElementById("file-input");
  const list = document.getElementById("uploads");
  let batch = null;

  function human(n) {
    const u = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return `${i ? n.toFixed(1) : n} ${u[i]}`;
  }

  function item(file) {
    const li = document.createElement("li");
    li.className = "upload-item";
    li.innerHTML = '<span class="name"></span> <span class="size"></span>' +
      '<progress max="1" value="0"></progress> <span class="state">waiting</span>';
    li.querySelector(".name").textContent = file.name;
    li.querySelector(".size").textContent = human(file.size);
    list.appendChild(li);
    return {
      li,
      bar: li.querySelector("progress"),
      set(state, cls) {
        const s = li.querySelector(".state");
        s.textContent = state;
        li.dataset.state = cls || "";
        if (cls === "error") keep(li);
      },
    };
  }

  // An error stays beside its file until dismissed (role="alert" announces it).
  function keep(li) {
    li.setAttribute("role", "alert");
    if (li.querySelector("button.dismiss")) return;
    const b = document.createElement("button");
    b.type = "button";
    b.className = "link dismiss";
    b.textContent = "dismiss";
    b.setAttribute("aria-label", `dismiss the error about ${li.querySelector(".name").textContent}`);
    b.addEventListener("click", () => li.remove());
    li.appendChild(b);
  }

  // The captures table of the home page, fetched again (a reload would wipe the errors).
  async function refreshList() {
    const table = document.getElementById("captures");
    const empty = document.getElementById("no-captures");
    if (!table && !empty) return;
    const r = await fetch(location.pathname, { headers: { Accept: "text/html" } });
    if (!r.ok) return;
    const doc = new DOMParser().parseFromString(await r.text(), "text/html");
    const fresh = doc.getElementById("captures");
    if (!fresh) return;
    if (table) table.tBodies[0].replaceWith(fresh.tBodies[0]);
    else empty.replaceWith(fresh.closest(".table-wrap") || fresh);
  }

  function send(file, ui) {
    return new Promise((resolve) => {
      if (file.size > max) {
        ui.set(`too large: the limit is ${human(max)}`, "error");
        return resolve(null);
      }
      const xhr = new XMLHttpRequest();
      const form = new FormData();
      form.append("file", file, file.name);
      xhr.open("POST", "/api/captures");
      xhr.setRequestHeader("Accept", "application/json");
      xhr.upload.onprogress = (e) => {
        if (e.lengthComputable) {
          ui.bar.value = e.loaded / e.total;
          ui.set(`uploading ${human(e.loaded)} of ${human(e.total)} (${Math.round((100 * e.loaded) / e.total)}%)` +
            " · analysed as it arrives when a slot is free", "uploading");
        }
      };
      xhr.onload = () => {
        let body = {};
        try { body = JSON.parse(xhr.responseText); } catch (_) { /* not JSON */ }
        if (xhr.status === 202 && body.captures && body.captures[0] && body.captures[0].id) {
          const c = body.captures[0];
          ui.set(c.reused ? "already analysed" : c.status === "running" ? "analysing" : "queued for analysis", "queued");
          return resolve(c.id);
        }
        const msg = body.error || (xhr.status === 413 ? `too large: the limit is ${human(max)}` : `HTTP ${xhr.status}`);
        ui.set(msg, "error");
        resolve(null);
      };
      xhr.onerror = () => {
        ui.set(file.size > max ? `too large: the limit is ${human(max)}` : "upload failed (connection closed)", "error");
        resolve(null);
      };
      xhr.send(form);
    });
  }

  async function follow(id, ui) {
    for (;;) {
      const r = await fetch(`/api/captures/${id}?limit=0`, { headers: { Accept: "application/json" } });
      const c = await r.json();
      if (c.status === "done") {
        // The summary is published (the tables follow in the background).
        ui.bar.value = 1;
        const a = document.createElement("a");
        a.href = `/captures/${id}`;
        a.textContent = "results";
        const tables = c.tables && c.tables.status === "ready" ? "" : " (tables being written)";
        ui.set(`analysed${tables}: `, "done");
        ui.li.querySelector(".state").appendChild(a);
        return id;
      }
      if (c.status === "failed") {
        ui.set(`analysis failed: ${c.error}`, "error");
        return null;
      }
      const p = c.progress && c.progress.total ? c.progress.bytes / c.progress.total : 0;
      ui.bar.value = p;
      const text = window.sctpProgressText ? window.sctpProgressText(c.progress) : "";
      ui.set(c.status === "running" ? `analysing: ${text}` : text || "queued for analysis", "analysing");
      await new Promise((res) => setTimeout(res, 400));
    }
  }

  async function handle(files) {
    files = Array.from(files);
    if (!files.length) return;
    const mine = (batch = {});
    const jobs = files.map(async (f) => {
      const ui = item(f);
      const id = await send(f, ui);
      return id ? follow(id, ui) : null;
    });
    const ids = (await Promise.all(jobs)).filter(Boolean);
    if (batch !== mine) return;
    if (files.length === 1 && ids.length === 1) location.href = `/captures/${ids[0]}`;
    else if (ids.length && ids.length === files.length && document.getElementById("captures") !== null) location.reload();
    else if (ids.length) await refreshList();
  }

  input.addEventListener("change", () => { handle(input.files); input.value = ""; });
  ["dragenter", "dragover"].forEach((t) => drop.addEventListener(t, (e) => {
    e.preventDefault();
    drop.classList.add("over");
  }));
  ["dragleave", "drop"].forEach((t) => drop.addEventListener(t, () => drop.classList.remove("over")));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    handle(e.dataTransfer.files);
  });
})();
