"""The sections of what runs with and in the cluster: `ccm`, `controlPlane`, `etcdBackup`, `addons`,
`ingress` (settings/sections.py composes them into ClusterKeys)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from . import versions
from .fields import (
    BUCKET_PATTERN,
    CHART_VERSION_PATTERN,
    DEFAULT_BACKUP_EXPIRE_DAYS,
    DEFAULT_BACKUP_INTERVAL_HOURS,
    DEFAULT_BACKUP_RETENTION,
    DEFAULT_CCM_CHART_VERSION,
    DEFAULT_CCM_INSTALL,
    DEFAULT_ENDPOINT,
    DEFAULT_INGRESS_CONTROLLER,
    FLAG_ITEM_PATTERN,
    FOLDER_PATTERN,
    HOURS,
    IMAGE_PATTERN,
    KMS_KEY_ARN_PATTERN,
    Bool,
    Hours,
    Msg,
    NonEmpty,
    OrUnset,
    SchemaPattern,
    Whole,
    bucket_why,
    folder_why,
    image_why,
    kms_why,
)
from .section import Section


class Ccm(Section):
    """ccm: the aws-cloud-controller-manager."""

    chart_version: Annotated[str, NonEmpty(CHART_VERSION_PATTERN), Msg(what="a chart version like 0.0.11", reason="the version this program's Helm values are written against")] = Field(
        DEFAULT_CCM_CHART_VERSION, description="aws-cloud-controller-manager chart version.")
    leader_migration: Annotated[Bool, Msg()] = Field(
        False, description="In-tree to out-of-tree migration phase (Kubernetes 1.26 and older only).")
    extra_args: Annotated[tuple[Annotated[str, SchemaPattern(FLAG_ITEM_PATTERN)], ...], Msg(what="flags like --v=4", type_name="list")] = Field(
        (), description="Extra CCM flags, one --name=value each (ASCII, no spaces; not the flags this program sets).")
    # Unset: settings/resolve.py decides (ccm_install: what runs, else DEFAULT_CCM_INSTALL per distribution).
    install: OrUnset[Annotated[Literal["helm", "manifest"], Msg(
        kind="an install mode", default=f"new RKE2 stacks: `{DEFAULT_CCM_INSTALL['rke2']}`; RKE1: "
                                        f"`{DEFAULT_CCM_INSTALL['rke']}`; running stacks: what they run",
        reason="one `pulumi up` converges and needs no way into the cluster")]] = Field(
        None,
        description="manifest: RKE2 manifests mirrored from SSM instead of a Release.")
    image: OrUnset[Annotated[str, NonEmpty(IMAGE_PATTERN), Msg(
        what="an image reference pinned by a tag other than latest and/or an @sha256: digest, like "
             "registry.k8s.io/provider-aws/cloud-controller-manager:v1.33.4",
        default="by minor", type_name="image ref", why=image_why)]] = Field(
        None, description="CCM image repository:tag (or @sha256:digest) instead of versions.CCM_IMAGE_TAGS; not latest.")

    def image_for(self, kubernetes_minor: int) -> str:
        """The CCM image: ccm.image, or the release versions.CCM_IMAGE_TAGS names for the cluster's minor."""
        return self.image or f"{versions.CCM_IMAGE_REPOSITORY}:{versions.CCM_IMAGE_TAGS[kubernetes_minor]}"


class ControlPlane(Section):
    """controlPlane: how nodes and clients reach the servers."""

    endpoint: Annotated[Literal["dns", "nlb"], Msg(kind="an endpoint kind", reason="a Route 53 name over the servers costs no load balancer")] = Field(
        DEFAULT_ENDPOINT, description="The control-plane endpoint: Route 53 name over the servers, or an internal NLB.")


class EtcdBackup(Section):
    """etcdBackup: etcd snapshots to S3."""

    enabled: Annotated[Bool, Msg(reason="snapshots are the way back after losing the control plane")] = Field(
        True, description="etcd snapshots to S3.")
    bucket: OrUnset[Annotated[str, NonEmpty(BUCKET_PATTERN), Msg(what="an S3 bucket name (3-63 lowercase letters, digits, dots and hyphens, "
                                                    "by S3's general purpose bucket naming rules)",
                                               default="created per cluster", type_name="bucket name", why=bucket_why)]] = Field(
        None, description="An existing bucket to write to instead (then no bucket is created).")
    folder: OrUnset[Annotated[str, NonEmpty(FOLDER_PATTERN, max_length=200), Msg(what="a key prefix like prod/etcd (no leading, trailing or double /, no . or .. segment)",
                                                               default="`clusterId`", type_name="key prefix", why=folder_why)]] = Field(
        None, description="Folder in the bucket; the node role may touch nothing outside it.")
    interval_hours: Annotated[Hours, Msg(kind="an interval that divides a day", allowed=", ".join(map(str, HOURS[:-1])) + f" or {HOURS[-1]}",
                                        type_name="int", reason="RKE2's own 12 h reaches back too little")] = Field(
        DEFAULT_BACKUP_INTERVAL_HOURS, description="Hours between snapshots (RKE2 cron 0 */N * * *, RKE1 interval_hours).")
    retention: Annotated[int, Whole(1, 1000), Msg(reason="a week at the default interval; RKE2's own default keeps 5")] = Field(
        DEFAULT_BACKUP_RETENTION, description="Snapshots kept.")
    expire_days: Annotated[int, Whole(1, 3650), Msg(reason="old snapshots hold old Secrets")] = Field(
        DEFAULT_BACKUP_EXPIRE_DAYS, description="Days the created bucket keeps old versions (pruned or replaced snapshots); current ones are pruned by count (not with bucket).")
    kms_key_arn: OrUnset[Annotated[str, NonEmpty(KMS_KEY_ARN_PATTERN), Msg(
        what="a KMS key ARN (not an alias) in its region's partition, like "
             "arn:aws:kms:us-west-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",
        default="SSE-S3", type_name="KMS key ARN", why=kms_why)]] = Field(
        None, description="SSE-KMS with this key (a key of the cluster's region).")


class Addons(Section):
    """addons: what else is installed into the cluster."""

    ebs_csi: OrUnset[Annotated[Bool, Msg(default="on for a new stack; then as last deployed")]] = Field(
        None, description="aws-ebs-csi-driver with a default gp3 StorageClass; its controller uses an IAM user of its own.")
    load_balancer_controller: Annotated[Bool, Msg(reason="the CCM serves LoadBalancer Services; the controller is opt-in")] = Field(
        False, description="The AWS Load Balancer Controller (chart and IRSA role; needs identity.serviceAccounts irsa); a "
                           "Service opts in with spec.loadBalancerClass service.k8s.aws/nlb, the CCM keeps the others.")


class Ingress(Section):
    """ingress: the ingress controller the cluster's servers deploy."""

    controller: OrUnset[Annotated[Literal["traefik", "ingress-nginx", "none"], Msg(
        kind="an ingress controller", allowed="traefik, ingress-nginx or none",
        default=f"new RKE2 stacks: {DEFAULT_INGRESS_CONTROLLER} (ingress-nginx on releases without it); running "
                "stacks: what they run; RKE1: RKE's nginx")]] = Field(
        None, description="RKE2's ingress-controller (traefik, ingress-nginx, none; ingress-nginx alone ends with "
                          "v1.37); RKE1's ingress.provider (ingress-nginx or none). A running cluster changes it by "
                          "hand (docs/features/ingress.md).")
