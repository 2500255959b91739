// What the browser tests share: Debian's headless Chromium, and waiting for a chart to be drawn.
import { chromium } from "playwright-core";

export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}

// Waits until the chart `kind` of the page has its canvas and no request in flight; returns
// its selector.
export async function chartReady(page, kind) {
  const sel = `.chart[data-chart="${kind}"]`;
  await page.waitForSelector(`${sel} canvas`, { timeout: 30000 });
  await page.waitForFunction((s) => {
    const el = document.querySelector(s);
    return el && !el.dataset.loading && el.dataset.to !== undefined;
  }, sel, { timeout: 30000 });
  return sel;
}

// Drags the mouse across the plot area `box` (a bounding box) at mid-height, from the fraction
// `a` of its width to `b`: uPlot's drag-to-zoom.
export async function dragX(page, box, a, b) {
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width * a, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * (a + b) / 2, y, { steps: 5 });
  await page.mouse.move(box.x + box.width * b, y, { steps: 5 });
  await page.mouse.up();
}
