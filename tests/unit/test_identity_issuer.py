"""The issuer's documents and URL (components/plan/identity_issuer.py), checked against what
kube-apiserver and kops compute and against the `cryptography` package, and the URL rules of IAM,
STS and kube-apiserver, with property tests for the validator."""

from __future__ import annotations

import hashlib
import json
import string

import pytest
from cryptography.hazmat.primitives import serialization
from hypothesis import given, settings
from hypothesis import strategies as st

from rke_aws.plan import identity_issuer as issuer
from tests.support import sts
from tests.support.properties import examples

KEY = sts.new_key()
OTHER = sts.new_key()
PEM, OTHER_PEM = sts.public_pem(KEY), sts.public_pem(OTHER)


def test_kid_is_kube_apiservers_key_id():
    """kubernetes pkg/serviceaccount/jwt.go keyIDFromPublicKey: base64url (no padding) of SHA-256 over
    x509.MarshalPKIXPublicKey; computed here with cryptography's SubjectPublicKeyInfo DER."""
    der = KEY.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    expected = sts.b64url(hashlib.sha256(der).digest())
    assert issuer.key_id(PEM) == expected
    assert "=" not in expected and len(expected) == 43


def test_jwk_carries_the_rsa_numbers_as_rfc7518_says():
    """RFC 7518 6.3.1: n and e base64url of the unsigned big-endian integers, no leading zero octet."""
    numbers = KEY.public_key().public_numbers()
    key = issuer.jwk(PEM)
    assert key["kty"] == "RSA" and key["alg"] == "RS256" and key["use"] == "sig"
    assert int.from_bytes(sts.unb64url(key["n"]), "big") == numbers.n
    assert sts.unb64url(key["n"])[0] != 0 and len(sts.unb64url(key["n"])) == 256
    assert key["e"] == "AQAB"


def test_jwk_refuses_what_kube_apiserver_would_not_sign_with():
    from cryptography.hazmat.primitives.asymmetric import ec

    ec_pem = ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    with pytest.raises(ValueError, match="not an RSA"):
        issuer.jwk(ec_pem)
    with pytest.raises(ValueError, match="at least 2048"):
        issuer.jwk(sts.public_pem(sts.new_key(1024)))
    pkcs1 = KEY.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.PKCS1).decode()
    with pytest.raises(ValueError, match="PUBLIC KEY"):
        issuer.jwk(pkcs1)


def test_jwks_holds_one_or_two_keys_sorted_by_kid():
    """kops OIDCKeys.Open sorts by kid; two keys during a rotation's overlap."""
    one = issuer.jwks([PEM])
    assert [k["kid"] for k in one["keys"]] == [issuer.key_id(PEM)]
    two = issuer.jwks([OTHER_PEM, PEM])
    assert [k["kid"] for k in two["keys"]] == sorted([issuer.key_id(PEM), issuer.key_id(OTHER_PEM)])
    assert issuer.jwks([PEM, PEM]) == one
    with pytest.raises(ValueError):
        issuer.jwks([])
    with pytest.raises(ValueError):
        issuer.jwks([PEM, OTHER_PEM, sts.public_pem(sts.new_key())])


def test_discovery_document_is_what_kops_and_eks_publish():
    """kops pkg/model/issuerdiscovery.go buildDiscoveryJSON (EKS serves the same fields)."""
    url = "https://b.s3.us-east-1.amazonaws.com/c1"
    assert issuer.discovery_document(url) == {
        "issuer": url,
        "jwks_uri": f"{url}/openid/v1/jwks",
        "authorization_endpoint": "urn:kubernetes:programmatic_authorization",
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "claims_supported": ["sub", "iss"],
    }
    assert json.loads(issuer.document_text(issuer.discovery_document(url)))["issuer"] == url


@pytest.mark.parametrize("region,suffix,host", [
    ("us-east-1", "amazonaws.com", "irsa-c1.s3.us-east-1.amazonaws.com"),
    ("us-gov-west-1", "amazonaws.com", "irsa-c1.s3.us-gov-west-1.amazonaws.com"),
    ("cn-north-1", "amazonaws.com.cn", "irsa-c1.s3.cn-north-1.amazonaws.com.cn"),
])
def test_s3_issuer_url_per_partition(region, suffix, host):
    """Virtual-hosted S3 URLs (kops s3fs.go GetHTTPsUrl; aws-cn form from openshift/cloud-credential-operator
    PR #596)."""
    assert issuer.s3_issuer_url("irsa-c1", region, suffix) == f"https://{host}"
    assert issuer.s3_issuer_url("irsa-c1", region, suffix, "clusters/c1") == f"https://{host}/clusters/c1"
    assert issuer.object_keys("clusters/c1") == ("clusters/c1/.well-known/openid-configuration",
                                                 "clusters/c1/openid/v1/jwks")
    assert issuer.object_keys() == (".well-known/openid-configuration", "openid/v1/jwks")


@pytest.mark.parametrize("bucket,prefix", [("my.bucket", ""), ("B", ""), ("ab", ""), ("ok-bucket", "/lead"),
                                           ("ok-bucket", "trail/"), ("ok-bucket", "a//b"), ("xn--bucket", "")])
def test_s3_issuer_url_refuses_buckets_and_prefixes_that_break_it(bucket, prefix):
    with pytest.raises(ValueError):
        issuer.s3_issuer_url(bucket, "us-east-1", "amazonaws.com", prefix)


def test_s3_publication_is_refused_in_china_only():
    """aws-cn S3 answers anonymous requests 401 without an ICP recordal (terraform-provider-aws#15420)."""
    assert issuer.s3_issuer_problem("aws") is None
    assert issuer.s3_issuer_problem("aws-us-gov") is None
    assert "ICP" in issuer.s3_issuer_problem("aws-cn")


def test_provider_arn_and_condition_prefix_per_partition():
    url = "https://oidc.example.com/c1"
    assert issuer.provider_arn("aws-us-gov", "123456789012", url) == \
        "arn:aws-us-gov:iam::123456789012:oidc-provider/oidc.example.com/c1"
    assert issuer.host_path(url) == "oidc.example.com/c1"


# --- the bring-your-own issuer URL -----------------------------------------------------------------------

@pytest.mark.parametrize("bad,why", [
    ("http://oidc.example.com", "https"),
    ("HTTPS://oidc.example.com", "https"),
    ("https://oidc.example.com/", "end with"),
    ("https://oidc.example.com/c1/", "end with"),
    ("https://oidc.example.com?x=1", "query"),
    ("https://oidc.example.com/c1?", "query"),
    ("https://oidc.example.com#f", "fragment"),
    ("https://user@oidc.example.com", "user"),
    ("https://oidc.example.com:8443", "port"),
    ("https://oidc.example.com:", "port"),
    ("https://OIDC.example.com", "lower case"),
    ("https://10.0.0.1", "IP"),
    ("https://localhost", "DNS name"),
    ("https://oidc.example.com/a%20b", "segments"),
    ("https://oidc.example.com/a/../b", "segments"),
    ("https://oidc.example.com//b", "segments"),
    (" https://oidc.example.com", "white space"),
    ("https://oidc.example.com/" + "a" * 300, "255"),
    ("", "URL"),
])
def test_issuer_url_problems_name_the_rule(bad, why):
    problems = issuer.issuer_url_problems(bad)
    assert problems and any(why in p for p in problems), (bad, problems)


LABELS = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
TOP_LABELS = st.from_regex(r"[a-z]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)  # a top-level domain is not numeric
SEGMENTS = st.text(alphabet=string.ascii_letters + string.digits + "._~-", min_size=1, max_size=12).filter(
    lambda s: s not in (".", ".."))


@st.composite
def valid_issuers(draw):
    host = ".".join(draw(st.lists(LABELS, min_size=1, max_size=3)) + [draw(TOP_LABELS)])
    path = "".join(f"/{s}" for s in draw(st.lists(SEGMENTS, max_size=3)))
    return f"https://{host}{path}"


@settings(max_examples=examples(200), deadline=None)
@given(valid_issuers())
def test_property_valid_issuers_pass_and_name_their_provider(url):
    assert issuer.issuer_url_problems(url) == []
    assert issuer.provider_arn("aws", "1", url).endswith("oidc-provider/" + url[len("https://"):])
    assert issuer.jwks_uri(url) == url + "/openid/v1/jwks"  # never a double slash


@settings(max_examples=examples(200), deadline=None)
@given(valid_issuers(), st.sampled_from(["?q", "#f", "/", ":443", "http"]))
def test_property_each_breach_is_refused(url, breach):
    if breach == "http":
        bad = "http" + url[len("https"):]
    elif breach == ":443":
        rest = url[len("https://"):]
        host, _, path = rest.partition("/")
        bad = f"https://{host}:443" + (f"/{path}" if path else "")
    else:
        bad = url + breach
    assert issuer.issuer_url_problems(bad), bad


@settings(max_examples=examples(100), deadline=None)
@given(st.text(max_size=40))
def test_property_anything_accepted_is_an_https_url_iam_takes(text):
    if not issuer.issuer_url_problems(text):
        assert text.startswith("https://") and "?" not in text and "#" not in text and not text.endswith("/")
        assert len(text) <= 255 and "@" not in text


# --- what a bring-your-own issuer serves -------------------------------------------------------------------

def test_published_problems_for_a_bring_your_own_issuer():
    url = "https://oidc.example.com/c1"
    doc = issuer.document_text(issuer.discovery_document(url))
    keys = issuer.document_text(issuer.jwks([PEM]))
    kid = issuer.key_id(PEM)
    assert issuer.published_problems(url, doc, keys, [kid]) == []
    assert "lacks the cluster's key" in issuer.published_problems(url, doc, issuer.document_text(
        issuer.jwks([OTHER_PEM])), [kid])[0]
    wrong = issuer.document_text(issuer.discovery_document("https://other.example.com"))
    assert "names issuer" in issuer.published_problems(url, wrong, keys, [kid])[0]
    assert "could not be read" in issuer.published_problems(url, None, None, [kid])[0]
    assert "could not be read" in issuer.published_problems(url, doc, None, [kid])[0]
