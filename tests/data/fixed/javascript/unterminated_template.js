"use strict";

const fs = require("fs");
const path = require("path");

function listMarkdown(dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".md"))
    .map((entry) => path.join(dir, entry.name));
}

function titleOf(file) {
  const firstLine = fs.readFileSync(file, "utf8").split("\n", 1)[0];
  return firstLine.replace(/^#+\s*/, "") || path.basename(file, ".md");
}

function header(dir) {
  const title = `# Index of ${path.basename(path.resolve(dir))}`;
  const note = `_generated ${new Date().toISOString().slice(0, 10)}_`;
  return [title, "", note, ""];
}

function buildIndex(dir) {
  const lines = header(dir);
  for (const file of listMarkdown(dir)) {
    const link = path.relative(dir, file);
    lines.push(`- [${titleOf(file)}](${link})`);
  }
  return lines.join("\n") + "\n";
}

const dir = process.argv[2] || ".";
const index = buildIndex(dir);
fs.writeFileSync(path.join(dir, "INDEX.md"), index);
console.log(`wrote ${index.split("\n").length - 5} entries to ${dir}/INDEX.md`);
