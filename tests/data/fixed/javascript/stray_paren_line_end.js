"use strict";

const readline = require("readline");

const rl = readline.createInterface({ input: process.stdin });
const counts = new Map();
let lines = 0;

rl.on("line", (line) => {
  lines += 1;
  const level = (line.match(/\b(DEBUG|INFO|WARN|ERROR)\b/) || [])[1];
  if (!level) {
    return;
  }
  counts.set(level, (counts.get(level) || 0) + 1);
});

rl.on("close", () => {
  const errors = counts.get("ERROR") || 0;
  console.log(`${lines} lines`);
  for (const [level, count] of [...counts].sort((a, b) => b[1] - a[1])) {
    console.log(`${level.padEnd(6)} ${count}`);
  }
  process.exitCode = errors > 0 ? 1 : 0;
});
