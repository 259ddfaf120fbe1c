"""The Kubernetes provider survives a kubeconfig change: a new CA, another server address or a renamed
context must not replace it, because a replaced Provider replaces every Release, Secret and custom
resource it manages (the CCM would be uninstalled and installed again).

The replacement rule is pulumi-kubernetes' own, provider/pkg/provider/provider.go `DiffConfig` (read
at 94977969, v4.32.0+27; `clusterIdentifier` since #3068, v4.16), written out below as a model and
applied to what the program registers in two runs with different kubeconfigs.
"""

from __future__ import annotations

import copy

import yaml

from rke_aws.cluster import ccm
from rke_aws_offline.engine import harness
from tests.support.configs import set_key

PROVIDER = "pulumi:providers:kubernetes"
KUBECONFIG_KEY = "rke-aws:kubeconfig"


def kubeconfig(server: str, ca: str, context: str, cluster: str = "default") -> str:
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": cluster, "cluster": {"server": server, "certificate-authority-data": ca}}],
        "contexts": [{"name": context, "context": {"cluster": cluster, "user": "admin"}}],
        "users": [{"name": "admin", "user": {"client-certificate-data": "Y2VydA==", "client-key-data": "a2V5"}}],
    })


BEFORE = kubeconfig("https://api.rke2-prod.rke-aws.internal:6443", "Q0EtMQ==", "default")
# Everything that identifies the active cluster changes: server, CA, context and cluster names.
AFTER = kubeconfig("https://10.50.0.10:6443", "Q0EtMg==", "admin@rke2-prod", cluster="rke2-prod")


def _active_cluster(inputs: dict) -> tuple[bool, dict]:
    """util.go getActiveClusterFromConfig: the cluster entry of the current (or `context`) context."""
    try:
        doc = yaml.safe_load(inputs.get("kubeconfig") or "")
    except yaml.YAMLError:
        return False, {}
    if not isinstance(doc, dict) or not doc.get("clusters"):
        return False, {}
    context_name = inputs.get("context") or doc.get("current-context")
    context = next((c.get("context") for c in doc.get("contexts") or [] if c.get("name") == context_name), None)
    if not context:
        return False, {}
    cluster_name = inputs.get("cluster") or context.get("cluster")
    cluster = next((c.get("cluster") for c in doc["clusters"] if c.get("name") == cluster_name), None)
    return (True, cluster) if cluster is not None else (False, {})


def diff_config_replaces(olds: dict, news: dict) -> list[str]:
    """provider.go DiffConfig, the replacement decision: a changed clusterIdentifier replaces; the same
    identifier, present in the new inputs, clears every other replacement (`diff.Same(...) &&
    news.HasValue(...)`); otherwise a changed active cluster replaces through whichever of kubeconfig,
    context and cluster changed. Adding or removing the identifier replaces nothing by itself."""
    if olds == news:
        return []
    ident = "clusterIdentifier"
    replaces = [ident] if ident in olds and ident in news and olds[ident] != news[ident] else []
    keep = ident in news and olds.get(ident) == news.get(ident)
    changed = [k for k in olds.keys() | news.keys() if olds.get(k) != news.get(k)]
    (old_found, old_cluster), (new_found, new_cluster) = _active_cluster(olds), _active_cluster(news)
    if old_found and new_found and old_cluster != new_cluster:
        replaces += [k for k in ("kubeconfig", "context", "cluster") if k in changed]
    return [] if keep else replaces


_RUNS: dict[tuple[str, str | None], harness.ProgramRun] = {}


def run(kube: str, previous: str | None = None) -> harness.ProgramRun:
    """The program with kubeconfig `kube`, first (`previous` None) or after the first run with kubeconfig
    `previous`: each run once per module (tests read runs, never change them)."""
    key = (kube, previous)
    if key not in _RUNS:
        cfg = set_key(copy.deepcopy(harness.stack_config("rke2-prod")), "kubeconfig", kube)
        cfg = set_key(cfg, "addons", {"ebsCsi": True})
        _RUNS[key] = harness.run_program(cfg, stack="rke2-prod", secret_keys=[KUBECONFIG_KEY],
                                         previous_outputs=run(previous).outputs if previous else None)
    return _RUNS[key]


def managed(r: harness.ProgramRun, provider_urn: str) -> dict[str, str]:
    """Every resource the Kubernetes provider manages: URN -> provider reference."""
    return {x.urn: x.provider for x in r.resources if x.provider.startswith(provider_urn + "::")}


def test_the_provider_has_a_stable_identifier_per_cluster():
    r = run(BEFORE)
    (provider,) = r.of_type(PROVIDER)
    assert provider.inputs["clusterIdentifier"] == ccm.cluster_identifier("rke2-prod") == "rke-aws/rke2-prod"
    assert ccm.cluster_identifier("other") != ccm.cluster_identifier("rke2-prod")


def test_a_changed_kubeconfig_keeps_the_provider_and_everything_it_manages():
    before = run(BEFORE)
    after = run(AFTER, previous=BEFORE)
    (old,), (new,) = before.of_type(PROVIDER), after.of_type(PROVIDER)
    assert old.urn == new.urn
    assert new.inputs["kubeconfig"] != old.inputs["kubeconfig"], "the test must change the kubeconfig"
    assert _active_cluster(old.inputs)[1] != _active_cluster(new.inputs)[1]
    assert new.inputs["clusterIdentifier"] == old.inputs["clusterIdentifier"]
    assert diff_config_replaces(old.inputs, new.inputs) == [], "pulumi-kubernetes would replace the Provider"
    children_before, children_after = managed(before, old.urn), managed(after, new.urn)
    kinds = {x.type for x in after.resources if x.urn in children_after}
    assert {"kubernetes:helm.sh/v3:Release", "kubernetes:upgrade.cattle.io/v1:Plan"} <= kinds, kinds
    assert children_after == children_before  # same URNs, same provider reference (URN::ID, kept by an update)


def test_without_the_identifier_the_same_change_would_replace_the_provider():
    """What the test above guards against: pulumi-kubernetes' rule without clusterIdentifier."""
    before, after = run(BEFORE), run(AFTER)
    (old,), (new,) = before.of_type(PROVIDER), after.of_type(PROVIDER)
    strip = lambda i: {k: v for k, v in i.items() if k != "clusterIdentifier"}  # noqa: E731
    assert diff_config_replaces(strip(old.inputs), strip(new.inputs)) == ["kubeconfig"]
    # only the context name changes: the active cluster is the same entry, nothing is replaced either way
    renamed = kubeconfig("https://api.rke2-prod.rke-aws.internal:6443", "Q0EtMQ==", "renamed")
    assert _active_cluster({"kubeconfig": renamed}) == _active_cluster(old.inputs)
    assert diff_config_replaces(strip(old.inputs), {**strip(old.inputs), "kubeconfig": renamed}) == []
    new_ca = kubeconfig("https://api.rke2-prod.rke-aws.internal:6443", "Q0EtMg==", "default")
    assert diff_config_replaces(strip(old.inputs), {**strip(old.inputs), "kubeconfig": new_ca}) == ["kubeconfig"]


def test_adding_the_identifier_to_an_existing_provider_is_an_update():
    """Stacks deployed before the identifier have a Provider without it. DiffConfig replaces on a
    changed identifier only (`diff.Updated`, not `diff.Added`), so the first update of this program
    updates the Provider in place, as long as the kubeconfig's active cluster stays as it was in that
    same update (README: "The Kubernetes provider")."""
    before = run(BEFORE)
    (old,) = before.of_type(PROVIDER)
    deployed = {k: v for k, v in old.inputs.items() if k != "clusterIdentifier"}  # what older stacks hold
    (new,) = run(BEFORE, previous=BEFORE).of_type(PROVIDER)
    assert diff_config_replaces(deployed, new.inputs) == []
    (changed,) = run(AFTER, previous=BEFORE).of_type(PROVIDER)
    assert diff_config_replaces(deployed, changed.inputs) == ["kubeconfig"]  # the one update to avoid
