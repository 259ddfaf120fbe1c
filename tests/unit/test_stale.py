"""What is stale (components/plan/stale.py), as pure functions of node outputs."""

from __future__ import annotations

import pytest

from rke_aws.aws import nodes
from rke_aws.node import cloud_init
from rke_aws.plan import stale

# As components/node/cloud_init.py writes it: the boot script is one YAML string in write_files.
BOOT = ("#cloud-config\nwrite_files:\n- path: /usr/local/sbin/rke-aws-bootstrap\n  content: \"#!/bin/sh\\nNODE_NAME="
        "'ip-10-0-4-10'\\nINSTALL_VERSION='v1.35.7+rke2r1'\\nPEER_IPS='10.0.4.11 10.0.4.12'\\nKIND='server'\\n\"\n")


def node(**running) -> dict:
    wanted = running.pop("wanted", {})
    base = {"name": "ip-10-0-4-10.ec2.internal", "pool": "servers", "index": 0, "roles": ["controlplane", "etcd"],
            "image": "ami-0aaaaaaaaaaaaaaa1", "instanceType": "m6i.large", "bootDigest": "abc", "rootVolumeGb": 50}
    base.update(running)
    base[stale.WANTED] = {k: base[k] for k in ("image", "instanceType", "bootDigest", "rootVolumeGb")} | wanted
    return base


def test_every_attribute_judged_is_one_a_running_node_ignores():
    """Stale means "kept by the engine": an input the update applies in place is never stale."""
    ignored = set(nodes.IGNORED_ON_UPDATE) | {nodes.ROOT_VOLUME_SIZE}
    for a in stale.ATTRIBUTES:
        assert a.instance_input in ignored, a


def test_the_boot_digest_leaves_out_what_reaches_running_nodes_anyway():
    """The RKE2 release reaches running nodes through the upgrade Plans; PEER_IPS matters at a cluster's
    first boot only (components/node/scripts.py); anything else in the user data counts."""
    upgraded = BOOT.replace("v1.35.7+rke2r1", "v1.35.8+rke2r1").replace("10.0.4.12", "10.0.4.13")
    assert stale.boot_digest(upgraded) == stale.boot_digest(BOOT)
    assert stale.boot_digest(BOOT.replace("KIND='server'", "KIND='agent'")) != stale.boot_digest(BOOT)
    assert len(stale.boot_digest(BOOT)) == stale.DIGEST_CHARS


def test_the_digest_of_what_an_instance_holds():
    encoded = cloud_init.encode_user_data(BOOT)  # what nodes.py sends as user_data_base64
    assert stale.boot_digest_of_base64(encoded) == stale.boot_digest(BOOT)
    assert stale.boot_digest_of_base64(None) is None and stale.boot_digest_of_base64("") is None
    assert stale.boot_digest_of_base64("not base64!") is None


def test_what_an_instance_holds_is_digested_once_when_it_is_what_the_run_sent(monkeypatch):
    """nodes.py takes the digest of the user data it sends; the instance's state holds the same payload unless an
    earlier update left older user data in place (userData is ignored on update), and only then is the payload
    decoded again. The shortcut is exact: the payload's own digest is the digest of the text it encodes."""
    sent = cloud_init.encode_user_data(BOOT)
    assert stale.boot_digest_of_base64(sent) == stale.boot_digest(BOOT)
    older = cloud_init.encode_user_data(BOOT.replace("KIND='server'", "KIND='agent'"))
    assert stale.held_boot_digest(older, sent, stale.boot_digest(BOOT)) == stale.boot_digest_of_base64(older)
    assert stale.held_boot_digest(None, sent, stale.boot_digest(BOOT)) is None
    decoded: list[str | None] = []
    monkeypatch.setattr(stale, "boot_digest_of_base64", lambda e: decoded.append(e) or "decoded")
    assert stale.held_boot_digest(sent, sent, "known") == "known" and decoded == []
    assert stale.held_boot_digest(older, sent, "known") == "decoded" and decoded == [older]


@pytest.mark.parametrize("change, expected", [
    ({"image": "ami-0bbbbbbbbbbbbbbb2"}, "image ami-0aaaaaaaaaaaaaaa1 → ami-0bbbbbbbbbbbbbbb2"),
    ({"instanceType": "m6i.xlarge"}, "instance type m6i.large → m6i.xlarge"),
    ({"bootDigest": "def"}, "boot configuration (user data digest) abc → def"),
    ({"rootVolumeGb": 40}, "root volume 50 GiB → 40 GiB"),  # EBS cannot shrink a volume: only a new node
    ({"rootVolumeGb": 80}, None),  # grown in place by the update (ModifyVolume)
])
def test_one_line_per_stale_node(change, expected):
    found = stale.stale_node(node(wanted=change))
    if expected is None:
        assert found is None
    else:
        assert found is not None and found.line() == f"stale: ip-10-0-4-10.ec2.internal (servers-0): {expected}"
        assert found.is_server


def test_what_outputs_do_not_record_is_not_judged():
    """Outputs of releases before these values were recorded: unknown is not stale."""
    assert stale.stale_node(node(image=None, wanted={"image": "ami-0bbbbbbbbbbbbbbb2"})) is None
    bare = node()
    del bare[stale.WANTED]
    assert stale.stale_node(bare) is None
    assert stale.from_outputs(None) == [] and stale.from_outputs([{"name": "x"}]) == []


def test_several_differences_on_one_node_and_the_order_of_the_outputs():
    a = node(wanted={"image": "ami-0bbbbbbbbbbbbbbb2", "instanceType": "m6i.xlarge"})
    b = node(name="ip-10-0-4-11.ec2.internal", index=1)
    c = node(name="ip-10-0-20-138.ec2.internal", pool="agents", roles=["worker"], wanted={"bootDigest": "zzz"})
    found = stale.from_outputs([a, b, c])
    assert [s.name for s in found] == ["ip-10-0-4-10.ec2.internal", "ip-10-0-20-138.ec2.internal"]
    assert found[0].what == "image ami-0aaaaaaaaaaaaaaa1 → ami-0bbbbbbbbbbbbbbb2; instance type m6i.large → m6i.xlarge"
    assert not found[1].is_server


def test_values_from_instance_inputs_and_running_values_from_the_previous_outputs():
    inputs = {"ami": "ami-1", "instanceType": "t3.large", "userDataBase64": cloud_init.encode_user_data(BOOT),
              "rootBlockDevice": {"volumeSize": 60}}
    assert stale.values_from_inputs(inputs) == {"image": "ami-1", "instanceType": "t3.large",
                                                "bootDigest": stale.boot_digest(BOOT), "rootVolumeGb": 60}
    old = node(image="ami-old")
    new = node(image="ami-new", wanted={"image": "ami-new"})
    (merged,) = stale.with_running([new], [old])
    assert merged["image"] == "ami-old" and stale.stale_node(merged) is not None
    moved = node(name="ip-10-0-4-99.ec2.internal", image="ami-new", wanted={"image": "ami-new"})
    (fresh,) = stale.with_running([moved], [old])
    assert stale.stale_node(fresh) is None, "a node at another address is a new instance"


def test_user_data_is_read_by_libyaml_into_the_documents_safe_load_reads():
    """The digest parses each node's cloud-config (its boot script one long YAML string): through libyaml when
    PyYAML has it (pure Python costs 60 ms a node, issue 33.7), with PyYAML's safe constructor and resolver, so the
    documents, and the digests the stack outputs keep, are yaml.safe_load's (the golden plans hold them too)."""
    import yaml

    from rke_aws.plan import cluster_documents

    doc = BOOT + "runcmd:\n- [sh, -c, 'x: 1']\nbootcmd: ~\nflags: [yes, 'no', 0o17, 1e3, 2024-01-01]\n"
    assert cluster_documents.load_yaml(doc) == yaml.safe_load(doc)
    if yaml.__with_libyaml__:
        assert cluster_documents._LOADER is yaml.CSafeLoader
