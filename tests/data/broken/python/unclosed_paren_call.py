import json
import logging
from http.server import BaseHTTPRequestHandler, HTTPServer

log = logging.getLogger("health")

STATUS = {"service": "billing", "version": "1.4.2"}


def format_row(key, value):
    return f"{key:<12} {value}"


class HealthHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path != "/health":
            self.send_error(404, "not found")
            return
        body = json.dumps({"status": "ok", **STATUS}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        log.info("%s - %s", self.address_string(), fmt % args)


def main():
    for key, value in STATUS.items():
        print(format_row(key, value)
    server = HTTPServer(("127.0.0.1", 8080), HealthHandler)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        server.server_close()


if __name__ == "__main__":
    main()
