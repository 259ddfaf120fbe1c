"""Upstream facts stored in tests/data/upstream/ (see its README for source, tag, commit and
licence of each file): what the tests check the program against, present in every clone."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

import yaml

DATA = Path(__file__).resolve().parents[1] / "data" / "upstream"
CCM_CHART = DATA / "aws-cloud-controller-manager-0.0.11"
CLOUD_INIT_SCHEMA = DATA / "cloud-init" / "schema-cloud-config-v1.json"
CCM_EC2_INTERFACE = DATA / "cloud-provider-aws" / "iface-types.go"
CCM_ELB_INTERFACES = DATA / "cloud-provider-aws" / "aws.go-lines-327-389"
RANCHER_AMAZON_DOC = DATA / "rancher-docs" / "amazon.md"


def chart() -> dict:
    (doc,) = [d for d in yaml.safe_load_all((CCM_CHART / "Chart.yaml").read_text()) if d]  # it ends in `---`
    return doc


def chart_values() -> dict:
    return yaml.safe_load((CCM_CHART / "values.yaml").read_text())


@lru_cache(maxsize=1)
def cloud_init_schema() -> dict:
    return json.loads(CLOUD_INIT_SCHEMA.read_text())


def _interface_methods(text: str, name: str) -> list[str]:
    body = re.search(rf"^type {name} interface \{{\n(.*?)^\}}", text, re.M | re.S)
    assert body, f"no interface {name}"
    return re.findall(r"^\t([A-Z]\w*)\(ctx context\.Context", body.group(1), re.M)


def ccm_callable_actions() -> set[str]:
    """IAM actions of every AWS call the CCM's clients can make: its EC2, ELB, ELBV2 and KMS client
    interfaces (each method is the SDK call of that name, authorised as the action of that name)."""
    ec2 = _interface_methods(CCM_EC2_INTERFACE.read_text(), "EC2")
    elb_text = CCM_ELB_INTERFACES.read_text()
    elb = _interface_methods(elb_text, "ELB") + _interface_methods(elb_text, "ELBV2")
    kms = _interface_methods(elb_text, "KMS")
    return ({f"ec2:{m}" for m in ec2} | {f"elasticloadbalancing:{m}" for m in elb} | {f"kms:{m}" for m in kms})


def rancher_seed_policies() -> dict[str, list[str]]:
    """The Rancher document's two IAM policies, action lists as written (duplicates kept)."""
    text = RANCHER_AMAZON_DOC.read_text()
    out = {}
    for role, heading in (("controlplane", "IAM Policy for nodes with the `controlplane` role:"),
                          ("worker", "IAM policy for nodes with the `etcd` or `worker` role:")):
        block = re.search(re.escape(heading) + r"\s*```json\n(.*?)```", text, re.S)
        assert block, heading
        (statement,) = json.loads(block.group(1))["Statement"]
        out[role] = list(statement["Action"])
    return out
