// Every tests/*.rs file of a workspace member is compiled by `cargo test`:
// it is a test target, or a module a test target in the same folder declares
// (`mod name;`). With `autotests = false` (cli, devtools, host-test: one test
// binary each) cargo would otherwise skip a new file without a word.
// Reads `cargo metadata` on stdin.
"use strict";
const fs = require("fs");
const path = require("path");

const metadata = JSON.parse(fs.readFileSync(0, "utf8"));
let missing = 0;
for (const pkg of metadata.packages) {
  const dir = path.join(path.dirname(pkg.manifest_path), "tests");
  if (!fs.existsSync(dir)) continue;
  const targets = pkg.targets
    .filter((t) => t.kind.includes("test") && path.dirname(t.src_path) === dir)
    .map((t) => t.src_path);
  const declared = new Set(targets.map((t) => path.basename(t, ".rs")));
  for (const target of targets) {
    for (const m of fs.readFileSync(target, "utf8").matchAll(/^\s*mod\s+(\w+)\s*;/gm)) {
      declared.add(m[1]);
    }
  }
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".rs"))) {
    if (!declared.has(path.basename(file, ".rs"))) {
      console.error(`${path.relative(metadata.workspace_root, path.join(dir, file))}: ` +
        `no test target compiles it; declare it in its crate's tests/main.rs`);
      missing += 1;
    }
  }
}
process.exit(missing === 0 ? 0 : 1);
