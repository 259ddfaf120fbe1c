"""Reading a cluster's last state (components/state): what each output says, values the engine saved unknown,
and the refusal when what only this program writes was saved unknown."""

from __future__ import annotations

import pytest

from rke_aws.state.migrations import UNKNOWN_PLACEHOLDER, HistoryError, address_in_name, from_outputs
from rke_aws.state.model import NodeState, RemovedMember, SnapshotsState

CID = "c"


# ---- outputs the engine saved unknown ----------------------------------------------------------

def outputs_with(node: dict) -> dict:
    return {"nodes": [node], "kubernetesVersion": "v1.33.5+rke2r1", "distribution": "rke2", "clusterId": CID}


NODE = {"name": "ip-10-0-1-10.us-west-2.compute.internal", "pool": "servers", "index": 0,
        "roles": ["controlplane", "etcd"], "privateIp": "10.0.1.10", "availabilityZone": "us-west-2a",
        "subnet": "private-0", "ipBlock": 0, "instanceType": "m6i.large"}


@pytest.mark.parametrize("unknown", [UNKNOWN_PLACEHOLDER, None, type("Unknown", (), {})()])
def test_a_failed_instances_unknown_address_is_the_one_its_name_encodes(unknown):
    p = from_outputs(outputs_with({**NODE, "privateIp": unknown, "instanceType": unknown, "instanceId": unknown}))
    (n,) = p.nodes
    assert n.private_ip == "10.0.1.10" and n.instance_type is None


@pytest.mark.parametrize("key", ["pool", "roles", "name", "availabilityZone"])
def test_unknown_values_the_program_cannot_recover_give_one_clear_refusal(key):
    with pytest.raises(HistoryError, match=rf"saved as unknown \(nodes\[0\]\.{key}"):
        from_outputs(outputs_with({**NODE, key: UNKNOWN_PLACEHOLDER}))
    with pytest.raises(HistoryError, match="saved as unknown"):
        from_outputs({**outputs_with(NODE), "kubernetesVersion": UNKNOWN_PLACEHOLDER})


def test_unknown_address_with_a_name_that_encodes_none_is_refused():
    with pytest.raises(HistoryError, match=r"nodes\[0\]\.privateIp"):
        from_outputs(outputs_with({**NODE, "name": "i-0abc.us-west-2.compute.internal",
                                            "privateIp": UNKNOWN_PLACEHOLDER}))


# ---- reading the last outputs ------------------------------------------------------------------

FULL_OUTPUTS = {
    "clusterId": "c", "distribution": "rke2", "kubernetesVersion": "v1.34.1+rke2r1", "region": "us-west-2",
    "kubernetesVersionConfirmed": "v1.33.5+rke2r1", "ccmImage": "registry.k8s.io/provider-aws/cloud-controller-manager:v1.33.4",
    "controlPlaneEndpoint": "api.not-the-id.rke-aws.internal", "controlPlaneEndpointType": "nlb",
    "nodes": [
        {**NODE, "keyName": "k", "publicIp": ""},
        {"name": "ip-10-0-0-138.us-west-2.compute.internal", "pool": "edge", "index": 2, "roles": ["worker"],
         "privateIp": "10.0.0.138", "availabilityZone": "us-west-2a", "subnet": "public-0", "ipBlock": 1,
         "publicIp": "203.0.113.9", "instanceType": ""},
    ],
    "subnets": {"private-0": {"availabilityZone": "us-west-2a", "cidr": "10.0.64.0/19", "id": "subnet-1"},
                "public-0": {"availabilityZone": "us-west-2a", "cidr": "10.0.0.0/19", "id": UNKNOWN_PLACEHOLDER}},
    "rke2AgentTokenParameter": "/rke-aws/c/rke2-agent-token", "rke2KubeconfigParameter": "/rke-aws/c/admin-kubeconfig",
    "ebsCsi": False, "hardening": "cis", "installedInCluster": ["aws-cloud-controller-manager"],
    "rke2ManifestPath": "/rke-aws/c/manifests", "rke2Manifests": ["ccm.yaml", "ebs-csi.removed.yaml"],
    "rke2ManifestsRemoving": ["ebs-csi"],
    "etcdSnapshotLocation": "s3://b/new", "etcdBucketManaged": True,
    "etcdSnapshotsRunning": {"bucket": "b", "folder": "old", "intervalHours": 6, "retention": 28, "kmsKeyArn": "arn:k"},
    "etcdMembersRemoved": [{"name": "ip-10-0-1-12.us-west-2.compute.internal", "privateIp": "10.0.1.12"},
                           {"name": "ip-10-0-1-13.us-west-2.compute.internal"}, {"privateIp": "10.0.1.14"}],
}


def test_every_output_the_planner_reads_is_read():
    p = from_outputs(FULL_OUTPUTS)
    server, edge = p.nodes
    assert server == NodeState(pool="servers", index=0, name=NODE["name"], roles=("controlplane", "etcd"),
                               private_ip="10.0.1.10", availability_zone="us-west-2a", subnet="private-0", ip_block=0,
                               key_name="k", instance_type="m6i.large")
    assert edge == NodeState(pool="edge", index=2, name="ip-10-0-0-138.us-west-2.compute.internal", roles=("worker",),
                             private_ip="10.0.0.138", availability_zone="us-west-2a", subnet="public-0", ip_block=1,
                             public_ip="203.0.113.9")
    assert server.tier == "private" and edge.tier == "public" and edge.instance_type is None  # "" read as absent
    assert p.subnet_zones == {"private-0": "us-west-2a", "public-0": "us-west-2a"}
    assert p.known_subnet_ids == {"private-0": "subnet-1"}
    assert (p.cluster_id, p.region, p.distribution, p.kubernetes_version) == ("c", "us-west-2", "rke2", "v1.34.1+rke2r1")
    assert (p.kubernetes_version_confirmed, p.version_recorded, p.ccm_image) == (
        "v1.33.5+rke2r1", True, FULL_OUTPUTS["ccmImage"])
    assert p.control_plane_endpoint_type == "nlb" and p.children_keyed and p.has_agent_token
    assert p.has_kubeconfig_parameter and p.ebs_csi is False and p.hardening == "cis" and p.has_cluster_releases
    assert p.installed_in_cluster == ("aws-cloud-controller-manager",) and p.manifest_mode
    assert p.rke2_manifests == ("ccm.yaml", "ebs-csi.removed.yaml") and p.rke2_manifests_removing == ("ebs-csi",)
    assert p.etcd_snapshot_location == "s3://b/new" and p.has_snapshots and p.etcd_bucket_managed is True
    assert p.etcd_snapshots_running == SnapshotsState(bucket="b", folder="old", interval_hours=6, retention=28,
                                                      kms_key_arn="arn:k")
    assert p.etcd_members_removed == (
        RemovedMember(name="ip-10-0-1-12.us-west-2.compute.internal", private_ip="10.0.1.12"),
        RemovedMember(name="ip-10-0-1-13.us-west-2.compute.internal", private_ip="10.0.1.13"))
    assert p.pool_nodes("edge") == {2: edge} and p.etcd_members == (server,)


def test_outputs_of_earlier_releases_are_read_with_their_defaults():
    old = {"distribution": "rke2", "kubernetesVersion": "v1.33.5+rke2r1",
           "controlPlaneEndpoint": "api.old-id.rke-aws.internal",
           "etcdSnapshotLocation": "s3://b/c", "ccmReleaseStatus": "deployed",
           "nodes": [{k: v for k, v in NODE.items() if k not in ("index", "subnet", "ipBlock", "instanceType")},
                     {**{k: v for k, v in NODE.items() if k not in ("index", "subnet")}, "name": "ip-10-0-1-11.x",
                      "privateIp": "10.0.1.11", "publicIp": "198.51.100.1"}]}
    p = from_outputs(old)
    assert [n.index for n in p.nodes] == [0, 1] and [n.tier for n in p.nodes] == ["private", "public"]
    assert p.nodes[0].ip_block is None and p.nodes[0].instance_type is None
    assert p.cluster_id == "old-id" and not p.version_recorded and p.kubernetes_version_confirmed is None
    assert not p.children_keyed
    assert p.etcd_snapshots_running == SnapshotsState(bucket="b", folder="c") and p.etcd_bucket_managed is None
    assert p.has_cluster_releases and p.installed_in_cluster == ()
    assert p.ebs_csi is None and p.etcd_members_removed == () and p.region is None
    assert p.control_plane_endpoint_type is None and not p.has_agent_token and not p.manifest_mode
    off = from_outputs({**FULL_OUTPUTS, "etcdSnapshotsRunning": None})
    assert off.etcd_snapshots_running is None
    assert from_outputs({}) is None and from_outputs({"clusterId": "c"}) is None
    assert from_outputs({**FULL_OUTPUTS, "clusterId": None, "controlPlaneEndpoint": "x"}).cluster_id is None
    assert from_outputs({**FULL_OUTPUTS, "ebsCsi": True}).ebs_csi is True
    assert not from_outputs({**FULL_OUTPUTS, "installedInCluster": []}).has_cluster_releases


def test_addresses_in_node_names():
    assert address_in_name("ip-10-0-1-300.x") is None and address_in_name("ip-10-0-1-3.x") == "10.0.1.3"
    assert address_in_name("") is None and address_in_name("i-0abc.x") is None


def test_unknown_nodes_list_is_refused():
    with pytest.raises(HistoryError, match=r"saved as unknown \(nodes\)"):
        from_outputs({**FULL_OUTPUTS, "nodes": UNKNOWN_PLACEHOLDER})
    with pytest.raises(HistoryError, match=r"saved as unknown \(nodes\[1\]\)"):
        from_outputs({**FULL_OUTPUTS, "nodes": [NODE, "x"]})
    with pytest.raises(HistoryError, match=r"saved as unknown \(nodes\)"):
        from_outputs({**FULL_OUTPUTS, "nodes": {"0": NODE}})


def test_a_nodes_subnet_says_its_tier_before_its_public_address():
    p = from_outputs({**FULL_OUTPUTS, "nodes": [{**NODE, "subnet": "public-0", "publicIp": ""}]})
    assert p.nodes[0].tier == "public"
    unknown = UNKNOWN_PLACEHOLDER
    p = from_outputs({**FULL_OUTPUTS, "nodes": [{**NODE, "subnet": unknown, "publicIp": "203.0.113.1"},
                                                         {**NODE, "index": 1, "subnet": None, "publicIp": unknown}]})
    assert [n.tier for n in p.nodes] == ["public", "private"]


