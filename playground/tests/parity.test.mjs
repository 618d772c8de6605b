// The whole corpus, evaluated in the page: every case gives exactly the
// reply the reference gives (the AdmissionResponse's verdict, code, message,
// warnings, audit annotations and base64 JSONPatch, or policy-server's
// `noAnswer`), and meets the case file's expectations.
// The reference is the harness (`target/host/reconcile-guard run` on dist/<policy>.wasm,
// which `make build` leaves) when it is built, and always the conformance
// crate's native evaluation of the case files (examples/corpus_dump.rs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, start } from './browser.mjs';

// Overridable, for a harness and modules built elsewhere than by `make build`.
const HARNESS = process.env.PLAYGROUND_HARNESS || join(ROOT, 'target/host/reconcile-guard');
const DIST = process.env.PLAYGROUND_DIST || join(ROOT, 'dist');
let browser;
let page;
let catalogue;
let native;

before(async () => {
  browser = await start();
  page = await browser.page();
  catalogue = await page.evaluate(() => window.playground.catalogue());
  const profile = process.env.PLAYGROUND_DUMP_PROFILE || 'host';
  const dump = execFileSync('cargo', ['run', '-q', '--profile', profile, '-p', 'playground', '--example', 'corpus_dump', '--', 'tests/cases'],
    { cwd: ROOT, maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'inherit'] });
  native = JSON.parse(dump);
});

after(async () => {
  await browser?.close();
});

function decodePatch(r) {
  return r.patch ? JSON.parse(Buffer.from(r.patch, 'base64').toString('utf8')) : [];
}

async function inPage(policy, id) {
  return page.evaluate(([p, i]) => {
    window.playground.loadExample(p, i);
    const e = window.playground.catalogue().policies.find((x) => x.name === p).examples.find((x) => x.id === i);
    return {
      // the plain export, for cases with policy-server's default options
      exported: e.policyMode === 'protect' && e.allowedToMutate
        ? window.playgroundEvaluate(p, e.request, e.settings, e.now, e.context) : null,
      response: JSON.parse(document.getElementById('response').textContent),
      verdict: document.getElementById('result').dataset.verdict,
      message: document.getElementById('message').textContent,
      expect: document.getElementById('expect').textContent,
    };
  }, [policy, id]);
}

async function harness(policy, example, dir) {
  const request = join(dir, 'request.yaml');
  await writeFile(request, example.request);
  const settings = await page.evaluate((t) => JSON.stringify(JSON.parse(window.playgroundParse(t)).value ?? {}), example.settings);
  const args = ['run', '--request-path', request, '--settings-json', settings, '--now', example.now,
    '--policy-mode', example.policyMode, '--allowed-to-mutate', String(example.allowedToMutate)];
  // The page grants lookups as the case's deployment does; `run` follows kwctl, which grants the
  // metadata's contextAwareResources with --allow-context-aware, or the listed ones.
  if (example.contextAwareResources) {
    for (const r of example.contextAwareResources) args.push('--context-aware-resource', `${r.apiVersion}/${r.kind}`);
  } else {
    args.push('--allow-context-aware');
  }
  if (example.context && example.context.trim()) {
    const context = join(dir, 'context.yaml');
    await writeFile(context, example.context);
    args.push('--context', context);
  }
  args.push(join(DIST, `${policy}.wasm`));
  try {
    return JSON.parse(execFileSync(HARNESS, args, { cwd: ROOT, maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'pipe'] }).toString());
  } catch (e) {
    // No answer from policy-server: `run` prints {"noAnswer": why} and fails.
    const printed = e.stdout ? e.stdout.toString().trim() : '';
    if (e.status === 1 && printed.startsWith('{"noAnswer"')) return JSON.parse(printed);
    throw e;
  }
}

test('every corpus case gives the reference AdmissionResponse in the page', async (t) => {
  await page.evaluate(async () => {
    const wasm = await import('./playground.js');
    window.playgroundParse = (text) => wasm.parse('settings', text);
    window.playgroundEvaluate = (...args) => JSON.parse(wasm.evaluate(...args));
  });
  const dir = await mkdtemp(join(tmpdir(), 'playground-parity-'));
  const failures = [];
  let cases = 0;
  let viaHarness = 0;
  try {
    for (const policy of catalogue.policies) {
      const useHarness = existsSync(HARNESS) && existsSync(join(DIST, `${policy.name}.wasm`));
      if (!useHarness) t.diagnostic(`${policy.name}: harness or dist/${policy.name}.wasm not built; native reference only`);
      for (const example of policy.examples) {
        const id = `${policy.name}/${example.id}`;
        cases++;
        const got = await inPage(policy.name, example.id);
        const problems = [];
        const reference = native[id];
        if (!reference) problems.push('no native reference');
        else if (!isDeepStrictEqual(got.response, reference)) problems.push(`native: ${JSON.stringify(reference)}`);
        if (got.exported && !isDeepStrictEqual(got.exported, got.response)) problems.push(`evaluate(): ${JSON.stringify(got.exported)}`);
        if (useHarness) {
          viaHarness++;
          const h = await harness(policy.name, example, dir);
          if (!isDeepStrictEqual(got.response, h)) problems.push(`harness: ${JSON.stringify(h)}`);
        }
        const e = example.expect;
        if (e.noAnswer) {
          // policy-server never answers: the page says so instead of a verdict.
          if (!got.response.noAnswer) problems.push('the corpus expects no answer');
          if (got.verdict !== 'no-answer') problems.push(`verdict shown: ${got.verdict}`);
          if (got.response.noAnswer !== got.message) problems.push('the reason shown differs');
        } else {
          if (got.response.allowed !== e.allowed) problems.push(`allowed ${got.response.allowed}, corpus expects ${e.allowed}`);
          if (e.patch && !isDeepStrictEqual(decodePatch(got.response), e.patch)) problems.push(`patch ${JSON.stringify(decodePatch(got.response))}`);
          if (e.code && got.response.status?.code !== e.code) problems.push(`code ${got.response.status?.code}, expected ${e.code}`);
          if (got.verdict !== (got.response.allowed ? 'allowed' : 'refused')) problems.push(`verdict shown: ${got.verdict}`);
          if ((got.response.status?.message || '(none)') !== got.message) problems.push('message shown differs');
        }
        if (!got.expect.startsWith('Met')) problems.push(`page's expectation check: ${got.expect}`);
        if (problems.length) failures.push(`${id}: page ${JSON.stringify(got.response)}\n    ${problems.join('\n    ')}`);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  t.diagnostic(`${cases} cases compared with the native evaluation, ${viaHarness} also with the harness`);
  assert.ok(cases > 0, 'the catalogue has no examples');
  assert.equal(Object.keys(native).length, cases, 'the catalogue and tests/cases differ in cases');
  assert.deepEqual(failures, []);
  assert.deepEqual(page.errors, []);
});

test('every story runs in the page exactly as natively, and passes', async (t) => {
  const profile = process.env.PLAYGROUND_DUMP_PROFILE || 'host';
  const dump = execFileSync('cargo', ['run', '-q', '--profile', profile, '-p', 'playground', '--example', 'story_dump', '--', 'tests/stories'],
    { cwd: ROOT, maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'inherit'] });
  const reference = JSON.parse(dump);
  const failures = [];
  let stories = 0;
  for (const policy of catalogue.policies) {
    for (const story of policy.stories || []) {
      const id = `${policy.name}/${story.id}`;
      stories++;
      const got = await page.evaluate(([p, i]) => {
        const run = window.playground.showStory(p, i);
        return {
          run,
          shown: document.getElementById('story-steps').querySelectorAll(':scope > li').length,
          requests: document.getElementById('story-steps').querySelectorAll('details').length,
        };
      }, [policy.name, story.id]);
      const problems = [];
      if (!got.run) problems.push('the page could not run it');
      else {
        if (!isDeepStrictEqual(got.run, reference[id])) problems.push('differs from the native run');
        if (!got.run.passed) problems.push(...got.run.failures);
        if (got.shown !== got.run.steps.length) problems.push(`${got.shown} steps shown of ${got.run.steps.length}`);
        const sent = got.run.steps.reduce((n, s) => n + s.requests.length, 0);
        if (got.requests !== sent) problems.push(`${got.requests} requests shown of ${sent}`);
      }
      if (problems.length) failures.push(`${id}:\n    ${problems.join('\n    ')}`);
    }
  }
  t.diagnostic(`${stories} stories run in the page and compared with the native run`);
  assert.equal(Object.keys(reference).length, stories, 'the catalogue and tests/stories differ in stories');
  assert.deepEqual(failures, []);
  assert.deepEqual(page.errors, []);
});

function isDeepStrictEqual(a, b) {
  try {
    assert.deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
}
