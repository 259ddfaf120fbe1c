"""Reading the running cluster (components/plan/running.py): read-only, bounded in time, never fatal.

Most tests drive the pure core with a fake API; one runs the real HTTPS transport against a local
server that demands the kubeconfig's client certificate (or its token), so the TLS set-up, the
temp files for the key and the GET-only rule are exercised for real.
"""

from __future__ import annotations

import datetime
import glob
import http.server
import json
import os
import ssl
import tempfile
import time

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from rke_aws.plan import running
from rke_aws.settings import stackfile
from tests.support import serving
from tests.support.day2 import PEM, b64, fake_api, kubeconfig, node

# ---- the kubeconfig ---------------------------------------------------------------------------

def test_client_certificate_and_token_kubeconfigs_are_used():
    access = running.parse_kubeconfig(kubeconfig())
    assert isinstance(access, running.Access) and access.server == "https://api.c.rke-aws.internal:6443"
    assert access.ca_pem == PEM and access.cert_pem == PEM and "PRIVATE KEY" in access.key_pem and access.token is None
    access = running.parse_kubeconfig(kubeconfig(user={"token": "abc"}, current=None))  # one context: used
    assert isinstance(access, running.Access) and access.token == "abc" and access.cert_pem is None


@pytest.mark.parametrize("text, why", [
    (None, "no kubeconfig"),
    ("", "no kubeconfig"),
    ("apiVersion: v1\nkind: Config\n", "names no cluster server"),  # the tests' placeholder
    (stackfile.SECURE_PLACEHOLDER, "names no cluster server"),  # an encrypted value offline
    ("{unclosed", "not YAML"),
    (kubeconfig(server="http://api:6443"), "not https"),
    (kubeconfig(user={"exec": {"command": "aws"}}), "exec"),
    (kubeconfig(user={"auth-provider": {"name": "oidc"}}), "auth-provider"),
    (kubeconfig(user={"client-certificate": "/home/me/cert.pem", "client-key": "/home/me/key.pem"}), "client-certificate"),
    (kubeconfig(user={"username": "admin", "password": "x"}), "password"),
    (kubeconfig(cluster={"server": "https://a:6443", "insecure-skip-tls-verify": True}), "insecure-skip-tls-verify"),
    (kubeconfig(cluster={"server": "https://a:6443", "proxy-url": "http://proxy"}), "proxy-url"),
    (kubeconfig(user={"client-certificate-data": b64(PEM)}), "half a client certificate"),
    (kubeconfig(user={"client-certificate-data": "not base64!", "client-key-data": b64(PEM)}), "not base64"),
    (kubeconfig(user={}), "no client certificate and no token"),
    (kubeconfig(current="other"), "'other' is not among its contexts"),
])
def test_only_certificates_and_tokens_are_accepted_and_the_reason_is_said(text, why):
    """An exec or auth-provider would run a command where `pulumi up` runs; the reader never does."""
    reason = running.parse_kubeconfig(text)
    assert isinstance(reason, str) and why in reason, reason
    reading = running.read(text, True)
    assert isinstance(reading, running.Unreadable) and why in reading.reason


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(), st.recursive(st.none() | st.booleans() | st.text(max_size=20),
                                         lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=10), c, max_size=4),
                                         max_leaves=12).map(lambda d: yaml.safe_dump(d))))
def test_no_kubeconfig_text_makes_the_parser_raise(text):
    assert isinstance(running.parse_kubeconfig(text), (running.Access, str))


# ---- what is read -----------------------------------------------------------------------------

def test_nodes_plans_and_helmcharts_as_the_guards_need_them():
    calls: list[str] = []
    plans = [{"metadata": {"name": "rke2-server"}, "spec": {"version": "v1.34.1+rke2r1"},
              "status": {"latestVersion": "v1.34.1-rke2r1", "applying": ["ip-10-0-2-10"],
                         "conditions": [{"type": "LatestResolved", "status": "True"},
                                        {"type": "Complete", "status": "False"}]}},
             {"metadata": {"name": "rke2-agent"}, "spec": {"version": "v1.34.1+rke2r1"}, "status": {}}]
    live = running.snapshot(fake_api([node("ip-10-0-1-10", "v1.34.1+rke2r1", etcd=True, cp=True),
                                      node("ip-10-0-2-10", "v1.33.5+rke2r1", etcd=True, cp=True, ready=False),
                                      node("ip-10-0-4-10", "v1.33.5+rke2r1")],
                                     plans, ["aws-ebs-csi-driver"], calls, addons=["rke-aws-ccm"]), rke2=True)
    assert calls == [running.NODES_PATH, running.PLANS_PATH, running.HELMCHARTS_PATH, running.ADDONS_PATH]
    assert live.addons == frozenset({"rke-aws-ccm"})
    assert live.etcd_members == ("ip-10-0-1-10", "ip-10-0-2-10") and live.not_ready == ("ip-10-0-2-10",)
    assert live.versions(servers_only=True) == {"ip-10-0-1-10": "v1.34.1+rke2r1", "ip-10-0-2-10": "v1.33.5+rke2r1"}
    assert live.applying == ("ip-10-0-2-10",)
    server, agent = live.plans
    assert (server.complete, agent.complete) == (False, None) and server.version == "v1.34.1+rke2r1"
    assert live.helm_charts == frozenset({"aws-ebs-csi-driver"})


def test_an_addon_counts_as_applied_only_with_its_checksum():
    """k3s pkg/deploy/controller.go deploy(): the Addon is created before its file is applied and gets
    spec.checksum only after a successful apply."""
    base = fake_api([node("a", "v1.34.1+rke2r1", etcd=True, cp=True)], [], [])

    def get(path: str):
        if path == running.ADDONS_PATH:
            return {"items": [{"metadata": {"name": "rke-aws-rancher-registration"}, "spec": {"source": "/x.yaml"}},
                              {"metadata": {"name": "rke-aws-ccm"}, "spec": {"checksum": "ab" * 32}}]}
        return base(path)
    assert running.snapshot(get, rke2=True).addons == frozenset({"rke-aws-ccm"})


def test_rke1_role_labels_count_and_nothing_but_nodes_is_read():
    calls: list[str] = []
    live = running.snapshot(fake_api([node("ip-10-0-1-10", "v1.32.5", etcd=True, cp=True, rke1=True),
                                      node("ip-10-0-4-10", "v1.32.5")], calls=calls), rke2=False)
    assert calls == [running.NODES_PATH] and live.plans is None and live.helm_charts is None
    assert live.etcd_members == ("ip-10-0-1-10",) and [n.control_plane for n in live.nodes] == [True, False]


def test_missing_upgrade_or_helm_apis_read_as_empty():
    live = running.snapshot(fake_api([node("a", "v1.33.5+rke2r1")]), rke2=True)
    assert live.plans == () and live.helm_charts == frozenset()


@pytest.mark.parametrize("failure, why", [
    (OSError("connection refused"), "connection refused"),
    (ValueError("no Node list"), "no Node list"),
    (RuntimeError("boom"), "boom"),
])
def test_a_failed_read_is_a_reason_never_an_exception(failure, why):
    def factory(access):
        def get(path):
            raise failure
        return get
    reading = running.read(kubeconfig(), True, transport=factory)
    assert isinstance(reading, running.Unreadable) and why in reading.reason and "api.c.rke-aws.internal" in reading.reason


def test_a_malformed_answer_is_a_reason():
    factory = lambda access: (lambda path: {"items": "nope"} if path == running.NODES_PATH else None)  # noqa: E731
    reading = running.read(kubeconfig(), True, transport=factory)
    assert isinstance(reading, running.Unreadable) and "no Node list" in reading.reason


def test_the_read_is_bounded_in_time():
    def factory(access):
        def get(path):
            time.sleep(5)
        return get
    started = time.monotonic()
    reading = running.read(kubeconfig(), True, deadline=0.3, transport=factory)
    assert time.monotonic() - started < 2
    assert isinstance(reading, running.Unreadable) and "within 0.3 s" in reading.reason


def test_the_operator_can_switch_the_read_off(monkeypatch):
    """`RKE_AWS_READ_CLUSTER=never` (a CI preview whose runner cannot reach the API server): the planner's
    reader reads nothing and says why; there is no other switch in product code (tests inject a reader)."""
    from rke_aws.plan.environment import READ_CLUSTER_ENV, Environment

    monkeypatch.setenv(READ_CLUSTER_ENV, "never")
    reading = Environment.from_runtime().cluster_reader(kubeconfig(), True)
    assert isinstance(reading, running.Unreadable) and f"{READ_CLUSTER_ENV}=never" in reading.reason
    assert not hasattr(running, "TRANSPORT") and not hasattr(running, "OFFLINE_ENV")


# ---- the real transport, against a local HTTPS server ----------------------------------------

def _certificates(tmp_path):
    x509 = pytest.importorskip("cryptography.x509")
    import ipaddress

    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def make(cn, issuer=None, issuer_key=None, ca=False, san=None):
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
        builder = (x509.CertificateBuilder().subject_name(name).issuer_name(issuer or name)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(hours=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if san:
            builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
        cert = builder.sign(issuer_key or key, hashes.SHA256())
        return (cert.public_bytes(serialization.Encoding.PEM).decode(),
                key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()).decode(), cert, key)

    ca_pem, _, ca_cert, ca_key = make("test-ca", ca=True)
    server_pem, server_key, _, _ = make("server", ca_cert.subject, ca_key,
                                        san=[x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    client_pem, client_key, _, _ = make("system:admin", ca_cert.subject, ca_key)
    paths = {}
    for name, text in (("ca", ca_pem), ("server", server_pem), ("server-key", server_key)):
        paths[name] = tmp_path / f"{name}.pem"
        paths[name].write_text(text)
    return ca_pem, client_pem, client_key, paths


def _serve(paths, require_client_cert: bool, seen: list):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            peer = self.connection.getpeercert()
            seen.append(("GET", self.path, self.headers.get("Authorization"), bool(peer)))
            if self.path == running.NODES_PATH:
                body = json.dumps({"items": [node("ip-10-0-1-10", "v1.34.1+rke2r1", etcd=True, cp=True)]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            else:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

        def _refuse(self):
            seen.append((self.command, self.path, None, None))
            self.send_response(405)
            self.end_headers()

        do_POST = do_PUT = do_PATCH = do_DELETE = _refuse

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(paths["server"], paths["server-key"])
    if require_client_cert:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(paths["ca"])
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    serving.serve_in_background(server, "fake-api-server")
    return server


@pytest.mark.parametrize("auth", ["certificate", "token"])
def test_the_https_transport_reads_with_the_kubeconfigs_credentials_and_only_gets(tmp_path, monkeypatch, auth):
    ca_pem, client_pem, client_key, paths = _certificates(tmp_path)
    seen: list = []
    server = _serve(paths, require_client_cert=auth == "certificate", seen=seen)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    os.mkdir(tmp_path / "tmp")
    try:
        user = ({"client-certificate-data": b64(client_pem), "client-key-data": b64(client_key)} if auth == "certificate"
                else {"token": "s3cr3t"})
        text = kubeconfig(cluster={"server": f"https://127.0.0.1:{server.server_address[1]}",
                                   "certificate-authority-data": b64(ca_pem)}, user=user)
        reading = running.read(text, True)
    finally:
        server.shutdown()
    assert isinstance(reading, running.LiveCluster), reading
    assert reading.etcd_members == ("ip-10-0-1-10",) and reading.plans == () and reading.helm_charts == frozenset()
    assert [s[:2] for s in seen] == [("GET", p) for p in (running.NODES_PATH, running.PLANS_PATH, running.HELMCHARTS_PATH,
                                                          running.ADDONS_PATH)]
    assert all(s[2] == ("Bearer s3cr3t" if auth == "token" else None) for s in seen), seen
    assert all(s[3] is (auth == "certificate") for s in seen), seen
    # The key went to a 0600 temp file for the TLS library and is gone before the first request.
    assert not glob.glob(str(tmp_path / "tmp" / "rke-aws-*")), os.listdir(tmp_path / "tmp")


def test_a_server_the_ca_does_not_vouch_for_is_not_read(tmp_path):
    _, _, _, paths = _certificates(tmp_path)
    (tmp_path / "other").mkdir()
    other_ca, _, _, _ = _certificates(tmp_path / "other")
    seen: list = []
    server = _serve(paths, require_client_cert=False, seen=seen)
    try:
        text = kubeconfig(cluster={"server": f"https://127.0.0.1:{server.server_address[1]}",
                                   "certificate-authority-data": b64(other_ca)}, user={"token": "s3cr3t"})
        reading = running.read(text, True)
    finally:
        server.shutdown()
    assert isinstance(reading, running.Unreadable) and "CERTIFICATE_VERIFY_FAILED" in reading.reason, reading
    assert not [s for s in seen if s[2]], "the token was sent to a server the CA does not vouch for"


def test_the_rotations_client_connects_as_the_reader_does(tmp_path, monkeypatch):
    """components/ops/kube.py (rotation's cordon/evict/delete client) takes its TLS context and headers from
    running.py (tls_context, request_headers): the kubeconfig's CA is trusted, its client certificate is
    presented from 0600 temp files that are gone before the first request, and a server the CA does not vouch
    for gets nothing."""
    from rke_aws.ops import kube as kubeapi

    ca_pem, client_pem, client_key, paths = _certificates(tmp_path)
    seen: list = []
    server = _serve(paths, require_client_cert=True, seen=seen)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    os.mkdir(tmp_path / "tmp")
    url = f"https://127.0.0.1:{server.server_address[1]}"
    user = {"client-certificate-data": b64(client_pem), "client-key-data": b64(client_key)}
    (tmp_path / "other").mkdir()
    other_ca, _, _, _ = _certificates(tmp_path / "other")
    try:
        names = [n["metadata"]["name"] for n in kubeapi.Kube.from_kubeconfig(
            kubeconfig(cluster={"server": url, "certificate-authority-data": b64(ca_pem)}, user=user)).nodes()]
        assert not glob.glob(str(tmp_path / "tmp" / "rke-aws-*")), os.listdir(tmp_path / "tmp")
        stranger = kubeapi.Kube.from_kubeconfig(
            kubeconfig(cluster={"server": url, "certificate-authority-data": b64(other_ca)}, user=user))
        with pytest.raises(kubeapi.Unreachable, match="CERTIFICATE_VERIFY_FAILED"):
            stranger.nodes()
    finally:
        server.shutdown()
    assert names == ["ip-10-0-1-10"] and seen == [("GET", running.NODES_PATH, None, True)], seen
