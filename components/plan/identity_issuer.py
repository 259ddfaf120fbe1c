"""The service-account issuer AWS STS trusts (issue 36, workload identity): its keys as JWKs, the
JWKS, the OpenID discovery document, the issuer URL (S3-hosted per partition, or the user's own) and
the checks on it, and the S3 bucket policy that publishes the two documents (at the end). Pure.

How AWS uses these (IAM User Guide, "Create an OpenID Connect (OIDC) identity provider"; STS API
reference, AssumeRoleWithWebIdentity): a token's `iss` names an IAM OIDC provider of the account
(the provider URL is the issuer with `https://`), STS fetches `<iss>/.well-known/openid-configuration`
over HTTPS, follows its `jwks_uri`, picks the key named by the token's `kid`, checks the RS256
signature, the audience against the provider's client IDs, and the expiry.

Sources:
- kid: kubernetes/kubernetes pkg/serviceaccount/jwt.go `keyIDFromPublicKey`: base64url without
  padding of SHA-256 over the key's PKIX (SubjectPublicKeyInfo) DER encoding. kops computes the
  same for the JWKS it publishes (kubernetes/kops@268927e2 pkg/model/issuerdiscovery.go
  `OIDCKeys.Open`: kid, alg RS256, use sig, keys sorted by kid).
- discovery document: kops@268927e2 pkg/model/issuerdiscovery.go `buildDiscoveryJSON` (issuer,
  jwks_uri = issuer + /openid/v1/jwks, authorization_endpoint urn:kubernetes:programmatic_authorization,
  response_types [id_token], subject_types [public], signing algs [RS256], claims [sub, iss]); EKS
  serves the same fields. kube-apiserver's own document (pkg/serviceaccount/openidmetadata.go) has
  the first five of them.
- IAM's provider URL rules (IAM API reference, CreateOpenIDConnectProvider `Url`): begins with
  https://, corresponds to the tokens' `iss`, path allowed, query not, no port, at most 255 characters;
  one provider per URL per account.
- S3 URLs: virtual-hosted style `https://<bucket>.s3.<region>.<partition DNS suffix>` (kops
  util/pkg/vfs/s3fs.go `GetHTTPsUrl`; an aws-cn example in openshift/cloud-credential-operator PR
  #596); a bucket name with dots breaks the `*.s3.<region>...` certificate over HTTPS (S3 user guide,
  "Virtual hosting of buckets").
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

# The audience STS is asked for: the pod identity webhook's default `--token-audience` and the IAM
# OIDC provider's client ID (aws/amazon-eks-pod-identity-webhook README, "Usage").
STS_AUDIENCE = "sts.amazonaws.com"

# Where the two documents live below the issuer URL (kops and kube-apiserver use the same paths).
DISCOVERY_PATH = ".well-known/openid-configuration"
JWKS_PATH = "openid/v1/jwks"

SIGNING_ALGORITHM = "RS256"  # kube-apiserver signs RSA keys with RS256 (jwt.go signerFromRSAPrivateKey)
MIN_RSA_BITS = 2048  # kops' default key size (pkg/pki/privatekey.go); smaller keys are refused here

# A JWKS holds the signing key, and during a rotation the next or the previous one as well.
MAX_JWKS_KEYS = 2

IAM_URL_MAX_LENGTH = 255  # CreateOpenIDConnectProvider: Url length 1-255


# --- keys ------------------------------------------------------------------------------------------

_RSA_ENCRYPTION_OID = bytes.fromhex("2a864886f70d010101")  # 1.2.840.113549.1.1.1


def _pem_body(pem: str, label: str) -> bytes:
    m = re.search(rf"-----BEGIN {label}-----\s*(.*?)\s*-----END {label}-----", pem, re.S)
    if not m:
        raise ValueError(f"not a PEM {label!r} block")
    return base64.b64decode("".join(m.group(1).split()), validate=True)


def _der(data: bytes, pos: int, tag: int) -> tuple[bytes, int]:
    """The content of the DER element with `tag` at `pos`, and the position after it."""
    if pos + 2 > len(data) or data[pos] != tag:
        raise ValueError(f"DER: expected tag {tag:#x} at {pos}")
    length, pos = data[pos + 1], pos + 2
    if length & 0x80:
        count = length & 0x7F
        if count == 0 or count > 4 or pos + count > len(data):
            raise ValueError("DER: bad length")
        length, pos = int.from_bytes(data[pos:pos + count], "big"), pos + count
    if pos + length > len(data):
        raise ValueError("DER: element runs past the end")
    return data[pos:pos + length], pos + length


def spki_der(public_key_pem: str) -> bytes:
    """The PKIX SubjectPublicKeyInfo DER of a `PUBLIC KEY` PEM (what pulumi-tls `public_key_pem`
    and `openssl rsa -pubout` write)."""
    return _pem_body(public_key_pem, "PUBLIC KEY")


def rsa_numbers(der: bytes) -> tuple[int, int]:
    """(modulus, public exponent) of an RSA SubjectPublicKeyInfo; anything else is refused."""
    spki, end = _der(der, 0, 0x30)
    if end != len(der):
        raise ValueError("DER: trailing bytes after SubjectPublicKeyInfo")
    algorithm, pos = _der(spki, 0, 0x30)
    oid, _ = _der(algorithm, 0, 0x06)
    if oid != _RSA_ENCRYPTION_OID:
        raise ValueError("not an RSA public key (kube-apiserver signs RSA keys with RS256)")
    bits, _ = _der(spki, pos, 0x03)
    if not bits or bits[0] != 0:
        raise ValueError("DER: bad BIT STRING")
    rsa_key, _ = _der(bits[1:], 0, 0x30)
    modulus, pos = _der(rsa_key, 0, 0x02)
    exponent, _ = _der(rsa_key, pos, 0x02)
    return int.from_bytes(modulus, "big"), int.from_bytes(exponent, "big")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _uint(value: int) -> bytes:
    return value.to_bytes((value.bit_length() + 7) // 8 or 1, "big")


def key_id(public_key_pem: str) -> str:
    """kube-apiserver's `kid` for this key: base64url(SHA-256(PKIX DER)), no padding."""
    return _b64url(hashlib.sha256(spki_der(public_key_pem)).digest())


def jwk(public_key_pem: str) -> dict[str, str]:
    """The key as kops and EKS publish it: RSA, RS256, use sig, kid as kube-apiserver computes it."""
    n, e = rsa_numbers(spki_der(public_key_pem))
    if n.bit_length() < MIN_RSA_BITS:
        raise ValueError(f"RSA key of {n.bit_length()} bits; at least {MIN_RSA_BITS} are required")
    return {"kty": "RSA", "alg": SIGNING_ALGORITHM, "use": "sig", "kid": key_id(public_key_pem),
            "n": _b64url(_uint(n)), "e": _b64url(_uint(e))}


def jwks(public_key_pems: Sequence[str]) -> dict[str, list[dict[str, str]]]:
    """The key set: the signing key, and during a rotation the other key of the overlap (sorted by
    kid, as kops does; the same key twice counts once)."""
    keys = {k["kid"]: k for k in (jwk(p) for p in public_key_pems)}
    if not 1 <= len(keys) <= MAX_JWKS_KEYS:
        raise ValueError(f"a JWKS here holds 1 to {MAX_JWKS_KEYS} keys, not {len(keys)}")
    return {"keys": [keys[kid] for kid in sorted(keys)]}


# --- documents --------------------------------------------------------------------------------------

def jwks_uri(issuer_url: str) -> str:
    return f"{issuer_url}/{JWKS_PATH}"


def discovery_document(issuer_url: str) -> dict[str, Any]:
    return {
        "issuer": issuer_url,
        "jwks_uri": jwks_uri(issuer_url),
        "authorization_endpoint": "urn:kubernetes:programmatic_authorization",
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": [SIGNING_ALGORITHM],
        "claims_supported": ["sub", "iss"],
    }


def document_text(doc: Mapping[str, Any]) -> str:
    """The bytes published (and compared on every update): stable key order."""
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


# --- where the issuer is -----------------------------------------------------------------------------

# Partitions where the S3-hosted issuer cannot work, with the evidence. In aws-cn S3 answers
# anonymous requests with 401 Unauthorized unless the account has an ICP recordal: AWS changed this
# around 2020-09-30 (hashicorp/terraform-provider-aws#15420, reproduced in 2025 in #42743, and
# pulumi/pulumi-aws#1438: anonymous HeadBucket 401), and static objects read through a link fail the
# same way (aws-samples/aws-serverless-workshops#318, cn-north-1). STS fetches the discovery document
# and the JWKS anonymously, so it would get 401 too. CloudFront, the other host for a private bucket,
# needs an ICP-recorded domain in China as well (docs.amazonaws.cn, "Amazon CloudFront" differences).
S3_ISSUER_REFUSED = {
    "aws-cn": ("S3 in the China regions refuses anonymous reads unless the account has an ICP recordal, "
               "and STS reads the issuer's documents anonymously (hashicorp/terraform-provider-aws#15420)"),
}

_BUCKET = re.compile(r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]\Z")
_PREFIX_SEGMENT = re.compile(r"^[a-z0-9][a-z0-9_-]*\Z")


def s3_issuer_problem(partition: str) -> str | None:
    return S3_ISSUER_REFUSED.get(partition)


def s3_issuer_url(bucket: str, region: str, dns_suffix: str, prefix: str = "") -> str:
    """`https://<bucket>.s3.<region>.<suffix>[/<prefix>]`: the bucket's virtual-hosted HTTPS address,
    which S3 serves with a `*.s3.<region>.<suffix>` certificate (so no dots in the bucket name)."""
    if not _BUCKET.match(bucket) or bucket.startswith("xn--"):
        raise ValueError(f"bucket {bucket!r}: 3-63 lower-case letters, digits and hyphens (no dots: the "
                         "virtual-hosted HTTPS certificate covers one label)")
    segments = prefix.split("/") if prefix else []
    if any(not _PREFIX_SEGMENT.match(s) for s in segments):
        raise ValueError(f"prefix {prefix!r}: segments of lower-case letters, digits, '-' and '_', "
                         "separated by single '/', no leading or trailing '/'")
    url = f"https://{bucket}.s3.{region}.{dns_suffix}" + "".join(f"/{s}" for s in segments)
    problems = issuer_url_problems(url)
    if problems:
        raise ValueError("; ".join(problems))
    return url


def object_keys(prefix: str = "") -> tuple[str, str]:
    """The discovery document's and the JWKS's object keys in the bucket."""
    base = f"{prefix}/" if prefix else ""
    return f"{base}{DISCOVERY_PATH}", f"{base}{JWKS_PATH}"


_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\Z")
_PATH_SEGMENT = re.compile(r"^[A-Za-z0-9._~-]+\Z")


def issuer_url_problems(value: object) -> list[str]:
    """Why `value` cannot be a service-account issuer AWS trusts (empty: it can). What must hold:
    IAM's provider URL rules (https://, no query, no port, <= 255 characters), the token's `iss` equal
    to the provider URL character for character (so no user info, fragment, trailing slash, upper
    case host or percent-encoding to normalise away), a DNS host name STS can verify a certificate
    for, and kube-apiserver's rule that an issuer with a ':' parses as a URL."""
    if not isinstance(value, str) or not value:
        return ["must be a URL such as https://oidc.example.com/cluster-1"]
    problems: list[str] = []
    if value != value.strip() or any(c.isspace() for c in value):
        problems.append("must not contain white space")
    if len(value) > IAM_URL_MAX_LENGTH:
        problems.append(f"is {len(value)} characters long; IAM takes at most {IAM_URL_MAX_LENGTH}")
    if not value.startswith("https://"):
        problems.append("must begin with https:// (IAM OIDC providers and STS fetch the documents over HTTPS)")
        return problems
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        return problems + [f"is not a valid URL ({exc})"]
    if "?" in value:
        problems.append("must not have a query (IAM: path components are allowed, query parameters are not)")
    if "#" in value:
        problems.append("must not have a fragment")
    if "@" in parts.netloc:
        problems.append("must not carry user information")
    if port is not None or parts.netloc.endswith(":"):
        problems.append("must not name a port (IAM: the URL should not contain a port number)")
    host = parts.hostname or ""
    raw_host = parts.netloc.rpartition("@")[2].split(":")[0]
    if raw_host != raw_host.lower():
        problems.append("host name must be lower case (the token's iss must equal the provider URL exactly)")
    if not host:
        problems.append("has no host name")
    else:
        try:
            ipaddress.ip_address(host)
            problems.append("host must be a DNS name, not an IP address (STS checks the host's certificate)")
        except ValueError:
            labels = host.split(".")
            if len(labels) < 2 or not all(_LABEL.match(label) for label in labels) or len(host) > 253:
                problems.append(f"host {host!r} is not a DNS name with a domain (labels of a-z, 0-9, '-')")
    path = parts.path
    if path.endswith("/"):
        problems.append("must not end with '/' (jwks_uri and the discovery path are appended with '/')")
    segments = path.rstrip("/").split("/")[1:] if path.rstrip("/") else []
    if any(s in (".", "..") or not _PATH_SEGMENT.match(s) for s in segments):
        problems.append("path segments may use letters, digits and . _ ~ - only (no empty, '.', '..' or "
                        "percent-encoded segments)")
    return problems


def host_path(issuer_url: str) -> str:
    """The issuer without `https://`: the OIDC provider's name in its ARN and the prefix of the trust
    policy's condition keys (`<host/path>:sub`, `<host/path>:aud`)."""
    if not issuer_url.startswith("https://"):
        raise ValueError(f"{issuer_url!r} is not an https URL")
    return issuer_url[len("https://"):]


def provider_arn(partition: str, account_id: str, issuer_url: str) -> str:
    return f"arn:{partition}:iam::{account_id}:oidc-provider/{host_path(issuer_url)}"


# --- what a bring-your-own issuer serves ----------------------------------------------------------------

def published_problems(issuer_url: str, discovery_text: str | None, jwks_text: str | None,
                       expected_kids: Iterable[str]) -> list[str]:
    """What is wrong with the documents served at a bring-your-own issuer (None: could not be read),
    for the key IDs the cluster signs or will sign with. STS reads exactly these fields."""
    where = f"{issuer_url}/{DISCOVERY_PATH}"
    if discovery_text is None:
        return [f"{where} could not be read"]
    try:
        doc = json.loads(discovery_text)
    except ValueError:
        return [f"{where} is not JSON"]
    if not isinstance(doc, dict):
        return [f"{where} is not a JSON object"]
    problems = []
    if doc.get("issuer") != issuer_url:
        problems.append(f"{where} names issuer {doc.get('issuer')!r}, not {issuer_url!r}")
    if SIGNING_ALGORITHM not in (doc.get("id_token_signing_alg_values_supported") or []):
        problems.append(f"{where} does not list {SIGNING_ALGORITHM} in id_token_signing_alg_values_supported")
    uri = doc.get("jwks_uri")
    if not isinstance(uri, str) or not uri.startswith("https://"):
        problems.append(f"{where} has no https jwks_uri")
        return problems
    if jwks_text is None:
        return problems + [f"{uri} could not be read"]
    try:
        keys = json.loads(jwks_text).get("keys")
    except (ValueError, AttributeError):
        return problems + [f"{uri} is not a JWKS"]
    kids = {k.get("kid") for k in keys or [] if isinstance(k, dict)}
    missing = sorted(set(expected_kids) - kids)
    if missing:
        problems.append(f"{uri} lacks the cluster's key(s) {', '.join(missing)}")
    return problems


# --- the S3 bucket that serves the two documents -------------------------------------------------------
#
# Exactly those two objects public, nothing else readable or listable, ACLs off.
#
# Sources (S3 user guide and API reference):
# - New buckets have Object Ownership `BucketOwnerEnforced` (ACLs disabled) and all four Block Public
#   Access settings on ("Controlling ownership of objects and disabling ACLs", "Blocking public access
#   to your Amazon S3 storage"). kops' getting-started turns all four off and uses a public-read ACL;
#   here ACLs stay disabled and a bucket policy grants the read.
# - `BlockPublicPolicy` makes S3 reject a PutBucketPolicy whose policy is public; a policy granting
#   `s3:GetObject` to `*` is public (PublicAccessBlockConfiguration, "The meaning of public").
#   `RestrictPublicBuckets` limits a bucket with a public policy to AWS service principals and the
#   owner's account, so anonymous readers (STS fetching the documents) would be refused. Both must be
#   off on the bucket; `BlockPublicAcls` and `IgnorePublicAcls` stay on (no ACL grants anything).
# - The account's own Block Public Access settings (and an organization's) apply on top of the
#   bucket's: if either blocks public policies, this publication cannot work (a plan-time check).
# - `aws:SecureTransport` (IAM condition keys): requests over plain HTTP are denied.

CONTENT_TYPE = "application/json"
# Bucket owner enforced: ACLs disabled, every object the bucket owner's.
OBJECT_OWNERSHIP = "BucketOwnerEnforced"
# aws.s3.BucketPublicAccessBlock arguments: public policies allowed (the two objects), ACLs blocked.
PUBLIC_ACCESS_BLOCK = {
    "block_public_acls": True,
    "ignore_public_acls": True,
    "block_public_policy": False,
    "restrict_public_buckets": False,
}
# How long STS and other readers may cache the documents (Cache-Control): short, so a rotation's new
# JWKS is what they read soon after it is written. STS' own caching is not documented.
CACHE_CONTROL = "max-age=300"


def object_arns(bucket: str, partition: str, prefix: str = "") -> list[str]:
    return [f"arn:{partition}:s3:::{bucket}/{key}" for key in object_keys(prefix)]


def bucket_policy(bucket: str, partition: str, prefix: str = "") -> dict[str, Any]:
    """Anyone may GetObject the discovery document and the JWKS, over HTTPS; nothing else is granted
    (no ListBucket, no other key, no write), and plain HTTP is refused for everything."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "PublicIssuerDocuments", "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
             "Resource": object_arns(bucket, partition, prefix)},
            {"Sid": "DenyInsecureTransport", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
             "Resource": [f"arn:{partition}:s3:::{bucket}", f"arn:{partition}:s3:::{bucket}/*"],
             "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
        ],
    }
