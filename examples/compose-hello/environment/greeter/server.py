"""Answers GET /greeting and logs every request to /srv/requests.log."""
from http.server import BaseHTTPRequestHandler, HTTPServer


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"Hello from the greeter!" if self.path == "/greeting" else b"ok"
        if self.path != "/health":
            with open("/srv/requests.log", "a") as log:
                log.write(f"GET {self.path}\n")
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


HTTPServer(("0.0.0.0", 8000), Handler).serve_forever()
