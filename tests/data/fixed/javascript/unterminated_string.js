#!/usr/bin/env node
const fs = require("fs");

const usage = "Usage: jsonfmt <file> [--indent N]";

function parseArgs(argv) {
  const options = { file: null, indent: 2 };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--indent") {
      options.indent = Number(argv[++i]);
    } else {
      options.file = argv[i];
    }
  }
  return options;
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  if (!options.file || Number.isNaN(options.indent)) {
    console.error(usage);
    process.exit(2);
  }
  const text = fs.readFileSync(options.file, "utf8");
  try {
    const data = JSON.parse(text);
    process.stdout.write(JSON.stringify(data, null, options.indent) + "\n");
  } catch (err) {
    console.error(`${options.file}: ${err.message}`);
    process.exit(1);
  }
}

main();
