"""Manifest mode (RKE2, `ccm.install: manifest`): the cluster's manifests as SSM parameters.

Every server mirrors the parameters under `manifest_path(cluster_id)` into RKE2's manifests
directory at boot and every few minutes after (node/scripts.py manifest_sync_script), so a changed
manifest (CCM values, the CCM image on an upgrade, upgrade Plans) reaches servers that are already
running, whose user data is never read again, and all servers hold the same files: RKE2 applies
the manifests directory of every server, and differing copies would undo each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from ..plan.names import manifest_path
from ..settings import tags

# SSM standard parameters hold 4 KB; larger values need the advanced tier.
STANDARD_TIER_MAX = 4096


# An emptied manifest: RKE2's deploy controller names an Addon after the file name up to its first
# dot and, applying a file, prunes what that Addon created before and the file no longer holds
# (k3s pkg/deploy/controller.go: apply WithOwner(addon)); a file that disappears is only forgotten.
# So "<base>.removed.yaml" empties the Addon "<base>" whatever the old file's extension (.yaml, or
# a downloaded .url), and the sync removes the old file, which holds no more parameters.
EMPTIED_SUFFIX = ".removed.yaml"
EMPTIED = ("# Emptied by rke-aws: RKE2's deploy controller deletes what the manifest of this name created.\n"
           "# Kept so that rke2-server, which applies every file here when it starts, never brings it back.\n")


def base_name(fname: str) -> str:
    return fname.split(".")[0]


def emptied_name(base: str) -> str:
    return base + EMPTIED_SUFFIX


def with_emptied(files: Mapping[str, str], emptied: Iterable[str]) -> dict[str, str]:
    """`files` plus an empty manifest for every base name in `emptied`."""
    out = dict(files)
    for base in emptied:
        out[emptied_name(base)] = EMPTIED
    return out


def tier_for(value: str) -> str:
    return "Standard" if len(value.encode()) <= STANDARD_TIER_MAX else "Advanced"


@dataclass(frozen=True)
class ServerManifestsArgs:
    cluster_id: str
    files: Mapping[str, str]  # file name -> content (".url": address of a manifest to download)
    # file name -> content holding a credential: a SecureString (default aws/ssm key), shown masked
    secret_files: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)
    extra_tags: Mapping[str, str] = field(default_factory=dict)


class ServerManifests(pulumi.ComponentResource):
    def __init__(self, name: str, args: ServerManifestsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("rke-aws:manifests:ServerManifests", name, None, opts)
        self.path = manifest_path(args.cluster_id)
        self.parameters: list[aws.ssm.Parameter] = []
        for fname, content in sorted(args.files.items()):
            pname = f"{name}-manifest-{fname.rsplit('.', 1)[0]}"
            self.parameters.append(aws.ssm.Parameter(
                pname,
                name=f"{self.path}/{fname}",
                type="String",  # manifests hold no secrets
                tier=tier_for(content),
                insecure_value=content,  # no secrets; `value` would hide the manifest in every preview
                description=f"RKE2 manifest {fname} of cluster {args.cluster_id}, mirrored by its servers (rke-aws)",
                tags=tags.named(pname, args.extra_tags),
                opts=pulumi.ResourceOptions(parent=self),
            ))
        for fname, content in sorted(args.secret_files.items()):
            pname = f"{name}-manifest-{fname.rsplit('.', 1)[0]}"
            self.parameters.append(aws.ssm.Parameter(
                pname,
                name=f"{self.path}/{fname}",
                type="SecureString",
                value=content,
                description=f"RKE2 manifest {fname} of cluster {args.cluster_id} (holds a credential), mirrored by its "
                            "servers (rke-aws)",
                tags=tags.named(pname, args.extra_tags),
                opts=pulumi.ResourceOptions(parent=self),
            ))
        self.register_outputs({"path": self.path})
