// Checks the API explorer (GET /docs) in a real headless Chromium with the
// network cut off:
//
//   1. it starts sheetd (a release binary) with a token, on a new data
//      directory (which holds the sample workbook);
//   2. the page loads without the token, and every request the browser
//      makes goes to that server (any other is refused and fails the check);
//   3. the page lists every route of the served OpenAPI document;
//   4. a "try it out" call, with the token entered through Authorize, lists
//      the workbooks and gets 200 with the sample's id;
//   5. the same call without the token gets 401 (the page sends only what
//      the user entered).
//
//   node tools/explorer/check.mjs [path/to/sheetd]     (default target/release/sheetd)
//
// Environment: CHROMIUM (default /usr/bin/chromium), EXPLORER_SCREENSHOT
// (a PNG path to save the page to). Exits 0 when every step passes.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const SAMPLE_ID = "5ee7d000-0000-4000-8000-000000000001";
const TOKEN = "explorer-check-token";
const binary = process.argv[2] ?? "target/release/sheetd";
const deadline = setTimeout(() => fail("the check took longer than 120 s"), 120_000);

let server;
let browser;
const work = mkdtempSync(join(tmpdir(), "sheetd-explorer-"));

function fail(why) {
  console.error(`FAIL: ${why}`);
  cleanUp();
  process.exit(1);
}

function cleanUp() {
  clearTimeout(deadline);
  server?.kill("SIGTERM");
  rmSync(work, { recursive: true, force: true });
}

function check(condition, what) {
  if (!condition) fail(what);
  console.log(`ok: ${what}`);
}

/// Starts sheetd on a port the kernel picks; resolves to its base URL.
function startServer() {
  return new Promise((resolve, reject) => {
    server = spawn(
      binary,
      ["--data-dir", join(work, "data"), "--listen", "127.0.0.1:0", "--token", TOKEN],
      { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, RUST_LOG: "sheetd=info" } },
    );
    server.on("error", reject);
    server.on("exit", (code) => reject(new Error(`sheetd exited (${code})`)));
    let seen = "";
    server.stdout.on("data", (chunk) => {
      seen += chunk;
      const found = seen.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (found) resolve(found[1]);
    });
    server.stderr.on("data", (chunk) => process.stderr.write(chunk));
  });
}

async function main() {
  const base = await startServer();
  console.log(`sheetd at ${base}`);
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      // No name resolves but the server's address: the network is cut off.
      "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    ],
  });
  const page = await browser.newPage();
  const elsewhere = [];
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(base + "/")) return route.continue();
    elsewhere.push(url);
    return route.abort("internetdisconnected");
  });
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(String(error)));
  // The 401 this check asks for is logged by the browser too.
  const expected401 = /^Failed to load resource: .* status of 401/;
  page.on("console", (message) => {
    if (message.type() === "error" && !expected401.test(message.text())) {
      pageErrors.push(message.text());
    }
  });

  const response = await page.goto(`${base}/docs`);
  check(response.status() === 200, "GET /docs answers 200 without a token");
  await page.waitForSelector(".opblock", { timeout: 30_000 });

  const spec = await (await fetch(`${base}/docs/openapi.json`)).json();
  const expected = Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
  );
  const listed = await page.$$eval(".opblock", (blocks) =>
    blocks.map((block) => {
      const method = block.querySelector(".opblock-summary-method")?.textContent ?? "";
      const path = block.querySelector(".opblock-summary-path")?.getAttribute("data-path") ?? "";
      return `${method.trim()} ${path}`;
    }),
  );
  const missing = expected.filter((route) => !listed.includes(route));
  check(
    missing.length === 0 && expected.length > 0,
    `the page lists all ${expected.length} routes of the OpenAPI document` +
      (missing.length ? ` (missing: ${missing.join(", ")})` : ""),
  );

  const listing = page.locator(".opblock", {
    has: page.locator('.opblock-summary-path[data-path="/v1/spreadsheets"]'),
  }).filter({ has: page.locator(".opblock-summary-method", { hasText: /^GET$/ }) });
  await listing.locator(".opblock-summary").first().click();
  await listing.getByRole("button", { name: "Try it out" }).click();

  const execute = async () => {
    const answer = page.waitForResponse(
      (r) => r.url().startsWith(`${base}/v1/spreadsheets`) && r.request().method() === "GET",
    );
    await listing.getByRole("button", { name: "Execute" }).click();
    const got = await answer;
    await listing.locator(".live-responses-table tr.response .response-col_status").first().waitFor();
    const shown = (await listing.locator(".live-responses-table tr.response .response-col_status").first().textContent()).trim();
    return { status: got.status(), body: await got.text(), shown };
  };

  const refused = await execute();
  check(
    refused.status === 401 && refused.shown.startsWith("401"),
    `without a token, "try it out" shows the server's 401 (shown: ${refused.shown})`,
  );

  await page.getByRole("button", { name: /Authorize/ }).first().click();
  await page.locator(".modal-ux input[type=text], .modal-ux input[type=password]").first().fill(TOKEN);
  await page.locator(".modal-ux button.authorize").click();
  await page.locator(".modal-ux button.btn-done").click();

  await listing.getByRole("button", { name: "Clear" }).click().catch(() => {});
  const allowed = await execute();
  check(
    allowed.status === 200 && allowed.shown.startsWith("200") && allowed.body.includes(SAMPLE_ID),
    `with the token entered, "try it out" lists the workbooks: 200 with the sample (shown: ${allowed.shown})`,
  );

  check(elsewhere.length === 0, `no request left the server (others: ${elsewhere.join(", ") || "none"})`);
  check(pageErrors.length === 0, `the page logged no errors (${pageErrors.join(" | ") || "none"})`);

  if (process.env.EXPLORER_SCREENSHOT) {
    await page.screenshot({ path: process.env.EXPLORER_SCREENSHOT, fullPage: false });
  }
  await browser.close();
  cleanUp();
  console.log("OK: the explorer works offline");
}

main().catch((error) => fail(error.stack ?? String(error)));
