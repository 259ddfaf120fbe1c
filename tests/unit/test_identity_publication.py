"""The issuer bucket's policy and public-access settings (components/plan/identity_issuer.py),
evaluated with the suite's IAM evaluator for an anonymous reader such as STS: exactly the two
documents are readable, nothing else is, nothing is listable or writable, and not over HTTP.

Part 1 proves the resource-policy layer (tests/support/resource_policy.py) on hand-written cases."""

from __future__ import annotations

import pytest

from rke_aws.plan import identity_issuer as issuer
from rke_aws.plan import identity_issuer as publication
from tests.support import resource_policy as rp

# --- part 1: principals and S3's notion of public ---------------------------------------------------------

PROVIDER = "arn:aws:iam::123456789012:oidc-provider/oidc.example.com"


def test_principal_star_and_aws_star_include_anonymous():
    assert rp.principal_matches("*", rp.ANONYMOUS)
    assert rp.principal_matches({"AWS": "*"}, rp.ANONYMOUS)
    assert not rp.principal_matches({"AWS": "arn:aws:iam::1:root"}, rp.ANONYMOUS)


def test_federated_principal_is_that_provider_only():
    doc = {"Statement": [{"Effect": "Allow", "Principal": {"Federated": PROVIDER},
                          "Action": "sts:AssumeRoleWithWebIdentity", "Resource": "*"}]}
    assert rp.decision(doc, ("Federated", PROVIDER), "sts:AssumeRoleWithWebIdentity") == rp.ALLOW
    assert rp.decision(doc, ("Federated", PROVIDER + "x"), "sts:AssumeRoleWithWebIdentity") == rp.IMPLICIT_DENY
    assert rp.decision(doc, rp.ANONYMOUS, "sts:AssumeRoleWithWebIdentity") == rp.IMPLICIT_DENY
    with pytest.raises(ValueError):
        rp.decision({"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}, rp.ANONYMOUS, "s3:GetObject")


def test_public_means_everyone_without_a_fixing_condition():
    allow = {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/*"}
    assert rp.is_public({"Statement": [allow]})
    fixed = {**allow, "Condition": {"StringEquals": {"aws:SourceVpce": "vpce-1"}}}
    assert not rp.is_public({"Statement": [fixed]})
    assert not rp.is_public({"Statement": [{**allow, "Effect": "Deny"}]})
    restricted = {"restrict_public_buckets": True}
    assert rp.anonymous_s3_decision({"Statement": [allow]}, restricted, "s3:GetObject", "arn:aws:s3:::b/k") != rp.ALLOW
    assert rp.anonymous_s3_decision({"Statement": [allow]}, {}, "s3:GetObject", "arn:aws:s3:::b/k") == rp.ALLOW
    assert rp.put_policy_refused({"Statement": [allow]}, {"block_public_policy": True})


# --- part 2: the issuer bucket -----------------------------------------------------------------------

BUCKET = "rke-aws-irsa-c1-0a1b2c3"


@pytest.mark.parametrize("partition", ["aws", "aws-us-gov", "aws-cn"])
@pytest.mark.parametrize("prefix", ["", "clusters/c1"])
def test_anonymous_reads_exactly_the_two_documents(partition, prefix):
    policy = publication.bucket_policy(BUCKET, partition, prefix)
    pab = publication.PUBLIC_ACCESS_BLOCK
    obj = f"arn:{partition}:s3:::{BUCKET}/"
    discovery, jwks = issuer.object_keys(prefix)
    for key in (discovery, jwks):
        assert rp.anonymous_s3_decision(policy, pab, "s3:GetObject", obj + key) == rp.ALLOW, key
    base = f"{prefix}/" if prefix else ""
    for key in (f"{base}.well-known/other", f"{base}openid/v1/jwks2", f"{base}openid/v1/jwks/x", "secret.txt",
                "openid/v1/JWKS", f"x/{discovery}"):
        assert rp.anonymous_s3_decision(policy, pab, "s3:GetObject", obj + key) != rp.ALLOW, key
    bucket_arn = f"arn:{partition}:s3:::{BUCKET}"
    for action, resource in (("s3:ListBucket", bucket_arn), ("s3:PutObject", obj + discovery),
                             ("s3:DeleteObject", obj + jwks), ("s3:GetObjectAcl", obj + jwks),
                             ("s3:PutBucketPolicy", bucket_arn), ("s3:GetObjectVersion", obj + jwks)):
        assert rp.anonymous_s3_decision(policy, pab, action, resource) != rp.ALLOW, action
    # plain HTTP: refused even for the documents
    assert rp.anonymous_s3_decision(policy, pab, "s3:GetObject", obj + jwks, secure_transport=False) == rp.DENY


def test_public_access_block_lets_the_policy_in_and_keeps_acls_out():
    """BlockPublicPolicy on: S3 refuses the (public) policy; RestrictPublicBuckets on: anonymous readers
    are refused. Both off; the ACL settings stay on (ownership enforced: ACLs disabled anyway)."""
    policy = publication.bucket_policy(BUCKET, "aws")
    pab = publication.PUBLIC_ACCESS_BLOCK
    assert rp.is_public(policy) and not rp.put_policy_refused(policy, pab)
    assert pab["block_public_acls"] and pab["ignore_public_acls"]
    assert publication.OBJECT_OWNERSHIP == "BucketOwnerEnforced"
    jwks_arn = publication.object_arns(BUCKET, "aws")[1]
    for flag in ("block_public_policy", "restrict_public_buckets"):
        blocked = {**pab, flag: True}
        refused = rp.put_policy_refused(policy, blocked) or \
            rp.anonymous_s3_decision(policy, blocked, "s3:GetObject", jwks_arn) != rp.ALLOW
        assert refused, flag
