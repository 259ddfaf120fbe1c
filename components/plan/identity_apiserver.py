"""kube-apiserver's service-account flags for the issuer, on RKE2 and RKE1, the key files on the
servers, and the order of states that turns the issuer on, rotates its key, or turns it off without
invalidating a token that is still in use. Pure.

Kubernetes' flags (kubernetes/kubernetes pkg/kubeapiserver/options/authentication.go):
`--service-account-issuer` may repeat; the first value is put in new tokens' `iss`, every value is
accepted. `--service-account-key-file` may repeat; each file may hold several keys, all of which
verify tokens. `--service-account-signing-key-file` is the private key new tokens are signed with.
`--service-account-jwks-uri` replaces `jwks_uri` in the API server's own discovery document.
`--api-audiences` are the audiences the API server accepts for itself; tokens requested for another
audience (the webhook asks for `sts.amazonaws.com`) are issued all the same, so it is left alone:
adding `sts.amazonaws.com` would let a token meant for STS authenticate to the API server.

RKE2 runs kube-apiserver with k3s' defaults (k3s pkg/daemons/control/server.go `apiServer`):
`service-account-issuer=https://kubernetes.default.svc.<cluster-domain>` (cluster.local: the program
sets no cluster-domain), `service-account-key-file=<server>/tls/service.key`,
`service-account-signing-key-file=<server>/tls/service.current.key`, and `api-audiences` set
explicitly (`https://kubernetes.default.svc.cluster.local,rke2`), so in-cluster tokens keep their
audience whatever the issuer. `kube-apiserver-arg` entries merge with them (k3s pkg/util/args.go
`GetArgs`): `key=value` replaces the default (repeated: all values, in order), `key+=value` appends
after the default, `key-=value` puts the value before it. The static pod mounts the whole
`/var/lib/rancher/rke2/server` directory (rancher/rke2 pkg/executor/staticpod/staticpod.go
`APIServer`), so the key files live below it.

RKE1 (rancher/rke cluster/plan.go `BuildKubeAPIProcess`): `services.kube-api.extra_args` (a map)
overrides a default flag, `extra_args_array` (a map of lists) emits each value as its own flag after
every map flag; `extra_binds` adds host paths. Kubernetes metadata (KDM) defaults for 1.21+:
`service-account-issuer=rke`, `api-audiences=unknown`, RKE's own key for signing and verifying
(rancher/kontainer-driver-metadata pkg/rke/k8s_service_options.go, read through the code index).

Why the order of states: a token is accepted only by servers that list its `iss` and hold its key,
and by STS only while the published JWKS holds its `kid`. Servers of a running cluster change one at
a time (they read these flags when they start), so every two neighbouring states must accept each
other's tokens: first trust the new key everywhere (old key still signs), then sign with it. The
same as kops' key rotation (docs/operations/rotate-secrets.md: create, promote, distrust) and issuer
migration (docs/operations/service_account_issuer_migration.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .identity_issuer import jwks_uri, key_id

# RKE2 --------------------------------------------------------------------------------------------------

RKE2_SERVER_DIR = "/var/lib/rancher/rke2/server"
RKE2_DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
RKE2_OWN_KEY_FILE = f"{RKE2_SERVER_DIR}/tls/service.key"  # verifies RKE2-signed tokens, legacy Secret tokens too
RKE2_OWN_SIGNING_KEY_FILE = f"{RKE2_SERVER_DIR}/tls/service.current.key"

# Our files: a directory of their own below the mounted server directory (not tls/, which RKE2's
# certificate rotation manages). The boot script writes them before rke2-server starts (identity.sh).
KEY_DIR = f"{RKE2_SERVER_DIR}/rke-aws-identity"
SIGNING_KEY_FILE = f"{KEY_DIR}/signing.key"  # private key (PEM), 0600
TRUSTED_KEYS_FILE = f"{KEY_DIR}/trusted.pub"  # our public keys accepted now (PEM, one or two)

# RKE1 --------------------------------------------------------------------------------------------------

RKE1_DEFAULT_ISSUER = "rke"
# KDM's `api-audiences` for every RKE1 Kubernetes line this program deploys (getKubeAPIOptions121/124). Written
# out: with issuers set and no `api-audiences`, kube-apiserver takes the issuer list as its audiences
# (authentication.go ToAuthenticationConfig), and in-cluster tokens (requested without an audience, so for the API
# server's own) would then carry our issuer, no longer the audience RKE's tokens have always carried.
RKE1_API_AUDIENCES = "unknown"
RKE1_KEY_DIR = "/opt/rke-aws/identity"  # bound into the kube-apiserver container read-only
RKE1_SIGNING_KEY_FILE = f"{RKE1_KEY_DIR}/signing.key"
RKE1_TRUSTED_KEYS_FILE = f"{RKE1_KEY_DIR}/trusted.pub"

# Timing ------------------------------------------------------------------------------------------------

# kube-apiserver's hint to JWKS readers (pkg/serviceaccount/jwt.go): a new key must be published at
# least this long before it signs.
NEW_KEY_PUBLISHED_SECONDS = 3600
# The longest-lived token signed with a key that is being retired: the webhook's maximum
# `--token-expiration` (86400 s; aws/amazon-eks-pod-identity-webhook pkg/handler/handler.go), and the
# kubelet refreshes projected tokens at 80 % of their life or after 24 h at the latest (Kubernetes
# "Service account token volume projection"). An hour on top for STS' undocumented JWKS caching.
OLD_KEY_RETAINED_SECONDS = 86400 + 3600


@dataclass(frozen=True)
class SigningState:
    """What every server runs with while the issuer is on.

    `signer`: the public key (PEM) of our key pair that signs new tokens; None while our key is only
    trusted (RKE2's or RKE's own key still signs, under the distribution's default issuer).
    `trusted`: our public keys the servers accept and the JWKS publishes (the signer among them)."""
    issuer_url: str
    signer: str | None
    trusted: tuple[str, ...]

    def __post_init__(self) -> None:
        kids = [key_id(p) for p in self.trusted]
        if not 1 <= len(set(kids)) == len(kids) <= 2:
            raise ValueError("one or two distinct trusted keys")
        if self.signer is not None and key_id(self.signer) not in kids:
            raise ValueError("the signing key must be trusted")

    @property
    def signing(self) -> bool:
        return self.signer is not None

    def kids(self) -> tuple[str, ...]:
        return tuple(key_id(p) for p in self.trusted)


def trusted_bundle(state: SigningState) -> str:
    """The content of the trusted-keys file: the public keys, one PEM after another."""
    return "".join(p if p.endswith("\n") else p + "\n" for p in state.trusted)


def rke2_apiserver_args(state: SigningState) -> list[str]:
    """`kube-apiserver-arg` entries for /etc/rancher/rke2/config.yaml.

    Signing: our issuer first (it signs) and RKE2's default after it (tokens it issued stay valid),
    RKE2's service.key kept and our keys added, our private key signing.
    Trusting only: RKE2's default issuer stays first and keeps signing with RKE2's key; ours is
    accepted, and so are tokens signed with our keys."""
    return rke2_args(state.issuer_url, state.signing)


def rke2_args(issuer_url: str, signing: bool) -> list[str]:
    """rke2_apiserver_args by what it depends on (the user data is written before the key's PEM is known)."""
    if signing:
        return [
            f"service-account-issuer-={issuer_url}",
            f"service-account-key-file+={TRUSTED_KEYS_FILE}",
            f"service-account-signing-key-file={SIGNING_KEY_FILE}",
            f"service-account-jwks-uri={jwks_uri(issuer_url)}",
        ]
    return [
        f"service-account-issuer+={issuer_url}",
        f"service-account-key-file+={TRUSTED_KEYS_FILE}",
    ]


def rke1_kube_api(state: SigningState) -> dict[str, Any]:
    """`services.kube-api` keys for RKE1's cluster.yml (merged into what else the program sets there)."""
    return rke1_args(state.issuer_url, state.signing)


def rke1_args(issuer_url: str, signing: bool) -> dict[str, Any]:
    """rke1_kube_api by what it depends on (cluster.yml is written before the key's PEM is known).

    RKE puts every `extra_args` flag (a map: it replaces KDM's value of the same flag) before every
    `extra_args_array` flag (each value its own flag), and RKE's own `service-account-key-file` stays in the map
    (rancher/rke cluster/plan.go BuildKubeAPIProcess, appendArgs then appendArrayArgs). So, signing: our issuer
    first (it signs) and `rke` after it (accepted), our private key signing, RKE's key and ours verifying. Only
    trusting: `rke` stays the map's issuer and signs with RKE's key; ours is accepted after it."""
    arrays: dict[str, list[str]] = {"service-account-key-file": [RKE1_TRUSTED_KEYS_FILE]}
    args: dict[str, str] = {"api-audiences": RKE1_API_AUDIENCES}
    if signing:
        args |= {
            "service-account-issuer": issuer_url,
            "service-account-signing-key-file": RKE1_SIGNING_KEY_FILE,
            "service-account-jwks-uri": jwks_uri(issuer_url),
        }
        arrays["service-account-issuer"] = [RKE1_DEFAULT_ISSUER]
    else:
        arrays["service-account-issuer"] = [issuer_url]
    return {"extra_args": args, "extra_args_array": arrays, "extra_binds": [f"{RKE1_KEY_DIR}:{RKE1_KEY_DIR}:ro"]}


@dataclass(frozen=True)
class Step:
    """One state of a transition. `wait_seconds`: how long after the previous state runs on every
    server (and its JWKS is published) this one may start; `why`: what the state is for."""
    state: SigningState | None  # None: the issuer is off (the distribution's defaults alone)
    wait_seconds: int
    why: str


def transition(current: SigningState | None, issuer_url: str | None, signer: str | None,
               running: bool) -> list[Step]:
    """The states from `current` to signing with `signer` under `issuer_url` (both None: the issuer
    turned off), each to be rolled out to every server before the next. `running`: servers exist that
    run `current` (a new cluster's servers start in the final state)."""
    target = None if signer is None else SigningState(issuer_url or "", signer, (signer,))
    if target is not None and not issuer_url:
        raise ValueError("an issuer URL is needed to sign")
    if not running:
        return [] if current == target else [Step(target, 0, "new servers start in the final state")]
    steps: list[Step] = []
    state = current
    if state is not None and target is not None and state.issuer_url != target.issuer_url:
        raise ValueError("changing the issuer URL of a running cluster is not supported: turn the issuer off, "
                         "then on with the new URL")
    while state != target:
        if target is None:
            assert state is not None
            if state.signing:
                # The distribution's own key signs again; ours stay trusted for the tokens they signed.
                state = SigningState(state.issuer_url, None, state.trusted)
                steps.append(Step(state, 0, "RKE's/RKE2's own key signs again; tokens ours signed stay valid"))
            else:
                steps.append(Step(None, OLD_KEY_RETAINED_SECONDS,
                                  "our keys are no longer trusted once the last token they signed has expired"))
                state = None
            continue
        new = target.signer
        assert new is not None
        if state is None:
            state = SigningState(target.issuer_url, None, (new,))
            steps.append(Step(state, 0, "our issuer and key accepted everywhere before any server signs with them"))
        elif new not in state.trusted:
            if len(state.trusted) > 1:
                # Room for the new key: the one that no longer signs goes, once its tokens have expired.
                keep = (state.signer,) if state.signer is not None else state.trusted[-1:]
                state = SigningState(state.issuer_url, state.signer, keep)
                steps.append(Step(state, OLD_KEY_RETAINED_SECONDS,
                                  "the previous key dropped once the last token it signed has expired"))
                continue
            state = SigningState(state.issuer_url, state.signer, (*state.trusted, new))
            steps.append(Step(state, 0, "the new key published and trusted; the current one still signs"))
        elif state.signer != new:
            state = SigningState(state.issuer_url, new, state.trusted)
            steps.append(Step(state, NEW_KEY_PUBLISHED_SECONDS if len(state.trusted) > 1 else 0,
                              "the new key signs; the previous one is still trusted"))
        else:
            state = target
            steps.append(Step(state, OLD_KEY_RETAINED_SECONDS,
                              "the previous key dropped once the last token it signed has expired"))
    return steps


def published_keys(steps: Sequence[Step], index: int) -> tuple[str, ...]:
    """Our public keys the JWKS holds while step `index` rolls out: the step's own (written when the
    step starts, before any server changes)."""
    state = steps[index].state
    return () if state is None else state.trusted
