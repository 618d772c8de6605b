// Shared by the browser tests: the built site served on a free 127.0.0.1
// port, and Debian's chromium driven by playwright-core with a fresh profile.
import { existsSync } from 'node:fs';
import { mkdtemp, rm, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from '../serve.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const SITE = join(ROOT, 'target/playground/site');
export const OUT = join(ROOT, 'target/playground');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Serves the site and starts a browser; `close()` stops both and removes the profile. */
export async function start({ serviceWorkers = 'block' } = {}) {
  if (!existsSync(join(SITE, 'playground_bg.wasm'))) throw new Error(`${SITE} is not built: run make playground-build`);
  await mkdir(OUT, { recursive: true });
  const site = await serve(SITE, 0);
  const profile = await mkdtemp(join(tmpdir(), 'playground-chromium-'));
  // Playwright passes the profile as --user-data-dir itself.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1440, height: 1000 }, serviceWorkers,
  });
  return {
    url: site.url,
    context,
    async page(fragment = '') {
      const page = await context.newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(e));
      page.errors = errors;
      await page.goto(site.url + fragment);
      await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30000 });
      await settled(page);
      return page;
    },
    async close() {
      await context.close().catch(() => {});
      await site.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Waits until the page has evaluated its current inputs. */
export async function settled(page) {
  await page.waitForFunction(() => document.getElementById('result').dataset.pending === 'false', null, { timeout: 30000 });
}

/** Replaces a field's content as typing would, then waits for the evaluation. */
export async function fill(page, selector, value) {
  await page.fill(selector, value);
  await settled(page);
}

export async function response(page) {
  return JSON.parse(await page.textContent('#response'));
}

/** Waits until the address bar's permalink holds the page's current state. */
export async function linked(page) {
  for (let i = 0; i < 100; i++) {
    const done = await page.evaluate(async () => location.hash.slice(1) === await window.playground.encodeState(window.playground.state()));
    if (done) return new URL(page.url()).hash;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  throw new Error('the permalink does not follow the page state');
}
