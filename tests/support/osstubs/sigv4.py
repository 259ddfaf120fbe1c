"""The S3 signature botocore (the AWS SDK for Python) makes for a request: what tests/support/osstubs/s3.py checks
every signed request against. Computed in the test process that runs the boot when it serves `serve()` on a Unix
socket ($STUB_SIGNER: tests/support/node_boot.py), so botocore is imported once, not by every stand-in request
(importing it costs a quarter of a second); otherwise in s3.py's own process."""
import json
import os
import socket
import socketserver
import sys

SIGNED = ("x-amz-date", "x-amz-security-token", "x-amz-content-sha256")  # the headers the node signs


def botocore_signature(url: str, headers: dict, keys: list, region: str) -> str:
    """The signature botocore's S3SigV4Auth makes for a GET of `url` with `headers` (its SIGNED ones) and `keys`
    (access key, secret key, session token)."""
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    request = AWSRequest(method="GET", url=url, headers={k: headers[k] for k in SIGNED if k in headers})
    request.context["timestamp"] = headers.get("x-amz-date", "")
    signer = S3SigV4Auth(Credentials(*keys), "s3", region)
    return signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)


def expected_signature(url: str, headers: dict, keys: tuple, region: str) -> str:
    """botocore_signature, asked of the server at $STUB_SIGNER when it is set (one JSON line each way)."""
    where = os.environ.get("STUB_SIGNER")
    if not where:
        return botocore_signature(url, headers, list(keys), region)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(where)
        conn.sendall(json.dumps({"url": url, "headers": headers, "keys": list(keys), "region": region}).encode() + b"\n")
        answer = json.loads(conn.makefile().readline())
    if "error" in answer:
        sys.exit(f"sigv4.py: the signer at {where} failed: {answer['error']}")
    return answer["signature"]


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        try:
            asked = json.loads(self.rfile.readline())
            answer = {"signature": botocore_signature(asked["url"], asked["headers"], asked["keys"], asked["region"])}
        except Exception as err:  # noqa: BLE001 - told to the stand-in, which stops the request
            answer = {"error": repr(err)}
        self.wfile.write(json.dumps(answer).encode() + b"\n")


def serve(path: str) -> socketserver.ThreadingUnixStreamServer:
    """A server of botocore_signature on the Unix socket `path`, answering from a daemon thread until shut down."""
    import threading

    server = socketserver.ThreadingUnixStreamServer(path, _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="s3-signer", daemon=True).start()
    return server
