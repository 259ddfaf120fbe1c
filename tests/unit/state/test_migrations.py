"""Every older shape of a cluster's outputs is read by an explicit migration (components/state/migrations.py),
one test each, and numbers the engine hands back as doubles are read as the integers they were.

Why floats: a stack's outputs travel through the engine as a protobuf `Struct`, whose only number type is a
double (google/protobuf/struct.proto: `double number_value`), and the Python SDK hands them back as `float`
(pulumi/pulumi sdk/python/lib/pulumi/runtime/rpc.py deserializes `Value.number_value` unchanged). So a node
recorded with `index: 1` comes back as `1.0`; the reader before the typed state kept `index`/`ipBlock` only
when `isinstance(x, int)`, dropped them, and recomputed a node's index from list order and its address block
from scratch (found in issue 32).
"""

from __future__ import annotations

import pytest

from rke_aws.state.migrations import MIGRATIONS, from_outputs, migrate
from rke_aws.state.model import STATE_VERSION, SnapshotsState

NODE = {"name": "ip-10-0-1-10.us-west-2.compute.internal", "pool": "servers", "index": 0,
        "roles": ["controlplane", "etcd"], "privateIp": "10.0.1.10", "availabilityZone": "us-west-2a",
        "subnet": "private-0", "ipBlock": 0, "instanceType": "m6i.large", "market": "on-demand"}
TODAY = {"clusterId": "c", "distribution": "rke2", "kubernetesVersion": "v1.33.5+rke2r1",
         "kubernetesVersionConfirmed": "v1.33.5+rke2r1", "etcdSnapshotsRunning": None, "nodes": [NODE],
         "stateVersion": STATE_VERSION}


def outputs(**changes):
    out = {**TODAY, **changes}
    return {k: v for k, v in out.items() if v is not ...}


def node(**changes):
    out = {**NODE, **changes}
    return {k: v for k, v in out.items() if v is not ...}


# ---- numbers as the engine returns them ---------------------------------------------------------------------

def test_numbers_the_engine_returns_as_doubles_are_read_as_integers():
    """Worker 1 recorded index 1 and address block 3 (the engine hands back 1.0 and 3.0): both are kept, not
    replaced by its list position (0) and no block."""
    worker = node(name="ip-10-0-1-75.us-west-2.compute.internal", pool="workers", index=1.0, ipBlock=3.0,
                  roles=["worker"], privateIp="10.0.1.75")
    state = from_outputs(outputs(nodes=[NODE, worker]))
    assert state is not None
    (read,) = [n for n in state.nodes if n.pool == "workers"]
    assert (read.index, read.ip_block) == (1, 3)
    assert type(read.index) is int and type(read.ip_block) is int
    assert state.pool_nodes("workers") == {1: read}


def test_a_fractional_number_is_no_index():
    with pytest.raises(ValueError, match="index"):
        from_outputs(outputs(nodes=[node(index=1.5)]))


# ---- one test per older shape ---------------------------------------------------------------------------------

def test_today_s_shape_needs_no_migration():
    assert [m.name for m in MIGRATIONS if m.applies(dict(TODAY))] == []


def test_1_nodes_without_index_take_their_position_within_their_pool():
    nodes = [node(index=...), node(pool="workers", index=..., name="ip-10-0-1-20.x"),
             node(pool="workers", index=..., name="ip-10-0-1-21.x"), node(index=..., name="ip-10-0-1-11.x")]
    state = from_outputs(outputs(nodes=nodes))
    assert state is not None and [(n.pool, n.index) for n in state.nodes] == [
        ("servers", 0), ("workers", 0), ("workers", 1), ("servers", 1)]


@pytest.mark.parametrize("address", [..., None, "04da6b54-80e4-46f7-96ec-b56ff0331ba9"])
def test_2_a_node_without_its_address_has_the_one_its_name_encodes(address):
    state = from_outputs(outputs(nodes=[node(privateIp=address)]))
    assert state is not None and state.nodes[0].private_ip == "10.0.1.10"


@pytest.mark.parametrize("public, tier", [("54.1.2.3", "public"), (..., "private")])
def test_3_a_node_without_subnet_is_in_the_tier_its_public_address_says(public, tier):
    state = from_outputs(outputs(nodes=[node(subnet=..., publicIp=public)]))
    assert state is not None and state.nodes[0].tier == tier


def test_4_a_node_without_type_or_market_is_on_demand_of_an_unknown_type():
    state = from_outputs(outputs(nodes=[node(instanceType=..., market=...)]))
    assert state is not None and (state.nodes[0].instance_type, state.nodes[0].market) == (None, "on-demand")


def test_5_no_cluster_id_is_the_one_the_endpoint_names():
    state = from_outputs(outputs(clusterId=..., controlPlaneEndpoint="api.dev.rke-aws.internal"))
    assert state is not None and state.cluster_id == "dev"


def test_6_no_running_snapshots_are_read_from_the_location_with_interval_and_retention_unknown():
    state = from_outputs(outputs(etcdSnapshotsRunning=..., etcdSnapshotLocation="s3://b/dev"))
    assert state is not None and state.etcd_snapshots_running == SnapshotsState(bucket="b", folder="dev")
    assert from_outputs(outputs(etcdSnapshotsRunning=...)).etcd_snapshots_running is None  # type: ignore[union-attr]


def test_7_no_confirmed_version_means_not_recorded_and_children_by_position():
    state = from_outputs(outputs(kubernetesVersionConfirmed=...))
    assert state is not None and (state.version_recorded, state.children_keyed) == (False, False)
    today = from_outputs(TODAY)
    assert today is not None and (today.version_recorded, today.children_keyed) == (True, True)


def test_8_a_release_status_without_what_was_installed_means_releases_whose_names_are_unknown():
    state = from_outputs(outputs(ccmReleaseStatus={"status": "deployed"}))
    assert state is not None and state.releases_unnamed
    named = from_outputs(outputs(ccmReleaseStatus={"status": "deployed"}, installedInCluster=["ccm"]))
    assert named is not None and not named.releases_unnamed


def test_9_a_manifest_path_without_its_files_is_the_set_that_release_delivered():
    state = from_outputs(outputs(rke2ManifestPath="/rke-aws/c/manifests"))
    assert state is not None and state.rke2_manifests and all(f.endswith(".yaml") for f in state.rke2_manifests)
    with_ebs = from_outputs(outputs(rke2ManifestPath="/rke-aws/c/manifests", ebsCsi=True))
    assert with_ebs is not None and set(state.rke2_manifests) < set(with_ebs.rke2_manifests)


def test_10_options_later_releases_added_are_none_when_absent():
    state = from_outputs(TODAY)
    assert state is not None
    assert (state.ebs_csi, state.hardening, state.etcd_bucket_managed, state.proxy, state.rancher_cluster,
            state.region, state.control_plane_endpoint_type) == (None,) * 7


def test_11_a_removed_member_without_its_address_has_the_one_its_name_encodes():
    state = from_outputs(outputs(etcdMembersRemoved=[{"name": "ip-10-0-1-12.us-west-2.compute.internal"},
                                                     {"name": "no-address-here"}]))
    assert state is not None and [(m.name, m.private_ip) for m in state.etcd_members_removed] == [
        ("ip-10-0-1-12.us-west-2.compute.internal", "10.0.1.12")]


def test_12_subnets_saved_with_an_unknown_id_keep_their_zone():
    subnets = {"private-0": {"availabilityZone": "us-west-2a", "cidr": "10.0.0.0/20", "id": ""},
               "public-0": {"availabilityZone": "us-west-2a", "cidr": "10.0.16.0/20", "id": "subnet-1"}}
    state = from_outputs(outputs(subnets=subnets))
    assert state is not None and state.subnet_zones == {"private-0": "us-west-2a", "public-0": "us-west-2a"}
    assert state.known_subnet_ids == {"public-0": "subnet-1"}


def test_13_a_rancher_cluster_that_is_not_a_map_is_none():
    state = from_outputs(outputs(rancherCluster="c-abc"))
    assert state is not None and state.rancher_cluster is None


def test_14_flat_outputs_without_a_version_are_today_s_version():
    raw = outputs(stateVersion=...)
    assert migrate(raw)["stateVersion"] == STATE_VERSION
    state = from_outputs(raw)
    assert state is not None and state.state_version == STATE_VERSION


def test_every_migration_is_tested_here():
    """One test per migration above (the table in components/state/migrations.py, 1-13; 10 and 14 need none)."""
    assert len(MIGRATIONS) == 12
