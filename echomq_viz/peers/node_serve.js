// The JSON-lines loop shared by node_runner.js and node_worker.js: one JSON
// request per line on stdin, answered in order by `handle(request)` with one
// JSON reply per line on stdout ({ok: true, result} or {ok: false, error}, the
// error's first line). When stdin closes, `close()` runs once the pending
// requests are answered, then the process exits, so it never outlives the
// Python process that started it.
"use strict";
const readline = require("readline");

function serve(handle, close) {
  const lines = readline.createInterface({ input: process.stdin });
  let chain = Promise.resolve();
  lines.on("line", (line) => {
    chain = chain.then(async () => {
      let reply;
      try {
        const result = await handle(JSON.parse(line));
        reply = { ok: true, result: result === undefined ? null : result };
      } catch (error) {
        reply = { ok: false, error: String(error && error.message || error).split("\n")[0] };
      }
      process.stdout.write(JSON.stringify(reply) + "\n");
    });
  });
  lines.on("close", () => {
    chain.then(() => close()).catch(() => {}).then(() => process.exit(0));
  });
}

module.exports = { serve };
