"""rke-aws policy rules, importable without starting a policy pack.

`__main__.py` next to this file hands `POLICIES` to `PolicyPack` (which starts the analyzer's gRPC
server); tests import this module and call each policy's `validate` directly.

What the engine passes:
- resource policies (`Analyze`) see a resource's *inputs*, camelCase (`metadataOptions.httpTokens`);
  the engine calls every resource policy for every resource, so each validator filters on type;
- stack policies (`AnalyzeStack`) see every resource's *outputs* (tfbridge outputs carry `id`),
  plus `dependencies` / `property_dependencies` (resource objects);
- at preview time, values computed by the provider are unknown; reading one raises
  `UnknownValueError`, which the SDK turns into an advisory "can't run during preview" note.
  Where an unknown value still answers the question (an instance profile that is an output of
  another resource *is* set), the rules read it with `_known` instead.

Configuration (`pulumi preview --policy-pack policies --policy-pack-config cfg.json`):
    {"sg-no-public-admin-ports": {"adminCidrs": ["198.51.100.7/32"]}}
lists world-wide CIDRs (0.0.0.0/0, ::/0) that may nonetheless reach the admin ports (the same key
for sg-no-public-admin-union, which judges the union of a group's sources).
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import functools
import gzip
import importlib.util
import ipaddress
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

INSTANCE = "aws:ec2/instance:Instance"
SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
SG_INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
SG_EGRESS_RULE = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
EC2_SG_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
IAM_ROLE = "aws:iam/role:Role"
IAM_ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
IAM_USER_POLICY = "aws:iam/userPolicy:UserPolicy"
IAM_POLICY = "aws:iam/policy:Policy"
IAM_ROLE_POLICY_ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"

CLUSTER_TAG_PREFIX = "kubernetes.io/cluster/"
# The CCM runs on the host network: hop limit 1 keeps instance credentials away from pods. 2 (one
# container hop) only on instances that state why in the tag below; never more.
DEFAULT_IMDS_HOP_LIMIT = 1
MAX_IMDS_HOP_LIMIT = 2
IMDS_REASON_TAG = "rke-aws/imds-hop-limit-reason"
# TCP ports that must never be reachable from the whole internet (inclusive ranges).
ADMIN_PORTS: tuple[tuple[int, int, str], ...] = (
    (22, 22, "SSH"),
    (6443, 6443, "Kubernetes API"),
    (9345, 9345, "RKE2 supervisor"),
    (2379, 2380, "etcd"),
    (10250, 10250, "kubelet"),
)
ADMIN_CIDRS_CONFIG = "adminCidrs"


# --- reading props (proxies that raise UnknownValueError on unknown values) -------------------------


def _get(props: Any, *path: str, default: Any = None) -> Any:
    """props[path0][path1]...; `default` when a level is missing or not a mapping. Unknowns raise."""
    cur = props
    for key in path:
        if not isinstance(cur, Mapping) or key not in cur:
            return default
        cur = cur[key]
    return default if cur is None else cur


def _known(props: Any, *path: str, default: Any = None) -> tuple[Any, bool]:
    """(`_get(...)`, True), or (None, False) when the value is unknown (preview)."""
    try:
        return _get(props, *path, default=default), True
    except UnknownValueError:
        return None, False


def _known_items(value: Any) -> tuple[list[Any], bool]:
    """A list's elements that are known, and whether all of them were."""
    if value is None:
        return [], True
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        return [value], True
    items, complete = [], True
    for i in range(len(value)):
        try:
            items.append(value[i])
        except UnknownValueError:
            complete = False
    return items, complete


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        return [value]
    return list(value)


def _tag_keys(props: Any) -> set[str]:
    """Keys of `tags` (unknown raises: nothing can be said) and, where known, `tagsAll` (which adds
    the provider's default tags)."""
    keys: set[str] = set()
    tags = _get(props, "tags", default={})
    if isinstance(tags, Mapping):
        keys.update(str(k) for k in tags)
    tags_all, known = _known(props, "tagsAll", default={})
    if known and isinstance(tags_all, Mapping):
        keys.update(str(k) for k in tags_all)
    return keys


def _cluster_tag_keys(props: Any) -> list[str]:
    return sorted(k for k in _tag_keys(props) if k.startswith(CLUSTER_TAG_PREFIX))


def _int(value: Any) -> int | None:
    if value is None or value == "":
        return None
    return int(float(value))


# --- instances ------------------------------------------------------------------------------------

def validate_instance_imdsv2(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != INSTANCE:
        return
    tokens = _get(args.props, "metadataOptions", "httpTokens")
    if tokens != "required":
        report(f"{args.urn}: metadataOptions.httpTokens is {tokens!r}; IMDSv2 must be required "
               "(httpTokens: \"required\"), otherwise any SSRF on a node can read its role's credentials")


def validate_instance_hop_limit(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != INSTANCE:
        return
    # Unset means the EC2 default, 1.
    limit = _int(_get(args.props, "metadataOptions", "httpPutResponseHopLimit"))
    if limit is None or limit <= DEFAULT_IMDS_HOP_LIMIT:
        return
    tags, known = _known(args.props, "tags", default={})
    reason = str((tags or {}).get(IMDS_REASON_TAG) or "").strip() if known and isinstance(tags, Mapping) else ""
    if limit > MAX_IMDS_HOP_LIMIT:
        report(f"{args.urn}: metadataOptions.httpPutResponseHopLimit is {limit}; at most {MAX_IMDS_HOP_LIMIT}, "
               "or pods further away reach the node's credentials")
    elif known and not reason:
        report(f"{args.urn}: metadataOptions.httpPutResponseHopLimit is {limit}: every pod on the pod network can "
               f"take the node role's credentials; use {DEFAULT_IMDS_HOP_LIMIT} (the CCM runs on the host network), "
               f"or state why in the instance tag {IMDS_REASON_TAG}")


# A proxy URL with credentials (scheme://user[:password]@host) in a proxy variable: user data is readable
# by anyone allowed ec2:DescribeInstanceAttribute.
PROXY_CREDENTIALS_RE = re.compile(r"(?i)(?:https?|all)_proxy\s*=\s*['\"]?[a-z][a-z0-9+.-]*://[^\s'\"/@]+@", re.ASCII)


def _user_data_text(props: Any) -> str | None:
    encoded, known = _known(props, "userDataBase64")
    if known and isinstance(encoded, str):
        try:
            raw = base64.b64decode(encoded, validate=True)
            return (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8", "replace")
        except (binascii.Error, OSError, EOFError):
            return None
    text, known = _known(props, "userData")
    return text if known and isinstance(text, str) else None


def validate_instance_user_data_no_proxy_credentials(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != INSTANCE:
        return
    text = _user_data_text(args.props)
    if text is not None and PROXY_CREDENTIALS_RE.search(text):
        report(f"{args.urn}: the user data sets a proxy URL with credentials (user:password@); anyone allowed "
               "ec2:DescribeInstanceAttribute reads user data in plain text: let the proxy admit the cluster by "
               "source address instead")


def validate_instance_root_encrypted(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != INSTANCE:
        return
    encrypted = _get(args.props, "rootBlockDevice", "encrypted")
    if encrypted is not True:
        report(f"{args.urn}: rootBlockDevice.encrypted is {encrypted!r}; the root volume (etcd data, "
               "kubelet credentials) must be encrypted")


def validate_instance_servers_on_demand(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != INSTANCE:
        return
    roles = str(_get(args.props, "tags", "rke-aws/roles", default="")).split(",")
    market = _get(args.props, "instanceMarketOptions", "marketType")
    if market is not None and {"controlplane", "etcd"} & set(roles):
        report(f"{args.urn}: instanceMarketOptions.marketType is {market!r} on a node with roles {roles}; AWS may "
               "take such capacity back at short notice, and servers hold etcd quorum and the API: servers run "
               "on-demand")


RANCHER_CLUSTER = "rancher2:index/cluster:Cluster"
RANCHER_PROVIDER = "pulumi:providers:rancher2"
# components/plan/rancher.py: the per-cluster switch of Rancher's version management (Rancher >= 2.11).
VERSION_MANAGEMENT = "rancher.io/imported-cluster-version-management"


def validate_rancher_cluster_imported(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != RANCHER_CLUSTER:
        return
    drivers = [k for k in ("rke2Config", "k3sConfig", "rkeConfig", "eksConfigV2", "aksConfigV2", "gkeConfigV2",
                           "okeConfig") if _get(args.props, k) is not None]
    if drivers:
        report(f"{args.urn}: {', '.join(drivers)} set: Rancher would provision or upgrade the cluster itself "
               "(rke2Config.version is Rancher's upgrade path); register it as an imported cluster")
    value, known = _known(args.props, "annotations", VERSION_MANAGEMENT)
    if known and value not in ("true", "false"):
        report(f"{args.urn}: annotation {VERSION_MANAGEMENT} is {value!r}; say who upgrades (\"false\": this "
               "program, \"true\": Rancher). Unset or system-default follows Rancher's global setting, on by "
               "default, and both sides would write upgrade Plans")


def validate_rancher_provider_tls(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != RANCHER_PROVIDER:
        return
    insecure = _get(args.props, "insecure")
    if str(insecure).lower() == "true":
        report(f"{args.urn}: insecure is {insecure!r}: the Rancher API token would go to whoever answers at the "
               "URL; Rancher must present a trusted certificate")


def validate_instance_one_cluster_tag(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != INSTANCE:
        return
    keys = _cluster_tag_keys(args.props)
    if len(keys) != 1:
        report(f"{args.urn}: {len(keys)} {CLUSTER_TAG_PREFIX}* tags {keys}; exactly one is required "
               "(the CCM cannot find an instance without it and refuses one with two)")


def validate_instance_profile(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != INSTANCE:
        return
    profile, known = _known(args.props, "iamInstanceProfile")
    # Unknown at preview: the name is another resource's output, so a profile *is* attached.
    if known and not profile:
        report(f"{args.urn}: no iamInstanceProfile; nodes need the cloud-provider role")


# --- security groups: no internet-wide ingress to admin ports -----------------------------------

# "The internet" is more than any one organisation holds. IPv4: more public addresses than a /8
# (the largest block a registry ever assigned to one holder; the same threshold as the program's
# access.adminCidrs, components/settings/model.py WORLD_ADMIN_PUBLIC_ADDRESSES, held equal by
# tests/program/test_hostile.py). IPv6: more of the global unicast space (2000::/3) than a /19, the
# largest allocations registries make. 0.0.0.0/1 + 128.0.0.0/1 is the internet in pieces.
WORLD_IPV4_ADDRESSES = 1 << 24
WORLD_IPV6_ADDRESSES = 1 << (128 - 19)
# Not reachable from the internet (IANA special-purpose registries): does not count.
_NOT_PUBLIC_V4 = tuple(ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
    "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/3"))
_NOT_PUBLIC_V4 = tuple(ipaddress.collapse_addresses(_NOT_PUBLIC_V4))  # disjoint, so each counts once
_GLOBAL_V6 = ipaddress.ip_network("2000::/3")


def _network(cidr: Any) -> Any | None:
    try:
        return ipaddress.ip_network(str(cidr).strip(), strict=False)
    except ValueError:
        return None


def _public_count(nets: Iterable[Any]) -> tuple[int, int]:
    """(public IPv4 addresses, global IPv6 addresses) the union of `nets` covers, each counted once."""
    v4 = list(ipaddress.collapse_addresses(n for n in nets if n.version == 4))
    v6 = list(ipaddress.collapse_addresses(n for n in nets if n.version == 6))
    four = sum(n.num_addresses for n in v4)
    for u in v4:
        for q in _NOT_PUBLIC_V4:
            if u.overlaps(q):
                four -= (u if u.subnet_of(q) else q).num_addresses
    six = 0
    for u in v6:
        if u.overlaps(_GLOBAL_V6):
            six += (u if u.subnet_of(_GLOBAL_V6) else _GLOBAL_V6).num_addresses
    return four, six


def _is_world(nets: Iterable[Any]) -> bool:
    four, six = _public_count(list(nets))
    return four > WORLD_IPV4_ADDRESSES or six > WORLD_IPV6_ADDRESSES


def _world(cidr: Any) -> bool:
    net = _network(cidr)
    return net is not None and (net.prefixlen == 0 or _is_world([net]))


def _normal_cidr(cidr: Any) -> str:
    try:
        return str(ipaddress.ip_network(str(cidr).strip(), strict=False))
    except ValueError:
        return str(cidr)


_NO_PORTS = {"icmp", "1", "icmpv6", "58"}


def _port_range(protocol: Any, from_port: Any, to_port: Any) -> tuple[int, int] | None:
    """The ports a rule opens; None when the protocol has no ports (ICMP)."""
    proto = "-1" if protocol is None else str(protocol).strip().lower()
    if proto in ("-1", "all"):
        return (0, 65535)  # every protocol, every port
    if proto in _NO_PORTS:
        return None
    lo, hi = _int(from_port), _int(to_port)
    lo = 0 if lo is None or lo < 0 else lo
    hi = 65535 if hi is None or hi < 0 else hi
    return (lo, hi)


def _ingress_entries(args: ResourceValidationArgs) -> Iterable[tuple[str, Any, Any, Any, list[Any]]]:
    """(where, protocol, fromPort, toPort, cidrs) for every ingress permission the resource declares."""
    props = args.props
    if args.resource_type == SG_INGRESS_RULE:
        cidrs = [c for c in (_get(props, "cidrIpv4"), _get(props, "cidrIpv6")) if c]
        yield ("", _get(props, "ipProtocol"), _get(props, "fromPort"), _get(props, "toPort"), cidrs)
    elif args.resource_type == EC2_SG_RULE and _get(props, "type") == "ingress":
        cidrs = _as_list(_get(props, "cidrBlocks")) + _as_list(_get(props, "ipv6CidrBlocks"))
        yield ("", _get(props, "protocol"), _get(props, "fromPort"), _get(props, "toPort"), cidrs)
    elif args.resource_type == SECURITY_GROUP:
        for i, entry in enumerate(_as_list(_get(props, "ingress"))):
            cidrs = _as_list(_get(entry, "cidrBlocks")) + _as_list(_get(entry, "ipv6CidrBlocks"))
            yield (f" ingress[{i}]", _get(entry, "protocol"), _get(entry, "fromPort"), _get(entry, "toPort"), cidrs)


def validate_no_public_admin_ingress(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type not in (SG_INGRESS_RULE, EC2_SG_RULE, SECURITY_GROUP):
        return
    allowed = {_normal_cidr(c) for c in (args.get_config().get(ADMIN_CIDRS_CONFIG) or [])}
    for where, protocol, from_port, to_port, cidrs in _ingress_entries(args):
        ports = _port_range(protocol, from_port, to_port)
        if ports is None:
            continue
        hit = [name for lo, hi, name in ADMIN_PORTS if ports[0] <= hi and ports[1] >= lo]
        if not hit:
            continue
        for cidr in cidrs:
            if _world(cidr) and _normal_cidr(cidr) not in allowed:
                report(f"{args.urn}{where}: ingress from {cidr} ({protocol} {ports[0]}-{ports[1]}) reaches "
                       f"{', '.join(hit)}; open admin ports only to access.adminCidrs, or list the CIDR in "
                       f"this policy's {ADMIN_CIDRS_CONFIG} config")


# --- IAM policy documents ------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def iam_reference() -> dict[str, Any]:
    """cfn-lint's copy of the IAM service authorization reference (cfnlint/data/AdditionalSpecs/Policies.json:
    service prefix -> its actions, resource types and condition keys), read from the installed package's folder
    without importing it: cfn-lint's __init__ loads its whole linter (the template decoder, sympy, networkx), about
    a second of CPU per process, for one data file."""
    spec = importlib.util.find_spec("cfnlint")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("cfn-lint is not installed: the IAM rules read its copy of the IAM service "
                                  "reference (policies/requirements.txt pins it)", name="cfnlint")
    folder = Path(next(iter(spec.submodule_search_locations)))
    return json.loads((folder / "data" / "AdditionalSpecs" / "Policies.json").read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1)
def action_database() -> dict[str, set[str]]:
    """service prefix -> lowercase action names, from cfn-lint's copy of the IAM service reference."""
    return {svc.lower(): {a.lower() for a in (body.get("Actions") or {})} for svc, body in iam_reference().items()}


def unknown_actions(actions: Iterable[str]) -> list[str]:
    """Actions (wildcards allowed) that name no action in the database; "*" is left to the wildcard rule."""
    db = action_database()
    bad = []
    for action in actions:
        if action == "*":
            continue
        service, sep, name = str(action).partition(":")
        known = db.get(service.lower())
        if not sep or known is None or not name:
            bad.append(action)
        elif any(ch in name for ch in "*?"):
            if not fnmatch.filter(known, name.lower()):
                bad.append(action)
        elif name.lower() not in known:
            bad.append(action)
    return bad


def _documents(args: ResourceValidationArgs) -> list[tuple[str, Any]]:
    """(where, policy document) pairs the resource declares."""
    if args.resource_type in (IAM_ROLE_POLICY, IAM_USER_POLICY, IAM_POLICY):
        return [("policy", _get(args.props, "policy"))]
    if args.resource_type == IAM_ROLE:
        return [(f"inlinePolicies[{i}].policy", _get(p, "policy"))
                for i, p in enumerate(_as_list(_get(args.props, "inlinePolicies"))) if _get(p, "policy")]
    return []


def _statements(args: ResourceValidationArgs, report: ReportViolation) -> Iterable[tuple[str, Mapping]]:
    for where, doc in _documents(args):
        if doc is None:
            continue
        if isinstance(doc, str):
            try:
                doc = json.loads(doc)
            except ValueError as err:
                report(f"{args.urn}: {where} is not valid JSON ({err})")
                continue
        if not isinstance(doc, Mapping):
            report(f"{args.urn}: {where} is not a policy document")
            continue
        for i, stmt in enumerate(_as_list(doc.get("Statement"))):
            if isinstance(stmt, Mapping):
                yield (f"{where} Statement[{i}]", stmt)


def _allows(stmt: Mapping) -> bool:
    return str(stmt.get("Effect", "Allow")) != "Deny"


def validate_iam_no_wildcard_actions(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for where, stmt in _statements(args, lambda _m, _u=None: None):
        if not _allows(stmt):
            continue
        wild = [a for a in _as_list(stmt.get("Action")) if a == "*" or str(a).endswith(":*")]
        if wild:
            report(f"{args.urn}: {where} allows {wild}; list the actions the node needs")
        if "NotAction" in stmt:
            report(f"{args.urn}: {where} allows NotAction {_as_list(stmt['NotAction'])}, i.e. every other action")


def validate_iam_no_passrole_on_any_resource(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for where, stmt in _statements(args, lambda _m, _u=None: None):
        if not _allows(stmt):
            continue
        passrole = [a for a in _as_list(stmt.get("Action")) if fnmatch.fnmatchcase("iam:passrole", str(a).lower())]
        if not passrole:
            continue
        if "*" in _as_list(stmt.get("Resource")) or "NotResource" in stmt:
            report(f"{args.urn}: {where} allows {passrole} (iam:PassRole) on every resource; "
                   "name the role ARNs that may be passed")


def validate_iam_known_actions(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for where, stmt in _statements(args, report):
        actions = _as_list(stmt.get("Action")) + _as_list(stmt.get("NotAction"))
        bad = unknown_actions(actions)
        if bad:
            report(f"{args.urn}: {where} names actions IAM does not have: {bad}")


# --- stack rules: resolving references between resources ----------------------------------------

def _ids(res: Any) -> set[str]:
    """Values other resources use to reference `res`: its id (and, for roles, its name = id)."""
    out = set()
    for prop in ("id", "name") if res.resource_type == IAM_ROLE else ("id",):
        value, known = _known(res.props, prop)
        if known and value:
            out.add(str(value))
    return out


def _referenced(res: Any, prop: str, candidates: list[Any]) -> tuple[list[Any], list[str]]:
    """The candidate resources that `res.props[prop]` (an id or a list of ids) refers to, and the
    known ids that match no candidate (resources outside the stack).

    Ids are matched first. Where they are unknown (preview of a create: the group's id and so the
    instance's vpcSecurityGroupIds do not exist yet) or unmatched because a candidate's own id is
    unknown, the reference is resolved through the engine's dependency records instead:
    `property_dependencies[prop]` when present, else `dependencies` of the candidates' type.
    """
    by_id: dict[str, Any] = {}
    for c in candidates:
        for i in _ids(c):
            by_id.setdefault(i, c)
    value, known = _known(res.props, prop)
    items, complete = _known_items(value) if known else ([], False)
    found: list[Any] = []
    unmatched: list[str] = []
    for item in items:
        if item in by_id:
            if by_id[item] not in found:
                found.append(by_id[item])
        elif item:
            unmatched.append(str(item))
    if complete and not unmatched:
        return found, []
    candidate_urns = {c.urn for c in candidates}
    prop_deps = (getattr(res, "property_dependencies", None) or {}).get(prop)
    deps = prop_deps if prop_deps is not None else [d for d in (getattr(res, "dependencies", None) or [])
                                                    if d.urn in candidate_urns]
    deps = [d for d in deps if d.urn in candidate_urns and d not in found]
    # Some of the references are unknown: every dependency of the candidates' type may be one of them.
    # All are known but some match nothing: only candidates whose own id is unknown can be those.
    added = deps if not complete else [d for d in deps if not _ids(d)]
    found.extend(added)
    return found, ([] if added else unmatched)


# --- stack rule: exactly one cluster-tagged security group per instance ---------------------------

def validate_one_cluster_sg_per_instance(args: StackValidationArgs, report: ReportViolation) -> None:
    """The CCM uses the instance's one cluster-tagged group for load balancer traffic and refuses
    to create a load balancer when it finds two.

    Preview-time limitation: on a first preview the groups' ids and the instances'
    vpcSecurityGroupIds are unknown; groups are then matched through the instances' dependency
    records (see `_referenced`). Groups outside the stack (ids that match no group here) cannot be
    inspected: they never count as tagged, and an instance whose only groups are such groups is
    not reported as having none.
    """
    groups = [r for r in args.resources if r.resource_type == SECURITY_GROUP]
    for inst in (r for r in args.resources if r.resource_type == INSTANCE):
        attached, external = _referenced(inst, "vpcSecurityGroupIds", groups)
        own = _cluster_tag_keys(inst.props)
        wanted = set(own) if len(own) == 1 else None

        def tagged(sg: Any, wanted: set | None = wanted) -> bool:
            keys = set(_cluster_tag_keys(sg.props))
            return bool(keys & wanted) if wanted is not None else bool(keys)

        tagged_groups = [g.urn for g in attached if tagged(g)]
        if len(tagged_groups) > 1 or (not tagged_groups and not external):
            report(f"{inst.urn}: {len(tagged_groups)} cluster-tagged security groups {tagged_groups} "
                   f"(cluster tag {own}); exactly one is required", inst.urn)


# --- stack rules: one owner per security group rule set and per role policy set ---------------------

_PROTO = {"all": "-1", "6": "tcp", "17": "udp", "1": "icmp", "58": "icmpv6"}


def _perm(direction: str, protocol: Any, from_port: Any, to_port: Any) -> tuple:
    proto = "-1" if protocol is None else str(protocol).strip().lower()
    proto = _PROTO.get(proto, proto)
    if proto == "-1":
        return (direction, proto, None, None)
    return (direction, proto, _int(from_port), _int(to_port))


def _separate_rule_sigs(rule: Any, own_ids: set[str]) -> set[tuple]:
    """Permission signatures (direction, protocol, from, to, source) of a separate rule resource."""
    p = rule.props
    if rule.resource_type in (SG_INGRESS_RULE, SG_EGRESS_RULE):
        direction = "ingress" if rule.resource_type == SG_INGRESS_RULE else "egress"
        perm = _perm(direction, _get(p, "ipProtocol"), _get(p, "fromPort"), _get(p, "toPort"))
        sources = []
        if _get(p, "cidrIpv4"):
            sources.append(("cidr", _normal_cidr(_get(p, "cidrIpv4"))))
        if _get(p, "cidrIpv6"):
            sources.append(("cidr", _normal_cidr(_get(p, "cidrIpv6"))))
        if _get(p, "prefixListId"):
            sources.append(("prefixList", _get(p, "prefixListId")))
        ref, known = _known(p, "referencedSecurityGroupId")
        if known and ref:
            sources.append(("self",) if ref in own_ids else ("sg", ref))
        return {perm + (s,) for s in sources}
    # aws:ec2/securityGroupRule:SecurityGroupRule
    perm = _perm(str(_get(p, "type", default="")), _get(p, "protocol"), _get(p, "fromPort"), _get(p, "toPort"))
    return {perm + (s,) for s in _inline_sources(p, own_ids)}


def _inline_sources(p: Any, own_ids: set[str]) -> list[tuple]:
    sources: list[tuple] = [("cidr", _normal_cidr(c)) for c in _as_list(_get(p, "cidrBlocks")) + _as_list(_get(p, "ipv6CidrBlocks"))]
    sources += [("prefixList", x) for x in _as_list(_get(p, "prefixListIds"))]
    for sg in _as_list(_get(p, "securityGroups")) + _as_list(_get(p, "sourceSecurityGroupId")):
        sources.append(("self",) if sg in own_ids else ("sg", sg))
    if _get(p, "self") is True:
        sources.append(("self",))
    return sources


def _describe(sig: tuple) -> str:
    direction, proto, lo, hi, source = sig
    ports = "all ports" if proto == "-1" else f"{proto} {lo}-{hi}"
    return f"{direction} {ports} {'from' if direction == 'ingress' else 'to'} {':'.join(map(str, source))}"


def _targeting(owners: list[Any], members: list[Any], prop: str) -> dict[str, list[Any]]:
    """owner URN -> the member resources whose `prop` references that owner."""
    targeting: dict[str, list[Any]] = {o.urn: [] for o in owners}
    for member in members:
        for owner in _referenced(member, prop, owners)[0]:
            targeting[owner.urn].append(member)
    return targeting


def validate_sg_rules_single_owner(args: StackValidationArgs, report: ReportViolation) -> None:
    """A group's rules are managed either inline (`ingress`/`egress`) or by rule resources, never both:
    the group would remove the separate rules on its next update and the rules would add them back.

    Stack policies see outputs, and after a refresh a group's `ingress`/`egress` outputs list every
    rule AWS has, including those the separate rule resources created. So only inline entries that
    no separate rule accounts for are reported; an unknown `ingress`/`egress` (preview of a create
    without inline rules: the provider computes them) means none were declared.
    """
    groups = [r for r in args.resources if r.resource_type == SECURITY_GROUP]
    rules = [r for r in args.resources if r.resource_type in (SG_INGRESS_RULE, SG_EGRESS_RULE, EC2_SG_RULE)]
    targeting = _targeting(groups, rules, "securityGroupId")
    for g in groups:
        separate = targeting[g.urn]
        if not separate:
            continue
        own = _ids(g)
        accounted: set[tuple] = set()
        for rule in separate:
            accounted |= _separate_rule_sigs(rule, own)
        stray: list[str] = []
        for direction in ("ingress", "egress"):
            entries, known = _known(g.props, direction)
            if not known:
                continue
            for entry in _as_list(entries):
                perm = _perm(direction, _get(entry, "protocol"), _get(entry, "fromPort"), _get(entry, "toPort"))
                for source in _inline_sources(entry, own) or [("none",)]:
                    sig = perm + (source,)
                    if sig not in accounted:
                        stray.append(_describe(sig))
        if stray:
            report(f"{g.urn}: inline rules {stray} while rule resources {[r.urn for r in separate]} also manage "
                   "this group; move the inline rules to separate rule resources", g.urn)


def _policy_doc(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def validate_role_policies_single_owner(args: StackValidationArgs, report: ReportViolation) -> None:
    """A role's policies are managed either on the role (`inlinePolicies`, `managedPolicyArns`) or by
    RolePolicy / RolePolicyAttachment resources, never both (each side removes what the other adds).

    As with security groups, a refreshed role's outputs list what the separate resources created, so
    only entries that no RolePolicy / RolePolicyAttachment of the role accounts for are reported.
    The provider's empty placeholder (`{name: "", policy: ""}`) is ignored.
    """
    roles = [r for r in args.resources if r.resource_type == IAM_ROLE]
    separate_types = (IAM_ROLE_POLICY, IAM_ROLE_POLICY_ATTACHMENT)
    targeting = _targeting(roles, [r for r in args.resources if r.resource_type in separate_types], "role")
    for role in roles:
        separate = targeting[role.urn]
        if not separate:
            continue
        names, docs, arns = set(), [], set()
        for res in separate:
            if res.resource_type == IAM_ROLE_POLICY:
                name, known = _known(res.props, "name")
                if known and name:
                    names.add(name)
                doc, known = _known(res.props, "policy")
                if known and doc:
                    docs.append(_policy_doc(doc))
            else:
                arn, known = _known(res.props, "policyArn")
                if known and arn:
                    arns.add(arn)
        stray: list[str] = []
        inline, known = _known(role.props, "inlinePolicies")
        if known:
            for entry in _as_list(inline):
                name, doc = _get(entry, "name", default=""), _get(entry, "policy", default="")
                if not name and not doc:
                    continue
                if name in names or (doc and _policy_doc(doc) in docs):
                    continue
                stray.append(f"inlinePolicies {name or '<unnamed>'}")
        managed, known = _known(role.props, "managedPolicyArns")
        if known:
            stray += [f"managedPolicyArns {arn}" for arn in _as_list(managed) if arn and arn not in arns]
        if stray:
            report(f"{role.urn}: {stray} declared on the role while {[r.urn for r in separate]} also manage "
                   "its policies; use RolePolicy / RolePolicyAttachment resources only", role.urn)


# --- stack rule: with workload identity, no long-lived key ------------------------------------------

IAM_OIDC_PROVIDER = "aws:iam/openIdConnectProvider:OpenIdConnectProvider"
IAM_ACCESS_KEY = "aws:iam/accessKey:AccessKey"


def validate_irsa_no_access_keys(args: StackValidationArgs, report: ReportViolation) -> None:
    """A stack that trusts its cluster's service-account issuer (an IAM OIDC provider: identity.serviceAccounts
    irsa) gives workloads roles, never an IAM user's access key (issue 36: the EBS CSI controller moves to its role
    and its key is deleted in the same update)."""
    if not any(r.resource_type == IAM_OIDC_PROVIDER for r in args.resources):
        return
    for r in args.resources:
        if r.resource_type == IAM_ACCESS_KEY:
            report(f"{r.urn}: an IAM access key in a stack with workload identity; give the workload an IRSA role "
                   "(identity.roles) instead", r.urn)


# --- stack rule: the admin ports' sources together are not the internet -----------------------------

def validate_no_public_admin_union(args: StackValidationArgs, report: ReportViolation) -> None:
    """The per-rule check (sg-no-public-admin-ports) sees one CIDR at a time; 0.0.0.0/1 and
    128.0.0.0/1 in two rules open an admin port to everyone all the same. Per security group and
    admin port, the union of every source CIDR reaching it (separate rule resources and inline
    ingress; the config's allowed CIDRs left out) must not be the internet."""
    allowed = {_normal_cidr(c) for c in (args.get_config().get(ADMIN_CIDRS_CONFIG) or [])}
    groups = [r for r in args.resources if r.resource_type == SECURITY_GROUP]
    rule_types = (SG_INGRESS_RULE, EC2_SG_RULE)
    targeting = _targeting(groups, [r for r in args.resources if r.resource_type in rule_types], "securityGroupId")
    for g in groups:
        entries: list[tuple[Any, Any, Any, list[Any]]] = []
        for rule in targeting[g.urn]:
            p = rule.props
            if rule.resource_type == SG_INGRESS_RULE:
                cidrs = [c for c in (_known(p, "cidrIpv4")[0], _known(p, "cidrIpv6")[0]) if c]
                entries.append((_known(p, "ipProtocol")[0], _known(p, "fromPort")[0], _known(p, "toPort")[0], cidrs))
            elif _known(p, "type")[0] == "ingress":
                cidrs = _as_list(_known(p, "cidrBlocks")[0]) + _as_list(_known(p, "ipv6CidrBlocks")[0])
                entries.append((_known(p, "protocol")[0], _known(p, "fromPort")[0], _known(p, "toPort")[0], cidrs))
        inline, known = _known(g.props, "ingress")
        if known:
            for e in _as_list(inline):
                cidrs = _as_list(_get(e, "cidrBlocks")) + _as_list(_get(e, "ipv6CidrBlocks"))
                entries.append((_get(e, "protocol"), _get(e, "fromPort"), _get(e, "toPort"), cidrs))
        for lo, hi, name in ADMIN_PORTS:
            nets = []
            for protocol, from_port, to_port, cidrs in entries:
                ports = _port_range(protocol, from_port, to_port)
                if ports is None or ports[0] > hi or ports[1] < lo:
                    continue
                nets += [n for n in map(_network, cidrs) if n is not None and _normal_cidr(str(n)) not in allowed]
            if len(nets) > 1 and _is_world(nets) and not any(_world(str(n)) for n in nets):
                four, six = _public_count(nets)
                report(f"{g.urn}: ingress from {sorted({str(n) for n in nets})} together reaches {name} from "
                       f"{four:,} public IPv4 and {six:,} IPv6 addresses: the internet in pieces; open admin ports "
                       "only to your networks", g.urn)


# --- the policies ----------------------------------------------------------------------------------

def _resource(name: str, description: str, validate: Callable, **kw: Any) -> ResourceValidationPolicy:
    return ResourceValidationPolicy(name=name, description=description, validate=validate,
                                    enforcement_level=EnforcementLevel.MANDATORY, **kw)


def _stack(name: str, description: str, validate: Callable, **kw: Any) -> StackValidationPolicy:
    return StackValidationPolicy(name=name, description=description, validate=validate,
                                 enforcement_level=EnforcementLevel.MANDATORY, **kw)


INSTANCE_POLICIES = [
    _resource("instance-imdsv2-required", "EC2 instances require IMDSv2 (metadataOptions.httpTokens = required).",
              validate_instance_imdsv2),
    _resource("instance-imds-hop-limit", f"EC2 instances allow {DEFAULT_IMDS_HOP_LIMIT} IMDS hop; "
              f"{MAX_IMDS_HOP_LIMIT} only with a stated reason ({IMDS_REASON_TAG}).",
              validate_instance_hop_limit),
    _resource("instance-root-volume-encrypted", "EC2 instance root volumes are encrypted.",
              validate_instance_root_encrypted),
    _resource("instance-servers-on-demand", "controlplane and etcd nodes are on-demand instances (no spot).",
              validate_instance_servers_on_demand),
    _resource("instance-one-cluster-tag", "EC2 instances carry exactly one kubernetes.io/cluster/* tag.",
              validate_instance_one_cluster_tag),
    _resource("instance-profile-attached", "EC2 instances have an IAM instance profile.",
              validate_instance_profile),
    _resource("instance-user-data-no-proxy-credentials",
              "EC2 user data sets no proxy URL with credentials (user data is readable with DescribeInstanceAttribute).",
              validate_instance_user_data_no_proxy_credentials),
]

RANCHER_POLICIES = [
    _resource("rancher-cluster-imported", "Rancher clusters are imported (no driver configuration) and say who "
              f"upgrades ({VERSION_MANAGEMENT} true or false).", validate_rancher_cluster_imported),
    _resource("rancher-provider-verifies-tls", "The rancher2 provider verifies Rancher's certificate (insecure false).",
              validate_rancher_provider_tls),
]

SECURITY_GROUP_POLICIES = [
    _resource(
        "sg-no-public-admin-ports",
        "No ingress from the internet (0.0.0.0/0, ::/0, or one CIDR larger than a /8 of public addresses) to SSH, "
        "the Kubernetes API, the RKE2 supervisor, etcd or the kubelet.",
        validate_no_public_admin_ingress,
        config_schema=PolicyConfigSchema(properties={
            ADMIN_CIDRS_CONFIG: {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
                "description": "World-wide CIDRs nonetheless allowed to reach the admin ports.",
            },
        }),
    ),
]

IAM_POLICIES = [
    _resource("iam-no-wildcard-actions", "IAM policies allow no '*' or 'service:*' actions (and no Allow+NotAction).",
              validate_iam_no_wildcard_actions),
    _resource("iam-no-passrole-on-any-resource", "IAM policies allow iam:PassRole only on named roles, never Resource '*'.",
              validate_iam_no_passrole_on_any_resource),
    _resource("iam-known-actions", "Every IAM action exists in the IAM service reference (cfn-lint's Policies.json).",
              validate_iam_known_actions),
]

STACK_POLICIES = [
    _stack("one-cluster-security-group-per-instance",
           "Each instance has exactly one security group with its cluster tag.",
           validate_one_cluster_sg_per_instance),
    _stack("sg-no-public-admin-union",
           "Per security group and admin port, the union of the sources is not the internet (0.0.0.0/1 + 128.0.0.0/1).",
           validate_no_public_admin_union, config_schema=PolicyConfigSchema(properties={
               ADMIN_CIDRS_CONFIG: {"type": "array", "items": {"type": "string"}, "default": [],
                                    "description": "World-wide CIDRs nonetheless allowed to reach the admin ports."}})),
    _stack("sg-rules-single-owner",
           "A security group's rules are inline or separate rule resources, never both.",
           validate_sg_rules_single_owner),
    _stack("irsa-no-access-keys",
           "A stack with workload identity (an IAM OIDC provider) creates no IAM access key.",
           validate_irsa_no_access_keys),
    _stack("role-policies-single-owner",
           "A role's policies are on the role or separate RolePolicy/RolePolicyAttachment resources, never both.",
           validate_role_policies_single_owner),
]

RESOURCE_POLICIES = INSTANCE_POLICIES + SECURITY_GROUP_POLICIES + IAM_POLICIES + RANCHER_POLICIES
POLICIES = RESOURCE_POLICIES + STACK_POLICIES
