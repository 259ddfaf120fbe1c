"""The tests' HTTP servers, served from a daemon thread that stops as soon as it is told to.

socketserver's serve_forever sees a shutdown() only between two waits on its selector (CPython 3.11
Lib/socketserver.py BaseServer.serve_forever: `selector.select(poll_interval)`, 0.5 s by default; its own comment
calls the polling a cost to responsiveness), so a test that stopped its server waited for up to half a second:
test_rotate's fake clusters (tests/support/fake_kube.py), one per test, kept a worker idle for ~11 s of a run (py-spy,
the main thread in BaseServer.shutdown's Event.wait). Waiting 10 ms at a time, the thread wakes 100 times a second
while a test runs, each a select() with nothing to read.
"""

from __future__ import annotations

import socketserver
import threading

POLL_SECONDS = 0.01


def serve_in_background(server: socketserver.BaseServer, name: str) -> threading.Thread:
    """Serve `server` from a daemon thread (it ends with the process if the test never shuts the server down)."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, daemon=True,
                              name=name)
    thread.start()
    return thread
