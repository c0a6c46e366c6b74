'use strict';
// The console's tests drive a real headless Chromium (the machine's own package: Debian's
// `chromium`) with puppeteer-core. Where Chromium is absent the browser tests are skipped with
// the reason, unless CODEMODE_REQUIRE_CHROMIUM=1 (CI sets it), which makes its absence a
// failure. Screenshots go to test-artifacts/console/ (not tracked).
const fs = require('node:fs');
const path = require('node:path');

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium'];
const CHROMIUM = CANDIDATES.find((file) => typeof file === 'string' && file !== '' && fs.existsSync(file));
const REQUIRED = process.env.CODEMODE_REQUIRE_CHROMIUM === '1';
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'console');

/** The `skip` option of a browser test: false where Chromium is here or required. */
const skipBrowser = CHROMIUM === undefined && !REQUIRED ? 'Chromium is not installed (apt-get install chromium); CODEMODE_REQUIRE_CHROMIUM=1 makes this a failure' : false;

async function launch() {
  if (CHROMIUM === undefined) throw new Error(`CODEMODE_REQUIRE_CHROMIUM=1 and no Chromium at ${CANDIDATES.filter(Boolean).join(', ')}`);
  const puppeteer = require('puppeteer-core');
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Root in a container: Chromium's own sandbox needs user namespaces it may not have.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}

/** A page that records its script errors and what the console logged (to assert none came from data). */
async function openPage(browser) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 820 });
  page.problems = [];
  page.on('pageerror', (error) => page.problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') page.problems.push(`console: ${message.text()}`);
  });
  return page;
}

async function screenshot(page, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, name);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Waits until `predicate` (run in the page) is true; `what` names it in the timeout's message. */
async function until(page, predicate, what, ...args) {
  try {
    await page.waitForFunction(predicate, { timeout: 15_000, polling: 50 }, ...args);
  } catch (error) {
    const text = await page.evaluate(() => document.body.innerText).catch(() => '(no page)');
    throw new Error(`timed out waiting for ${what}; the page shows:\n${text.slice(0, 2000)}`, { cause: error });
  }
}

module.exports = { CHROMIUM, REQUIRED, ARTIFACTS, skipBrowser, launch, openPage, screenshot, until };
