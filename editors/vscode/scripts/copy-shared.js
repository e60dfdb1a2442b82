// Copies what the extension ships from the repository, so nothing is kept twice: the licence and
// the test-file JSON Schema the Python package ships (dotprompt/data/), which `yamlValidation` points
// at. (The frontmatter sits inside a .prompt file, where the YAML extension cannot see it: the
// language server completes and checks it from the same key tables.)
const fs = require("fs");
const path = require("path");

const root = path.resolve(__dirname, "..", "..", "..");
const here = path.resolve(__dirname, "..");
fs.mkdirSync(path.join(here, "schemas"), { recursive: true });
for (const name of ["test-file.schema.json"]) {
  fs.copyFileSync(path.join(root, "dotprompt", "data", name), path.join(here, "schemas", name));
}
fs.copyFileSync(path.join(root, "LICENSE"), path.join(here, "LICENSE"));
