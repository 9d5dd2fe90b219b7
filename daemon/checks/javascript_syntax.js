// Whether JavaScript texts parse, as ``node --check`` says, for assist's repairs: V8's parser
// on the text as a CommonJS module's body and, where that fails on an import or export, as an
// ECMAScript module (node's own detection), without running either. The answer is
// {"ok": true} or {"ok": false, "line", "column", "message"} (0-based line and column).
// Started with --experimental-vm-modules (for vm.SourceTextModule).
"use strict";

const vm = require("vm");
const { serve } = require("./checker_loop.js");

const CJS = ["exports", "require", "module", "__filename", "__dirname"];
const MODULE_SYNTAX = /^\s*(import|export)\b/m;

// A leading "#!" line is a comment to node; kept as one, so lines and columns stay.
function withoutHashbang(text) {
  return text.startsWith("#!") ? "//" + text.slice(2) : text;
}

function rejection(error, text) {
  if (!(error instanceof SyntaxError)) return { ok: true };
  const stack = String(error.stack).split("\n");
  const named = /candidate\.js:(\d+)\s*$/.exec(stack[0] || "");
  const answer = { ok: false, message: `SyntaxError: ${error.message}` };
  if (!named) return answer;
  const line = Number(named[1]) - 1;
  const carets = stack[2] || "";
  const column = /^ *\^/.test(carets) ? carets.length - carets.trimStart().length : 0;
  const lines = text.split("\n");
  return { ...answer, line: Math.min(line, lines.length - 1), column };
}

function check(source) {
  const text = withoutHashbang(source);
  try {
    vm.compileFunction(text, CJS, { filename: "candidate.js" });
    return { ok: true };
  } catch (error) {
    if (!MODULE_SYNTAX.test(text)) return rejection(error, text);
  }
  try {
    new vm.SourceTextModule(text, { identifier: "candidate.js" });
    return { ok: true };
  } catch (error) {
    return rejection(error, text);
  }
}

serve(check);
