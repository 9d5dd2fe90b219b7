const http = require("http");

const users = new Map([
  ["1", { id: "1", name: "Ada" }],
  ["2", { id: "2", name: "Linus" }],
]);

function sendJson(res, status, body) {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify(body));
}

function handle(req, res) {
  const match = req.url.match(/^\/users\/(\w+)$/);
  if (req.method !== "GET" || !match) {
    sendJson(res, 404, { error: "not found" });
    return;
  }
  const user = users.get(match[1]);
  if (user) {
    sendJson(res, 200, user);
  } else {
    sendJson(res, 404, { error: `no user ${match[1]}` });
  }
}

const server = http.createServer(handle);
server.listen(3000, () => {
  console.log("listening on http://localhost:3000");
});
