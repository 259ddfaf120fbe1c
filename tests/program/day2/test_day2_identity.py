"""Day 2 for workload identity (issue 36): a running cluster with the EBS CSI driver on its access key turns
identity.serviceAccounts irsa on, judged per URN with the providers' replace rules (offline/report/compare.py)
over base -> irsa on -> next update -> next update.

Why the order (plan/identity_apiserver.py, plan/identity_ebs_csi.py cite the sources): kube-apiserver reads its
flags when it starts, so the servers first trust the cluster's key under its issuer (RKE2's own key still
signs: `service-account-issuer+=`), then sign with it (`service-account-issuer-=`); the EBS CSI controller reads
static env keys before the web identity token (aws-sdk-go-v2's default chain), so its key env goes only once the
token comes from the issuer STS trusts, and the IAM key is deleted in that same update, after the release
(Pulumi deletes what a program no longer declares after every create and update of the update). Its role
exists from the first update on: it works before the key is deleted."""

from __future__ import annotations

import copy
import json

from rke_aws_offline.engine import harness
from rke_aws_offline.report import compare, diff
from tests.support.configs import set_key
from tests.support.day2 import run
from tests.support.userdata import user_data

STACK = "rke2-irsa"
ACCESS_KEY = "aws:iam/accessKey:AccessKey"
ROLE = "aws:iam/role:Role"
INSTANCE = "aws:ec2/instance:Instance"


def _config(irsa: bool) -> dict:
    cfg = copy.deepcopy(harness.stack_config(STACK))
    set_key(cfg, "addons", {"ebsCsi": True, "loadBalancerController": irsa})
    if not irsa:
        cfg.pop("rke-aws:identity")
    return cfg


def _ebs_manifest(r: harness.ProgramRun) -> str:
    (p,) = [p for p in r.of_type("aws:ssm/parameter:Parameter") if p.name.endswith("-manifest-ebs-csi")]
    return p.inputs["insecureValue"]


def _server_args(r: harness.ProgramRun) -> str:
    return "\n".join(user_data(i) for i in r.of_type(INSTANCE) if "-server-" in i.name)


def _diff(before: harness.ProgramRun, after: harness.ProgramRun) -> compare.StackDiff:
    return compare.compare(STACK, diff.result_of(before), diff.result_of(after))


_TURNED_ON: list[tuple[harness.ProgramRun, harness.ProgramRun]] = []


def turned_on() -> tuple[harness.ProgramRun, harness.ProgramRun]:
    """The first two steps of the sequence (base without irsa -> irsa on, the base's outputs fed back), made once per
    module: the tests below read both runs, never change them, and go on from them."""
    if not _TURNED_ON:
        base = run(_config(False), stack=STACK)
        _TURNED_ON.append((base, run(_config(True), base, stack=STACK)))
    return _TURNED_ON[0]


def test_a_running_cluster_moves_the_ebs_csi_controller_from_its_key_to_its_role():
    base, on = turned_on()
    assert base.of_type(ACCESS_KEY) and "awsAccessSecret" in _ebs_manifest(base)

    assert on.outputs["identitySigning"] is False  # trust first: RKE2's key still signs
    assert "service-account-issuer+=" in _server_args(on) and "service-account-signing-key-file" not in _server_args(on)
    assert on.of_type(ACCESS_KEY), "the key went before the controller could use its role"
    ebs_role = [r for r in on.of_type(ROLE) if r.name.endswith("-ebs-csi-role")]
    assert ebs_role, "the role must exist before the key goes"
    text = _ebs_manifest(on)
    assert "eks.amazonaws.com/role-arn" in text and "awsAccessSecret: null" not in text  # annotated, key kept
    d = _diff(base, on)
    assert not [c for c in d.changes if c.type == INSTANCE and c.action in ("replace", "delete", "unknown")], d.changes
    assert not [c for c in d.changes if c.type == ACCESS_KEY and c.action != "unchanged"], d.changes

    signing = run(_config(True), on, stack=STACK)
    assert signing.outputs["identitySigning"] is True
    assert "service-account-issuer-=" in _server_args(signing)
    assert signing.of_type(ACCESS_KEY), "the servers began signing in this update; the key stays one more"

    moved = run(_config(True), signing, stack=STACK)
    assert not moved.of_type(ACCESS_KEY) and not moved.of_type("aws:iam/user:User")
    assert "awsAccessSecret: null" in _ebs_manifest(moved)
    assert moved.outputs["identityEbsCsi"] == {"user_key": False, "role": True, "annotated": True, "key_env": False}
    d = _diff(signing, moved)
    actions = {(c.type, c.action) for c in d.changes}
    assert (ACCESS_KEY, "delete") in actions
    # The role the controller moves to is the one created two updates ago, untouched.
    assert [r for r in moved.of_type(ROLE) if r.name.endswith("-ebs-csi-role")]
    assert not [c for c in d.changes if c.type == ROLE and c.name.endswith("-ebs-csi-role")
                and c.action != "unchanged"], d.changes
    assert not [c for c in d.changes if c.type == INSTANCE and c.action in ("replace", "delete", "unknown")], d.changes


def test_rotating_the_key_keeps_both_published_through_the_overlap():
    """identity.keyGeneration 1 -> 2 on a running cluster: the new key is published and trusted while the old one
    signs, then signs while the old one stays published (tokens it signed keep verifying at STS); the servers'
    boot scripts name the step (they are stale until replaced); going back a generation is refused."""
    import json

    from tests.support.day2 import refused

    cfg = _config(True)
    base = run(cfg, stack=STACK)
    assert base.outputs["identityKeyGenerations"] == [1] and base.outputs["identitySigningGeneration"] == 1
    assert len(json.loads(base.outputs["identityJwks"])["keys"]) == 1
    rotate = set_key(copy.deepcopy(cfg), "identity", {**json.loads(cfg["rke-aws:identity"]), "keyGeneration": 2})
    trusting = run(rotate, base, stack=STACK)
    assert trusting.outputs["identityKeyGenerations"] == [1, 2] and trusting.outputs["identitySigningGeneration"] == 1
    jwks = json.loads(trusting.outputs["identityJwks"])["keys"]
    assert len(jwks) == 2
    assert "IDENTITY_GENERATIONS=" in _server_args(trusting) and "trusted 1,2 signs 1" in _server_args(trusting)
    assert "trusted 1 signs 1" in _server_args(base) and "trusted 1,2" not in _server_args(base)
    keys = {r.name: r for r in trusting.of_type("tls:index/privateKey:PrivateKey") if "-sa-signing-key" in r.name}
    assert set(keys) == {f"{STACK}-sa-signing-key", f"{STACK}-sa-signing-key-2"}
    d = _diff(base, trusting)
    assert not [c for c in d.changes if c.type == "tls:index/privateKey:PrivateKey" and c.action != "add"], d.changes
    signing = run(rotate, trusting, stack=STACK)
    assert signing.outputs["identitySigningGeneration"] == 2 and signing.outputs["identityKeyGenerations"] == [1, 2]
    assert json.loads(signing.outputs["identityJwks"])["keys"] == jwks  # both still published
    back = set_key(copy.deepcopy(cfg), "identity", {**json.loads(cfg["rke-aws:identity"]), "keyGeneration": 1})
    message = refused(back, signing, stack=STACK)
    assert "rke-aws:identity.keyGeneration: 1 is below 2" in message, message


def test_a_bring_your_own_issuer_signs_only_once_its_documents_are_confirmed_published():
    """identity.issuerUrl: the user publishes the discovery document and JWKS (outputs identityDiscovery and
    identityJwks); STS reads them there (plan/identity_issuer.py published_problems). The servers start by only
    trusting the cluster's key; the update that would make them sign is refused, naming identity.issuerUrl, until
    the user confirms the documents with the printed code (the key IDs of the JWKS are in the statement)."""
    import json

    from tests.support.day2 import code_in, refused

    cfg = set_key(_config(True), "identity", {"serviceAccounts": "irsa", "issuerUrl": "https://oidc.example.com/c1"})
    first = run(cfg, stack=STACK)
    assert first.outputs["identitySigning"] is False and not first.of_type("aws:s3/bucket:Bucket")[1:]
    (provider,) = first.of_type("aws:iam/openIdConnectProvider:OpenIdConnectProvider")
    assert provider.inputs["url"] == "https://oidc.example.com/c1"
    kid = json.loads(first.outputs["identityJwks"])["keys"][0]["kid"]
    message = refused(cfg, first, stack=STACK)
    assert "rke-aws:identity.issuerUrl: 'https://oidc.example.com/c1': the servers would now sign" in message, message
    assert kid in message
    code = code_in(message, "issuer")
    confirmed = run(set_key(copy.deepcopy(cfg), "confirmClusterState", code), first, stack=STACK)
    assert confirmed.outputs["identitySigning"] is True


def test_the_next_key_step_waits_for_servers_still_on_the_last_one():
    """kube-apiserver reads its flags when it starts, and running instances keep the user data they booted with
    (components/plan/stale.py): a server whose boot digest is not the last update's `wanted` one still runs the
    earlier step. Signing must not start while one API server does not trust the key yet (identity_apiserver.py)."""
    _, on = turned_on()
    assert on.outputs["identitySigning"] is False
    outputs = copy.deepcopy(on.outputs)
    server = next(n for n in outputs["nodes"] if "controlplane" in n["roles"])
    server["bootDigest"] = "0" * 12  # booted before the trust step: not what the last update wanted
    stale_on = harness.ProgramRun(stack=STACK, config=on.config, outputs=outputs)
    held = run(_config(True), stale_on, stack=STACK)
    assert held.outputs["identitySigning"] is False, "signing started while a server may not trust the key"
    warnings = [m for lvl, m in held.logs if lvl == "warning" and "rke-aws:identity:" in m]
    assert warnings and server["name"] in warnings[0] and "rke-aws rotate" in warnings[0], held.logs
    assert held.of_type(ACCESS_KEY), "the EBS CSI key must stay while the issuer does not sign"


def test_moving_a_running_cluster_to_another_issuer_is_refused():
    """kube-apiserver accepts only the issuers it lists and STS only the OIDC provider's
    (plan/identity_apiserver.py cites kubernetes pkg/kubeapiserver/options/authentication.go): a running cluster
    given another issuer would refuse every token of the old one at once. Refused before any resource, naming
    identity.issuerUrl and how to keep the old one."""
    from tests.support.day2 import refused

    base = run(_config(True), stack=STACK)
    moved = copy.deepcopy(_config(True))
    identity = json.loads(moved["rke-aws:identity"])
    moved["rke-aws:identity"] = json.dumps({**identity, "issuerUrl": "https://oidc.corp.example/rke2-irsa"})
    message = refused(moved, base, stack=STACK)
    assert "rke-aws:identity.issuerUrl: 'https://oidc.corp.example/rke2-irsa' would move the running cluster" in message, message
    assert "remove identity.issuerUrl (the S3 issuer this stack hosts)" in message, message
    # The same issuer again plans (the guard is about the move).
    assert run(_config(True), base, stack=STACK).outputs["identityIssuerUrl"] == base.outputs["identityIssuerUrl"]


def test_turning_irsa_off_on_a_running_cluster_warns_what_goes_when():
    """irsa off: the OIDC provider, the issuer's documents and the roles go in this update (Pulumi deletes what the
    program no longer declares), while the running servers keep the issuer's flags until rotated (user data is
    ignored on running instances); the warning says both, and no instance is replaced by this update."""
    base = run(_config(True), stack=STACK)
    off = run(_config(False), base, stack=STACK)
    warned = [text for level, text in off.logs if level == "warning" and "identity.serviceAccounts: 'none' on a running" in text]
    assert warned and "rke-aws rotate" in warned[0], off.logs
    assert not off.of_type("aws:iam/openIdConnectProvider:OpenIdConnectProvider")
    d = _diff(base, off)
    assert not [c for c in d.changes if c.type == INSTANCE and c.action in ("replace", "delete", "unknown")], d.changes
    # A new cluster without identity says nothing of the kind.
    assert not [t for _, t in run(_config(False), stack=STACK).logs if "'none' on a running" in t]
