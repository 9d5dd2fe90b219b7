// The request loop of assist's checkers kept running under node: each request on stdin is
// "<bytes>\n<text>" (UTF-8), each answer one JSON line on stdout, what ``check`` returns for
// the text ({"failed": ...} when it throws).
"use strict";

function serve(check) {
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
}

module.exports = { serve };
