"""kube-apiserver's service-account flags for the issuer (components/plan/identity_apiserver.py), read the
way RKE2 and RKE1 really build the command line, and the order of states that turns the issuer on,
rotates its key and turns it off: at every moment of a server-by-server roll, every live token is
accepted by every server, and by STS when it names our issuer.

The command lines are rebuilt here from upstream's rules, not from the module:
- RKE2: k3s pkg/util/args.go `GetArgs` (as read at k3s-io/k3s, the version rke2@6ce1a801 pins): an
  extra `k=v` replaces the default (values of a repeated key accumulate in order), `k+=v` appends after
  the default, `k-=v` puts the value first; output sorted by key, repeated keys in order. Defaults:
  k3s pkg/daemons/control/server.go `apiServer`.
- RKE1: rancher/rke cluster/plan.go: the map args (defaults overridden by `extra_args`) first, then
  every `extra_args_array` value as its own flag.
- Flags: `--service-account-issuer` and `--service-account-key-file` repeat (the first issuer signs,
  all are accepted; every key in every file verifies); `--service-account-signing-key-file` is a
  single value (kubernetes pkg/kubeapiserver/options/authentication.go).
"""

from __future__ import annotations

import pytest

from rke_aws.plan import identity_apiserver as api
from rke_aws.plan import identity_issuer as issuer
from tests.support import sts

ISSUER = "https://rke-aws-irsa-c1.s3.us-east-1.amazonaws.com"
K1, K2, K3 = (sts.public_pem(sts.new_key()) for _ in range(3))
KID = {p: issuer.key_id(p) for p in (K1, K2, K3)}

# k3s pkg/daemons/control/server.go apiServer, the service-account part (cluster domain cluster.local).
RKE2_DEFAULTS = {
    "service-account-issuer": "https://kubernetes.default.svc.cluster.local",
    "service-account-key-file": "/var/lib/rancher/rke2/server/tls/service.key",
    "service-account-signing-key-file": "/var/lib/rancher/rke2/server/tls/service.current.key",
    "api-audiences": "https://kubernetes.default.svc.cluster.local,rke2",
}
RKE_KEY = "/etc/kubernetes/ssl/kube-service-account-token-key.pem"
# rancher/rke cluster/plan.go (service-account-key-file) and KDM 1.21+ (the rest).
RKE1_DEFAULTS = {"service-account-issuer": "rke", "service-account-key-file": RKE_KEY,
                 "service-account-signing-key-file": RKE_KEY, "api-audiences": "unknown"}


def k3s_get_args(initial: dict[str, str], extra: list[str]) -> list[str]:
    initial = dict(initial)
    multi: dict[str, list[str]] = {}
    for raw in extra:
        arg, _, value = raw.removeprefix("--").partition("=")
        value = value if "=" in raw else "true"
        clean = arg.rstrip("-+")
        init = initial.get(clean)
        existing = multi.get(clean)
        if arg.endswith("+"):
            new = ([init] if init is not None else []) + (existing or []) + [value]
        elif arg.endswith("-"):
            new = [value] + ([init] if init is not None else []) + (existing or [])
        else:
            new = (existing or []) + [value]
        initial.pop(clean, None)
        multi[clean] = new
    for k, v in initial.items():
        multi[k] = [v]
    return [f"--{k}={v}" for k in sorted(multi) for v in multi[k]]


def rke_command(extra_args: dict[str, str], extra_args_array: dict[str, list[str]]) -> list[str]:
    args = {**RKE1_DEFAULTS, **extra_args}
    return [f"--{k}={v}" for k, v in args.items()] + [f"--{k}={v}" for k, vs in extra_args_array.items() for v in vs]


def flag(args: list[str], name: str) -> list[str]:
    return [a.split("=", 1)[1] for a in args if a.startswith(f"--{name}=")]


def test_getargs_model_matches_the_documented_examples():
    """The three forms as rke2-docs (reference/server_config.md) and k3s' unit tests describe them."""
    d = {"a": "x"}
    assert k3s_get_args(d, ["a=y"]) == ["--a=y"]
    assert k3s_get_args(d, ["a+=y"]) == ["--a=x", "--a=y"]
    assert k3s_get_args(d, ["a-=y"]) == ["--a=y", "--a=x"]
    assert k3s_get_args(d, ["a=y", "a=z"]) == ["--a=y", "--a=z"]
    assert k3s_get_args(d, ["a-=y", "a+=z"]) == ["--a=y", "--a=x", "--a=z"]


def test_rke2_signing_puts_our_issuer_first_and_keeps_rke2s():
    state = api.SigningState(ISSUER, K1, (K1,))
    args = k3s_get_args(RKE2_DEFAULTS, api.rke2_apiserver_args(state))
    assert flag(args, "service-account-issuer") == [ISSUER, RKE2_DEFAULTS["service-account-issuer"]]
    assert flag(args, "service-account-key-file") == [RKE2_DEFAULTS["service-account-key-file"], api.TRUSTED_KEYS_FILE]
    assert flag(args, "service-account-signing-key-file") == [api.SIGNING_KEY_FILE]
    assert flag(args, "service-account-jwks-uri") == [ISSUER + "/openid/v1/jwks"]
    assert flag(args, "api-audiences") == [RKE2_DEFAULTS["api-audiences"]]  # untouched


def test_rke2_trusting_only_keeps_rke2_signing():
    args = k3s_get_args(RKE2_DEFAULTS, api.rke2_apiserver_args(api.SigningState(ISSUER, None, (K1,))))
    assert flag(args, "service-account-issuer") == [RKE2_DEFAULTS["service-account-issuer"], ISSUER]
    assert flag(args, "service-account-signing-key-file") == [RKE2_DEFAULTS["service-account-signing-key-file"]]
    assert flag(args, "service-account-key-file")[-1] == api.TRUSTED_KEYS_FILE


def test_plain_key_value_would_have_dropped_rke2s_issuer_and_key():
    """Why `-=`/`+=`: `service-account-issuer=<ours>` replaces RKE2's issuer, and every token issued
    before (and legacy Secret tokens, signed with service.current.key) would stop validating."""
    args = k3s_get_args(RKE2_DEFAULTS, [f"service-account-issuer={ISSUER}", f"service-account-key-file={api.TRUSTED_KEYS_FILE}"])
    assert flag(args, "service-account-issuer") == [ISSUER]
    assert RKE2_DEFAULTS["service-account-key-file"] not in flag(args, "service-account-key-file")


def test_key_files_are_inside_the_directory_the_apiserver_pod_mounts():
    """rancher/rke2 pkg/executor/staticpod/staticpod.go APIServer mounts <data-dir>/server whole; tls/
    is RKE2's own (certificate rotation), so ours sit beside it."""
    for path in (api.SIGNING_KEY_FILE, api.TRUSTED_KEYS_FILE):
        assert path.startswith(api.RKE2_SERVER_DIR + "/") and "/tls/" not in path
    rke1 = api.rke1_kube_api(api.SigningState(ISSUER, K1, (K1,)))
    assert f"{api.RKE1_KEY_DIR}:{api.RKE1_KEY_DIR}:ro" in rke1["extra_binds"]


def test_rke1_signing_and_trusting():
    sign = api.rke1_kube_api(api.SigningState(ISSUER, K1, (K1,)))
    cmd = rke_command(sign.get("extra_args", {}), sign["extra_args_array"])
    assert flag(cmd, "service-account-issuer") == [ISSUER, "rke"]
    assert flag(cmd, "service-account-key-file") == [RKE_KEY, api.RKE1_TRUSTED_KEYS_FILE]
    assert flag(cmd, "service-account-signing-key-file") == [api.RKE1_SIGNING_KEY_FILE]
    assert flag(cmd, "api-audiences") == ["unknown"]
    trust = api.rke1_kube_api(api.SigningState(ISSUER, None, (K1,)))
    cmd = rke_command(trust.get("extra_args", {}), trust["extra_args_array"])
    assert flag(cmd, "service-account-issuer") == ["rke", ISSUER]
    assert flag(cmd, "service-account-signing-key-file") == [RKE_KEY]


# --- transitions, rolled out server by server ----------------------------------------------------------

RKE2_KEY = "rke2-own-key"
LIFETIME = api.OLD_KEY_RETAINED_SECONDS - 3600  # the longest token: 24 h
ROLL_SECONDS = 600  # one server replaced


def server(state: api.SigningState | None) -> dict:
    """What a server started with `state` signs with and accepts, from its command line and files."""
    args = k3s_get_args(RKE2_DEFAULTS, api.rke2_apiserver_args(state) if state else [])
    files = {RKE2_DEFAULTS["service-account-key-file"]: {RKE2_KEY},
             RKE2_DEFAULTS["service-account-signing-key-file"]: RKE2_KEY}
    if state:
        files[api.TRUSTED_KEYS_FILE] = {KID[p] for p in state.trusted}
        if state.signer:
            files[api.SIGNING_KEY_FILE] = KID[state.signer]
    issuers = flag(args, "service-account-issuer")
    (signing_file,) = flag(args, "service-account-signing-key-file")
    return {"iss": issuers[0], "key": files[signing_file], "issuers": set(issuers),
            "keys": set().union(*(files[f] for f in flag(args, "service-account-key-file")))}


def violations(current: api.SigningState | None, steps: list[api.Step], servers: int = 3) -> list[str]:
    """Roll each step out one server at a time; return every moment a live token is refused."""
    fleet = [current] * servers
    published = current.kids() if current else ()
    now, live, found = 0, [], []

    def check(when: str) -> None:
        nodes = [server(s) for s in fleet]
        for n in nodes:
            live.append((now, n["iss"], n["key"]))
        live[:] = [t for t in live if t[0] > now - LIFETIME]
        for minted, iss, key in live:
            for i, n in enumerate(nodes):
                if iss not in n["issuers"] or key not in n["keys"]:
                    found.append(f"{when}: server {i} refuses a token ({iss}, {key}) minted at {minted}")
            if iss == ISSUER and key not in published:
                found.append(f"{when}: STS refuses a token signed with {key}: not in the JWKS")

    check("start")
    for n, step in enumerate(steps):
        # the previous state must run for the step's wait before it begins: tokens keep being minted
        for t in range(0, step.wait_seconds, 3600):
            now += min(3600, step.wait_seconds - t)
            check(f"waiting for step {n}")
        published = step.state.kids() if step.state else ()  # the JWKS is written first
        for i in range(servers):
            fleet[i] = step.state
            now += ROLL_SECONDS
            check(f"step {n}, {i + 1} of {servers} servers")
    return found


CASES = {
    "enable on a running cluster": (None, K1),
    "rotate": (api.SigningState(ISSUER, K1, (K1,)), K2),
    "turn off": (api.SigningState(ISSUER, K1, (K1,)), None),
    "rotate again mid-rotation": (api.SigningState(ISSUER, K2, (K1, K2)), K3),
    "resume a rotation": (api.SigningState(ISSUER, K1, (K1, K2)), K2),
    "turn off mid-rotation": (api.SigningState(ISSUER, K2, (K1, K2)), None),
}


@pytest.mark.parametrize("case", CASES)
def test_every_transition_keeps_every_live_token_valid(case):
    current, signer = CASES[case]
    steps = api.transition(current, ISSUER if signer else None, signer, running=True)
    assert steps, case
    final = steps[-1].state
    assert (final is None) if signer is None else (final == api.SigningState(ISSUER, signer, (signer,)))
    assert violations(current, steps) == []


def test_the_documented_rotation_sequence():
    """kops docs/operations/rotate-secrets.md: create (trust), promote (sign), distrust; the new key
    published an hour before it signs (jwt.go's JWKS hint), the old one kept 24 h + 1 h after."""
    steps = api.transition(api.SigningState(ISSUER, K1, (K1,)), ISSUER, K2, running=True)
    assert [(s.state.signer, s.state.trusted, s.wait_seconds) for s in steps] == [
        (K1, (K1, K2), 0),
        (K2, (K1, K2), api.NEW_KEY_PUBLISHED_SECONDS),
        (K2, (K2,), api.OLD_KEY_RETAINED_SECONDS),
    ]
    assert api.published_keys(steps, 0) == (K1, K2)
    assert issuer.jwks(list(api.published_keys(steps, 1)))["keys"].__len__() == 2


def test_the_checker_catches_unsafe_orders():
    """Without the trust step, or without the wait, tokens are refused mid-roll: the checker sees it."""
    direct = [api.Step(api.SigningState(ISSUER, K1, (K1,)), 0, "sign at once")]
    assert violations(None, direct)
    hasty = [api.Step(s.state, 0, s.why) for s in api.transition(api.SigningState(ISSUER, K1, (K1,)), ISSUER, K2, True)]
    assert any("refuses" in v for v in violations(api.SigningState(ISSUER, K1, (K1,)), hasty))


def test_new_clusters_start_in_the_final_state():
    steps = api.transition(None, ISSUER, K1, running=False)
    assert [s.state for s in steps] == [api.SigningState(ISSUER, K1, (K1,))]
    assert api.transition(api.SigningState(ISSUER, K1, (K1,)), ISSUER, K1, running=True) == []
    with pytest.raises(ValueError, match="issuer URL"):
        api.transition(api.SigningState(ISSUER, K1, (K1,)), "https://other.example.com", K1, running=True)


def test_signing_state_rules():
    with pytest.raises(ValueError):
        api.SigningState(ISSUER, K2, (K1,))
    with pytest.raises(ValueError):
        api.SigningState(ISSUER, K1, (K1, K2, K3))
    assert api.trusted_bundle(api.SigningState(ISSUER, K1, (K1, K2))).count("BEGIN PUBLIC KEY") == 2
