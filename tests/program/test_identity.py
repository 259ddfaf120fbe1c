"""Workload identity (issue 36) as the program builds it in the emulated account (tests/stacks/
Pulumi.rke2-irsa.yaml): a token signed with the key the program generated, as kube-apiserver signs it, is
verified as STS does against the discovery document and JWKS the account's bucket holds (read through the
bucket's own policy and Block Public Access settings), and the trust policies the account holds admit exactly
the right service account; the private key reaches only its SecureString and the servers' role; no access key
exists. Sources: tests/support/sts.py (STS' checks), plan/identity_issuer.py and identity_roles.py (upstream
facts), the IAM user guide on OIDC federation (`<issuer>:sub` / `:aud` with StringEquals)."""

from __future__ import annotations

import json

import pytest

from rke_aws.plan import identity_issuer as issuer
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated import backends
from rke_aws_offline.engine.emulated_account import MotoMocks
from tests.support import iam_eval, sts

STACK = "rke2-irsa"
NOW = 1_800_000_000


@pytest.fixture(scope="module")
def built():
    """The stack's run, with what the emulated account holds afterwards (its bucket and roles), read before the
    account stops (one emulated account is active at a time)."""
    config = harness.stack_config(STACK)
    mocks = MotoMocks(config["aws:region"]).start()
    try:
        run = harness.run_program(config, stack=STACK, mocks=mocks)
        provider = run.of_type("aws:iam/openIdConnectProvider:OpenIdConnectProvider")[0]
        bucket_reg = next(r for r in run.of_type("aws:s3/bucket:Bucket") if r.name.endswith("-oidc"))
        name, region = bucket_reg.state["bucket"], config["aws:region"]
        s3 = backends.s3(region)
        pab = s3.get_public_access_block(name)
        block = {k: bool(getattr(pab, k)) for k in ("block_public_acls", "ignore_public_acls", "block_public_policy",
                                                     "restrict_public_buckets")}
        assert block["block_public_acls"] and block["ignore_public_acls"], block  # no ACL grants anything
        objects = {key: s3.get_object(name, key).value.decode() for key in issuer.object_keys()}
        bucket = sts.PublicBucket(name, region, "amazonaws.com", json.loads(s3.get_bucket_policy(name)), block, "aws",
                                  objects)
        iam = backends.iam(region)
        roles = {r.arn: json.loads(r.assume_role_policy_document) for r in iam.roles.values()}
    finally:
        harness.drain_leftover_tasks()
        mocks.stop()
    return run, provider, bucket, roles


def _signing_key(run):
    from cryptography.hazmat.primitives import serialization

    key = next(r for r in run.of_type("tls:index/privateKey:PrivateKey") if r.name.endswith("-sa-signing-key"))
    return serialization.load_pem_private_key(key.state["privateKeyPem"].encode(), None)


def _role(run, service_account: str) -> str:
    return run.outputs["identityRoleArns"][service_account]


def test_sts_accepts_the_clusters_token_for_exactly_its_service_account(built):
    run, provider, bucket, roles = built
    url = provider.inputs["url"]
    assert url == run.outputs["identityIssuerUrl"] and url.startswith(f"https://{bucket.host}")
    service = sts.Sts(bucket.get, {url: (provider.state["arn"], list(provider.inputs["clientIdLists"]))}, roles, NOW)
    key = _signing_key(run)
    role = _role(run, "apps/reports")

    def token(namespace: str, name: str, audience: str = issuer.STS_AUDIENCE) -> str:
        return sts.sign(key, sts.service_account_claims(url, namespace, name, audience, NOW, 3600))

    answer = service.assume_role_with_web_identity(role, token("apps", "reports"))
    assert answer["SubjectFromWebIdentityToken"] == "system:serviceaccount:apps:reports"
    for wrong in (("apps", "reports-2"), ("other", "reports"), ("kube-system", "ebs-csi-controller-sa")):
        with pytest.raises(sts.StsError) as info:
            service.assume_role_with_web_identity(role, token(*wrong))
        assert info.value.code == "AccessDenied", wrong
    with pytest.raises(sts.StsError):  # a token for another audience: not the provider's client ID
        service.assume_role_with_web_identity(role, token("apps", "reports", "kubernetes"))
    # The EBS CSI controller's role takes its own service account's token.
    ebs_role = next(arn for arn in roles if "-ebs-csi-" in arn)
    assert service.assume_role_with_web_identity(ebs_role, token("kube-system", "ebs-csi-controller-sa"))
    with pytest.raises(sts.StsError):
        service.assume_role_with_web_identity(ebs_role, token("apps", "reports"))


def test_the_trust_policies_name_one_subject_and_the_audience_with_string_equals(built):
    run, provider, _, roles = built
    host = provider.inputs["url"].removeprefix("https://")
    for arn, policy in roles.items():
        if ":role/" not in arn or policy["Statement"][0].get("Action") != "sts:AssumeRoleWithWebIdentity":
            continue
        (stmt,) = policy["Statement"]
        assert stmt["Principal"] == {"Federated": provider.state["arn"]}
        assert set(stmt["Condition"]) == {"StringEquals"}
        assert set(stmt["Condition"]["StringEquals"]) == {f"{host}:sub", f"{host}:aud"}
        assert "*" not in json.dumps(stmt["Condition"])


def test_no_access_key_and_the_ebs_csi_controller_names_its_role(built):
    run = built[0]
    assert not run.of_type("aws:iam/accessKey:AccessKey")
    assert not run.of_type("aws:iam/user:User")
    manifest = next(r for r in run.of_type("aws:ssm/parameter:Parameter") if r.name.endswith("-manifest-ebs-csi"))
    text = manifest.inputs["insecureValue"]
    assert "awsAccessSecret: null" in text and "eks.amazonaws.com/role-arn" in text


def test_the_private_key_reaches_only_its_secure_string(built):
    run = built[0]
    for r in run.resources:
        if r.type.startswith("tls:"):  # the tls provider's own resources (it marks private keys secret)
            continue
        text = json.dumps(r.inputs, default=str)
        if "PRIVATE KEY" in text:
            # Only SecureStrings hold it, as secret inputs: the issuer's key, the webhook's TLS Secret manifest.
            assert r.type == "aws:ssm/parameter:Parameter" and r.inputs["type"] == "SecureString", r.name
            assert "value" in r.secret_inputs, r.name
            if "-sa-signing-key" in r.name:
                assert r.inputs["name"].endswith("/identity/signing-key")
    assert "PRIVATE KEY" not in json.dumps(run.outputs, default=str)
    from tests.support.userdata import user_data

    servers = [user_data(i) for i in run.of_type("aws:ec2/instance:Instance")]
    assert any("IDENTITY_KEY_REQUEST" in u for u in servers)  # the servers fetch it ...
    assert not any("PRIVATE KEY" in u for u in servers)  # ... it is never in their user data


def test_only_the_api_servers_role_reads_the_signing_key(built):
    run = built[0]
    key_arn = next(r for r in run.of_type("aws:ssm/parameter:Parameter") if r.name.endswith("-sa-signing-key")).state["arn"]
    by_role: dict[str, list[str]] = {}
    for p in run.of_type("aws:iam/rolePolicy:RolePolicy"):
        by_role.setdefault(p.inputs["role"], []).append(p.inputs["policy"])
    readers = [role for role, docs in by_role.items() if iam_eval.allowed(docs, "ssm:GetParameter", key_arn)]
    assert len(readers) == 1 and "controlplane" in readers[0], readers


def test_the_documents_are_public_and_nothing_else_is(built):
    _, provider, bucket, _ = built
    url = provider.inputs["url"]
    assert bucket.get(f"{url}/.well-known/openid-configuration")[0] == 200
    assert bucket.get(f"{url}/openid/v1/jwks")[0] == 200
    assert bucket.get(f"{url}/other")[0] == 403
    doc = json.loads(bucket.get(f"{url}/.well-known/openid-configuration")[1])
    assert doc["issuer"] == url and doc["jwks_uri"] == f"{url}/openid/v1/jwks"


def test_the_policy_pack_refuses_an_access_key_beside_the_issuer():
    """policies/rules.py irsa-no-access-keys: the rke2-irsa stack passes; an AccessKey planted into it is caught,
    naming it; the same key in a stack without the issuer (rke2-split's EBS CSI key) is not this rule's concern."""
    from policies import rules
    from tests.support.policies import POLICY, Rec, records, run_stack_policy

    policy = POLICY["irsa-no-access-keys"]
    recs = records(STACK)
    assert run_stack_policy(policy, recs) == []
    urn = "urn:pulumi:rke2-irsa::rke-aws::rke-aws:index:RkeCluster$aws:iam/accessKey:AccessKey::planted"
    recs.append(Rec(rules.IAM_ACCESS_KEY, urn, "planted", {"user": "someone"}))
    found = run_stack_policy(policy, recs)
    assert [u for _, u in found] == [urn] and urn in found[0][0]
    split = records("rke2-split")
    assert any(r.type == rules.IAM_ACCESS_KEY for r in split) and run_stack_policy(policy, split) == []


def test_a_bad_identity_value_registers_nothing():
    """The planner's value checks (plan/identity.py) run before any resource, each naming its key."""
    import pulumi

    from tests.support.configs import set_key

    config = set_key(harness.stack_config(STACK), "identity",
                     {"serviceAccounts": "irsa", "issuerUrl": "http://oidc.example.com",
                      "roles": [{"serviceAccount": "apps/*", "policy": '{"Statement": []}'}]})
    mocks = MotoMocks(config["aws:region"])
    with pytest.raises(pulumi.RunError) as info:
        harness.run_program(config, stack=STACK, mocks=mocks)
    message = str(info.value)
    assert "rke-aws:identity.issuerUrl: 'http://oidc.example.com' must begin with https://" in message, message
    assert "rke-aws:identity.roles[0].serviceAccount: 'apps/*'" in message, message
    assert "Traceback" not in message
    assert not mocks.resources


def test_the_charts_the_servers_get_render_against_their_stored_defaults(built):
    """What the program ships (manifest mode: HelmCharts the servers mirror) for the webhook and the Load
    Balancer Controller: only keys the charts have (tests/data/upstream, the pinned versions), the webhook's CA the
    generated one, the controller's role the IRSA role; both schedule on the control plane only."""
    from pathlib import Path

    import yaml

    from rke_aws.plan import identity_lbc, identity_webhook
    from tests.support.charts import NODES, coalesce, schedules, unknown_keys

    run = built[0]
    upstream = Path(__file__).resolve().parents[1] / "data" / "upstream"
    shipped = {p.inputs["name"].rsplit("/", 1)[1]: p.inputs.get("value") or p.inputs.get("insecureValue")
               for p in run.of_type("aws:ssm/parameter:Parameter") if "/manifests/" in p.inputs["name"]}
    for chart, folder, name in ((identity_webhook.CHART, "amazon-eks-pod-identity-webhook-2.6.5", "pod-identity-webhook.yaml"),
                                (identity_lbc.CHART, "aws-load-balancer-controller-3.5.0", "aws-load-balancer-controller.yaml")):
        doc = yaml.safe_load(shipped[name])
        assert doc["kind"] == "HelmChart" and doc["spec"]["chart"] == chart.name and doc["spec"]["version"] == chart.version
        values = yaml.safe_load(doc["spec"]["valuesContent"])
        defaults = yaml.safe_load((upstream / folder / "values.yaml").read_text())
        assert unknown_keys(values, defaults) == [], name
        effective = coalesce(values, defaults)
        for kind, (labels, taints) in NODES["rke2"].items():
            assert schedules(effective, labels, taints) == ("server" in kind or "controlplane" in kind), (name, kind)
    webhook = yaml.safe_load(yaml.safe_load(shipped["pod-identity-webhook.yaml"])["spec"]["valuesContent"])
    ca = next(r for r in run.of_type("tls:index/selfSignedCert:SelfSignedCert") if r.name.endswith("-webhook-ca"))
    assert webhook["pki"]["caBundle"] == ca.state["certPem"] and webhook["config"]["defaultAwsRegion"] == "us-west-2"
    lbc = yaml.safe_load(yaml.safe_load(shipped["aws-load-balancer-controller.yaml"])["spec"]["valuesContent"])
    role = next(r for r in run.of_type("aws:iam/role:Role") if r.name.endswith("-lb-controller-role"))
    assert lbc["serviceAccount"]["annotations"]["eks.amazonaws.com/role-arn"] == role.state["arn"]
    assert lbc["clusterName"] == STACK and lbc["enableServiceMutatorWebhook"] is False
    tls = yaml.safe_load(shipped["pod-identity-webhook-tls.yaml"])
    assert tls["metadata"]["name"] == identity_webhook.TLS_SECRET and tls["type"] == "kubernetes.io/tls"
