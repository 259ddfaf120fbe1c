"""Issue 36's "bad input": the identity keys are refused before any resource, every problem at once, each
naming its key (settings/rules/identity.py for what the keys say together, plan/identity.py config_problems for
what a value breaks against the issuer's, IAM's and Kubernetes' own rules: plan/identity_issuer.py,
identity_roles.py cite them)."""

from __future__ import annotations

import json

import pytest

from rke_aws.diagnostics import ConfigError
from rke_aws.plan import identity as identity_plan
from rke_aws.plan import identity_issuer
from rke_aws.settings.resolve import from_flat
from rke_aws.settings.rules import identity as identity_rules

POOLS = [{"name": "server", "roles": ["controlplane", "etcd"], "count": 1},
         {"name": "agents", "roles": ["worker"], "count": 1}]
ADMIN = '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}'
READ = '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/*"}]}'


def _config(identity=None, distribution="rke2", region="us-west-2", **extra):
    cfg = {"aws:region": region, "rke-aws:distribution": distribution, "rke-aws:clusterId": "c1",
           "rke-aws:nodePools": json.dumps(POOLS), **{f"rke-aws:{k}": json.dumps(v) for k, v in extra.items()}}
    if identity is not None:
        cfg["rke-aws:identity"] = json.dumps(identity)
    return cfg


def _refused(cfg) -> list[str]:
    with pytest.raises(ConfigError) as info:
        from_flat(cfg, project="rke-aws", stack="c1")
    return info.value.problems


def _value_problems(cfg) -> list[str]:
    return [d.render("rke-aws:") for d in identity_plan.config_problems(from_flat(cfg, project="rke-aws", stack="c1"))]


def test_off_by_default_and_nothing_refused():
    cfg = from_flat(_config(), project="rke-aws", stack="c1")
    assert cfg.identity.service_accounts == "none" and not cfg.addons.load_balancer_controller
    assert identity_plan.config_problems(cfg) == []


def test_the_controller_without_the_issuer_is_refused():
    problems = _refused(_config(addons={"loadBalancerController": True}))
    assert any(p.startswith("rke-aws:addons.loadBalancerController: true needs workload identity") for p in problems), problems


def test_identity_keys_without_irsa_are_refused_each_by_name():
    problems = _refused(_config({"issuerUrl": "https://oidc.example.com/c1",
                                 "roles": [{"serviceAccount": "a/b", "policy": READ}]}))
    assert sum("is set, but identity.serviceAccounts is 'none'" in p for p in problems) == 2
    assert any(p.startswith("rke-aws:identity.issuerUrl:") for p in problems)
    assert any(p.startswith("rke-aws:identity.roles:") for p in problems)


def test_china_refuses_the_s3_issuer_and_names_the_alternative():
    """aws-cn: S3 answers anonymous reads with 401 without an ICP recordal (plan/identity_issuer.py
    S3_ISSUER_REFUSED cites hashicorp/terraform-provider-aws#15420); STS reads the documents anonymously."""
    problems = _refused(_config({"serviceAccounts": "irsa"}, region="cn-north-1"))
    assert any(p.startswith("rke-aws:identity.issuerUrl: missing: in cn-north-1 (aws-cn)") and "set identity.issuerUrl" in p
               for p in problems), problems
    # With its own issuer the partition is fine.
    from_flat(_config({"serviceAccounts": "irsa", "issuerUrl": "https://oidc.example.cn/c1"}, region="cn-north-1"),
              project="rke-aws", stack="c1")


def test_one_list_of_refused_partitions_in_both_layers():
    assert set(identity_issuer.S3_ISSUER_REFUSED) == set(identity_rules.S3_ISSUER_REFUSED_PARTITIONS)


def test_rke1_takes_irsa():
    """RKE1's kube-api extra_args carry the issuer's flags (rancher/rke cluster/plan.go BuildKubeAPIProcess);
    only a running RKE1 cluster is refused, by the planner, which reads the last outputs
    (tests/unit/test_identity_rke1.py)."""
    cfg = from_flat(_config({"serviceAccounts": "irsa"}, distribution="rke", addons={"loadBalancerController": True}),
                    project="rke-aws", stack="c1")
    assert cfg.identity.service_accounts == "irsa" and identity_plan.config_problems(cfg) == []


def test_every_value_problem_at_once_naming_its_key():
    cfg = _config({"serviceAccounts": "irsa", "issuerUrl": "http://oidc.example.com/c1",
                   "roles": [{"serviceAccount": "Apps/reports", "policy": READ},
                             {"serviceAccount": "apps/*", "policy": ADMIN},
                             {"serviceAccount": "apps/ok", "policy": ADMIN, "allowAllActions": True}]})
    problems = _value_problems(cfg)
    assert any(p.startswith("rke-aws:identity.issuerUrl: 'http://oidc.example.com/c1' must begin with https://")
               for p in problems), problems
    assert any(p.startswith("rke-aws:identity.roles[0].serviceAccount: 'Apps/reports': namespace 'Apps'")
               for p in problems), problems
    assert any(p.startswith("rke-aws:identity.roles[1].serviceAccount: 'apps/*': name '*'") for p in problems), problems
    assert any(p.startswith("rke-aws:identity.roles[1].policy:") and "allowAllActions" in p for p in problems), problems
    assert not any("roles[2]" in p for p in problems), problems  # the override is explicit
    assert len(problems) == 4, problems


def test_a_service_account_twice_and_a_role_granting_nothing():
    problems = _refused(_config({"serviceAccounts": "irsa", "roles": [
        {"serviceAccount": "apps/a", "policy": READ}, {"serviceAccount": "apps/a", "policy": READ},
        {"serviceAccount": "apps/b"}]}))
    assert any(p.startswith("rke-aws:identity.roles[1].serviceAccount: 'apps/a' has a role already") for p in problems)
    assert any(p.startswith("rke-aws:identity.roles[2]: grants nothing") for p in problems), problems


def test_a_policy_arn_must_be_an_arn():
    problems = _refused(_config({"serviceAccounts": "irsa",
                                 "roles": [{"serviceAccount": "apps/a", "policyArns": ["AmazonS3ReadOnlyAccess"]}]}))
    assert any("identity.roles[0].policyArns[0]" in p for p in problems), problems


def test_china_with_its_own_issuer_warns_about_public_ecr_unless_it_is_mirrored():
    """The webhook's and the controller's images are on public.ecr.aws (plan/identity_webhook.py cites their build
    workflows), which EKS does not use in the China regions (EKS user guide, "View Amazon container image
    registries for Amazon EKS add-ons"): a warning, gone once registry.mirrors covers public.ecr.aws (containerd
    pulls through the mirror: rke2-docs install/containerd_registry_configuration.md)."""
    identity = {"serviceAccounts": "irsa", "issuerUrl": "https://oidc.example.cn/c1"}
    warned = from_flat(_config(identity, region="cn-north-1"), project="rke-aws", stack="c1").warnings
    assert any(w.startswith("rke-aws:identity.serviceAccounts: in cn-north-1 the pod identity webhook") for w in warned), warned
    for mirrors in ({"public.ecr.aws": "https://registry.corp.example.cn"}, {"*": "https://registry.corp.example.cn"}):
        quiet = from_flat(_config(identity, region="cn-north-1", registry={"mirrors": mirrors}), project="rke-aws",
                          stack="c1").warnings
        assert not [w for w in quiet if "public.ecr.aws" in w], quiet
    assert not [w for w in from_flat(_config(identity, region="us-west-2"), project="rke-aws", stack="c1").warnings
                if "public.ecr.aws" in w]
