"use strict";

const COMMANDS = {
  help: {
    summary: "show this help",
    run: () => printHelp(),
  },
  version: {
    summary: "print the version",
    run: () => console.log(require("./package.json").version),
  },
  echo: {
    summary: "print the arguments",
    run: (args) => console.log(args.join(" ")),
  },
};

function printHelp() {
  console.log("usage: tool <command> [args]");
  for (const [name, command] of Object.entries(COMMANDS)) {
    console.log(`  ${name.padEnd(10)}${command.summary}`);
  }
}

const [name = "help", ...rest] = process.argv.slice(2);
const command = COMMANDS[name];
if (!command) {
  console.error(`unknown command: ${name}`);
  process.exit(2);
}
command.run(rest);
