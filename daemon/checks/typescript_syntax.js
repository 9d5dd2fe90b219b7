// The TypeScript compiler for assist's repairs, in one of two modes.
// Syntax (the default): whether TypeScript texts parse, by the compiler's own parser, then V8's
// on the JavaScript it compiles to (without running it), which rejects what the TypeScript
// parser leaves to the type checker, such as an assignment to a call; the answer is {"ok": true}
// or {"ok": false, "line", "column", "message"} for the first syntax error.
// Names ("names" after the kind): the undefined names of a JavaScript or TypeScript text, by the
// type checker on the file alone, with the standard library's and the browser's declarations
// and no import followed (an imported name is declared by its import); the answer is
// {"ok": true, "names": [{"name", "line", "column", "suggestion"}]}, with the name the checker
// suggests for each, if any.
// Started once with the compiler's path and the file's kind (ts, tsx, js or jsx); each request
// on stdin is "<bytes>\n<text>" (UTF-8), each answer one JSON line (0-based lines and columns).
"use strict";

const vm = require("vm");
const { serve } = require("./checker_loop.js");
const ts = require(process.argv[2]);
const kind = process.argv[3] || "ts";
const reactFile = kind === "tsx";
const namesMode = process.argv[4] === "names";

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

// "Cannot find name 'x'." and "Cannot find name 'x'. Did you mean 'y'?"
const UNDEFINED = new Set([2304, 2552]);
const fileName = `candidate.${kind}`;
const scriptKind =
  { js: ts.ScriptKind.JS, jsx: ts.ScriptKind.JSX, tsx: ts.ScriptKind.TSX }[kind] || ts.ScriptKind.TS;
const programOptions = {
  target: ts.ScriptTarget.ESNext,
  module: ts.ModuleKind.ESNext,
  lib: ["lib.esnext.d.ts", "lib.dom.d.ts"],
  types: [],
  allowJs: true,
  checkJs: true,
  noResolve: true,
  noEmit: true,
  skipLibCheck: true,
  experimentalDecorators: true,
  jsx: ts.JsxEmit.Preserve,
};
let current = "";
let previous;

// A compiler host that serves the text asked about as the one file, and reads each of the
// standard library's declaration files once.
function makeHost() {
  const host = ts.createCompilerHost(programOptions);
  const libraries = new Map();
  const readLibrary = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, onError) => {
    if (name === fileName) return ts.createSourceFile(name, current, version, true, scriptKind);
    if (!libraries.has(name)) libraries.set(name, readLibrary(name, version, onError));
    return libraries.get(name);
  };
  const exists = host.fileExists.bind(host);
  host.fileExists = (name) => name === fileName || exists(name);
  host.writeFile = () => {};
  return host;
}
const host = namesMode ? makeHost() : null;

function undefinedNames(text) {
  current = text;
  const program = ts.createProgram({
    rootNames: [fileName],
    options: programOptions,
    host,
    oldProgram: previous,
  });
  previous = program;
  const source = program.getSourceFile(fileName);
  const names = program
    .getSemanticDiagnostics(source)
    .filter((d) => UNDEFINED.has(d.code) && d.start !== undefined)
    .map((d) => {
      const place = source.getLineAndCharacterOfPosition(d.start);
      const message = ts.flattenDiagnosticMessageText(d.messageText, " ");
      const meant = /Did you mean '([^']+)'\?/.exec(message);
      return {
        name: text.slice(d.start, d.start + d.length),
        line: place.line,
        column: place.character,
        suggestion: meant ? meant[1] : null,
      };
    });
  return { ok: true, names };
}

serve((text) => (namesMode ? undefinedNames(text) : check(text)));
