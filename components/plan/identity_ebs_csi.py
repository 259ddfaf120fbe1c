"""The EBS CSI controller on an IAM role instead of its IAM user's access key, and the order in which
a running cluster moves from one to the other without the driver losing AWS access. Pure.

Facts the order rests on:
- The chart (kubernetes-sigs/aws-ebs-csi-driver charts/aws-ebs-csi-driver 2.64.0) gives
  `awsAccessSecret` a default (`aws-secret`), and templates/controller.yaml puts AWS_ACCESS_KEY_ID and
  AWS_SECRET_ACCESS_KEY from that Secret (`optional: true`) on the controller whenever the value is
  not null. `controller.serviceAccount.annotations` goes on the controller's service account only
  (templates/serviceaccount-csi-controller.yaml); neither value touches the node DaemonSet, so
  changing them restarts no node plugin and detaches no volume.
- The driver builds its AWS client with the SDK's default chain (pkg/cloud/cloud.go,
  `config.LoadDefaultConfig`), which takes static keys from the environment before a web identity
  token (aws-sdk-go-v2 config/resolve_credentials.go `resolveCredentialChain`): while the key env is
  on the pod, the role is not used, and a pod keeps the key it started with (env is resolved when a
  container starts; deleting the Secret changes no running pod).
- The webhook adds the role's env and token when a pod is created, from the annotation its service
  account has then; an annotation added later reaches pods created afterwards.
- The controller Deployment has 2 replicas, `maxUnavailable: 1` and leader election (values.yaml):
  a rollout replaces one pod at a time.
- Pulumi applies creations and updates in dependency order and deletes removed resources after
  them (pulumi/pulumi pkg/resource/deploy: deletes are scheduled once every other step is done), and
  a Helm release update waits for its rollout by default.

So, with the issuer ready (every API server signs with its key, its documents published, the OIDC
provider and the webhook in place), one update moves a running cluster: the role is created, the
release update annotates the service account and drops the key env (pods restart one by one onto the
role), and the access key, its user and Secret are deleted last. Without the issuer ready, the update
only prepares (role, annotation; the key keeps serving) and the move completes in a later update.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from .ccm_values import CcmValues
from .identity_roles import ROLE_ARN_ANNOTATION

SERVICE_ACCOUNT = ("kube-system", "ebs-csi-controller-sa")  # the chart's controller.serviceAccount.name


@dataclass(frozen=True)
class EbsCredentials:
    """The EBS CSI controller's AWS credentials as they stand after an update (kept in the stack's
    outputs for the next one)."""
    user_key: bool  # IAM user, its access key, and the Secret (or SecureString manifest) holding it
    role: bool  # IAM role trusting the controller's service account
    annotated: bool  # the controller's service account names the role
    key_env: bool  # the controller's pods read the key from the Secret (awsAccessSecret set)


ON_KEY = EbsCredentials(user_key=True, role=False, annotated=False, key_env=True)
ON_ROLE = EbsCredentials(user_key=False, role=True, annotated=True, key_env=False)


@dataclass(frozen=True)
class Step:
    """`create-role`, `create-key`, `release` (values for `annotated`/`key_env`), `delete-key`,
    `delete-role`, in the order the update performs them."""
    kind: str
    annotated: bool = False
    key_env: bool = False


@dataclass(frozen=True)
class Update:
    steps: tuple[Step, ...]
    result: EbsCredentials
    note: str = ""


def plan_update(previous: EbsCredentials | None, irsa: bool, issuer_ready: bool) -> Update:
    """What this update does to the controller's credentials. `previous`: after the last update (None:
    the driver is not installed yet). `issuer_ready`: before this update starts, every API server signs
    with the cluster's key under its issuer (the publication, provider and webhook may be created in
    this same update, ahead of the release)."""
    if previous is None:
        if irsa:
            return Update((Step("create-role"), Step("release", annotated=True, key_env=False)), ON_ROLE,
                          "" if issuer_ready else "the driver has no AWS access until the servers sign with the "
                                                  "cluster's key")
        return Update((Step("create-key"), Step("release", annotated=False, key_env=True)), ON_KEY)
    state, steps = previous, []
    if irsa:
        if not state.role:
            steps.append(Step("create-role"))
            state = replace(state, role=True)
        if not issuer_ready:
            if state.user_key and (not state.annotated or not state.key_env):
                steps.append(Step("release", annotated=True, key_env=True))
                state = replace(state, annotated=True, key_env=True)
            elif not state.annotated:
                steps.append(Step("release", annotated=True, key_env=state.key_env))
                state = replace(state, annotated=True)
            return Update(tuple(steps), state,
                          "the access key stays until every API server signs with the cluster's key"
                          if state.user_key else "")
        if not state.annotated or state.key_env:
            steps.append(Step("release", annotated=True, key_env=False))
            state = replace(state, annotated=True, key_env=False)
        if state.user_key:
            steps.append(Step("delete-key"))
            state = replace(state, user_key=False)
        return Update(tuple(steps), state)
    if not state.user_key:
        steps.append(Step("create-key"))
        state = replace(state, user_key=True)
    if state.annotated or not state.key_env:
        steps.append(Step("release", annotated=False, key_env=True))
        state = replace(state, annotated=False, key_env=True)
    if state.role:
        steps.append(Step("delete-role"))
        state = replace(state, role=False)
    return Update(tuple(steps), state)


def release_values(base: Mapping[str, Any], role_arn: str | None, annotated: bool, key_env: bool) -> CcmValues:
    """The chart values for a release step: `base` is components/cluster/ebs_csi.values(...) (which
    names the key's Secret in awsAccessSecret). Without the key env, awsAccessSecret is deleted with
    a null (a YAML value file: the Python SDK drops None from `values`, domain.md section 4); the
    merged document (HelmChart valuesContent) carries the null as well."""
    out = copy.deepcopy(dict(base))
    nulls: dict[str, Any] | None = None
    if not key_env:
        out.pop("awsAccessSecret", None)
        nulls = {"awsAccessSecret": None}
    if annotated:
        if not role_arn:
            raise ValueError("annotating the service account needs the role's ARN")
        controller = out.setdefault("controller", {})
        sa = controller.setdefault("serviceAccount", {})
        sa["annotations"] = {**sa.get("annotations", {}), ROLE_ARN_ANNOTATION: role_arn}
    return CcmValues(out, nulls)
