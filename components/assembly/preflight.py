"""What an air-gapped cluster needs from the account, checked at plan time before any resource (issue 35):
the artifacts bucket is in the cluster's region and partition and holds RKE2's release assets for every
pool's architecture (and system-upgrade-controller's manifests), and a brought VPC has an endpoint for every
AWS API the nodes and add-ons call. Every problem at once, each naming the key. Here and not in plan/
because the facts live in node/airgap_artifacts.py and aws/vpc_endpoints.py (layers above plan); called by
rke_cluster.plan right after the planner.

Sources: AWS Systems Manager User Guide setup-create-vpc.md and Amazon VPC "Gateway endpoints for Amazon
S3" (a gateway endpoint reaches buckets of its own region only); rancher/rke2 install.sh (the files read from
INSTALL_RKE2_ARTIFACT_PATH; airgap_artifacts.py cites each).
"""

from __future__ import annotations

from ..aws import vpc_endpoints
from ..diagnostics import Diagnostic, Severity
from ..node import airgap_artifacts, registries
from ..plan.environment import Environment
from ..plan.lookups import LookupFailed, collect
from ..plan.model import ClusterSpec
from ..plan.rancher import program_upgrades
from ..settings import partitions

BUCKET_FIX = "check airgap.artifactsBucket (a bucket of this account in the cluster's region)"


def airgap_problems(spec: ClusterSpec, env: Environment) -> list[Diagnostic]:
    cfg, cluster = spec.config, spec.plan
    airgap = cfg.airgap
    if airgap is None or cfg.distribution != "rke2":
        return []
    problems: list[Diagnostic] = []
    bucket = airgap.artifacts_bucket
    found, unchecked = None, False
    if bucket and env.offline:
        # An offline plan runs against an emulated account, which holds the fixtures' buckets but cannot read
        # the user's: say what `pulumi preview` will check instead of refusing a bucket that may well be filled.
        try:
            found = env.lookups.bucket(bucket)
        except LookupFailed as failure:
            if failure.kind != "not-found":  # reported as any failed look-up is
                def again(failure: LookupFailed = failure) -> object:
                    raise failure
                collect(problems, "airgap.artifactsBucket", f"looking up the bucket '{bucket}'", BUCKET_FIX, again,
                        env.offline)
            else:
                unchecked = True
                problems.append(Diagnostic("airgap.artifactsBucket", f"'{bucket}' not checked offline: the emulated "
                                           "account does not hold it; `pulumi preview` against your account checks that "
                                           f"it is in {cfg.region} and holds what the nodes install from",
                                           "airgap.bucket-unchecked", Severity.WARNING, value=bucket))
    elif bucket:
        found = collect(problems, "airgap.artifactsBucket", f"looking up the bucket '{bucket}'", BUCKET_FIX,
                        lambda: env.lookups.bucket(bucket), env.offline)
    if bucket and not unchecked:
        region = getattr(found, "bucket_region", None) if found is not None else None
        theirs = partitions.of_region(region).name if region else None
        for why in airgap_artifacts.bucket_problems(region, cfg.region, theirs, cfg.partition.name):
            problems.append(Diagnostic("airgap.artifactsBucket", f"'{bucket}': {why}; use a bucket in {cfg.region}",
                                       "airgap.bucket-region", value=bucket))
        if found is not None and not problems:
            prefix = airgap.artifacts_prefix or ""
            archs = sorted(set(cluster.pool_archs.get(p.name, "x86_64") for p in cfg.node_pools if p.count))
            oses = sorted({p.os for p in cfg.node_pools if p.count})  # SELinux OSes need their rke2-selinux rpms
            needed = airgap_artifacts.needed_artifacts(
                prefix, cfg.kubernetes_version, archs, oses, preinstalled=airgap.preinstalled,
                upgrades=cfg.ccm.install == "manifest" and program_upgrades(cfg))
            listing = collect(problems, "airgap.artifactsBucket", f"listing s3://{bucket}/{prefix}", BUCKET_FIX,
                              lambda: env.lookups.objects(bucket, prefix), env.offline)
            missing = airgap_artifacts.missing_artifacts(listing, bucket, needed) if listing is not None else []
            if missing:
                problems.append(Diagnostic(
                    "airgap.artifactsBucket", f"'{bucket}' lacks what the nodes install from: " + "; ".join(missing)
                    + " (docs/features/airgap-os-fips.md, 'Air-gapped clusters and a private registry' fills it)", "airgap.missing-artifacts",
                    value=bucket))
    if cfg.network.bring_your_own and cfg.network.vpc_id:
        vpc_id = cfg.network.vpc_id
        for endpoint in wanted_endpoints(spec):
            collect(problems, "network.vpcId",
                    f"looking up the {endpoint.type.lower()} endpoint {endpoint.service_name} of '{vpc_id}' (air-gapped "
                    f"nodes call {endpoint.service} through it: {', '.join(endpoint.actions[:3])}...)",
                    f"add it: aws ec2 create-vpc-endpoint --vpc-id {vpc_id} --service-name {endpoint.service_name} "
                    f"--vpc-endpoint-type {endpoint.type}"
                    + (" --private-dns-enabled" if endpoint.private_dns else ""),
                    lambda e=endpoint: env.lookups.vpc_endpoint(vpc_id, e.service_name), env.offline)
    return problems


def wanted_endpoints(spec: ClusterSpec) -> list[vpc_endpoints.Endpoint]:
    """The VPC endpoints an air-gapped cluster needs: the services of every action the program grants its
    nodes and add-ons (the same policy functions), ECR's when a mirror is an ECR registry."""
    cfg, cluster = spec.config, spec.plan
    airgap = cfg.airgap
    actions = vpc_endpoints.program_action_lists(
        cfg.partition.name, session_manager=cfg.access.ssm, snapshots=cluster.backup is not None,
        ebs_csi=bool(cluster.ebs_csi),
        artifacts=airgap is not None and bool(airgap.artifacts_bucket) and not airgap.preinstalled,
        identity=cluster.identity is not None)
    mirrors = cfg.registry.mirrors if cfg.registry is not None else {}
    ecr = any(vpc_endpoints.is_ecr_registry(registries.mirror_authority(e)) for e in mirrors.values())
    return vpc_endpoints.vpc_endpoints(actions.values(), cfg.region, ecr=ecr)
