"""A service-account token as kube-apiserver signs it, an S3 bucket serving anonymous reads, and STS
verifying the token as AssumeRoleWithWebIdentity does. Independent of components/; the RSA
operations are the `cryptography` package's.

kube-apiserver (kubernetes/kubernetes pkg/serviceaccount/jwt.go `GenerateToken`, claims.go `Claims`;
"Schema for service account private claims" in the Kubernetes docs): header `alg` RS256 for an RSA
key and `kid` = base64url(SHA-256(PKIX DER of the public key)); claims `iss` (the first
--service-account-issuer), `sub` system:serviceaccount:<ns>:<name>, `aud` (a list: the audiences
asked for), `exp`, `iat`, `nbf` (= iat), `jti`, and `kubernetes.io` {namespace, serviceaccount
{name, uid}, pod {name, uid}, node {name, uid}} for a pod's projected token.

STS (API reference, AssumeRoleWithWebIdentity, errors; IAM user guide, "OIDC federation"): the
token's `iss` must name an OIDC provider of the account (its URL), its `aud` one of the provider's
client IDs; the keys come from `<iss>/.well-known/openid-configuration` -> `jwks_uri` (OpenID
Connect Discovery 1.0 section 4.3: the document's `issuer` must equal the URL it was read for); the
`kid` picks the key; RS256 signature; `exp` in the future (ExpiredTokenException), then the role's
trust policy decides with `<provider host/path>:sub` and `:aud`. Clock skew and JWKS caching are not
documented and not modelled.
"""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from . import resource_policy


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def new_key(bits: int = 2048) -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=bits)


def public_pem(key: rsa.RSAPrivateKey) -> str:
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def private_pem(key: rsa.RSAPrivateKey) -> str:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption()).decode()


def kube_key_id(key: rsa.RSAPrivateKey) -> str:
    der = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return b64url(hashlib.sha256(der).digest())


def service_account_claims(issuer: str, namespace: str, name: str, audience: str, now: int,
                           lifetime: int = 86400) -> dict[str, Any]:
    return {
        "iss": issuer,
        "sub": f"system:serviceaccount:{namespace}:{name}",
        "aud": [audience],
        "iat": now,
        "nbf": now,
        "exp": now + lifetime,
        "jti": str(uuid.uuid4()),
        "kubernetes.io": {
            "namespace": namespace,
            "serviceaccount": {"name": name, "uid": str(uuid.uuid4())},
            "pod": {"name": f"{name}-0", "uid": str(uuid.uuid4())},
            "node": {"name": "ip-10-0-1-23.ec2.internal", "uid": str(uuid.uuid4())},
        },
    }


def sign(key: rsa.RSAPrivateKey, claims: Mapping[str, Any], kid: str | None = None) -> str:
    """A compact JWS as kube-apiserver writes it (RS256, kid of the signing key unless given)."""
    header = {"alg": "RS256", "kid": kube_key_id(key) if kid is None else kid}
    signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(dict(claims)).encode())}"
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{b64url(signature)}"


# --- S3 serving the issuer's documents -------------------------------------------------------------

@dataclass
class PublicBucket:
    """A bucket answering anonymous HTTPS GETs at its virtual-hosted address."""
    name: str
    region: str
    dns_suffix: str
    policy: Mapping[str, Any]
    public_access_block: Mapping[str, bool]
    partition: str = "aws"
    objects: dict[str, str] = field(default_factory=dict)

    @property
    def host(self) -> str:
        return f"{self.name}.s3.{self.region}.{self.dns_suffix}"

    def get(self, url: str) -> tuple[int, str]:
        parts = urlsplit(url)
        if parts.scheme != "https" or parts.hostname != self.host:
            return 0, "no such host"
        key = parts.path.lstrip("/")
        arn = f"arn:{self.partition}:s3:::{self.name}/{key}"
        verdict = resource_policy.anonymous_s3_decision(self.policy, self.public_access_block, "s3:GetObject", arn)
        if verdict != resource_policy.ALLOW:
            return 403, "AccessDenied"
        if key not in self.objects:
            return 404, "NoSuchKey"
        return 200, self.objects[key]


# --- STS ----------------------------------------------------------------------------------------------

class StsError(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code


@dataclass
class Sts:
    fetch: Callable[[str], tuple[int, str]]  # url -> (HTTP status, body)
    providers: Mapping[str, tuple[str, list[str]]]  # provider URL (https://...) -> (provider ARN, client IDs)
    roles: Mapping[str, Mapping[str, Any]]  # role ARN -> trust policy
    now: int

    def _read_json(self, url: str) -> Any:
        status, body = self.fetch(url)
        if status != 200:
            raise StsError("InvalidIdentityToken", f"Couldn't retrieve verification key from your identity "
                                                   f"provider ({url}: {status})")
        return json.loads(body)

    def assume_role_with_web_identity(self, role_arn: str, token: str) -> dict[str, Any]:
        try:
            head_b64, body_b64, sig_b64 = token.split(".")
            header, claims = json.loads(unb64url(head_b64)), json.loads(unb64url(body_b64))
        except ValueError as exc:
            raise StsError("InvalidIdentityToken", "malformed token") from exc
        if header.get("alg") != "RS256":
            raise StsError("InvalidIdentityToken", f"unsupported alg {header.get('alg')}")
        iss = claims.get("iss")
        if iss not in self.providers:
            raise StsError("InvalidIdentityToken", f"No OpenIDConnect provider found in your account for {iss}")
        provider_arn, client_ids = self.providers[iss]
        auds = claims.get("aud")
        auds = [auds] if isinstance(auds, str) else list(auds or [])
        matched = [a for a in auds if a in client_ids]
        if not matched:
            raise StsError("InvalidIdentityToken", "Incorrect token audience")
        discovery = self._read_json(f"{iss}/.well-known/openid-configuration")
        if discovery.get("issuer") != iss:
            raise StsError("InvalidIdentityToken", "issuer in the discovery document differs from the token's")
        keys = self._read_json(discovery["jwks_uri"]).get("keys", [])
        jwk = next((k for k in keys if k.get("kid") == header.get("kid")), None)
        if jwk is None:
            raise StsError("InvalidIdentityToken", "Couldn't retrieve verification key from your identity provider")
        public = rsa.RSAPublicNumbers(int.from_bytes(unb64url(jwk["e"]), "big"),
                                      int.from_bytes(unb64url(jwk["n"]), "big")).public_key()
        try:
            public.verify(unb64url(sig_b64), f"{head_b64}.{body_b64}".encode(), padding.PKCS1v15(), hashes.SHA256())
        except InvalidSignature as exc:
            raise StsError("InvalidIdentityToken", "signature verification failed") from exc
        if self.now >= int(claims["exp"]):
            raise StsError("ExpiredTokenException", "Token expired")
        if int(claims.get("nbf", 0)) > self.now:
            raise StsError("InvalidIdentityToken", "Token not yet valid")
        key = iss[len("https://"):]
        context = {f"{key}:sub": claims["sub"], f"{key}:aud": matched[0]}
        trust = self.roles.get(role_arn)
        verdict = resource_policy.decision(trust, ("Federated", provider_arn), "sts:AssumeRoleWithWebIdentity",
                                           role_arn, context) if trust else resource_policy.IMPLICIT_DENY
        if verdict != resource_policy.ALLOW:
            raise StsError("AccessDenied", "Not authorized to perform sts:AssumeRoleWithWebIdentity")
        return {"AssumedRoleUser": {"Arn": role_arn}, "SubjectFromWebIdentityToken": claims["sub"],
                "Audience": matched[0], "Provider": provider_arn}
