"use strict";

function parseDuration(text) {
  const match = /^(\d+)(ms|s|m|h)$/.exec(text.trim());
  if (!match) {
    throw new Error(`bad duration: ${text}`);
  }
  const units = { ms: 1, s: 1000, m: 60000, h: 3600000 };
  return Number(match[1]) * units[match[2]];
}

function formatDuration(ms) {
  if (ms < 1000) return `${ms}ms`;
  const seconds = Math.round(ms / 1000);
  const minutes = Math.floor(seconds / 60);
  const rest = seconds % 60;
  return minutes > 0 ? `${minutes}m${String(rest).padStart(2, "0")}s` : `${seconds}s`;
}

const args = process.argv.slice(2);
let total = 0;
for (const arg of args) {
  total += parseDuration(arg);
}
const average = args.length ? Math.round(total / args.length) : 0;
console.log("total", formatDuration(total));
console.log("average", formatDuration(average));
