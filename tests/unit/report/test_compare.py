"""The diff's comparison and its lines on hand-made runs (no program, no emulated account): every changed input
old → new, secrets only as "changed (secret)", and what an ignored input means for the running resource."""

from __future__ import annotations

import base64
import copy
import gzip

import pytest

from rke_aws_offline.report import compare as cmp
from rke_aws_offline.report import diff_text

INSTANCE = "aws:ec2/instance:Instance"
PARAMETER = "aws:ssm/parameter:Parameter"
SERVER_IGNORES = ["ami", "userData", "userDataBase64", "instanceType"]  # components/aws/nodes.py


def reg(typ: str, name: str, inputs: dict, *, secret=(), ignore=(), rid: str = "") -> dict:
    """One registration as diff.result_of writes it."""
    return {"urn": f"urn:pulumi:s::rke-aws::rke-aws:index:RkeCluster${typ}::{name}", "type": typ, "name": name,
            "inputs": inputs, "state": {}, "parent": "", "dependencies": [], "protect": False,
            "delete_before_replace": False, "ignore_changes": list(ignore), "provider": "", "custom": True,
            "secret_inputs": list(secret), "id": rid or f"id-{name}"}


def user_data(text: str) -> str:
    """As components/node/cloud_init.py encodes it: gzip, then base64."""
    return base64.b64encode(gzip.compress(f"#cloud-config\nruncmd: [{text}]\n".encode(), mtime=0)).decode()


def node(name: str, **inputs) -> dict:
    base = {"instanceType": "t3.xlarge", "ami": "ami-0123456789abcdef0", "privateIp": "10.0.4.10", "userDataBase64": user_data("a"),
            "rootBlockDevice": {"volumeSize": 50.0, "encrypted": True}, "tags": {"Name": f"ip-{name}"}}
    return {**base, **inputs}


def run(*resources: dict) -> dict:
    return {"resources": list(resources), "outputs": {}, "secretOutputs": [], "logs": []}


def pair(base_regs: list[dict], plant) -> cmp.StackDiff:
    base = run(*base_regs)
    head = copy.deepcopy(base)
    plant({r["name"]: r for r in head["resources"]})
    return cmp.compare("s", base, head)


def only(d: cmp.StackDiff) -> cmp.Change:
    (c,) = d.changes
    return c


def text(d: cmp.StackDiff) -> str:
    return diff_text.render_text([d]) + diff_text.render_markdown([d], "main")


def test_a_changed_input_shows_old_and_new():
    """Issue 34: `changed: instanceType` without old → new."""
    d = pair([reg(INSTANCE, "agents-0", node("agents-0"))],
             lambda h: h["agents-0"]["inputs"].update(instanceType="m5.xlarge"))
    c = only(d)
    assert c.action == "update" and c.values == {"instanceType": ("t3.xlarge", "m5.xlarge")}, c
    assert "        instanceType: t3.xlarge → m5.xlarge" in diff_text.render_text([d]).splitlines()
    assert "`instanceType: t3.xlarge → m5.xlarge`" in diff_text.render_markdown([d], "main")


def test_a_nested_change_shows_each_leaf_as_yaml_would():
    d = pair([reg(INSTANCE, "agents-0", node("agents-0"))],
             lambda h: h["agents-0"]["inputs"]["rootBlockDevice"].update(volumeSize=80.0, iops=3000.0))
    lines = diff_text.value_lines(only(d))
    assert "rootBlockDevice.volumeSize: 50 → 80" in lines, lines  # the engine's floats, shown as YAML shows them
    assert "rootBlockDevice.iops: (unset) → 3000" in lines, lines


def test_a_large_document_shows_its_first_leaves_and_how_many_more():
    doc = {f"k{i}": i for i in range(20)}
    d = pair([reg(PARAMETER, "p", {"name": "/p", "insecureValue": doc})],
             lambda h: h["p"]["inputs"].update(insecureValue={k: v + 1 for k, v in doc.items()}))
    lines = diff_text.value_lines(only(d))
    assert len(lines) == diff_text.MAX_LEAVES + 1 and lines[-1] == "insecureValue: … and 12 more", lines


def test_a_secret_input_is_changed_never_shown():
    old, new = "s3cr3t-old-value", "s3cr3t-new-value"
    d = pair([reg(PARAMETER, "token", {"name": "/t", "value": old}, secret=["value"])],
             lambda h: h["token"]["inputs"].update(value=new))
    c = only(d)
    assert c.secret == ["value"] and "value" not in c.values, c
    assert "value: changed (secret)" in diff_text.value_lines(c)
    assert old not in text(d) and new not in text(d)


def test_a_secret_value_is_masked_where_it_reaches_an_input_that_is_not_secret():
    token = "K10abcdefghijklmnop"
    d = pair([reg(PARAMETER, "token", {"value": token}, secret=["value"]),
              reg(PARAMETER, "doc", {"insecureValue": "token: old"})],
             lambda h: h["doc"]["inputs"].update(insecureValue=f"token: {token}"))
    assert token not in text(d) and "token: ****" in text(d)


@pytest.mark.parametrize("key, value, says", [
    ("userDataBase64", user_data("b"), "user data is read at first boot; replace the node"),
    ("ami", "ami-0fedcba9876543210", "a node keeps the image it was launched from; replace the node"),
    ("instanceType", "m6i.2xlarge", "not applied to running servers"),
])
def test_an_ignored_change_says_it_does_not_reach_the_running_node(key, value, says):
    """components/aws/nodes.py: ami, user data and instanceType ignored on every node (EC2 stops an instance to
    change its type: on servers every etcd member at once). Issue 34: "unchanged … ignored (ignore_changes)"
    without saying the change never reaches the node."""
    d = pair([reg(INSTANCE, "servers-0", node("servers-0"), ignore=SERVER_IGNORES)],
             lambda h: h["servers-0"]["inputs"].update({key: value}))
    c = only(d)
    assert c.action == "unchanged" and c.ignored == [key], c
    (note,) = c.notes
    assert note.startswith(f"{key}: ") and says in note and "python3 -m offline.tasks rotate" in note, note
    assert note in diff_text.render_text([d]) and says in diff_text.render_markdown([d], "main")


def test_a_spot_nodes_ignored_type_names_why():
    """components/aws/nodes.py IGNORED_ON_UPDATE: a stopped spot instance keeps its type (EC2 User Guide)."""
    spot = node("spot-0", instanceMarketOptions={"marketType": "spot"})
    d = pair([reg(INSTANCE, "spot-0", spot, ignore=["instanceType"])],
             lambda h: h["spot-0"]["inputs"].update(instanceType="m6i.2xlarge"))
    assert "not applied to running spot nodes" in only(d).notes[0]


def test_an_agents_ignored_type_says_it_is_drained_by_rotation():
    """Issue 37: agents keep their type too (components/aws/nodes.py IGNORED_ON_UPDATE)."""
    agent = node("agents-0", tags={"Name": "ip-agents-0", "rke-aws/roles": "worker"})
    d = pair([reg(INSTANCE, "agents-0", agent, ignore=SERVER_IGNORES)],
             lambda h: h["agents-0"]["inputs"].update(instanceType="m6i.2xlarge"))
    (note,) = only(d).notes
    assert "not applied to running agents" in note and "python3 -m offline.tasks rotate" in note, note


def test_a_replaced_resource_lists_its_values_too():
    d = pair([reg(INSTANCE, "agents-0", node("agents-0"))],
             lambda h: h["agents-0"]["inputs"]["rootBlockDevice"].update(encrypted=False))
    c = only(d)
    assert c.action == "replace" and "rootBlockDevice.encrypted: true → false" in diff_text.value_lines(c), c


def test_the_change_line_model_takes_a_note_as_one_more_line():
    """Issue 37 adds a per-node note ("stale"); a note is one more line under the change."""
    d = pair([reg(INSTANCE, "agents-0", node("agents-0"))],
             lambda h: h["agents-0"]["inputs"].update(instanceType="m5.xlarge"))
    c = only(d)
    c.notes.append("stale: launched from an older image")
    lines = diff_text.change_lines(c)
    assert lines[-1] == "        stale: launched from an older image", lines
