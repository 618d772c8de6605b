// The page's behaviours: permalinks, time travel, located YAML errors, inert
// injection payloads, screenshots of every policy's default example, and the
// page weight and evaluation time measured in the browser.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OUT, ROOT, start, settled, fill, response, linked } from './browser.mjs';

let browser;
before(async () => { browser = await start(); });
after(async () => { await browser?.close(); });

const KUSTOMIZATION = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  interval: 10m
  path: ./clusters/production/apps
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
`;

// the change a freeze holds: a new path
const OLD = KUSTOMIZATION.replace('clusters/production', 'clusters/staging');

const FREEZE = `gates:
  - name: year-end
    freezes:
      - start: "2026-12-20T00:00:00Z"
        end: "2027-01-04T00:00:00Z"
        reason: year-end change freeze
bindings:
  - gates: [year-end]
    match:
      kinds:
        - group: kustomize.toolkit.fluxcd.io
          kind: Kustomization
`;

async function formInput(page, { policy, settings, object, operation = 'UPDATE', old = object, zone = 'UTC', local }) {
  await page.selectOption('#policy', policy);
  await settled(page);
  await page.check('#mode-form');
  await page.selectOption('#operation', operation);
  await fill(page, '#object', object);
  await fill(page, '#old-object', old);
  await fill(page, '#username', 'alice@example.com');
  await fill(page, '#groups', 'platform-team, system:authenticated');
  await fill(page, '#settings', settings);
  await page.check('#now-fixed');
  await fill(page, '#zone', zone);
  await fill(page, '#local-time', local);
}

test('a permalink restores the whole state and the same result', async () => {
  const page = await browser.page();
  await formInput(page, { policy: 'flux-gate', settings: FREEZE, object: KUSTOMIZATION, old: OLD, zone: 'Europe/Berlin', local: '2026-12-24T17:00:00' });
  await page.check('#dry-run');
  await fill(page, '#context', '- apiVersion: v1\n  kind: Namespace\n  metadata: {name: flux-system}\n');
  await page.selectOption('#policy-mode', 'monitor');
  await settled(page);
  const state = await page.evaluate(() => window.playground.state());
  const before = await response(page);
  const fragment = await linked(page);
  assert.ok(fragment.length < 8000, `permalink is ${fragment.length} characters`);
  const again = await browser.page(fragment);
  assert.deepEqual(await again.evaluate(() => window.playground.state()), state);
  assert.deepEqual(await response(again), before);
  assert.equal(await again.inputValue('#zone'), 'Europe/Berlin');
  assert.equal(await again.isChecked('#dry-run'), true);
  // a corpus example survives the round trip too, with its expectation
  const cat = await page.evaluate(() => window.playground.catalogue());
  const p = cat.policies.find((x) => x.examples.length);
  await page.evaluate(([a, b]) => window.playground.loadExample(a, b), [p.name, p.examples[0].id]);
  const third = await browser.page(await linked(page));
  assert.equal(await third.inputValue('#example'), p.examples[0].id);
  assert.deepEqual(await response(third), await response(page));
  // an unreadable fragment starts afresh instead of failing
  const broken = await browser.page('#s=not-a-valid-link');
  assert.match(await broken.textContent('#link-status'), /could not be read/);
  assert.deepEqual([...page.errors, ...again.errors, ...third.errors, ...broken.errors], []);
});

test('changing "now" flips a flux-gate verdict, and the page finds when the gate opens', async () => {
  const page = await browser.page();
  await formInput(page, { policy: 'flux-gate', settings: FREEZE, object: KUSTOMIZATION, old: OLD, zone: 'Europe/Berlin', local: '2026-12-24T17:00:00' });
  assert.equal(await page.textContent('#instant'), '2026-12-24T16:00:00Z');
  const frozen = await response(page);
  assert.equal(frozen.allowed, false, JSON.stringify(frozen));
  assert.match(frozen.status.message, /year-end/);
  await fill(page, '#local-time', '2027-01-05T09:00:00');
  assert.equal((await response(page)).allowed, true);
  await fill(page, '#local-time', '2026-12-19T12:00:00');
  assert.equal((await response(page)).allowed, true);
  await fill(page, '#local-time', '2026-12-20T01:00:00'); // midnight UTC, 01:00 in Berlin
  assert.equal((await response(page)).allowed, false);
  await page.click('#find-next');
  assert.match(await page.textContent('#next-allowed'), /allowed from Mon 2027-01-04 01:00:00 CET/);
  await page.click('#use-next');
  await settled(page);
  assert.equal((await response(page)).allowed, true);
  assert.equal(await page.textContent('#instant'), '2027-01-04T00:00:00Z');
  assert.deepEqual(page.errors, []);
});

test('malformed YAML is shown at its line, in every editor', async () => {
  const page = await browser.page();
  await page.selectOption('#policy', 'flux-suspend');
  await settled(page);
  await page.check('#mode-review');
  await fill(page, '#review', 'apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nrequest:\n  uid: x\n  object: {a: [1, 2\n  operation: CREATE\n');
  assert.equal(await page.getAttribute('#result', 'data-verdict'), 'error');
  const error = await page.textContent('[data-error="request"]');
  assert.match(error, /^line \d+, column \d+: /);
  assert.match(await page.textContent('[data-error="request"] .excerpt'), /\^/);
  assert.equal(await page.locator('[data-input="request"] .gutter .bad').count(), 1);
  await fill(page, '#settings', 'mode: mirror\n  bad: indentation\n');
  assert.match(await page.textContent('[data-error="settings"]'), /^line 2, column \d+: /);
  assert.equal(await page.textContent('[data-input="settings"] .gutter .bad'), '2');
  await fill(page, '#context', '- {apiVersion: v1, kind: Namespace\n');
  assert.match(await page.textContent('[data-error="context"]'), /^line \d+, column \d+: /);
  await fill(page, '#settings', '{\n  "mode": "mirror",\n  "x" 1\n}');
  assert.match(await page.textContent('[data-error="settings"]'), /^line 3, column 7: /);
  // settings the policy refuses: its own message, as policy-server would refuse to start
  await fill(page, '#settings', 'noSuchSetting: true\n');
  assert.match(await page.textContent('[data-error="settings"]'), /noSuchSetting|unknown field/);
  assert.deepEqual(page.errors, []);
});

const PAYLOADS = [
  '<img src=x onerror="window.__pwned=(window.__pwned||0)+1">',
  '</textarea><script>window.__pwned=(window.__pwned||0)+1</script>',
  '"><svg onload="window.__pwned=(window.__pwned||0)+1">',
  'javascript:window.__pwned=1',
];

test('script-injection payloads in every input stay inert', async () => {
  const page = await browser.page();
  const countTags = () => page.evaluate(() => document.querySelectorAll('script, img, svg, iframe, object, embed').length);
  const baseline = await countTags();
  for (const payload of PAYLOADS) {
    const quoted = JSON.stringify(payload);
    const object = `apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: ${quoted}\n  namespace: flux-system\n  annotations:\n    ${quoted}: ${quoted}\n    reconcile.fluxcd.io/suspended: ${quoted}\n    event.toolkit.fluxcd.io/team: ${quoted}\nspec:\n  suspend: true\n`;
    for (const policy of ['flux-suspend', 'flux-gate', 'aso-reconcile', 'flux-event-metadata']) {
      await page.selectOption('#policy', policy);
      await settled(page);
      await page.check('#mode-form');
      await fill(page, '#object', object);
      await fill(page, '#old-object', object.replace('suspend: true', 'suspend: false'));
      await fill(page, '#username', payload);
      await fill(page, '#groups', payload);
      await fill(page, '#context', `- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: ${quoted}\n    labels: {${quoted}: ${quoted}}\n`);
      await fill(page, '#settings', `${quoted}: ${quoted}\n`); // refused settings: the message quotes the key
      assert.notEqual((await page.textContent('[data-error="settings"]')).trim(), '');
      await fill(page, '#settings', '{}');
      await fill(page, '#zone', payload);
      await fill(page, '#zone', 'UTC');
      await page.check('#mode-review');
      await fill(page, '#review', `${payload}\n: [`);
      await page.check('#mode-form');
      await settled(page);
    }
  }
  // the same payloads through a permalink
  const link = await linked(page);
  const restored = await browser.page(link);
  for (const p of [page, restored]) {
    assert.equal(await p.evaluate(() => window.__pwned), undefined);
    assert.equal(await p.evaluate(() => document.querySelectorAll('script, img, svg, iframe, object, embed').length), baseline);
    assert.deepEqual(p.errors, []);
  }
  // and the text is shown as text
  assert.equal(await restored.inputValue('#username'), PAYLOADS[PAYLOADS.length - 1]);
});

test('screenshots of every policy\'s default example', async () => {
  const dir = join(OUT, 'screenshots');
  await mkdir(dir, { recursive: true });
  const page = await browser.page();
  const cat = await page.evaluate(() => window.playground.catalogue());
  for (const policy of cat.policies) {
    await page.selectOption('#policy', policy.name);
    await settled(page);
    if (policy.defaultExample) assert.equal(await page.inputValue('#example'), policy.defaultExample);
    await page.screenshot({ path: join(dir, `${policy.name}.png`), fullPage: true });
  }
  assert.deepEqual(page.errors, []);
});

test('the page works offline once loaded', async () => {
  const offline = await start({ serviceWorkers: 'allow' });
  try {
    const page = await offline.page();
    await page.evaluate(() => navigator.serviceWorker.ready);
    await page.reload();
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    await offline.context.setOffline(true);
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.ready === 'true');
    await settled(page);
    assert.match(await page.getAttribute('#result', 'data-verdict'), /^(allowed|refused)$/);
    assert.deepEqual(page.errors, []);
  } finally {
    await offline.close();
  }
});

test('page weight and evaluation time, measured in the browser', async (t) => {
  const page = await browser.page();
  const weight = await page.evaluate(() => {
    const entries = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')];
    return entries.map((e) => ({ name: new URL(e.name).pathname, encoded: e.encodedBodySize, decoded: e.decodedBodySize }));
  });
  const compressed = weight.reduce((s, e) => s + e.encoded, 0);
  const raw = weight.reduce((s, e) => s + e.decoded, 0);
  // every corpus case through the page's own path; performance.now() is coarse
  // (0.1 ms) in a page that is not cross-origin isolated, so each figure is
  // the mean of a batch of 10 evaluations
  const timing = await page.evaluate(() => {
    const cat = window.playground.catalogue();
    const all = [];
    for (const p of cat.policies) {
      for (const e of p.examples) {
        window.playground.loadExample(p.name, e.id);
        const input = JSON.stringify(window.playground.input());
        const t0 = performance.now();
        for (let i = 0; i < 10; i++) window.playground.run(input);
        all.push((performance.now() - t0) / 10);
      }
    }
    all.sort((a, b) => a - b);
    const q = (p) => all[Math.min(all.length - 1, Math.floor(p * all.length))];
    return { cases: all.length, medianMs: q(0.5), p95Ms: q(0.95), maxMs: all[all.length - 1] };
  });
  // the benchmark's typical Flux object (a 5 KB Kustomization UPDATE), every policy, 200 runs each
  const typicalText = await readFile(join(ROOT, 'tests/bench/kustomization-update.json'), 'utf8').catch(() => null);
  const typical = typicalText && await page.evaluate((review) => {
    const out = {};
    for (const p of window.playground.catalogue().policies) {
      const input = JSON.stringify({ policy: p.name, mode: 'review', review, settings: '{}', now: '2026-11-20T10:00:00Z', context: '' });
      const all = [];
      for (let b = 0; b < 21; b++) {
        const t0 = performance.now();
        for (let i = 0; i < 10; i++) window.playground.run(input);
        all.push((performance.now() - t0) / 10);
      }
      all.sort((a, b) => a - b);
      out[p.name] = { medianMs: all[10], maxMs: all[20] };
    }
    return out;
  }, typicalText);
  const metrics = { pageWeight: { compressedBytes: compressed, rawBytes: raw, files: weight }, evaluation: timing, typicalObject: typical };
  if (typical) t.diagnostic(`typical 5 KB Kustomization update: ${Object.entries(typical).map(([k, v]) => `${k} ${v.medianMs.toFixed(3)} ms`).join(', ')} (median)`);
  await writeFile(join(OUT, 'metrics.json'), JSON.stringify(metrics, null, 2));
  t.diagnostic(`page weight: ${compressed} bytes compressed (${raw} raw) in ${weight.length} files`);
  if (timing) t.diagnostic(`evaluation: median ${timing.medianMs.toFixed(3)} ms, p95 ${timing.p95Ms.toFixed(3)} ms over ${timing.cases} corpus cases (batches of 10)`);
  assert.ok(compressed > 0 && compressed < 1.5 * 1024 * 1024, `page weight ${compressed} bytes`);
  assert.ok(timing, 'timing failed');
});
