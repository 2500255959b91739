// Browser test of the association page's long tables (issue 16 part 1), in Debian's headless
// Chromium: a run with many T3-rtx timeouts (LONG_TABLE_CAPTURE), its timeouts table opened,
// paged, sorted and searched with the keyboard alone; every step is a plain link or form (the
// server pages, sorts and searches).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { launch } from "./common.mjs";

const URL = process.env.DASHBOARD_URL;
const CAPTURE = process.env.LONG_TABLE_CAPTURE || "";
const SHOTS = process.env.SHOTS || "/tmp";
let browser;
let page;

before(async () => {
  browser = await launch();
  page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
});

after(async () => {
  if (browser) await browser.close();
});

// Uploads `file` through the API and waits for its analysis and its tables: its id.
async function upload(file) {
  const form = new FormData();
  form.append("file", new Blob([await readFile(file)]), path.basename(file));
  const r = await (await fetch(`${URL}/api/captures`, { method: "POST", body: form })).json();
  const id = r.captures[0].id;
  for (let i = 0; i < 1200; i++) {
    const c = await (await fetch(`${URL}/api/captures/${id}?limit=0`)).json();
    if (c.status === "failed") throw new Error(`analysis failed: ${c.error}`);
    if (c.status === "done" && c.tables && c.tables.status !== "pending") return id;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error("analysis too slow");
}

const text = async (sel) => (await page.textContent(sel)).trim();
const table = "#timeouts0-table";
const frames = () => page.$$eval(`${table} table.timeouts tbody tr`, (r) => r.map((x) => Number(x.cells[9].textContent)));

test("association page: a long timeouts table paged, sorted and searched with the keyboard", { skip: !CAPTURE && "LONG_TABLE_CAPTURE not set" }, async () => {
  const id = await upload(CAPTURE);
  const api = await (await fetch(`${URL}/api/captures/${id}/associations/0/tables/timeouts0?limit=all`)).json();
  const all = api.rows.map((r) => r.frame);
  const n = all.length;
  assert.ok(n > 30, `${n} timeouts`);
  await page.goto(`${URL}/captures/${id}/associations/0`);

  // Collapsed behind its summary: Enter on the summary opens it.
  const summary = `${table} details.collapsed-table > summary`;
  assert.match(await text(summary), new RegExp(`^${n} T3-rtx timeouts from `));
  assert.equal(await page.$eval(`${table} details`, (d) => d.open), false);
  await page.focus(summary);
  await page.keyboard.press("Enter");
  assert.equal(await page.$eval(`${table} details`, (d) => d.open), true);
  assert.equal(await text(`${table} .table-counts`), `rows 1–${n} of ${n}`);

  // 10 rows a page: the rows selector by keyboard, the form sent with Enter in its search box.
  await page.focus(`${table} select[name="timeouts0_limit"]`);
  await page.keyboard.press("ArrowUp");
  await page.keyboard.press("ArrowUp");
  assert.equal(await page.$eval(`${table} select[name="timeouts0_limit"]`, (s) => s.value), "10");
  await page.focus(`${table} input[name="timeouts0_q"]`);
  await page.keyboard.press("Enter");
  await page.waitForURL(/timeouts0_limit=10/);
  assert.equal(await page.$eval(`${table} details`, (d) => d.open), true, "the table stays open");
  assert.deepEqual(await frames(), all.slice(0, 10));
  assert.equal(await text(`${table} .table-counts`), `rows 1–10 of ${n}`);
  assert.equal(await text(`${table} .pager-page`), `page 1 of ${Math.ceil(n / 10)}`);

  // Next page: Tab to the pager's link, Enter.
  await page.focus(`${table} a.pager-next`);
  await page.keyboard.press("Enter");
  await page.waitForURL(/timeouts0_offset=10/);
  assert.deepEqual(await frames(), all.slice(10, 20));
  assert.equal(await text(`${table} .table-counts`), `rows 11–20 of ${n}`);
  // The anchor brings the table into view.
  const top = await page.$eval(table, (e) => e.getBoundingClientRect().top);
  assert.ok(top >= -5 && top < 900, `table at ${top}`);
  await page.screenshot({ path: path.join(SHOTS, "long-table-1-page2.png") });

  // Sort by frame with the header's link, twice: ascending, then descending (back to page 1).
  const sortLink = `${table} th a[data-sort="frame"]`;
  await page.focus(sortLink);
  await page.keyboard.press("Enter");
  await page.waitForURL(/timeouts0_sort=frame&timeouts0_order=asc/);
  await page.focus(sortLink);
  await page.keyboard.press("Enter");
  await page.waitForURL(/timeouts0_order=desc/);
  const desc = [...all].sort((a, b) => b - a);
  assert.deepEqual(await frames(), desc.slice(0, 10));
  assert.equal(await page.getAttribute(`${table} th[aria-sort]`, "aria-sort"), "descending");
  assert.ok(page.url().includes("timeouts0_limit=10"), "the page size stays");
  await page.screenshot({ path: path.join(SHOTS, "long-table-2-sorted.png") });

  // Search: one frame, typed and sent with Enter; clear.
  await page.focus(`${table} input[name="timeouts0_q"]`);
  await page.keyboard.type(String(all[3]));
  await page.keyboard.press("Enter");
  await page.waitForURL(new RegExp(`timeouts0_q=${all[3]}`));
  assert.deepEqual(await frames(), [all[3]]);
  assert.match(await text(`${table} .table-counts`), new RegExp(`^rows 1–1 of 1 that match “${all[3]}” \\(of ${n}\\)$`));
  await page.focus(`${table} a.table-clear`);
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => !location.search.includes("timeouts0_"));
  assert.deepEqual(await frames(), all);
});
