// Browser test of the dashboard in Debian's headless Chromium, driven by playwright-core.
// run.sh starts the server and sets DASHBOARD_URL, CAPTURE (a pcap with a failover), SHOTS
// (screenshot folder), when the public capture is there, ABORT_CAPTURE (associations aborted
// with cause 12), and HOL_CAPTURE (a multistream run with loss: head-of-line blocking). A capture
// with an ABORT and a refused INIT is also built here.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, chartReady as waitChart, dragX } from "./common.mjs";
import path from "node:path";

const URL = process.env.DASHBOARD_URL;
const CAPTURE = process.env.CAPTURE;
const SHOTS = process.env.SHOTS || "/tmp";
const ABORT_CAPTURE = process.env.ABORT_CAPTURE || "";
const HOL_CAPTURE = process.env.HOL_CAPTURE || "";
let browser;
let page;
let captureId;

async function shot(name) {
  const file = path.join(SHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

before(async () => {
  assert.ok(URL, "DASHBOARD_URL is not set");
  assert.ok(CAPTURE, "CAPTURE is not set");
  browser = await launch();
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
});

after(async () => {
  if (browser) await browser.close();
});

// Pixels of a canvas that are drawn (not transparent, not white).
async function drawnPixels(selector) {
  return page.$eval(selector, (c) => {
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] > 0 && (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240)) n++;
    }
    return n;
  });
}

const chartReady = (kind) => waitChart(page, kind);

test("upload, results, association with failover, TSN chart zoom", async () => {
  const t0 = Date.now();
  await page.goto(`${URL}/upload`);
  await shot("1-upload");
  await page.setInputFiles("#file-input", CAPTURE);
  await page.waitForURL(/\/captures\/[0-9a-f]{64}$/, { timeout: 120000 });
  const id = page.url().split("/").pop();
  captureId = id;
  console.log(`upload -> results page: ${Date.now() - t0} ms`);
  await page.waitForSelector("#associations");
  await shot("2-capture");

  const api = await (await fetch(`${URL}/api/captures/${id}`)).json();
  assert.equal(api.status, "done");
  const fo = api.result.associations[0].directions[0].failovers[0];
  assert.ok(fo, "the capture has a failover in its JSON");

  const t1 = Date.now();
  await page.click('#associations a[href$="/associations/0"]');
  await page.waitForSelector("#failovers tr.failover");
  const ms = await page.textContent("#failovers tr.failover .failover-ms");
  assert.equal(ms.trim(), JSON.stringify(fo.failover_ms));
  const row = await page.textContent("#failovers tr.failover");
  assert.ok(row.includes(fo.from) && row.includes(fo.to), row);

  const tsn = await chartReady("tsn");
  console.log(`association page with TSN chart drawn: ${Date.now() - t1} ms`);
  for (const k of ["timeline", "rtt", "throughput", "sack_delay"]) await chartReady(k);
  const canvas = `${tsn} canvas`;
  const drawn = await drawnPixels(canvas);
  assert.ok(drawn > 1000, `TSN canvas looks blank (${drawn} drawn pixels)`);
  await shot("3-association");

  // Hover: the tooltip names a frame.
  const over = await page.$(`${tsn} .u-over`);
  await over.scrollIntoViewIfNeeded();
  const box = await over.boundingBox();
  await page.mouse.move(box.x + box.width * 0.45, box.y + box.height * 0.5);
  await page.waitForSelector(`${tsn} .chart-tip:not([hidden])`, { timeout: 5000 });
  const tip = await page.textContent(`${tsn} .chart-tip`);
  assert.match(tip, /frame \d+/);

  // Drag to zoom: the x range shrinks to the dragged part and the data is re-requested.
  const before = await page.$eval(tsn, (e) => [Number(e.dataset.from), Number(e.dataset.to)]);
  await dragX(page, box, 0.4, 0.6);
  await page.waitForFunction(([s, b]) => {
    const e = document.querySelector(s);
    return !e.dataset.loading && Number(e.dataset.to) - Number(e.dataset.from) < (b[1] - b[0]) * 0.5;
  }, [tsn, before], { timeout: 10000 });
  await page.waitForFunction((s) => !document.querySelector(s).dataset.loading, tsn);
  const afterZoom = await page.$eval(tsn, (e) => [Number(e.dataset.from), Number(e.dataset.to)]);
  assert.ok(afterZoom[0] > before[0] && afterZoom[1] < before[1], `${before} -> ${afterZoom}`);
  assert.ok((await drawnPixels(canvas)) > 500, "zoomed TSN canvas is blank");
  await page.locator(tsn).screenshot({ path: path.join(SHOTS, "4-tsn-zoomed.png") });

  // Reset brings the whole range back.
  await page.click(`${tsn} button:has-text("reset")`);
  await page.waitForFunction(([s, b]) => {
    const e = document.querySelector(s);
    return !e.dataset.loading && Math.abs(Number(e.dataset.to) - b[1]) < 1e-6;
  }, [tsn, before], { timeout: 10000 });

  await page.locator('.chart[data-chart="timeline"]').screenshot({ path: path.join(SHOTS, "5-timeline.png") });
});

test("captures list and compare page", async () => {
  await page.goto(`${URL}/`);
  await page.waitForSelector("#captures tbody tr");
  const rows = await page.$$eval("#captures tbody tr", (r) => r.length);
  assert.ok(rows >= 1);
  await shot("6-index");
  const link = await page.$eval("#captures tbody tr a", (a) => a.getAttribute("href"));
  await page.goto(`${URL}${link}/compare`);
  await chartReady("throughput");
  await chartReady("gaps");
  assert.ok((await drawnPixels('.chart[data-chart="throughput"] canvas')) > 500);
  await shot("7-compare");
});

// ---- how associations ended -------------------------------------------------------------------

// CRC32c (Castagnoli, reflected), as SCTP checksums it (RFC 9260 Appendix B).
const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();
function crc32c(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const u16 = (v) => { const b = Buffer.alloc(2); b.writeUInt16BE(v); return b; };
const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32BE(v >>> 0); return b; };
const pad4 = (b) => Buffer.concat([b, Buffer.alloc((4 - (b.length % 4)) % 4)]);
const chunk = (type, flags, value) => pad4(Buffer.concat([Buffer.from([type, flags]), u16(4 + value.length), value]));
const initValue = (tag, tsn, params = Buffer.alloc(0)) =>
  Buffer.concat([u32(tag), u32(65536), u16(2), u16(2), u32(tsn), params]);
const cause = (code, body) => pad4(Buffer.concat([u16(code), u16(4 + body.length), body]));

// One Ethernet / IPv4 / SCTP frame with valid checksums.
function frame(src, dst, sport, dport, vtag, chunks) {
  const sctp = Buffer.concat([u16(sport), u16(dport), u32(vtag), Buffer.alloc(4), ...chunks]);
  sctp.writeUInt32LE(crc32c(sctp), 8);
  const ip = Buffer.concat([Buffer.from([0x45, 0]), u16(20 + sctp.length),
    Buffer.from([0, 1, 0x40, 0, 64, 132, 0, 0]), Buffer.from(src), Buffer.from(dst)]);
  let sum = 0;
  for (let i = 0; i < 20; i += 2) sum += ip.readUInt16BE(i);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  ip.writeUInt16BE(~sum & 0xffff, 10);
  const eth = Buffer.from([2, 0, 0, 0, 0, dst[3], 2, 0, 0, 0, 0, src[3], 0x08, 0x00]);
  return Buffer.concat([eth, ip, sctp]);
}

// 10.1.0.1:5000 <-> 10.1.0.2:38412: handshake, one DATA and its SACK, then an ABORT from
// 10.1.0.2 with cause 12 (User-Initiated Abort); 10.1.0.3:5001 -> 10.1.0.2:38412: an INIT
// answered by an ABORT (Out of Resource).
function abortPcap() {
  const [A, B, C] = [[10, 1, 0, 1], [10, 1, 0, 2], [10, 1, 0, 3]];
  const [tagA, tagB, tagC] = [0x11111111, 0x22222222, 0x33333333];
  const cookie = Buffer.alloc(8, 0xc0);
  const stateCookie = Buffer.concat([u16(7), u16(12), cookie]);
  const dataChunk = chunk(0, 3, Buffer.concat([u32(100), u16(0), u16(0), u32(60), Buffer.from("hello, peer!")]));
  const frames = [
    [0, frame(A, B, 5000, 38412, 0, [chunk(1, 0, initValue(tagA, 100))])],
    [10000, frame(B, A, 38412, 5000, tagA, [chunk(2, 0, initValue(tagB, 500, stateCookie))])],
    [20000, frame(A, B, 5000, 38412, tagB, [chunk(10, 0, cookie)])],
    [30000, frame(B, A, 38412, 5000, tagA, [chunk(11, 0, Buffer.alloc(0))])],
    [100000, frame(A, B, 5000, 38412, tagB, [dataChunk])],
    [110000, frame(B, A, 38412, 5000, tagA, [chunk(3, 0, Buffer.concat([u32(100), u32(65536), u32(0)]))])],
    [500000, frame(B, A, 38412, 5000, tagA, [chunk(6, 0, cause(12, Buffer.from("maintenance")))])],
    [600000, frame(C, B, 5001, 38412, 0, [chunk(1, 0, initValue(tagC, 900))])],
    [610000, frame(B, C, 38412, 5001, tagC, [chunk(6, 0, cause(4, Buffer.alloc(0)))])],
  ];
  const head = Buffer.alloc(24);
  head.writeUInt32LE(0xa1b2c3d4, 0);
  head.writeUInt16LE(2, 4);
  head.writeUInt16LE(4, 6);
  head.writeUInt32LE(65535, 16);
  head.writeUInt32LE(1, 20);
  const recs = frames.map(([us, f]) => {
    const r = Buffer.alloc(16);
    r.writeUInt32LE(1700000000 + Math.floor(us / 1e6), 0);
    r.writeUInt32LE(us % 1e6, 4);
    r.writeUInt32LE(f.length, 8);
    r.writeUInt32LE(f.length, 12);
    return Buffer.concat([r, f]);
  });
  return Buffer.concat([head, ...recs]);
}

async function uploadFile(file) {
  await page.goto(`${URL}/upload`);
  await page.setInputFiles("#file-input", file);
  await page.waitForURL(/\/captures\/[0-9a-f]{64}$/, { timeout: 120000 });
  await page.waitForSelector("#associations");
  const id = page.url().split("/").pop();
  const api = await (await fetch(`${URL}/api/captures/${id}`)).json();
  assert.equal(api.status, "done");
  // The summary comes before the tables (issue 19), and the capture page reloads itself once
  // they are written: leave it (its poller with it), wait for the tables, and open it again, so
  // that no reload lands in the middle of a test's steps.
  await page.goto("about:blank");
  for (let i = 0; i < 600; i++) {
    const c = await (await fetch(`${URL}/api/captures/${id}?limit=0`)).json();
    if (!c.tables || c.tables.status !== "pending") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await page.goto(`${URL}/captures/${id}`);
  await page.waitForSelector("#associations");
  return [id, api.result];
}

// "10.1.0.2:38412" for endpoint i of an association of the JSON.
const label = (a, i) => `${a.endpoints[i].addresses.join(",")}:${a.endpoints[i].port}`;
const text = async (sel) => (await page.textContent(sel)).trim();

test("lifecycle of the failover capture: Ended column, end panel, lifecycle table, filter", async () => {
  assert.ok(captureId, "the first test uploaded the capture");
  const api = await (await fetch(`${URL}/api/captures/${captureId}`)).json();
  const a = api.result.associations[0];
  await page.goto(`${URL}/captures/${captureId}`);
  const ended = await text("#associations tbody tr:first-child td.ended");
  const expected = { shutdown: `shutdown by ${a.end.by != null ? label(a, a.end.by) : ""}`,
    open_at_capture_end: "open at capture end" }[a.end.kind];
  assert.ok(expected, `unexpected end ${a.end.kind}`);
  assert.equal(ended, expected);
  assert.ok((await text("#ends-summary")).length > 0);

  await page.goto(`${URL}/captures/${captureId}/associations/0`);
  await page.waitForSelector("#end");
  assert.equal(await page.getAttribute("#end", "data-kind"), a.end.kind);
  assert.match(await text("#end h3"), /^Ended: /);
  const rows = await page.$$eval("#lifecycle-events tbody tr", (r) => r.length);
  assert.equal(rows, a.events.length);
  if (a.events.length) {
    assert.equal(await page.getAttribute("#lifecycle-events tbody tr:first-child", "data-kind"), a.events[0].kind);
    if (a.events[0].kind === "init") assert.equal(await text("#lifecycle-events tbody tr:first-child .event-words"), "INIT");
  }
  assert.equal(await text("#assoc-filter code"), a.filter);
  await page.click("#assoc-filter button.copy");
  await page.waitForFunction(() => document.querySelector("#assoc-filter button.copy").textContent === "copied");
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), a.filter);
  await page.locator("#diagnosis").screenshot({ path: path.join(SHOTS, "8-end-panel.png") });
});

test("streams table and SCTP stacks on the association page", async () => {
  assert.ok(captureId, "the first test uploaded the capture");
  const api = await (await fetch(`${URL}/api/captures/${captureId}`)).json();
  const a = api.result.associations[0];
  const d = a.directions[0];
  await page.goto(`${URL}/captures/${captureId}/associations/0`);
  const table = `#streams-${d.sender}`;
  await page.waitForSelector(table);
  const rows = await page.$$eval(`${table} tbody tr`, (r) => r.map((x) => [...x.cells].map((c) => c.textContent.trim())));
  assert.equal(rows.length, Math.min(d.streams.length, 50));
  assert.deepEqual(rows[0].slice(0, 3), [String(d.streams[0].stream), String(d.streams[0].messages), String(d.streams[0].bytes)]);
  assert.match(rows[0][4], /PPID 0 \(not specified\)/);
  assert.match(await text("#upper-layer"), /Upper layer:/);
  const stacks = await page.$$eval("#endpoints td.stack", (t) => t.map((x) => [x.dataset.stack, x.textContent.trim(), x.title]));
  assert.equal(stacks.length, a.endpoints.length);
  for (const [i, [id, words, title]] of stacks.entries()) {
    assert.equal(id, a.endpoints[i].stack.name || "");
    if (id === "usrsctp") assert.ok(words.startsWith("usrsctp ") && words.endsWith(`(${a.endpoints[i].stack.confidence} confidence)`), words);
    assert.ok(title.length > 0, "the stack's evidence is on hover");
  }
  await page.locator("#streams").screenshot({ path: path.join(SHOTS, "12-streams.png") });
});

test("aborted association and refused INIT: Ended column, warning end panel, lifecycle, timeline", async () => {
  const [id, r] = await uploadFile({ name: "abort.pcap", mimeType: "application/octet-stream", buffer: abortPcap() });
  assert.equal(r.associations.length, 2);
  assert.equal(r.associations[0].end.kind, "abort");
  assert.equal(r.associations[1].end.kind, "handshake_failed");
  const cell = "#associations tbody tr:first-child td.ended";
  assert.equal(await text(cell), "aborted by 10.1.0.2:38412: User-Initiated Abort");
  assert.ok(await page.$eval(cell, (td) => td.classList.contains("bad")));
  assert.match(await text("#associations tbody tr:nth-child(2) td.ended"), /^handshake failed, ABORT by 10\.1\.0\.2:38412: Out of Resource$/);
  assert.match(await text("#abort-causes"), /12\s*User-Initiated Abort/);
  await shot("9-capture-aborted");

  await page.goto(`${URL}/`);
  const idx = await text(`#captures tr[data-id="${id}"] td.ended`);
  assert.equal(idx, "1 aborted (User-Initiated Abort), 1 handshake failed (Out of Resource)");

  await page.goto(`${URL}/captures/${id}/associations/0`);
  await page.waitForSelector("#end.end-bad");
  assert.equal(await text("#end h3"), "Ended: Aborted by 10.1.0.2:38412: User-Initiated Abort at 0.5 s (frame 7)");
  // The warning style: red border, and "no failover" is not green.
  const border = await page.$eval("#end", (e) => getComputedStyle(e).borderLeftColor);
  assert.equal(border, "rgb(192, 37, 58)");
  const nf = await page.$eval("#no-failover", (e) => [e.className, getComputedStyle(e).color]);
  assert.ok(!nf[0].includes("ok") && nf[1] !== "rgb(36, 122, 61)", `${nf}`);
  assert.match(await text("#end-causes tbody"), /12\s*User-Initiated Abort/);
  const kinds = await page.$$eval("#lifecycle-events tbody tr", (r) => r.map((x) => x.dataset.kind));
  assert.deepEqual(kinds, r.associations[0].events.map((e) => e.kind));
  assert.equal(await text('#lifecycle-events tr[data-kind="abort"] .event-words'), "ABORT");
  assert.match(await text('#lifecycle-events tr[data-kind="abort"]'), /10\.1\.0\.2:38412/);
  await chartReady("timeline");
  const marks = await page.evaluate(() =>
    window.dashboardCharts.find((c) => c.kind === "timeline").data.events.map((e) => e.short));
  assert.ok(marks.includes("ABORT") && marks.includes("INIT"), `${marks}`);
  await shot("10-association-aborted");
  // "show in charts" on the ABORT row: the timeline zooms to it.
  const abortRow = '#lifecycle-events tr[data-kind="abort"]';
  const at = Number(await page.getAttribute(abortRow, "data-t0"));
  await page.click(`${abortRow} button.zoom-to`);
  await page.waitForFunction((t) => {
    const c = document.querySelector('.chart[data-chart="timeline"]');
    return !c.dataset.loading && Number(c.dataset.from) <= t && Number(c.dataset.to) >= t && Number(c.dataset.to) - Number(c.dataset.from) <= 0.11;
  }, at);

  await page.goto(`${URL}/captures/${id}/associations/1`);
  await page.waitForSelector('#end.end-bad[data-kind="handshake_failed"]');
  assert.match(await text("#end h3"), /^Ended: Handshake failed/);
  // No DATA: no empty plots, a sentence saying why.
  assert.match(await text("#no-data-charts"), /^No charts: the capture holds no DATA chunk of this association/);
  assert.equal(await page.$$eval(".chart", (c) => c.length), 0);
});

test("public capture with ABORTs (cause 12)", { skip: !ABORT_CAPTURE && "ABORT_CAPTURE not set (../shared absent)" }, async () => {
  const [id, r] = await uploadFile(ABORT_CAPTURE);
  const cells = await page.$$eval("#associations tbody td.ended", (t) => t.map((x) => [x.textContent.trim(), x.className]));
  assert.equal(cells.length, r.associations.length);
  let bad = 0;
  for (const [i, a] of r.associations.entries()) {
    if (!["abort", "handshake_failed"].includes(a.end.kind)) continue;
    bad++;
    assert.ok(cells[i][1].includes("bad"), `${cells[i]}`);
    await page.goto(`${URL}/captures/${id}/associations/${a.id}`);
    await page.waitForSelector(`#end.end-bad[data-kind="${a.end.kind}"]`);
    for (const c of a.end.causes) assert.ok((await text("#end")).includes(c.name));
    if (a.end.by != null) assert.equal(await text("#end .end-by"), label(a, a.end.by));
    assert.equal(await page.$$eval("#lifecycle-events tbody tr", (x) => x.length), a.events.length);
  }
  assert.ok(bad > 0);
  await shot("11-public-aborted");
});

test("head-of-line blocking on the association page, readable at 800 px", { skip: !HOL_CAPTURE && "HOL_CAPTURE not set" }, async () => {
  const [id, r] = await uploadFile(HOL_CAPTURE);
  const d = r.associations[0].directions[0];
  assert.ok(d.hol, "the capture has head-of-line figures in its JSON");
  await page.goto(`${URL}/captures/${id}/associations/0`);
  const block = `#hol-${d.sender}`;
  await page.waitForSelector(block, { state: "visible" });
  assert.ok(await page.isVisible(`#direction-${d.sender} ${block}`), "the block is in the direction's panel");
  assert.equal(await page.getAttribute(block, "data-blocked"), String(d.hol.blocked_messages));
  assert.match(await text(`${block} h3`), /^Head-of-line blocking \(from DATA arrivals at the receiver\)$/);
  const blocked = await text(`${block} .hol-blocked`);
  assert.ok(blocked.startsWith(`${d.hol.blocked_messages} of ${d.hol.ordered_messages} ordered messages waited`), blocked);
  assert.ok(blocked.includes(`max ${d.hol.delay_ms.max.toFixed(1)} ms`), blocked);
  const single = await text(`${block} .hol-single`);
  assert.ok(single.startsWith(`On one stream (as TCP delivers): ${d.hol.single_stream_blocked_messages} messages would have waited`), single);
  assert.ok((await text(`${block} .hol-evidence`)).includes(d.hol.evidence));
  // The streams table's "HOL blocked" column: the count of each stream first.
  const table = `#streams-${d.sender}`;
  // Each header: its sort link's words (a "?" beside it links the definition).
  const heads = await page.$$eval(`${table} thead th`, (t) => t.map((x) => (x.querySelector("a.sort-link") || x).textContent.trim()));
  const col = heads.indexOf("HOL blocked (max ms)");
  assert.ok(col >= 0, `${heads}`);
  const cells = await page.$$eval(`${table} tbody tr`, (r, c) => r.map((x) => x.cells[c].textContent.trim()), col);
  assert.deepEqual(cells.map((c) => c.split(" ")[0]), d.streams.map((s) => String(s.hol_blocked_messages)));
  // Everything is text on the page (no hover needed); at 800 px nothing scrolls sideways.
  await page.setViewportSize({ width: 800, height: 900 });
  try {
    await page.waitForFunction(() => document.documentElement.clientWidth <= 800);
    const over = await page.evaluate((sels) => sels.map((s) => {
      const e = document.querySelector(s);
      return [s, e.scrollWidth - e.clientWidth];
    }).concat([["page", document.documentElement.scrollWidth - document.documentElement.clientWidth]]), [block, "#streams"]);
    for (const [s, px] of over) assert.ok(px <= 0, `${s} scrolls sideways by ${px} px at 800 px`);
    await page.locator(`#direction-${d.sender}`).screenshot({ path: path.join(SHOTS, "13-hol-800px.png") });
    await page.locator("#streams").screenshot({ path: path.join(SHOTS, "14-streams-hol-800px.png") });
  } finally {
    await page.setViewportSize({ width: 1400, height: 900 });
  }
});

// ---- scale: a capture of many associations (issue 16 part 1) -----------------------------------

const MANY_CAPTURE = process.env.MANY_CAPTURE || "";

test("many associations: pages, server-side filter, sort and pagination with the keyboard", { skip: !MANY_CAPTURE && "MANY_CAPTURE not set" }, async () => {
  const [id] = await uploadFile(MANY_CAPTURE);
  const list = await (await fetch(`${URL}/api/captures/${id}/associations?limit=1`)).json();
  const total = list.counts.total;
  assert.ok(total >= 1000, `${total} associations`);
  const fmt = (n) => n.toLocaleString("en-US");
  const count = () => text("#associations-count");
  const rowIds = () => page.$$eval("#associations tbody tr", (r) => r.map((x) => Number(x.dataset.id)));

  // First page: 50 rows of all, the counts, the pager.
  assert.match(await count(), new RegExp(`^showing 1–50 of ${fmt(total)} associations, ${fmt(list.counts.with_failovers)} with failovers`));
  assert.deepEqual(await rowIds(), Array.from({ length: 50 }, (_, i) => i));
  assert.equal(await text(".pager-page"), `page 1 of ${Math.ceil(total / 50)}`);
  await shot("many-1-capture");

  // Next page with the keyboard: Tab reaches the pager link, Enter follows it.
  await page.focus("a.pager-next");
  await page.keyboard.press("Enter");
  await page.waitForURL(/offset=50/);
  assert.deepEqual(await rowIds(), Array.from({ length: 50 }, (_, i) => 50 + i));
  assert.match(await count(), new RegExp(`^showing 51–100 of ${fmt(total)}`));

  // Filter (a plain form): associations with failovers, submitted with Enter in the search box.
  await page.check('#association-filter input[name="failover"]');
  await page.focus('#association-filter input[name="q"]');
  await page.keyboard.press("Enter");
  await page.waitForURL(/failover=1/);
  const withFo = list.counts.with_failovers;
  assert.match(await count(), new RegExp(`of ${fmt(withFo)} associations? that match \\(of ${fmt(total)} in the capture\\)`));
  const foCells = await page.$$eval("#associations tbody tr", (r) => r.map((x) => Number(x.cells[9].textContent)));
  assert.equal(foCells.length, Math.min(50, withFo));
  assert.ok(foCells.every((n) => n > 0), `${foCells}`);
  await shot("many-2-filter-failovers");

  // Sort by packets, most first (a header link, followed with the keyboard); the filter stays.
  await page.focus('#associations th a[data-sort="packets"]');
  await page.keyboard.press("Enter");
  await page.waitForURL(/sort=packets/);
  assert.ok(page.url().includes("failover=1"), page.url());
  assert.equal(await page.getAttribute('#associations th[aria-sort]', "aria-sort"), "descending");
  const packets = await page.$$eval("#associations tbody tr", (r) => r.map((x) => Number(x.cells[4].textContent)));
  assert.ok(packets.every((p, i) => i === 0 || packets[i - 1] >= p), `${packets}`);

  // End kind and text search; clear.
  await page.goto(`${URL}/captures/${id}`);
  await page.selectOption('#association-filter select[name="end"]', "abort");
  await page.click('#association-filter button[type="submit"]');
  await page.waitForURL(/end=abort/);
  const aborted = await page.$$eval("#associations tbody td.ended", (t) => t.map((x) => x.textContent.trim()));
  assert.ok(aborted.length > 0 && aborted.every((t) => t.startsWith("aborted")), `${aborted}`);
  await page.fill('#association-filter input[name="q"]', "no-such-association");
  await page.keyboard.press("Enter");
  await page.waitForSelector("#associations-none");
  await page.click("#filter-clear");
  await page.waitForSelector("#associations tbody tr");
  assert.equal((await rowIds()).length, 50);

  // Association page: the identical spurious failovers grouped, the others behind "show all".
  await page.goto(`${URL}/captures/${id}/associations/0`);
  await page.waitForSelector(".failover-group");
  const n = Number(await page.getAttribute(".failover-group", "data-count"));
  assert.ok(n > 1);
  assert.match(await text(".failover-group .group-heading"), new RegExp(`^${n} spurious failovers of DATA sender 0, same cause: `));
  const visibleCards = async () => page.$$eval(".failover-card", (c) => c.filter((x) => x.checkVisibility()).length);
  assert.equal(await visibleCards(), 1);
  await page.focus(".failover-group details.group-rest > summary");
  await page.keyboard.press("Enter");
  assert.equal(await visibleCards(), n);
  await shot("many-3-association");

  // Compare page: the top 10 directions by a metric, a selector to change it.
  await page.goto(`${URL}/captures/${id}/compare`);
  assert.equal(await page.$$eval("#comparison thead th.sctp", (t) => t.length), 10);
  await page.selectOption('#compare-select select[name="metric"]', "retransmissions");
  await page.selectOption('#compare-select select[name="top"]', "5");
  await page.click('#compare-select button[type="submit"]');
  await page.waitForURL(/metric=retransmissions/);
  assert.equal(await page.$$eval("#comparison thead th.sctp", (t) => t.length), 5);
  assert.match(await text("#compare-count"), /^Showing the 5 of [\d,]+ directions with the highest retransmissions\.$/);
  await chartReady("gaps");
  await shot("many-4-compare");

  // Captures list and upload page.
  await page.goto(`${URL}/`);
  await page.waitForSelector("#captures tbody tr");
  await shot("many-5-index");
  await page.goto(`${URL}/upload`);
  await shot("many-6-upload");
});

// ---- studies (issue 17 section 4): the Eklund study of a sample folder, with the keyboard ------
// STUDY_SET: the usrsctp campaign's folder; STUDY_SET_LINUX: the Linux kernel's (the same grid).

const STUDY_SET = process.env.STUDY_SET || "";
const STUDY_SET_LINUX = process.env.STUDY_SET_LINUX || "";

// The table of a study of the Eklund campaign in `set`: a row group per SACK delay, its 36 runs,
// the failover curve; a screenshot `name`.
async function eklundTable(set, name) {
  await page.waitForURL(/template=failover-vs-sack-delay/, { timeout: 60000 });
  await page.waitForSelector("#study-table tbody tr");
  assert.equal(new globalThis.URL(page.url()).searchParams.get("set"), set);
  assert.match(await page.textContent(".study-count"), /^36 captures analysed/);
  const groups = await page.$$eval("#study-table tbody tr", (r) => [...new Set(r.map((x) => x.cells[0].textContent))]);
  assert.deepEqual(groups.sort(), ["sack_delay_ms=0", "sack_delay_ms=200", "sack_delay_ms=40"]);
  const metrics = await page.$$eval("#study-table tbody tr", (r) => r.map((x) => x.cells[2].textContent));
  assert.ok(metrics.includes("failover_ms"), `${metrics}`);
  assert.ok(metrics.includes("sacks_per_data_packet"), `${metrics}`);
  // One interactive chart per metric (charts.js, the association pages' code), one curve per
  // SACK delay, each point with its 95% CI as an error bar.
  for (const m of ["failover_ms", "max_transfer_ms", "rto_at_failure_ms", "sacks_per_data_packet"]) {
    await chartReady(m);
  }
  const info = await page.evaluate(() => window.dashboardCharts.map((c) => ({
    kind: c.kind,
    labels: c.data.series.map((s) => s.label),
    bars: c.data.series.reduce((n, s) => n + (s.err || []).filter((e) => e).length, 0),
    points: c.data.series.reduce((n, s) => n + s.y.filter((v) => v != null).length, 0),
  })));
  const fo = info.find((c) => c.kind === "failover_ms");
  assert.deepEqual(fo.labels, ["sack_delay_ms=0", "sack_delay_ms=40", "sack_delay_ms=200"]);
  assert.equal(fo.points, 12);
  assert.equal(fo.bars, 12, "every failover point of 3 runs has its CI");
  assert.ok(await drawnPixels('.chart[data-chart="failover_ms"] canvas') > 2000);
  await shot(name);
}

// The canvas position (page pixels) of point `idx` of series `si` of chart `kind`.
async function pointAt(kind, si, idx) {
  return page.evaluate(([kind, si, idx]) => {
    const c = window.dashboardCharts.find((x) => x.kind === kind);
    const r = c.u.over.getBoundingClientRect();
    return {
      x: r.left + c.u.valToPos(c.data.x[idx], "x"),
      y: r.top + c.u.valToPos(c.data.series[si].y[idx], "y"),
    };
  }, [kind, si, idx]);
}

// The study page's charts: tooltips, zoom by keyboard (all curves of the study together), a
// point's captures by click and by keyboard, and a capture page one click away.
async function studyInteractions(set, name) {
  const sel = '.chart[data-chart="failover_ms"]';
  await page.locator(sel).scrollIntoViewIfNeeded();
  // Tooltip over the SACK delay 200 curve's last point (90 ms messages) names the curve.
  const p = await pointAt("failover_ms", 2, 3);
  await page.mouse.move(p.x, p.y);
  await page.waitForSelector(`${sel} .chart-tip:not([hidden])`);
  const tip = await page.textContent(`${sel} .chart-tip`);
  assert.match(tip, /message_interval_ms: 90/);
  assert.match(tip, /sack_delay_ms=200: n 3, mean [\d.]+, 95% CI \[-?[\d.]+, [\d.]+\]/);
  assert.match(tip, /sack_delay_ms=0: n 3/);
  await shot(`${name}-tooltip`);

  // Keyboard zoom: + halves the window of every study chart, 0 shows everything again.
  const span = (k) => page.$eval(`.chart[data-chart="${k}"]`, (e) => Number(e.dataset.to) - Number(e.dataset.from));
  const full = await span("failover_ms");
  const fullOther = await span("sacks_per_data_packet");
  await page.focus(`${sel} .chart-plot`);
  await page.keyboard.press("+");
  await page.waitForFunction(([s, w]) => {
    const e = document.querySelector(s);
    return Number(e.dataset.to) - Number(e.dataset.from) < w * 0.6;
  }, [sel, full]);
  assert.ok(await span("sacks_per_data_packet") < fullOther * 0.6, "the study's charts zoom together");
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("0");
  await page.waitForFunction(([s, w]) => {
    const e = document.querySelector(s);
    return Math.abs(Number(e.dataset.to) - Number(e.dataset.from) - w) < 1e-6;
  }, [sel, full]);

  // A click on a point lists the captures behind it.
  const q = await pointAt("failover_ms", 2, 3);
  await page.mouse.click(q.x, q.y);
  await page.waitForSelector("#study-point:not([hidden])");
  const title = await page.textContent("#study-point-title");
  assert.match(title, /failover_ms, sack_delay_ms=200, x = 90: 3 captures/);
  const names = await page.$$eval("#study-point-captures a", (a) => a.map((x) => x.textContent));
  assert.equal(names.length, 3);
  assert.ok(names.every((n) => /sack200_iv90_r\d_sender/.test(n)), `${names}`);
  await shot(`${name}-point`);

  // By keyboard: focus the chart, ↓ to the first point, Enter lists it; Tab reaches the first
  // capture, Enter opens its capture page.
  await page.focus(`${sel} .chart-plot`);
  await page.keyboard.press("ArrowDown");
  await page.waitForSelector(`${sel} .chart-tip:not([hidden])`);
  assert.match(await page.textContent(`${sel} .chart-tip`), /sack_delay_ms=0: n 3/);
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => /sack_delay_ms=0, x = 10:/.test(document.getElementById("study-point-title").textContent));
  assert.equal(await page.evaluate(() => document.activeElement.id), "study-point-title");
  await page.keyboard.press("Tab");
  const focused = await page.evaluate(() => document.activeElement.textContent);
  assert.match(focused, /sack0_iv10_r1_sender/);
  await page.keyboard.press("Enter");
  await page.waitForURL(/\/captures\/[0-9a-f]{64}$/, { timeout: 60000 });
  await page.waitForSelector("#associations", { timeout: 120000 });
  assert.match(await page.textContent("h1"), /sack0_iv10_r1_sender/);
  await shot(`${name}-capture`);
  // Back on the study, that capture now links to its page directly.
  await page.goBack();
  await page.waitForSelector("#study-table");
  await page.reload();
  const id = page.url();
  assert.ok(await page.$(`#study-row-0 a[href^="/captures/"]`), `row 0 of ${id} links its capture page`);
}

test("studies: pick the Eklund template with the keyboard, run it, see the table", { skip: !STUDY_SET && "STUDY_SET not set" }, async () => {
  await page.goto(`${URL}/`);
  await page.click('header nav a[href="/studies"]');
  await page.waitForURL(/\/studies$/);
  // Template by keyboard: focus the select and move down to the first template.
  await page.focus("#study-template");
  await page.keyboard.press("ArrowDown");
  assert.equal(await page.$eval("#study-template", (s) => s.value), "failover-vs-sack-delay");
  await page.selectOption("#study-set", STUDY_SET);
  // Submit with Enter in a text field.
  await page.focus("#study-x");
  await page.keyboard.press("Enter");
  await eklundTable(STUDY_SET, "studies-eklund");
  await studyInteractions(STUDY_SET, "studies-eklund");
});

test("studies: the Eklund template on the Linux kernel's campaign", { skip: !STUDY_SET_LINUX && "STUDY_SET_LINUX not set" }, async () => {
  await page.goto(`${URL}/studies`);
  await page.selectOption("#study-template", "failover-vs-sack-delay");
  await page.selectOption("#study-set", STUDY_SET_LINUX);
  await page.focus("#study-x");
  await page.keyboard.press("Enter");
  await eklundTable(STUDY_SET_LINUX, "studies-eklund-linux");
  await studyInteractions(STUDY_SET_LINUX, "studies-eklund-linux");
});
