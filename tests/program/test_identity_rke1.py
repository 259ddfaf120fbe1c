"""Workload identity on a new RKE1 cluster (tests/stacks/Pulumi.rke1-irsa.yaml, issue 36): cluster.yml's
`services.kube-api` carries the issuer's flags and the key directory's bind (rancher/rke cluster/plan.go
BuildKubeAPIProcess reads extra_args, extra_args_array and extra_binds: tests/unit/test_identity_rke1.py rebuilds
the command line from them), the controlplane nodes' first boot fetches the key files from SSM (only the
controlplane role may read them; the private key is in no user data), and the webhook, the EBS CSI controller
on its role and the Load Balancer Controller are Helm releases scheduled as the CCM is on RKE1."""

from __future__ import annotations

import json

import yaml

from rke_aws.node import scripts
from rke_aws.plan import ccm_values, identity_apiserver, identity_roles
from tests.support.runs import run_stack_cached
from tests.support.userdata import cloud_config, user_data, written_file

STACK = "rke1-irsa"
INSTANCE = "aws:ec2/instance:Instance"


def _run():
    return run_stack_cached(STACK)


def _controlplane(inst) -> bool:
    return "controlplane" in inst.inputs["tags"]["rke-aws/roles"]


def test_cluster_yml_carries_the_issuers_flags_and_binds():
    run = _run()
    kube_api = yaml.safe_load(run.outputs["rkeClusterYml"])["services"]["kube-api"]
    url = run.outputs["identityIssuerUrl"]
    assert run.outputs["identitySigning"] is True  # a new cluster signs from its first `rke up`
    assert kube_api["extra_args"]["service-account-issuer"] == url
    assert kube_api["extra_args"]["service-account-signing-key-file"] == identity_apiserver.RKE1_SIGNING_KEY_FILE
    assert kube_api["extra_args"]["api-audiences"] == "unknown"
    assert kube_api["extra_args_array"] == {"service-account-issuer": ["rke"],
                                            "service-account-key-file": [identity_apiserver.RKE1_TRUSTED_KEYS_FILE]}
    assert kube_api["extra_binds"] == [f"{identity_apiserver.RKE1_KEY_DIR}:{identity_apiserver.RKE1_KEY_DIR}:ro"]


def test_controlplane_nodes_fetch_the_keys_from_ssm_and_no_user_data_holds_the_private_key():
    run = _run()
    private = next(r for r in run.of_type("tls:index/privateKey:PrivateKey")
                   if r.name.endswith("-sa-signing-key")).state["privateKeyPem"]
    body = private.strip().splitlines()[1]
    key_parameter = "/rke-aws/rke1-irsa/identity/signing-key"
    controlplane = [i for i in run.of_type(INSTANCE) if _controlplane(i)]
    assert controlplane and len(controlplane) < len(run.of_type(INSTANCE))
    for inst in run.of_type(INSTANCE):
        text = user_data(inst)
        assert body not in text and "PRIVATE KEY-----" not in text, inst.urn
        script = written_file(cloud_config(inst), scripts.BOOTSTRAP_PATH)
        if _controlplane(inst):
            assert json.dumps({"Name": key_parameter, "WithDecryption": True}) in script, inst.urn
            assert f"IDENTITY_DIR='{identity_apiserver.RKE1_KEY_DIR}'" in script, inst.urn
            # The key files are there before Docker (and so `rke up`) can run.
            assert script.index("pem_file \"$IDENTITY_KEY_REQUEST\"") < script.index("install-docker.sh"), inst.urn
        else:
            assert "IDENTITY_" not in script and "fetch_secret" not in script, inst.urn
    for param in run.of_type("aws:ssm/parameter:Parameter"):
        if param.inputs["name"] == key_parameter:
            assert param.inputs["type"] == "SecureString"


def test_only_the_controlplane_role_reads_the_key_parameters():
    run = _run()
    readers = {}
    for policy in run.of_type("aws:iam/rolePolicy:RolePolicy"):
        text = policy.inputs["policy"]
        text = text if isinstance(text, str) else json.dumps(text)
        if "identity/signing-key" in text:
            readers[policy.name] = json.loads(text)
    assert list(readers) == [f"{STACK}-controlplane-join-token"], list(readers)
    (statement,) = readers[f"{STACK}-controlplane-join-token"]["Statement"]
    assert statement["Action"] == ["ssm:GetParameter"] and all(":parameter/rke-aws/rke1-irsa/identity/" in r
                                                              for r in statement["Resource"]), statement


def test_the_addons_run_on_rke1_controlplane_nodes_and_no_access_key_exists():
    run = _run()
    assert not run.of_type("aws:iam/accessKey:AccessKey") and not run.of_type("aws:iam/user:User")
    releases = {r.name: r for r in run.of_type("kubernetes:helm.sh/v3:Release")}
    selector = ccm_values.node_selector("rke")
    assert selector == {"node-role.kubernetes.io/controlplane": "true"}
    for name in (f"{STACK}-pod-identity-webhook", f"{STACK}-aws-load-balancer-controller"):
        values = releases[name].inputs["values"]
        assert values["nodeSelector"] == selector, name
        keys = {t["key"] for t in values["tolerations"]}
        # RKE1 taints controlplane and etcd nodes that have no worker role (domain.md §3).
        assert {"node-role.kubernetes.io/controlplane", "node-role.kubernetes.io/etcd"} <= keys, name
    ebs = releases[f"{STACK}-ebs-csi"].inputs["values"]
    (role,) = [r for r in run.of_type("aws:iam/role:Role") if r.name.endswith("-ebs-csi-role")]
    annotation = ebs["controller"]["serviceAccount"]["annotations"][identity_roles.ROLE_ARN_ANNOTATION]
    assert annotation.endswith(f":role/{role.inputs['name']}"), annotation
    assert ebs["controller"]["nodeSelector"] == selector


def test_the_policy_pack_refuses_an_access_key_beside_the_rke1_issuer():
    """policies/rules.py irsa-no-access-keys holds on RKE1 as on RKE2: the stack passes, a planted key is caught."""
    from policies import rules
    from tests.support.policies import POLICY, Rec, records, run_stack_policy

    policy = POLICY["irsa-no-access-keys"]
    recs = records(STACK)
    assert run_stack_policy(policy, recs) == []
    urn = f"urn:pulumi:{STACK}::rke-aws::rke-aws:index:RkeCluster$aws:iam/accessKey:AccessKey::planted"
    recs.append(Rec(rules.IAM_ACCESS_KEY, urn, "planted", {"user": "someone"}))
    assert [u for _, u in run_stack_policy(policy, recs)] == [urn]


def test_a_bring_your_own_issuer_trusts_first_with_both_key_files_already_on_the_hosts():
    """identity.issuerUrl: the servers start by trusting the cluster's key (RKE's key signs) and sign only after the
    user confirms the documents are published (plan/identity.py). That next step changes cluster.yml alone (`rke up`
    applies it), so the signing key must already be on the controlplane hosts: their first boot fetches it too."""
    import copy

    from rke_aws_offline.engine import harness
    from tests.support.configs import set_key
    from tests.support.runs import run_cached

    cfg = copy.deepcopy(harness.stack_config(STACK))
    url = "https://oidc.example.com/rke1-irsa"
    set_key(cfg, "identity", {**json.loads(cfg["rke-aws:identity"]), "issuerUrl": url})
    run = run_cached(cfg, STACK)
    assert run.outputs["identitySigning"] is False
    kube_api = yaml.safe_load(run.outputs["rkeClusterYml"])["services"]["kube-api"]
    assert kube_api["extra_args_array"]["service-account-issuer"] == [url]
    assert "service-account-issuer" not in kube_api["extra_args"]
    for inst in run.of_type(INSTANCE):
        if _controlplane(inst):
            script = written_file(cloud_config(inst), scripts.BOOTSTRAP_PATH)
            assert json.dumps({"Name": "/rke-aws/rke1-irsa/identity/signing-key", "WithDecryption": True}) in script


def test_an_rke1_controlplane_on_rhel_fetches_the_keys_once_before_its_os_step_and_docker(tmp_path):
    """Two features in one boot script (issue 35's RKE1 OS steps, issue 36's RKE1 identity): ssm.sh defined once,
    the key files fetched before the OS's preparation and Docker (so before `rke up` starts kube-apiserver), and
    the script still passes shellcheck."""
    from tests.support.node_boot import rke1_os_config
    from tests.support.runs import run_cached
    from tests.support.shell import shellcheck

    cfg = rke1_os_config()
    cfg["rke-aws:identity"] = json.dumps({"serviceAccounts": "irsa"})
    run = run_cached(cfg, stack="rke1os")
    (control,) = [i for i in run.of_type(INSTANCE) if i.inputs["tags"]["rke-aws/pool"] == "control"]
    script = written_file(cloud_config(control), scripts.BOOTSTRAP_PATH)
    assert script.count("\nssm() {") == 1, "ssm.sh twice"
    fetch = script.index("pem_file \"$IDENTITY_KEY_REQUEST\"")
    assert fetch < script.index("fetch_ssm_agent") < script.index("install-docker.sh")
    assert shellcheck(script, tmp_path / "bootstrap.sh") == ""
    for inst in run.of_type(INSTANCE):
        if inst is not control:
            assert "IDENTITY_KEY_REQUEST" not in written_file(cloud_config(inst), scripts.BOOTSTRAP_PATH), inst.urn


def test_with_a_registry_the_webhook_and_the_controller_name_the_mirror_on_rke1():
    """RKE1's Docker has no per-registry mirrors (rancher/rke types PrivateRegistry: a registry list, `is_default`
    prefixing system images only), so an image pulled through the mirror must name it, as the CCM's and EBS CSI's
    already do; the webhook's and the controller's images are on public.ecr.aws (their build workflows, cited in
    plan/identity_webhook.py)."""
    from rke_aws_offline.engine import harness
    from tests.support.runs import run_cached

    cfg = dict(harness.stack_config(STACK))
    cfg["rke-aws:registry"] = json.dumps({"mirrors": {"public.ecr.aws": "https://registry.corp.example/ecr-public",
                                                      "docker.io": "https://registry.corp.example/hub",
                                                      "registry.k8s.io": "https://registry.corp.example/k8s"}})
    run = run_cached(cfg, stack=STACK)
    releases = {r.name: r for r in run.of_type("kubernetes:helm.sh/v3:Release")}
    webhook = releases[f"{STACK}-pod-identity-webhook"].inputs["values"]["image"]
    lbc = releases[f"{STACK}-aws-load-balancer-controller"].inputs["values"]["image"]
    # The webhook chart joins image.registry and image.repository; the controller's names image.repository whole
    # (tests/data/upstream/<chart>/values.yaml).
    assert f"{webhook['registry']}/{webhook['repository']}" == \
        "registry.corp.example/ecr-public/eks/amazon-eks-pod-identity-webhook", webhook
    assert lbc["repository"] == "registry.corp.example/ecr-public/eks/aws-load-balancer-controller", lbc
    assert "public.ecr.aws" not in json.dumps([webhook, lbc])
