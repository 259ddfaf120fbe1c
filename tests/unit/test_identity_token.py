"""Issue 36's first "done when": a service-account token signed with the generated key as
kube-apiserver signs it, its issuer's documents served by the S3 bucket as the program publishes them
(policy, public-access settings, object keys), and STS verifying it (tests/support/sts.py: issuer
equality, kid, RS256 signature, audience, expiry, then the role's trust policy)."""

from __future__ import annotations

import pytest

from rke_aws.plan import identity_issuer as issuer
from rke_aws.plan import identity_issuer as publication
from rke_aws.plan import identity_roles as roles
from tests.support import sts

ACCOUNT = "123456789012"
NOW = 1_800_000_000
SA = ("kube-system", "ebs-csi-controller-sa")


def published(partition: str, region: str, suffix: str, public_keys: list[str], prefix: str = "c1",
              public_access_block=None) -> tuple[str, sts.PublicBucket]:
    bucket_name = "rke-aws-irsa-0a1b2c3"
    url = issuer.s3_issuer_url(bucket_name, region, suffix, prefix)
    discovery_key, jwks_key = issuer.object_keys(prefix)
    bucket = sts.PublicBucket(bucket_name, region, suffix, publication.bucket_policy(bucket_name, partition, prefix),
                              public_access_block or publication.PUBLIC_ACCESS_BLOCK, partition, {
                                  discovery_key: issuer.document_text(issuer.discovery_document(url)),
                                  jwks_key: issuer.document_text(issuer.jwks(public_keys)),
                              })
    return url, bucket


def sts_for(url: str, bucket: sts.PublicBucket, partition: str, now: int = NOW) -> tuple[sts.Sts, str]:
    provider = issuer.provider_arn(partition, ACCOUNT, url)
    role = f"arn:{partition}:iam::{ACCOUNT}:role/rke-aws-ebs-csi"
    service = sts.Sts(bucket.get, {url: (provider, [issuer.STS_AUDIENCE])},
                      {role: roles.trust_policy(provider, url, *SA)}, now)
    return service, role


def token(key, url: str, audience: str = issuer.STS_AUDIENCE, sa=SA, now: int = NOW, kid=None, lifetime=86400) -> str:
    return sts.sign(key, sts.service_account_claims(url, *sa, audience, now, lifetime), kid)


@pytest.mark.parametrize("partition,region,suffix", [("aws", "us-east-1", "amazonaws.com"),
                                                     ("aws-us-gov", "us-gov-west-1", "amazonaws.com")])
def test_sts_accepts_a_kube_apiserver_token_for_the_role(partition, region, suffix):
    key = sts.new_key()
    url, bucket = published(partition, region, suffix, [sts.public_pem(key)])
    service, role = sts_for(url, bucket, partition)
    answer = service.assume_role_with_web_identity(role, token(key, url))
    assert answer["SubjectFromWebIdentityToken"] == "system:serviceaccount:kube-system:ebs-csi-controller-sa"
    assert answer["Provider"] == issuer.provider_arn(partition, ACCOUNT, url)


def test_both_keys_verify_during_the_rotation_overlap():
    old, new = sts.new_key(), sts.new_key()
    url, bucket = published("aws", "us-east-1", "amazonaws.com", [sts.public_pem(old), sts.public_pem(new)])
    service, role = sts_for(url, bucket, "aws")
    for key in (old, new):
        service.assume_role_with_web_identity(role, token(key, url))
    _, after = published("aws", "us-east-1", "amazonaws.com", [sts.public_pem(new)])
    service, role = sts_for(url, after, "aws")
    with pytest.raises(sts.StsError, match="verification key"):
        service.assume_role_with_web_identity(role, token(old, url))


def test_sts_refuses_what_it_must():
    key, stranger = sts.new_key(), sts.new_key()
    url, bucket = published("aws", "us-east-1", "amazonaws.com", [sts.public_pem(key)])
    service, role = sts_for(url, bucket, "aws")
    cases = {
        "wrong issuer": (token(key, "https://other.s3.us-east-1.amazonaws.com/c1"), "InvalidIdentityToken"),
        "unknown kid": (token(stranger, url), "InvalidIdentityToken"),
        "kid of ours, signature of another key": (token(stranger, url, kid=issuer.key_id(sts.public_pem(key))),
                                                  "InvalidIdentityToken"),
        "expired": (token(key, url, now=NOW - 86400, lifetime=86400), "ExpiredTokenException"),
        "wrong audience": (token(key, url, audience="https://kubernetes.default.svc.cluster.local"),
                           "InvalidIdentityToken"),
        "another service account": (token(key, url, sa=("kube-system", "ebs-csi-node-sa")), "AccessDenied"),
    }
    for name, (jwt, code) in cases.items():
        with pytest.raises(sts.StsError) as err:
            service.assume_role_with_web_identity(role, jwt)
        assert err.value.code == code, name


def test_sts_cannot_read_a_bucket_that_restricts_public_policies():
    key = sts.new_key()
    url, bucket = published("aws", "us-east-1", "amazonaws.com", [sts.public_pem(key)],
                            public_access_block={**publication.PUBLIC_ACCESS_BLOCK, "restrict_public_buckets": True})
    service, role = sts_for(url, bucket, "aws")
    with pytest.raises(sts.StsError, match="403"):
        service.assume_role_with_web_identity(role, token(key, url))


def test_the_published_discovery_document_names_the_url_sts_reads_it_from():
    key = sts.new_key()
    url, bucket = published("aws", "eu-west-1", "amazonaws.com", [sts.public_pem(key)], prefix="")
    status, body = bucket.get(f"{url}/.well-known/openid-configuration")
    assert status == 200 and f'"issuer": "{url}"' in body
    assert bucket.get(f"{url}/openid/v1/jwks")[0] == 200
    assert bucket.get(f"{url}/private/state.json")[0] == 403
