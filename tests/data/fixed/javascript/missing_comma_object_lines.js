"use strict";

const http = require("http");

const config = {
  port: Number(process.env.PORT) || 3000,
  host: process.env.HOST || "127.0.0.1",
  maxBodyBytes: 64 * 1024,
  corsOrigin: "*",
};

function send(res, status, body) {
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Access-Control-Allow-Origin": config.corsOrigin,
  });
  res.end(JSON.stringify(body));
}

const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/health") {
    send(res, 200, { ok: true, uptime: process.uptime() });
    return;
  }
  send(res, 404, { error: `no route for ${req.method} ${req.url}` });
});

server.listen(config.port, config.host, () => {
  console.log(`listening on http://${config.host}:${config.port}`);
});
