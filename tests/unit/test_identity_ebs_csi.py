"""The EBS CSI controller's move from its access key to a role (components/plan/identity_ebs_csi.py), judged
over day-2 sequences (base -> change -> next change) on a model of the cluster built from upstream
facts, not from the module:
- the controller's pods get the key env from the Secret when they start (`optional: true`: none if
  the Secret is missing), and the webhook's role env when they are created while their service
  account carries the annotation (charts/aws-ebs-csi-driver templates/controller.yaml; the pod identity
  webhook mutates pods on CREATE);
- a pod with both uses the key (aws-sdk-go-v2 config/resolve_credentials.go: environment static
  keys come before web identity);
- the role works only once the servers sign with the cluster's key (STS verifies against the
  published JWKS; tests/unit/test_identity_token.py);
- a Helm upgrade updates the ServiceAccount before the Deployment (Helm's kind install order), and
  the Deployment rolls one pod at a time (2 replicas, maxUnavailable 1);
- Pulumi deletes removed resources after every creation and update of the run.
At every moment every running controller pod must hold working credentials; and the values a release
step changes must touch the controller only (no node plugin restart: no volume detaches)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from rke_aws.plan import identity_ebs_csi as ebs_csi
from rke_aws.plan.identity_ebs_csi import ON_KEY, ON_ROLE, EbsCredentials, Step, plan_update

ROLE_ARN = "arn:aws:iam::123456789012:role/rke-aws-c1-ebs-csi"
# The values a release step may change, and the chart templates that read them
# (aws-ebs-csi-driver@429e202e: `git grep awsAccessSecret\|serviceAccount.annotations charts/.../templates`).
CONTROLLER_ONLY = {"awsAccessSecret": "controller.yaml", "controller.serviceAccount.annotations":
                   "serviceaccount-csi-controller.yaml"}
BASE = {"awsAccessSecret": {"name": "aws-ebs-csi-driver-credentials", "keyId": "key_id", "accessKey": "access_key"},
        "controller": {"region": "us-east-1", "k8sTagClusterId": "c1"}, "node": {"hostNetwork": True}}


@dataclass
class Pod:
    key_env: bool
    web_identity: bool


@dataclass
class Cluster:
    iam_key: bool
    secret: bool
    role: bool
    annotated: bool
    template_key_env: bool
    issuer_ready: bool = False
    pods: list[Pod] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @classmethod
    def from_state(cls, s: EbsCredentials, issuer_ready: bool) -> Cluster:
        c = cls(s.user_key, s.user_key, s.role, s.annotated, s.key_env, issuer_ready)
        c.pods = [c.new_pod() for _ in range(2)]
        return c

    def new_pod(self) -> Pod:
        return Pod(key_env=self.template_key_env and self.secret, web_identity=self.annotated)

    def works(self, pod: Pod) -> bool:
        if pod.key_env:
            return self.iam_key
        return pod.web_identity and self.role and self.issuer_ready

    def check(self, when: str) -> None:
        for i, pod in enumerate(self.pods):
            if not self.works(pod):
                self.failures.append(f"{when}: controller pod {i} has no working credentials ({pod})")

    def apply(self, step: Step) -> None:
        if step.kind == "create-role":
            self.role = True
        elif step.kind == "create-key":
            self.iam_key = self.secret = True
        elif step.kind == "delete-key":
            self.iam_key = self.secret = False
        elif step.kind == "delete-role":
            self.role = False
        elif step.kind == "release":
            self.annotated = step.annotated  # ServiceAccount first
            if step.key_env != self.template_key_env:
                self.template_key_env = step.key_env
                for i in range(len(self.pods)):  # one at a time
                    self.pods[i] = self.new_pod()
                    self.check(f"rollout, pod {i} replaced")
        else:
            raise AssertionError(step.kind)
        self.check(f"after {step.kind}")

    def state(self) -> EbsCredentials:
        return EbsCredentials(self.iam_key, self.role, self.annotated, self.template_key_env)


def changed_paths(a: dict, b: dict, prefix: str = "") -> set[str]:
    out = set()
    for k in set(a) | set(b):
        path = f"{prefix}{k}"
        if (isinstance(a.get(k), dict) or isinstance(b.get(k), dict)) and path not in CONTROLLER_ONLY:
            out |= changed_paths(a.get(k) or {}, b.get(k) or {}, path + ".")
        elif a.get(k) != b.get(k):
            out.add(path)
    return out


def run(start: EbsCredentials, updates: list[tuple[bool, bool]]) -> tuple[Cluster, list[ebs_csi.Update]]:
    """Each update: (irsa wanted, issuer ready before it starts). The previous update's result is the
    next one's `previous`, as the stack's outputs carry it."""
    cluster = Cluster.from_state(start, updates[0][1] if updates else False)
    previous, plans = start, []
    values = ebs_csi.release_values(BASE, ROLE_ARN, start.annotated, start.key_env).merged_for_manifest()
    for irsa, ready in updates:
        cluster.issuer_ready = ready
        cluster.check("update starts")
        plan = plan_update(previous, irsa, ready)
        for step in plan.steps:
            if step.kind == "release":
                new = ebs_csi.release_values(BASE, ROLE_ARN, step.annotated, step.key_env).merged_for_manifest()
                assert changed_paths(values, new) <= set(CONTROLLER_ONLY), changed_paths(values, new)
                values = new
            cluster.apply(step)
        kinds = [s.kind for s in plan.steps]
        assert all(kinds.index(d) > max((kinds.index(k) for k in kinds if not k.startswith("delete")), default=-1)
                   for d in kinds if d.startswith("delete")), f"deletes come last: {kinds}"
        assert plan.result == cluster.state()
        previous = plan.result
        plans.append(plan)
    return cluster, plans


def test_key_to_role_across_the_issuers_roll_out():
    """Update 1 turns the issuer on while the servers still roll (not ready): the role and annotation
    are prepared, the key keeps serving. Update 2 (servers sign): pods move to the role, then the key
    goes. Update 3 changes nothing."""
    cluster, plans = run(ON_KEY, [(True, False), (True, True), (True, True)])
    assert cluster.failures == []
    assert [s.kind for s in plans[0].steps] == ["create-role", "release"] and plans[0].result.user_key
    assert [s.kind for s in plans[1].steps] == ["release", "delete-key"]
    assert plans[1].result == ON_ROLE and plans[2].steps == ()


def test_key_to_role_in_one_update_when_the_issuer_is_ready():
    cluster, plans = run(ON_KEY, [(True, True)])
    assert cluster.failures == [] and plans[0].result == ON_ROLE
    assert [s.kind for s in plans[0].steps] == ["create-role", "release", "delete-key"]


def test_role_back_to_key_and_on_again():
    cluster, plans = run(ON_ROLE, [(False, True), (True, True)])
    assert cluster.failures == []
    assert [s.kind for s in plans[0].steps] == ["create-key", "release", "delete-role"] and plans[0].result == ON_KEY
    assert plans[1].result == ON_ROLE


def test_new_clusters_start_where_they_end():
    assert plan_update(None, True, True).result == ON_ROLE
    assert plan_update(None, False, False).result == ON_KEY
    assert "no AWS access" in plan_update(None, True, False).note


@pytest.mark.parametrize("bad", [
    [Step("create-role"), Step("delete-key"), Step("release", annotated=True, key_env=False)],  # key gone first
    [Step("create-role"), Step("release", annotated=True, key_env=False)],  # role not yet trusted by STS
])
def test_the_model_catches_unsafe_orders(bad):
    cluster = Cluster.from_state(ON_KEY, issuer_ready="delete-key" in [s.kind for s in bad])
    for step in bad:
        cluster.apply(step)
    assert cluster.failures


def test_release_values_drop_the_key_with_a_null_and_name_the_role():
    v = ebs_csi.release_values(BASE, ROLE_ARN, annotated=True, key_env=False)
    assert "awsAccessSecret" not in v.values and v.null_overrides == {"awsAccessSecret": None}
    assert v.values["controller"]["serviceAccount"]["annotations"] == {"eks.amazonaws.com/role-arn": ROLE_ARN}
    assert v.merged_for_manifest()["awsAccessSecret"] is None
    assert "awsAccessSecret: null" in v.overrides_yaml()
    keyed = ebs_csi.release_values(BASE, None, annotated=False, key_env=True)
    assert keyed.values["awsAccessSecret"] == BASE["awsAccessSecret"] and keyed.null_overrides is None
    with pytest.raises(ValueError):
        ebs_csi.release_values(BASE, None, annotated=True, key_env=False)
