"""Capture: each exchange stands alone on its own connection, as its curl would."""

from http.server import BaseHTTPRequestHandler

from handlers import serving

from lmconform.target import Target
from lmconform.wire.http import send


class KeepAliveHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # offers keep-alive: a pooling client would reuse the connection
    connections: set = set()

    def do_GET(self) -> None:
        KeepAliveHandler.connections.add(self.client_address)
        body = b'{"object": "list", "data": []}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def test_every_exchange_opens_its_own_connection():
    with serving(KeepAliveHandler) as url:
        exchanges = [send(Target(base_url=url), "GET", "/v1/models") for _ in range(3)]
    assert [exchange.status for exchange in exchanges] == [200, 200, 200]
    assert len(KeepAliveHandler.connections) == 3
