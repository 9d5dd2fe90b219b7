// Whether TypeScript texts parse, for assist's repairs: the TypeScript compiler's own parser,
// then V8's on the JavaScript it compiles to (without running it), which rejects what the
// TypeScript parser leaves to the type checker, such as an assignment to a call.
// Started once with the compiler's path; each request on stdin is "<bytes>\n<text>" (UTF-8),
// each answer on stdout one JSON line: {"ok": true} or {"ok": false, "line", "column",
// "message"} for the first syntax error (0-based line and column).
"use strict";

const vm = require("vm");
const ts = require(process.argv[2]);
const reactFile = process.argv[3] === "tsx";

function check(text) {
  const out = ts.transpileModule(text, {
    reportDiagnostics: true,
    fileName: reactFile ? "candidate.tsx" : "candidate.ts",
    // Decorators as most TypeScript code bases write them (parameter decorators exist only
    // there): the standard ones would be left in the output for V8 to reject.
    compilerOptions: {
      target: ts.ScriptTarget.ESNext,
      module: ts.ModuleKind.CommonJS,
      jsx: ts.JsxEmit.React,
      experimentalDecorators: true,
    },
  });
  const errors = (out.diagnostics || []).filter(
    (d) => d.category === ts.DiagnosticCategory.Error && d.file,
  );
  if (!errors.length) return compiled(text, out.outputText);
  const first = errors.reduce((a, b) => (b.start < a.start ? b : a));
  const place = first.file.getLineAndCharacterOfPosition(first.start);
  const message = ts.flattenDiagnosticMessageText(first.messageText, " ");
  return { ok: false, line: place.line, column: place.character, message: `TS${first.code}: ${message}` };
}

// V8's objection to the compiled JavaScript, placed on the TypeScript line it quotes.
function compiled(text, javascript) {
  try {
    new vm.Script(javascript, { filename: "candidate.js" });
    return { ok: true };
  } catch (error) {
    if (!(error instanceof SyntaxError)) return { ok: true };
    const [, quoted = "", carets = ""] = String(error.stack).split("\n");
    const lines = text.split("\n");
    const start = carets.indexOf("^");
    const marked = start < 0 ? "" : quoted.slice(start, start + carets.trim().length);
    const answer = { ok: false, message: `${error.message} (in the JavaScript it compiles to)` };
    let line = quoted.trim() ? lines.findIndex((l) => l.trim() === quoted.trim()) : -1;
    if (line >= 0) {
      const shift = lines[line].length - lines[line].trimStart().length;
      const column = start - (quoted.length - quoted.trimStart().length) + shift;
      return { ...answer, line, column: Math.max(0, column) };
    }
    const holding = marked.trim() ? lines.filter((l) => l.includes(marked)) : [];
    if (holding.length !== 1) return answer;
    line = lines.indexOf(holding[0]);
    return { ...answer, line, column: lines[line].indexOf(marked) };
  }
}

let pending = Buffer.alloc(0);
process.stdin.on("data", (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  for (;;) {
    const end = pending.indexOf(10);
    if (end < 0) return;
    const size = Number(pending.subarray(0, end).toString("ascii"));
    if (pending.length < end + 1 + size) return;
    const text = pending.subarray(end + 1, end + 1 + size).toString("utf8");
    pending = pending.subarray(end + 1 + size);
    let answer;
    try {
      answer = check(text);
    } catch (error) {
      answer = { failed: String(error) };
    }
    process.stdout.write(JSON.stringify(answer) + "\n");
  }
});
