// page_check.mjs URL SHOT [CLICK] - open URL in Debian's Chromium
// (headless, through puppeteer-core; no browser is downloaded) and print
// one JSON object: console errors, page errors, failed requests, the
// images in view and whether each decoded, the statistics cells in view
// and whether each is filled.  SHOT is where the screenshot goes.  With
// CLICK, the summary of the first closed module is clicked first and the
// checks run after that.  int-html (tests/integration/test_html.py).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import puppeteer from "puppeteer-core";

const [url, shot, click] = process.argv.slice(2);
const profile = fs.mkdtempSync(path.join(os.tmpdir(), "stfs-chromium-"));
const out = { console: [], pageerrors: [], failed: [], images: [], stats: [] };
const t0 = Date.now();
const browser = await puppeteer.launch({
	executablePath: "/usr/bin/chromium",
	headless: true,
	userDataDir: profile,
	args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
	       "--no-first-run", "--disable-background-networking",
	       "--disable-component-update", "--disable-sync"],
	timeout: 60000,
});
try {
	const page = await browser.newPage();
	await page.setViewport({ width: 1400, height: 1000 });
	page.on("console", m => { if (m.type() === "error") out.console.push(m.text()); });
	page.on("pageerror", e => out.pageerrors.push(String(e)));
	page.on("requestfailed", r => out.failed.push(r.url() + " " + (r.failure() || {}).errorText));
	await page.goto(url, { waitUntil: "load", timeout: 120000 });
	out.load_ms = Date.now() - t0;
	const nav = await page.evaluate(() => {
		const n = performance.getEntriesByType("navigation")[0];
		const p = performance.getEntriesByName("first-contentful-paint")[0];
		return { dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd,
			 fcp: p ? p.startTime : null };
	});
	out.nav = nav;
	if (click) {
		const s = await page.$("details:not([open]) > summary");
		out.clicked = !!s;
		if (s) await s.click();
	}
	// every image and statistics cell in view, settled (bounded wait)
	const settled = () => page.evaluate(() => {
		const inView = e => {
			const r = e.getBoundingClientRect();
			return r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth;
		};
		const imgs = [...document.images].filter(inView);
		const cells = [...document.querySelectorAll("td.st")].filter(inView);
		return {
			images: imgs.map(i => ({ src: i.src, complete: i.complete, w: i.naturalWidth, h: i.naturalHeight })),
			stats: cells.map(c => c.textContent),
			all_images: document.images.length,
			broken: [...document.images].filter(i => i.complete && i.src && i.naturalWidth === 0).map(i => i.src),
		};
	});
	let s;
	const t1 = Date.now(), deadline = t1 + 90000;
	let before = -1;
	for (;;) {
		s = await settled();
		// a module opened (by a click, or at once when small) builds
		// its rows on its toggle event, a task later, and its small
		// submodules open in turn: settled when what is in view is the
		// same two polls running, and an empty view only after 5 s
		const done = (s.images.length > 0 || Date.now() - t1 > 5000) &&
			s.images.length === before &&
			s.images.every(i => i.complete) && s.stats.every(c => c !== "\u2026");
		before = s.images.length;
		if (done || Date.now() > deadline) break;
		await new Promise(r => setTimeout(r, 200));
	}
	out.settle_ms = Date.now() - t0;
	Object.assign(out, s);
	await page.screenshot({ path: shot, fullPage: false });
} finally {
	await browser.close();
	fs.rmSync(profile, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(out) + "\n");
