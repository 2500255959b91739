// Browser test of the dashboard in Debian's headless Chromium, driven by playwright-core.
// run.sh starts the server and sets DASHBOARD_URL, CAPTURE (a pcap with a failover) and SHOTS
// (screenshot folder).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import path from "node:path";

const URL = process.env.DASHBOARD_URL;
const CAPTURE = process.env.CAPTURE;
const SHOTS = process.env.SHOTS || "/tmp";
let browser;
let page;

async function shot(name) {
  const file = path.join(SHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

before(async () => {
  assert.ok(URL, "DASHBOARD_URL is not set");
  assert.ok(CAPTURE, "CAPTURE is not set");
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
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

async function chartReady(kind) {
  const sel = `.chart[data-chart="${kind}"]`;
  await page.waitForSelector(`${sel} canvas`, { timeout: 30000 });
  await page.waitForFunction((s) => {
    const el = document.querySelector(s);
    return el && !el.dataset.loading && el.dataset.to !== undefined;
  }, sel, { timeout: 30000 });
  return sel;
}

test("upload, results, association with failover, TSN chart zoom", async () => {
  const t0 = Date.now();
  await page.goto(`${URL}/upload`);
  await shot("1-upload");
  await page.setInputFiles("#file-input", CAPTURE);
  await page.waitForURL(/\/captures\/[0-9a-f]{64}$/, { timeout: 120000 });
  const id = page.url().split("/").pop();
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
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width * 0.4, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.5, y, { steps: 5 });
  await page.mouse.move(box.x + box.width * 0.6, y, { steps: 5 });
  await page.mouse.up();
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
