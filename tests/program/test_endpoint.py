"""The control-plane endpoint: one name in a private zone that reaches every server, on every stack
and in both modes (dns: A record over the servers; nlb: CNAME to an internal NLB)."""

# split: this module mixes levels (issue 33 §7.2); the pure test -> tests/unit.

from __future__ import annotations

import json

import pytest

from rke_aws_offline.engine import harness
from tests.support.configs import set_key
from tests.support.runs import run_cached, run_stack_cached
from tests.support.userdata import server_ips

ZONE = "aws:route53/zone:Zone"
RECORD = "aws:route53/record:Record"
TARGET_GROUP = "aws:lb/targetGroup:TargetGroup"
ATTACHMENT = "aws:lb/targetGroupAttachment:TargetGroupAttachment"
LISTENER = "aws:lb/listener:Listener"
LOAD_BALANCER = "aws:lb/loadBalancer:LoadBalancer"


def _mode(run: harness.ProgramRun) -> str:
    return json.loads(run.config.get("rke-aws:controlPlane", "{}")).get("endpoint", "dns")


def _nlb_run(stack: str) -> harness.ProgramRun:
    """The stack with an NLB endpoint, its first run shared (read here, never changed): tests/emulated/test_snapshots.py
    evaluates rke2-prod's the same way."""
    cfg = harness.stack_config(stack)
    if json.loads(cfg.get("rke-aws:controlPlane", "{}")).get("endpoint") == "nlb":
        return run_stack_cached(stack)
    return run_cached(set_key(cfg, "controlPlane", {"endpoint": "nlb"}), stack=stack)


def test_endpoint_name_lives_in_a_private_zone_of_the_vpc(stack_run):
    endpoint = stack_run.outputs["controlPlaneEndpoint"]
    (zone,) = stack_run.of_type(ZONE)
    assert endpoint == f"api.{zone.inputs['name']}", zone.urn
    (vpc,) = zone.inputs["vpcs"]
    assert vpc["vpcRegion"] == stack_run.config["aws:region"], zone.urn
    (record,) = stack_run.of_type(RECORD)
    assert record.inputs["name"] == endpoint and record.inputs["ttl"] <= 60, record.urn


def test_endpoint_resolves_to_every_server_or_to_the_load_balancer(stack_run):
    (record,) = stack_run.of_type(RECORD)
    if _mode(stack_run) == "nlb":  # whose targets are every server (test_nlb_*)
        (lb,) = stack_run.of_type(LOAD_BALANCER)
        assert (record.inputs["type"], record.inputs["records"]) == ("CNAME", [lb.state["dnsName"]]), record.urn
        return
    assert record.inputs["type"] == "A", record.urn
    assert sorted(record.inputs["records"]) == server_ips(stack_run), \
        f"{record.urn}: {record.inputs['records']} is not every server {server_ips(stack_run)}"


@pytest.mark.parametrize("stack", ["rke2-prod", "rke-prod", "rke2-govcloud"])
def test_nlb_listens_on_the_distributions_ports_and_health_checks_every_server(stack):
    run = _nlb_run(stack)
    ports = {9345, 6443} if run.outputs["distribution"] == "rke2" else {6443}
    (lb,) = run.of_type(LOAD_BALANCER)
    assert lb.inputs["internal"] is True and lb.inputs["loadBalancerType"] == "network", lb.urn
    (record,) = run.of_type(RECORD)
    assert record.inputs["type"] == "CNAME" and len(record.inputs["records"]) == 1, record.urn
    groups = {int(tg.inputs["port"]): tg for tg in run.of_type(TARGET_GROUP)}
    assert set(groups) == ports, f"{stack}: target groups on {sorted(groups)}"
    listeners = {int(ls.inputs["port"]): ls for ls in run.of_type(LISTENER)}
    assert set(listeners) == ports, f"{stack}: listeners on {sorted(listeners)}"
    attached: dict[str, list[str]] = {}
    for a in run.of_type(ATTACHMENT):
        attached.setdefault(a.inputs["targetGroupArn"], []).append(a.inputs["targetId"])
    for port, tg in groups.items():
        assert tg.inputs["protocol"] == "TCP" and tg.inputs["targetType"] == "ip", tg.urn
        arn = tg.state.get("arn")
        assert sorted(attached.get(arn, [])) == server_ips(run), f"{tg.urn}: targets {attached.get(arn)}"
        (action,) = listeners[port].inputs["defaultActions"]
        assert action["type"] == "forward" and action["targetGroupArn"] == arn, listeners[port].urn
        hc = tg.inputs["healthCheck"]
        assert int(hc["port"]) == port, tg.urn
        if port == 9345:
            # The supervisor's /ping answers without credentials.
            assert (hc["protocol"], hc["path"], hc["matcher"]) == ("HTTPS", "/ping", "200"), tg.urn
        else:
            # kube-apiserver runs with anonymous-auth=false: an HTTP check would get 401 and mark
            # every server unhealthy (the NLB then fails open); the check must be TCP.
            assert hc["protocol"] == "TCP" and "path" not in hc and "matcher" not in hc, tg.urn
