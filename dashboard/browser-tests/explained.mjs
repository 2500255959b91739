// Browser tests of issue 16 parts 2-5 in Debian's headless Chromium (playwright-core): the home
// page's stories, keyboard-only upload, a mixed upload whose errors stay until dismissed, the
// definitions linked from every label, shared zoom and "show in charts", keyboard zoom / pan /
// legend, tick labels of a millisecond window, tooltips naming paths, and no sideways scroll at
// 800 px on every page. run.sh starts the server (DASHBOARD_URL) and sets SHOTS; the sample
// traces come from the repository.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, chartReady as waitChart, dragX } from "./common.mjs";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const URL = process.env.DASHBOARD_URL;
const SHOTS = process.env.SHOTS || "/tmp";
const SAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../sample-traces");
const FAILOVER = path.join(SAMPLES, "cut_p20_sack40_sender.pcap");
const SPURIOUS = path.join(SAMPLES, "spur_pmr1_rtomin30_sender.pcap");
const MIXED = path.join(SAMPLES, "mixed_p20_cut5_rec8_sender.pcap");
let browser;
let page;
const ids = {};

async function shot(name) {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

before(async () => {
  assert.ok(URL, "DASHBOARD_URL is not set");
  browser = await launch();
  page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
});

after(async () => {
  if (browser) await browser.close();
});

const text = async (sel) => (await page.textContent(sel)).trim();

const chartReady = (kind) => waitChart(page, kind);

const TIME_CHARTS = ["tsn", "timeline", "rtt", "throughput"];
async function ranges() {
  return page.$$eval(".chart[data-chart]", (cs) => Object.fromEntries(cs.map((c) =>
    [c.dataset.chart, [Number(c.dataset.from), Number(c.dataset.to)]])));
}
async function allSettled() {
  await page.waitForFunction(() => [...document.querySelectorAll(".chart[data-chart]")].every((c) => !c.dataset.loading));
}

// The id of a capture already uploaded under `name` (the API list).
async function idOf(name) {
  const list = await (await fetch(`${URL}/api/captures`)).json();
  const items = list.captures || list;
  const c = items.find((x) => x.name === name && x.status === "done");
  return c && c.id;
}

// Uploads `file` through the upload page's input (not the keyboard) and returns its id: later
// tests get the failover capture even when the keyboard test failed before its upload.
async function uploadById(file) {
  await page.goto(`${URL}/upload`);
  await page.setInputFiles("#file-input", file);
  await page.waitForURL(/\/captures\/[0-9a-f]{64}$/, { timeout: 120000 });
  return page.url().split("/").pop();
}

async function failoverId() {
  if (!ids.failover) ids.failover = await uploadById(FAILOVER);
  return ids.failover;
}

test("keyboard-only upload: Tab reaches the file input, Space opens it, the results open", async () => {
  // The file chooser is intercepted before the page loads. Playwright turns interception on
  // when the first listener is added, by a message to the browser that a key press sent at the
  // same time can overtake (puppeteer#6040): Chromium then opens its own dialog and no event
  // comes (a 30 s timeout in one CI run).
  let chosen;
  const chooserSeen = new Promise((resolve) => { chosen = resolve; });
  page.once("filechooser", (c) => chosen(c));
  await page.goto(`${URL}/upload`);
  let reached = false;
  for (let i = 0; i < 30 && !reached; i++) {
    await page.keyboard.press("Tab");
    reached = await page.evaluate(() => document.activeElement && document.activeElement.id === "file-input");
  }
  assert.ok(reached, "Tab never reached the file input");
  // The focus is visible: the picker's label is outlined.
  const outline = await page.$eval("label.button", (l) => getComputedStyle(l).outlineStyle);
  assert.notEqual(outline, "none");
  await shot("16-upload-focus");
  await page.keyboard.press("Space");
  const chooser = await Promise.race([chooserSeen, new Promise((_, reject) =>
    setTimeout(() => reject(new Error("Space on the file input opened no file chooser in 30 s")), 30000))]);
  await chooser.setFiles(FAILOVER);
  await page.waitForURL(/\/captures\/[0-9a-f]{64}$/, { timeout: 120000 });
  ids.failover = page.url().split("/").pop();
  await page.waitForSelector("#associations");
});

test("mixed upload: the PNG's and the empty file's errors stay beside them until dismissed", async () => {
  await page.goto(`${URL}/`);
  await page.evaluate(() => { window.notReloaded = true; });
  const png = Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4cf0000000049454e44ae426082", "hex");
  await page.setInputFiles("#file-input", [
    { name: "picture.png", mimeType: "image/png", buffer: png },
    { name: "empty.pcap", mimeType: "application/octet-stream", buffer: Buffer.alloc(0) },
    { name: "spur_pmr1_rtomin30_sender.pcap", mimeType: "application/octet-stream", buffer: fs.readFileSync(SPURIOUS) },
  ]);
  const item = (name) => `#uploads li.upload-item:has(.name:text-is("${name}"))`;
  await page.waitForSelector(`${item("spur_pmr1_rtomin30_sender.pcap")}[data-state="done"]`, { timeout: 120000 });
  // The list shows the new capture without a reload.
  await page.waitForSelector('#captures tbody tr a:text-is("spur_pmr1_rtomin30_sender.pcap")', { timeout: 10000 });
  assert.equal(await page.evaluate(() => window.notReloaded), true, "the page reloaded");
  for (const name of ["picture.png", "empty.pcap"]) {
    const li = item(name);
    assert.equal(await page.getAttribute(li, "data-state"), "error", name);
    assert.equal(await page.getAttribute(li, "role"), "alert");
    assert.ok((await text(`${li} .state`)).length > 0, `${name} has no error text`);
  }
  await shot("17-mixed-upload-errors");
  // Dismiss one with the keyboard; the other stays.
  await page.focus(`${item("picture.png")} button.dismiss`);
  await page.keyboard.press("Enter");
  await page.waitForSelector(item("picture.png"), { state: "detached" });
  assert.equal(await page.getAttribute(item("empty.pcap"), "data-state"), "error");
  ids.spurious = await idOf("spur_pmr1_rtomin30_sender.pcap");
  assert.ok(ids.spurious);
});

test("home page: what the tool does, three stories opening the pages that tell them", async () => {
  await failoverId();
  ids.mixed = await uploadById(MIXED);
  await page.goto(`${URL}/`);
  assert.match(await text("#intro p.lead"), /rebuilds every SCTP association/);
  assert.equal(await page.$$eval("#intro li.story", (l) => l.length), 3);
  await shot("18-home");
  await page.click("#story-failover a.story-link");
  await page.waitForURL(new RegExp(`/captures/${ids.failover}/associations/\\d+#diagnosis$`));
  assert.match(await text("#failovers tbody tr.failover"), /failover/);
  await page.goto(`${URL}/`);
  await page.click("#story-spurious a.story-link");
  await page.waitForURL(new RegExp(`/captures/${ids.spurious}/associations/\\d+#diagnosis$`));
  assert.match(await text(".failover-card.spurious h3"), /^Spurious failover at/);
  assert.match(await text(".failover-card.spurious"), /the peer's SACK delay exceeds this sender's RTO/);
  assert.match(await text(".failover-card.spurious .whatif"), /^Recommendation:/);
  await page.goto(`${URL}/`);
  await page.click("#story-sctp-vs-tcp a.story-link");
  await page.waitForURL(`${URL}/captures/${ids.mixed}/compare`);
  assert.ok((await page.$$eval("#comparison thead th.tcp", (t) => t.length)) >= 1);
  assert.ok((await page.$$eval("#comparison thead th.sctp", (t) => t.length)) >= 1);
});

test("definitions: labels link to /help with unit and meaning; words instead of identifiers", async () => {
  await page.goto(`${URL}/captures/${await failoverId()}/associations/0`);
  // A sortable table's header: the sort link, and "?" beside it linking the definition.
  const link = '#failovers th a[href="/help#fig-outage_start"]';
  assert.match(await page.getAttribute(link, "title"), /^s — First original on the old path/);
  const vantage = await page.$$eval("dt", (d) => d.filter((x) => x.textContent.trim() === "vantage").map((x) => x.nextElementSibling.textContent));
  assert.ok(vantage.length && vantage.every((v) => /^at the DATA sender — /.test(v)), `${vantage}`);
  // Every label of the headline and facts links to its definition.
  const bare = await page.$$eval("dl dt", (d) => d.filter((x) => !x.querySelector("a.def")).map((x) => x.textContent));
  assert.deepEqual(bare, []);
  // Keyboard: focus the link, Enter opens the definition, which is the target.
  await page.focus(link);
  await page.keyboard.press("Enter");
  await page.waitForURL(`${URL}/help#fig-outage_start`);
  assert.ok(await page.$eval("#fig-outage_start", (e) => e.matches(":target")));
  assert.match(await text("#fig-outage_start"), /never acknowledged nor delivered/);
  await shot("19-help");
  // The compare page's definitions: a link to /help, metric names linked, no raw key.
  await page.goto(`${URL}/captures/${ids.mixed}/compare`);
  assert.equal(await page.getAttribute('a:text-is("what each figure means")', "href"), "/help#sec-tcp");
  assert.equal(await text('#comparison tr[data-key="ack_delay_ms"] th'), "SACK / ACK delay (ms)");
  assert.equal(await text('#comparison tr[data-key="recovery"] th'), "how the outage ended");
  const rec = await page.$$eval('#comparison tr[data-key="recovery"] td', (t) => t.map((x) => x.textContent));
  assert.ok(rec.includes("failed over") && rec.includes("stalled until the path returned"), `${rec}`);
  // TCP tables are tables: no "[2 items]".
  await page.goto(`${URL}/captures/${ids.mixed}`);
  assert.doesNotMatch(await text("#tcp"), /items\]/);
  assert.ok((await page.$$eval("#tcp-2 tbody tr", (r) => r.length)) >= 1);
});

test("charts: shared zoom, show in charts, keyboard zoom / pan / legend, ticks, tooltips", async () => {
  await page.goto(`${URL}/captures/${await failoverId()}/associations/0`);
  for (const k of [...TIME_CHARTS, "sack_delay"]) await chartReady(k);
  const full = await ranges();
  const tsn = '.chart[data-chart="tsn"]';

  // Drag on the TSN chart: every chart with a time axis takes the new range.
  const over = await page.$(`${tsn} .u-over`);
  await over.scrollIntoViewIfNeeded();
  const box = await over.boundingBox();
  await dragX(page, box, 0.3, 0.6);
  await page.waitForFunction((f) => {
    const c = document.querySelector('.chart[data-chart="timeline"]');
    return !c.dataset.loading && Number(c.dataset.to) - Number(c.dataset.from) < (f[1] - f[0]) * 0.6;
  }, full.timeline);
  await allSettled();
  let r = await ranges();
  for (const k of TIME_CHARTS) {
    assert.ok(Math.abs(r[k][0] - r.tsn[0]) < 1e-6 && Math.abs(r[k][1] - r.tsn[1]) < 1e-6, `${k}: ${r[k]} vs tsn ${r.tsn}`);
  }
  assert.deepEqual(r.sack_delay, full.sack_delay, "the histogram has no time axis");

  // "show in charts" on the failover row: every time chart shows its outage.
  const row = "#failovers tbody tr.failover";
  const [t0, t1] = (await page.$eval(row, (e) => [e.dataset.t0, e.dataset.t1])).map(Number);
  await page.focus(`${row} button.zoom-to`);
  await page.keyboard.press("Enter");
  await page.waitForFunction(([a, b]) => {
    const c = document.querySelector('.chart[data-chart="rtt"]');
    return !c.dataset.loading && Number(c.dataset.from) <= a && Number(c.dataset.to) >= b && Number(c.dataset.from) > a - 5;
  }, [t0, t1]);
  await allSettled();
  r = await ranges();
  for (const k of TIME_CHARTS) {
    assert.ok(r[k][0] <= t0 && r[k][1] >= t1, `${k}: ${r[k]} does not hold the failover ${t0}-${t1}`);
    assert.ok(r[k][1] - r[k][0] < full[k][1] - full[k][0], `${k} did not zoom`);
  }
  await shot("20-show-in-charts");

  // A click on a T3-rtx timeout row (not on its buttons) does the same for its timer.
  const to = "table.timeouts tbody tr.zoomable";
  const [u0, u1] = (await page.$eval(to, (e) => [e.dataset.t0, e.dataset.t1])).map(Number);
  await page.click(`${to} td:first-child`);
  await page.waitForFunction(([a, b]) => {
    const c = document.querySelector('.chart[data-chart="timeline"]');
    return !c.dataset.loading && Number(c.dataset.from) <= a && Number(c.dataset.to) >= b && Number(c.dataset.to) - Number(c.dataset.from) < 2 * (b - a) + 1;
  }, [u0, u1]);
  await allSettled();
  r = await ranges();
  for (const k of TIME_CHARTS) assert.ok(r[k][0] <= u0 && r[k][1] >= u1, `${k}: ${r[k]} does not hold the timeout ${u0}-${u1}`);

  // Keyboard on the plot: 0 shows everything, + zooms in (half the width, centred), ← pans a
  // quarter of the window (never before the data: two presses reach the start, four stay there).
  await page.focus(`${tsn} .chart-plot`);
  await page.keyboard.press("0");
  await page.waitForFunction((f) => {
    const c = document.querySelector('.chart[data-chart="tsn"]');
    return !c.dataset.loading && Math.abs(Number(c.dataset.from) - f[0]) < 1e-6 && Math.abs(Number(c.dataset.to) - f[1]) < 1e-6;
  }, full.tsn);
  const before = (await ranges()).tsn;
  await page.keyboard.press("+");
  await page.waitForFunction((b) => {
    const c = document.querySelector('.chart[data-chart="tsn"]');
    return !c.dataset.loading && Number(c.dataset.to) - Number(c.dataset.from) < (b[1] - b[0]) * 0.6;
  }, before);
  for (let i = 0; i < 4; i++) {
    await page.keyboard.press("ArrowLeft");
    await page.waitForFunction(() => !document.querySelector('.chart[data-chart="tsn"]').dataset.loading);
  }
  await allSettled();
  r = await ranges();
  for (const k of TIME_CHARTS) assert.ok(r[k][0] >= full[k][0] - 1e-9, `${k} panned before the data: ${r[k]}`);
  assert.ok(Math.abs(r.tsn[0] - full.tsn[0]) < 1e-6, `the pan stops at the start: ${r.tsn}`);
  await page.keyboard.press("0");
  await page.waitForFunction((f) => {
    const c = document.querySelector('.chart[data-chart="timeline"]');
    return !c.dataset.loading && Math.abs(Number(c.dataset.to) - f[1]) < 1e-6 && Math.abs(Number(c.dataset.from) - f[0]) < 1e-6;
  }, full.timeline);

  // Legend with the keyboard: Enter hides a series.
  const entry = `${tsn} .u-legend tr.u-series:first-child th`;
  await page.focus(entry);
  await page.keyboard.press("Enter");
  await page.waitForFunction((s) => document.querySelector(s).getAttribute("aria-pressed") === "false", entry);
  assert.equal(await page.evaluate(() => window.dashboardCharts.find((c) => c.kind === "tsn").u.series[1].show), false);
  await page.keyboard.press("Enter");
  await page.waitForFunction((s) => document.querySelector(s).getAttribute("aria-pressed") === "true", entry);

  // A 3 ms window: tick labels at distinct values (no label repeated).
  await page.evaluate(([a]) => window.dashboardCharts.find((c) => c.kind === "tsn").view(a, a + 0.003), [t1]);
  await page.waitForFunction(() => {
    const c = document.querySelector('.chart[data-chart="timeline"]');
    return !c.dataset.loading && Number(c.dataset.to) - Number(c.dataset.from) < 0.01;
  });
  await allSettled();
  for (const k of TIME_CHARTS) {
    const vals = await page.evaluate((kind) => window.dashboardCharts.find((c) => c.kind === kind).u.axes[0]._values, k);
    assert.ok(vals && vals.length >= 2, `${k}: ${vals}`);
    assert.equal(new Set(vals).size, vals.length, `${k} repeats tick labels: ${vals}`);
  }

  // The timeline's tooltip names the path, not a lane number.
  await page.keyboard.press("0");
  await page.focus(`${tsn} .chart-plot`);
  await page.keyboard.press("0");
  await allSettled();
  const tl = '.chart[data-chart="timeline"]';
  const tlOver = await page.$(`${tl} .u-over`);
  await tlOver.scrollIntoViewIfNeeded();
  const tb = await tlOver.boundingBox();
  let tip = "";
  for (const fx of [0.2, 0.3, 0.4, 0.5, 0.6]) {
    await page.mouse.move(tb.x + tb.width * fx, tb.y + tb.height * 0.3);
    if (await page.isVisible(`${tl} .chart-tip`)) { tip = await text(`${tl} .chart-tip`); if (/frame/.test(tip)) break; }
  }
  assert.match(tip, /frame \d+/, tip);
  const [timeLine, ...rest] = tip.split("\n");
  assert.match(timeLine, /^time \(s\): \d/);
  for (const l of rest) assert.doesNotMatch(l, /: -?\d+(\.\d+)?( \(frame \d+\))?$/, `a lane index in the tooltip: ${tip}`);
  assert.match(tip, /10\.201\.\d\.\d/, tip);
  await page.locator(tl).screenshot({ path: path.join(SHOTS, "21-timeline-tooltip.png") });
});

test("800 px: no page scrolls sideways; long address lists wrap with the full list on hover", async () => {
  await page.setViewportSize({ width: 800, height: 900 });
  try {
    const pages = {
      "22-narrow-home": "/",
      "23-narrow-upload": "/upload",
      "24-narrow-help": "/help",
      "25-narrow-capture": `/captures/${ids.mixed}`,
      "26-narrow-association": `/captures/${ids.failover}/associations/0`,
      "27-narrow-compare": `/captures/${ids.mixed}/compare`,
      "28-narrow-studies": "/studies",
    };
    for (const [name, uri] of Object.entries(pages)) {
      await page.goto(`${URL}${uri}`);
      await page.waitForFunction(() => document.documentElement.clientWidth <= 800);
      if (await page.$("#charts .chart")) await chartReady(await page.$eval("#charts .chart", (c) => c.dataset.chart));
      const over = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(over <= 0, `${uri} scrolls sideways by ${over} px at 800 px`);
      await shot(name);
    }
    // Multihomed endpoints: the address cell wraps inside its column and holds the full list on hover.
    await page.goto(`${URL}/captures/${ids.failover}/associations/0`);
    const cells = await page.$$eval("#endpoints td.addrs", (t) => t.map((x) => [x.title, x.textContent, x.scrollWidth - x.clientWidth]));
    for (const [title, content, overflow] of cells) {
      assert.equal(title, content);
      assert.ok(overflow <= 0, `${content} overflows its cell`);
    }
  } finally {
    await page.setViewportSize({ width: 1400, height: 900 });
  }
});
