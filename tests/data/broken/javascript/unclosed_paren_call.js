#!/usr/bin/env node
// Print a table of the largest files in a directory.
const fs = require("fs");
const path = require("path");

function formatSize(bytes) {
  const units = ["B", "KB", "MB", "GB"];
  let size = bytes;
  let unit = 0;
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return `${size.toFixed(1)} ${units[unit]}`;
}

function formatRow(row) {
  return `${formatSize(row.size).padStart(10)}  ${row.name}`;
}

function largestFiles(dir, limit) {
  return fs
    .readdirSync(dir)
    .map((name) => ({ name, size: fs.statSync(path.join(dir, name)).size }))
    .sort((a, b) => b.size - a.size)
    .slice(0, limit);
}

const dir = process.argv[2] || ".";
const limit = Number(process.argv[3] || 10);
for (const row of largestFiles(dir, limit)) {
  console.log(formatRow(row);
}
