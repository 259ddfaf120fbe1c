"""tests/support/serving.py: the tests' servers wait on their selector POLL_SECONDS at a time, so stopping one is
immediate rather than up to socketserver's default half second; the fake cluster API serves through it."""

from __future__ import annotations

import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.support import fake_kube, serving


def test_the_thread_serves_with_the_short_poll():
    seen: list[float] = []

    class Server:
        def serve_forever(self, poll_interval: float = 0.5) -> None:
            seen.append(poll_interval)

    serving.serve_in_background(Server(), "probe").join(10)  # type: ignore[arg-type]
    assert seen == [serving.POLL_SECONDS] and serving.POLL_SECONDS < 0.5


def test_a_real_server_answers_and_its_thread_ends_with_shutdown():
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = serving.serve_in_background(server, "probe")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.server_address[1]}/", timeout=10) as answer:
            assert answer.status == 204
    finally:
        server.shutdown()
        server.server_close()
    thread.join(10)
    assert thread.daemon and thread.name == "probe" and not thread.is_alive()


def test_the_fake_cluster_api_serves_through_it(monkeypatch):
    served: list[str] = []
    real = serving.serve_in_background

    def recording(server, name: str) -> threading.Thread:
        served.append(name)
        return real(server, name)

    monkeypatch.setattr(serving, "serve_in_background", recording)
    cluster = fake_kube.FakeCluster(fake_kube.FakeClock(), "v1.33.5+rke2r1")
    try:
        cluster.start()
    finally:
        cluster.shutdown()
    assert served == ["fake-kube"]
