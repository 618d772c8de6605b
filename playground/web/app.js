// The playground page. Everything the person types is read as text and shown
// with textContent only: no HTML is ever built from input.
import init, * as wasm from './playground.js';

const $ = (id) => document.getElementById(id);
const TEXT_FIELDS = {
  review: 'review', object: 'object', oldObject: 'old-object', settings: 'settings',
  context: 'context', username: 'username', groups: 'groups', zone: 'zone', local: 'local-time',
};
const EDITOR_OF = { request: 'review', object: 'object', oldObject: 'old-object', settings: 'settings', context: 'context' };

let catalogue = { policies: [] };
let currentExample = null; // the corpus case last loaded, for its expectations
let timer = 0;
let linkTimer = 0;
let seq = 0;
const timings = [];

function policyInfo(name) {
  return catalogue.policies.find((p) => p.name === name) || catalogue.policies[0];
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function option(value, text) {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = text;
  return o;
}

// ---- state --------------------------------------------------------------

function state() {
  const s = {
    v: 1,
    policy: $('policy').value,
    example: currentExample ? currentExample.id : null,
    mode: $('mode-form').checked ? 'form' : 'review',
    operation: $('operation').value,
    dryRun: $('dry-run').checked,
    nowMode: $('now-live').checked ? 'live' : 'fixed',
    policyMode: $('policy-mode').value,
    allowedToMutate: $('allowed-to-mutate').checked,
  };
  for (const [key, id] of Object.entries(TEXT_FIELDS)) s[key] = $(id).value;
  return s;
}

function setState(s) {
  if (s.policy && policyInfo(s.policy)) $('policy').value = s.policy;
  fillPolicy(false);
  for (const [key, id] of Object.entries(TEXT_FIELDS)) {
    if (typeof s[key] === 'string') $(id).value = s[key];
  }
  $(s.mode === 'form' ? 'mode-form' : 'mode-review').checked = true;
  if (s.operation) $('operation').value = s.operation;
  $('dry-run').checked = !!s.dryRun;
  $(s.nowMode === 'live' ? 'now-live' : 'now-fixed').checked = true;
  $('policy-mode').value = s.policyMode === 'monitor' ? 'monitor' : 'protect';
  $('allowed-to-mutate').checked = s.allowedToMutate !== false;
  const info = policyInfo($('policy').value);
  currentExample = (s.example && info.examples.find((e) => e.id === s.example)) || null;
  $('example').value = currentExample ? currentExample.id : '';
  showExampleDescription();
  showMode();
  refreshEditors();
}

function instantNow() {
  if ($('now-live').checked) return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const local = $('local-time').value;
  const zone = $('zone').value.trim() || 'UTC';
  return wasm.instant(local.length === 16 ? local + ':00' : local, zone);
}

function input() {
  const s = state();
  return {
    policy: s.policy, mode: s.mode, review: s.review, object: s.object, oldObject: s.oldObject,
    operation: s.operation, username: s.username, groups: s.groups, dryRun: s.dryRun,
    settings: s.settings, now: instantNow(), context: s.context,
    policyMode: s.policyMode, allowedToMutate: s.allowedToMutate,
  };
}

// ---- permalink ------------------------------------------------------------

function toBase64Url(bytes) {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text) {
  const bin = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

async function pipe(bytes, stream) {
  const out = new Blob([bytes]).stream().pipeThrough(stream);
  return new Uint8Array(await new Response(out).arrayBuffer());
}

async function encodeState(s) {
  const bytes = new TextEncoder().encode(JSON.stringify(s));
  return 's=' + toBase64Url(await pipe(bytes, new CompressionStream('deflate-raw')));
}

async function decodeState(fragment) {
  const m = /^#?s=([A-Za-z0-9_-]+)$/.exec(fragment);
  if (!m) return null;
  const bytes = await pipe(fromBase64Url(m[1]), new DecompressionStream('deflate-raw'));
  const s = JSON.parse(new TextDecoder().decode(bytes));
  return s && typeof s === 'object' ? s : null;
}

function scheduleLink() {
  clearTimeout(linkTimer);
  linkTimer = setTimeout(updateLink, 250);
}

async function updateLink() {
  const fragment = await encodeState(state());
  history.replaceState(null, '', '#' + fragment);
  document.body.dataset.link = fragment.length;
}

// ---- editors ----------------------------------------------------------------

function refreshGutter(editor, errorLine) {
  const textarea = editor.querySelector('textarea');
  const gutter = editor.querySelector('.gutter');
  const lines = textarea.value.split('\n').length;
  clear(gutter);
  for (let i = 1; i <= lines; i++) {
    const span = el('span', String(i), i === errorLine ? 'bad' : undefined);
    gutter.appendChild(span);
    gutter.appendChild(document.createTextNode('\n'));
  }
  gutter.scrollTop = textarea.scrollTop;
}

function refreshEditors(errorLines = {}) {
  for (const editor of document.querySelectorAll('.editor')) {
    refreshGutter(editor, errorLines[editor.dataset.input]);
  }
}

// ---- rendering ----------------------------------------------------------------

function showErrors(errors) {
  for (const box of document.querySelectorAll('[data-error]')) {
    clear(box);
    box.hidden = true;
  }
  const lines = {};
  for (const e of errors) {
    const name = e.input === 'review' ? 'request' : e.input;
    const box = document.querySelector(`[data-error="${CSS.escape(name)}"]`) || document.querySelector('[data-error="page"]');
    box.hidden = false;
    const where = e.line ? `line ${e.line}, column ${e.column}: ` : '';
    const head = el('div', where + e.message);
    box.appendChild(head);
    const editorId = EDITOR_OF[name];
    if (e.line && editorId) {
      lines[name] = e.line;
      const text = $(editorId).value.split('\n')[e.line - 1];
      if (text !== undefined) {
        box.appendChild(el('pre', `${e.line} | ${text}\n${' '.repeat(String(e.line).length + 3 + Math.max(0, e.column - 1))}^`, 'excerpt'));
      }
    }
  }
  refreshEditors(lines);
}

function lineDiff(a, b) {
  const x = a.split('\n');
  const y = b.split('\n');
  let start = 0;
  while (start < x.length && start < y.length && x[start] === y[start]) start++;
  let endX = x.length;
  let endY = y.length;
  while (endX > start && endY > start && x[endX - 1] === y[endY - 1]) { endX--; endY--; }
  const mx = x.slice(start, endX);
  const my = y.slice(start, endY);
  const rows = [];
  for (let i = 0; i < start; i++) rows.push([' ', x[i]]);
  if (mx.length * my.length > 4e6) {
    for (const l of mx) rows.push(['-', l]);
    for (const l of my) rows.push(['+', l]);
  } else {
    const n = mx.length;
    const m = my.length;
    const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i][j] = mx[i] === my[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && mx[i] === my[j]) { rows.push([' ', mx[i]]); i++; j++; }
      else if (j < m && (i === n || lcs[i][j + 1] >= lcs[i + 1][j])) { rows.push(['+', my[j]]); j++; }
      else { rows.push(['-', mx[i]]); i++; }
    }
  }
  for (let i = endX; i < x.length; i++) rows.push([' ', x[i]]);
  return rows;
}

function renderDiff(target, rows, context = 3) {
  clear(target);
  const keep = rows.map(() => false);
  rows.forEach(([tag], i) => {
    if (tag !== ' ') for (let k = Math.max(0, i - context); k <= Math.min(rows.length - 1, i + context); k++) keep[k] = true;
  });
  let skipped = 0;
  const flush = () => {
    if (skipped) target.appendChild(el('span', `  … ${skipped} unchanged line${skipped === 1 ? '' : 's'}\n`, 'skip'));
    skipped = 0;
  };
  rows.forEach(([tag, line], i) => {
    if (!keep[i]) { skipped++; return; }
    flush();
    target.appendChild(el('span', `${tag} ${line}\n`, tag === '+' ? 'add' : tag === '-' ? 'del' : 'same'));
  });
  flush();
}

function setList(node, items, render) {
  clear(node);
  if (!items.length) node.appendChild(el(node.tagName === 'DL' ? 'dt' : 'li', 'none', 'muted'));
  for (const item of items) render(item);
}

function renderResult(out, ms) {
  const result = $('result');
  showErrors(out.errors || []);
  const verdict = $('verdict');
  if (!out.ok) {
    verdict.textContent = 'Not evaluated: fix the input marked in red';
    verdict.className = 'verdict invalid';
    result.dataset.verdict = 'error';
    $('timing').textContent = '';
    $('result-body').hidden = true;
    return;
  }
  $('result-body').hidden = false;
  const r = out.response;
  const code = r.status && r.status.code;
  if (r.noAnswer) {
    // policy-server never replies: kube-apiserver gives up after the webhook's
    // timeoutSeconds and applies its failurePolicy (conformance::NoAnswer).
    verdict.textContent = 'No answer: the webhook times out, failurePolicy decides';
    verdict.className = 'verdict silent';
    result.dataset.verdict = 'no-answer';
  } else {
    verdict.textContent = r.allowed ? 'Allowed' : `Refused${code ? ` (${code})` : ''}`;
    verdict.className = 'verdict ' + (r.allowed ? 'allowed' : 'refused');
    result.dataset.verdict = r.allowed ? 'allowed' : 'refused';
  }
  $('timing').textContent = `evaluated at ${out.now} in ${ms.toFixed(2)} ms`;
  $('message').textContent = r.noAnswer || (r.status && r.status.message) || '(none)';
  setList($('warnings'), r.warnings || [], (w) => $('warnings').appendChild(el('li', w)));
  const audit = Object.entries(r.auditAnnotations || {});
  setList($('audit'), audit, ([k, v]) => { $('audit').appendChild(el('dt', k)); $('audit').appendChild(el('dd', v)); });
  const patch = out.patch || [];
  $('patch').textContent = patch.length ? JSON.stringify(patch, null, 2) : (out.patchError || '(none)');
  $('patch-note').textContent = r.patch ? `(${r.patchType}, sent base64-encoded)` : '';
  if (patch.length && out.patched !== undefined) {
    renderDiff($('diff'), lineDiff(out.original, out.patched));
  } else {
    clear($('diff'));
    $('diff').textContent = out.patchError ? out.patchError : '(unchanged)';
  }
  $('response').textContent = JSON.stringify(r, null, 2);
  $('request-sent').textContent = JSON.stringify(out.request, null, 2);
  if (currentExample && currentExample.expect) {
    $('expect-box').hidden = false;
    $('expect-case').textContent = `(${$('policy').value}/${currentExample.id})`;
    const problems = JSON.parse(wasm.check(JSON.stringify(currentExample.expect), JSON.stringify(r)));
    $('expect').textContent = problems.length ? 'Differs:\n' + problems.join('\n') : 'Met: this is the verdict the corpus case records.';
    $('expect').className = 'block ' + (problems.length ? 'differs' : 'met');
  } else {
    $('expect-box').hidden = true;
  }
}

function showInstant() {
  const instant = instantNow();
  $('instant').textContent = instant || '(not a valid time in that zone)';
}

function evaluate() {
  clearTimeout(timer);
  showInstant();
  const text = JSON.stringify(input());
  const t0 = performance.now();
  const out = JSON.parse(wasm.run(text));
  const ms = performance.now() - t0;
  if (out.ok) timings.push(ms);
  window.playgroundLast = { out, ms };
  renderResult(out, ms);
  $('next-allowed').textContent = '';
  $('use-next').hidden = true;
  $('next-row').hidden = !(out.ok && !out.response.allowed && !out.response.noAnswer && $('policy').value === 'flux-gate');
  const result = $('result');
  result.dataset.pending = 'false';
  result.dataset.seq = String(++seq);
  scheduleLink();
}

function scheduleEvaluate() {
  $('result').dataset.pending = 'true';
  clearTimeout(timer);
  timer = setTimeout(evaluate, 40);
}

// ---- policy, examples ---------------------------------------------------------

function fillPolicy(loadDefaults) {
  const info = policyInfo($('policy').value);
  $('policy-description').textContent = info.description || '';
  const examples = $('example');
  clear(examples);
  examples.appendChild(option('', info.examples.length ? '(your own input)' : '(no examples yet)'));
  for (const e of info.examples) {
    const mark = e.expect && e.expect.allowed === false ? '✗' : '✓';
    examples.appendChild(option(e.id, `${mark} ${e.id}`));
  }
  const tbody = $('settings-table').querySelector('tbody');
  clear(tbody);
  for (const q of info.settingsDoc || []) {
    const tr = document.createElement('tr');
    tr.appendChild(el('td', q.variable, 'mono'));
    tr.appendChild(el('td', q.default === null || q.default === undefined ? '' : JSON.stringify(q.default), 'mono'));
    const what = [q.label, q.description, q.options ? `One of: ${[].concat(q.options).join(', ')}.` : ''].filter(Boolean).join(' — ');
    tr.appendChild(el('td', what));
    tbody.appendChild(tr);
  }
  $('settings-table').hidden = !(info.settingsDoc || []).length;
  $('settings-readme').textContent = info.settingsReadme || '';
  $('settings-readme').hidden = !info.settingsReadme;
  const aware = (info.contextAwareResources || []).map((r) => `${r.kind} (${r.apiVersion})`);
  $('context-aware').textContent = aware.length ? `This policy looks up: ${aware.join(', ')}.` : 'This policy looks nothing up.';
  fillStories(info);
  if (loadDefaults) {
    const first = info.examples.find((e) => e.id === info.defaultExample) || info.examples[0];
    if (first) loadExample(first);
    else {
      currentExample = null;
      $('settings').value = info.defaultSettings;
    }
  }
}

// The policy's stories: the select, and the chosen one told step by step.
function fillStories(info) {
  const select = $('story');
  clear(select);
  const stories = info.stories || [];
  select.appendChild(option('', stories.length ? '(choose a story)' : '(no stories yet)'));
  for (const s of stories) select.appendChild(option(s.id, s.id));
  clear($('story-steps'));
  $('story-description').textContent = '';
  $('story-verdict').textContent = '';
}

function yamlOf(value) {
  return wasm.to_yaml(JSON.stringify(value));
}

function subjectBefore(r) {
  const o = r.request.object || r.request.oldObject || {};
  const same = (x) => x.kind === o.kind && (x.metadata || {}).name === (o.metadata || {}).name
    && ((x.metadata || {}).namespace || '') === ((o.metadata || {}).namespace || '');
  return r.state.find(same);
}

function showStory(policy, id) {
  const s = (policyInfo(policy).stories || []).find((x) => x.id === id);
  const steps = $('story-steps');
  clear(steps);
  if (!s) return null;
  $('story-description').textContent = s.description || '';
  let run;
  try {
    run = JSON.parse(wasm.story(`${policy}/${id}`, s.text));
  } catch (e) {
    $('story-verdict').textContent = `The story cannot run: ${e && e.message ? e.message : String(e)}`;
    return null;
  }
  $('story-verdict').textContent = run.passed ? 'Every step as expected.' : `Failed: ${run.failures.length} problem(s).`;
  $('story-verdict').dataset.passed = String(run.passed);
  for (const step of run.steps) {
    const li = el('li', `${step.name} (${step.now})`);
    if (step.error) li.appendChild(el('p', `Cannot be carried out: ${step.error}`, 'error'));
    for (const r of step.requests) {
      const d = document.createElement('details');
      d.appendChild(el('summary', `${r.summary} → ${r.verdict}`));
      const before = subjectBefore(r);
      d.appendChild(el('p', 'Stored before the request:', 'muted'));
      d.appendChild(el('pre', before ? yamlOf(before) : '(absent)', 'block'));
      d.appendChild(el('p', 'The AdmissionRequest:', 'muted'));
      d.appendChild(el('pre', yamlOf(r.request), 'block'));
      for (const p of r.problems) d.appendChild(el('p', p, 'error'));
      li.appendChild(d);
    }
    steps.appendChild(li);
  }
  for (const p of run.endProblems) steps.appendChild(el('p', `End: ${p}`, 'error'));
  return run;
}

function showExampleDescription() {
  $('example-description').textContent = currentExample ? `Example ${currentExample.id}: ${currentExample.description}` : '';
}

function loadExample(e) {
  currentExample = e;
  $('example').value = e.id;
  $('mode-review').checked = true;
  $('review').value = e.request;
  $('settings').value = e.settings;
  $('context').value = e.context || '';
  $('policy-mode').value = e.policyMode === 'monitor' ? 'monitor' : 'protect';
  $('allowed-to-mutate').checked = e.allowedToMutate !== false;
  setFixedNow(e.now);
  fillFormFromReview();
  showExampleDescription();
  showMode();
  refreshEditors();
}

function setFixedNow(instant) {
  $('now-fixed').checked = true;
  const zone = $('zone').value.trim() || 'UTC';
  const d = JSON.parse(wasm.describe(instant, zone));
  if (d) $('local-time').value = d.local;
  else { $('zone').value = 'UTC'; $('local-time').value = JSON.parse(wasm.describe(instant, 'UTC')).local; }
}

function fillFormFromReview() {
  const parsed = JSON.parse(wasm.parse('request', $('review').value));
  if (!parsed.value || typeof parsed.value !== 'object') return false;
  let r = parsed.value;
  if (r.request && (r.kind === 'AdmissionReview' || !r.uid)) r = r.request;
  const yaml = (v) => (v === undefined || v === null ? '' : wasm.to_yaml(JSON.stringify(v)));
  const deleting = r.operation === 'DELETE';
  $('object').value = yaml(deleting ? r.oldObject : r.object);
  $('old-object').value = deleting ? '' : yaml(r.oldObject);
  if (r.operation) $('operation').value = r.operation;
  $('username').value = (r.userInfo && r.userInfo.username) || '';
  $('groups').value = ((r.userInfo && r.userInfo.groups) || []).join(', ');
  $('dry-run').checked = !!r.dryRun;
  return true;
}

function showMode() {
  const form = $('mode-form').checked;
  $('form-pane').hidden = !form;
  $('review-pane').hidden = form;
  $('to-form').hidden = form;
  $('to-review').hidden = !form;
}

// ---- wiring ---------------------------------------------------------------------

function wire() {
  $('story').addEventListener('change', () => showStory($('policy').value, $('story').value));
  $('policy').addEventListener('change', () => { fillPolicy(true); evaluate(); });
  $('example').addEventListener('change', () => {
    const info = policyInfo($('policy').value);
    const e = info.examples.find((x) => x.id === $('example').value);
    if (e) loadExample(e);
    else { currentExample = null; showExampleDescription(); }
    evaluate();
  });
  for (const node of document.querySelectorAll('#inputs input, #inputs select, #inputs textarea')) {
    node.addEventListener('input', () => {
      if (node.tagName === 'TEXTAREA') refreshGutter(node.parentElement);
      scheduleEvaluate();
    });
    node.addEventListener('change', scheduleEvaluate);
  }
  for (const t of document.querySelectorAll('.editor textarea')) {
    t.addEventListener('scroll', () => { t.parentElement.querySelector('.gutter').scrollTop = t.scrollTop; });
  }
  for (const id of ['mode-review', 'mode-form']) $(id).addEventListener('change', () => { showMode(); refreshEditors(); });
  $('to-form').addEventListener('click', () => {
    if (fillFormFromReview()) { $('mode-form').checked = true; showMode(); refreshEditors(); evaluate(); }
  });
  $('to-review').addEventListener('click', () => {
    const out = window.playgroundLast && window.playgroundLast.out;
    if (!out || !out.request) return;
    $('review').value = wasm.to_yaml(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: out.request }));
    $('mode-review').checked = true;
    showMode();
    refreshEditors();
    evaluate();
  });
  $('find-next').addEventListener('click', () => {
    const found = JSON.parse(wasm.next_allowed(JSON.stringify(input()), 24 * 35, 10));
    const zone = $('zone').value.trim() || 'UTC';
    if (!found) $('next-allowed').textContent = 'the inputs cannot be read';
    else if (!found.at) $('next-allowed').textContent = 'not within the next 35 days';
    else {
      const d = JSON.parse(wasm.describe(found.at, zone));
      $('next-allowed').textContent = `allowed from ${d ? d.text : found.at}`;
      $('use-next').hidden = false;
      $('use-next').dataset.at = found.at;
    }
  });
  $('use-next').addEventListener('click', () => { setFixedNow($('use-next').dataset.at); evaluate(); });
  $('copy-link').addEventListener('click', async () => {
    await updateLink();
    try {
      await navigator.clipboard.writeText(location.href);
      $('link-status').textContent = 'link copied';
    } catch {
      $('link-status').textContent = 'link is in the address bar';
    }
  });
  window.addEventListener('hashchange', async () => {
    const s = await decodeState(location.hash).catch(() => null);
    if (s) { setState(s); evaluate(); }
  });
}

async function main() {
  await init();
  catalogue = JSON.parse(wasm.catalogue());
  for (const p of catalogue.policies) $('policy').appendChild(option(p.name, p.title && p.title !== p.name ? `${p.name} — ${p.title}` : p.name));
  const zones = $('zones');
  for (const z of JSON.parse(wasm.time_zones())) zones.appendChild(option(z, z));
  let zone = 'UTC';
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'; } catch { /* UTC */ }
  $('zone').value = zone;
  wire();
  let restored = null;
  if (location.hash) {
    restored = await decodeState(location.hash).catch(() => null);
    if (!restored) $('link-status').textContent = 'the link could not be read; starting afresh';
  }
  if (restored) setState(restored);
  else fillPolicy(true);
  $('loading').hidden = true;
  $('app').hidden = false;
  refreshEditors();
  evaluate();
  if ('serviceWorker' in navigator && location.protocol.startsWith('http')) {
    navigator.serviceWorker.register('sw.js').catch(() => {});
  }
}

// For the browser tests and the curious: the page's own operations.
window.playground = {
  state, setState, evaluate, input, encodeState, decodeState, timings,
  loadExample(policy, id) {
    $('policy').value = policy;
    fillPolicy(false);
    const e = policyInfo(policy).examples.find((x) => x.id === id);
    if (!e) return false;
    loadExample(e);
    evaluate();
    return true;
  },
  catalogue: () => catalogue,
  run: (text) => wasm.run(text),
  showStory(policy, id) {
    $('policy').value = policy;
    fillPolicy(false);
    $('story').value = id;
    return showStory(policy, id);
  },
};

main().then(() => { document.body.dataset.ready = 'true'; }).catch((e) => {
  $('loading').textContent = 'The playground could not start: ' + (e && e.message ? e.message : String(e));
});
