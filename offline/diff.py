"""`make diff BASE=<git ref>`: what a pull request changes, per stack and per resource, offline.

For each stack, the program of the base ref runs with the base's stack file, then the working tree's
program runs with the working tree's stack file and the base run's outputs as the stack's last
outputs (what the engine would hand it after the base was deployed). The two registrations are
compared resource by resource:

  + add       a resource the base did not have
  - delete    a resource the working tree no longer registers
  ~ update    changed inputs that the provider updates in place
  +- replace  a changed input that forces a new resource (REPLACE_ON below, from the providers'
              ForceNew schema), or an input that takes the ID of a resource being replaced

Inputs a resource ignores (ignore_changes) are listed but never count. Instances show their node
name; etcd members deleted or replaced are called out. If the working tree's program refuses the
change (the quorum or version guard, a bad config), that refusal is the stack's result, as in
`pulumi preview`. Both programs run under the AWS-like mocks (IDs derived from names, so they
compare across runs) in subprocesses, each importing its own checkout's `components`.

    python -m offline.diff --base origin/main [--format markdown] [--all] [stack ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parent.parent

# Inputs whose change makes the provider replace the resource (terraform-provider-aws ForceNew
# arguments, as bridged by pulumi-aws 7; pulumi-kubernetes/random for theirs). Types not listed
# update in place.
REPLACE_ON: dict[str, frozenset[str]] = {
    "aws:ec2/vpc:Vpc": frozenset({"cidrBlock", "instanceTenancy"}),
    "aws:ec2/subnet:Subnet": frozenset({"vpcId", "cidrBlock", "availabilityZone", "availabilityZoneId"}),
    "aws:ec2/subnetCidrReservation:SubnetCidrReservation": frozenset({"subnetId", "cidrBlock", "reservationType", "description"}),
    "aws:ec2/internetGateway:InternetGateway": frozenset(),
    "aws:ec2/routeTable:RouteTable": frozenset({"vpcId"}),
    "aws:ec2/route:Route": frozenset({"routeTableId", "destinationCidrBlock"}),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": frozenset({"subnetId", "gatewayId"}),
    "aws:ec2/eip:Eip": frozenset({"domain"}),
    "aws:ec2/natGateway:NatGateway": frozenset({"allocationId", "subnetId", "connectivityType", "privateIp"}),
    "aws:ec2/securityGroup:SecurityGroup": frozenset({"name", "namePrefix", "description", "vpcId"}),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": frozenset({"securityGroupId"}),
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": frozenset({"securityGroupId"}),
    "aws:ec2/instance:Instance": frozenset({"ami", "subnetId", "privateIp", "availabilityZone", "keyName",
                                           "associatePublicIpAddress", "userData", "userDataBase64", "placementGroup",
                                           "tenancy"}),
    "aws:ec2/tag:Tag": frozenset({"resourceId", "key"}),
    "aws:iam/role:Role": frozenset({"name", "namePrefix", "path"}),
    "aws:iam/rolePolicy:RolePolicy": frozenset({"role", "name", "namePrefix"}),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": frozenset({"role", "policyArn"}),
    "aws:iam/instanceProfile:InstanceProfile": frozenset({"name", "namePrefix", "path"}),
    "aws:iam/user:User": frozenset(),  # name and path change in place
    "aws:iam/userPolicy:UserPolicy": frozenset({"user", "name", "namePrefix"}),
    "aws:iam/policy:Policy": frozenset({"name", "namePrefix", "path", "description"}),
    "aws:iam/userPolicyAttachment:UserPolicyAttachment": frozenset({"user", "policyArn"}),
    "aws:iam/accessKey:AccessKey": frozenset({"user", "pgpKey"}),
    # a changed name or namespace replaces (metadata is compared whole here); type is immutable
    "kubernetes:core/v1:Secret": frozenset({"metadata", "type"}),
    "aws:ssm/parameter:Parameter": frozenset({"name"}),
    "aws:route53/zone:Zone": frozenset({"name", "delegationSetId"}),
    "aws:route53/record:Record": frozenset({"zoneId", "name", "type", "setIdentifier"}),
    "aws:lb/loadBalancer:LoadBalancer": frozenset({"name", "namePrefix", "internal", "loadBalancerType"}),
    "aws:lb/targetGroup:TargetGroup": frozenset({"name", "namePrefix", "port", "protocol", "vpcId", "targetType"}),
    "aws:lb/targetGroupAttachment:TargetGroupAttachment": frozenset({"targetGroupArn", "targetId", "port"}),
    "aws:lb/listener:Listener": frozenset({"loadBalancerArn"}),
    "aws:s3/bucket:Bucket": frozenset({"bucket", "bucketPrefix", "objectLockEnabled"}),
    "aws:s3/bucketVersioning:BucketVersioning": frozenset({"bucket", "expectedBucketOwner"}),
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration":
        frozenset({"bucket", "expectedBucketOwner"}),
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": frozenset({"bucket"}),
    "aws:s3/bucketPolicy:BucketPolicy": frozenset({"bucket"}),
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": frozenset({"bucket", "expectedBucketOwner"}),
    "aws:kms/key:Key": frozenset({"keyUsage", "customerMasterKeySpec", "multiRegion", "customKeyStoreId", "xksKeyId"}),
    "aws:kms/alias:Alias": frozenset({"name", "namePrefix"}),
    "random:index/randomPassword:RandomPassword": frozenset({"length", "special", "upper", "lower", "numeric", "keepers"}),
    "kubernetes:helm.sh/v3:Release": frozenset({"name", "namespace"}),
    "pulumi:providers:kubernetes": frozenset(),
}
INSTANCE = "aws:ec2/instance:Instance"


# ---- evaluating one checkout ---------------------------------------------------------------------

def dump(root: Path, stack_file: Path, previous: Optional[dict], out: Path) -> None:
    """Run the program in `root` with `stack_file` (in this process) and write its registrations."""
    from offline import harness

    stack = stack_file.name[len("Pulumi."):-len(".yaml")]
    result: dict[str, Any]
    try:
        # As the Pulumi CLI reads the file: secret only what is `secure:` (a plain-text kubeconfig is refused).
        config, secret_keys = harness.load_stack_text(stack_file.read_text(), stack_file.name)
        run = harness.run_program(config, stack=stack, previous_outputs=previous, main=root / "__main__.py",
                                  secret_keys=secret_keys)
    except Exception as err:  # noqa: BLE001 - a refusal is this stack's result
        result = {"refused": str(err)}
    else:
        result = {
            "resources": [_jsonable(dataclasses.asdict(r)) for r in run.resources],
            "outputs": _jsonable(run.outputs),
            "secretOutputs": sorted(run.secret_outputs),
        }
    out.write_text(json.dumps(result, default=str))


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        items = [_jsonable(v) for v in value]
        return sorted(items) if isinstance(value, set) else items
    if hasattr(value, "text") and isinstance(getattr(value, "text"), str):  # a StringAsset
        return value.text
    return value


def evaluate(root: Path, stack_file: Path, previous: Optional[dict]) -> dict:
    """`dump` in a fresh interpreter, so `root`'s own components are imported."""
    with tempfile.TemporaryDirectory() as tmp:
        out, prev = Path(tmp) / "run.json", Path(tmp) / "previous.json"
        prev.write_text(json.dumps(previous))
        proc = subprocess.run(
            [sys.executable, "-m", "offline.diff", "--dump", str(root), str(stack_file), str(prev), str(out)],
            cwd=ROOT, capture_output=True, text=True, timeout=600,
        )
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"evaluating {stack_file} in {root} failed:\n{proc.stderr[-4000:]}")
        return json.loads(out.read_text())


def checkout(ref: str, repo: Path, into: Path) -> Path:
    """The tree of `ref` (files only), extracted into `into`."""
    archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", ref], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4 (Debian 12 ships 3.11.2)
            tar.extractall(into, filter="data")
        else:
            # What the "data" filter refuses: absolute paths, `..`, links (git archive makes none).
            for member in tar.getmembers():
                parts = Path(member.name).parts
                if member.name.startswith("/") or ".." in parts or member.islnk() or member.issym():
                    raise RuntimeError(f"{ref}: refusing archive member {member.name!r}")
            tar.extractall(into)
    return into


# ---- comparing --------------------------------------------------------------------------------------

@dataclass
class Change:
    action: str  # add | delete | update | replace
    urn: str
    type: str
    name: str
    node: Optional[str] = None  # the node as it runs now (instances)
    changed: list[str] = field(default_factory=list)
    replaced_by: list[str] = field(default_factory=list)  # the inputs that force the replacement
    ignored: list[str] = field(default_factory=list)


@dataclass
class StackDiff:
    stack: str
    changes: list[Change] = field(default_factory=list)
    refused: Optional[str] = None
    etcd: list[str] = field(default_factory=list)  # etcd members deleted or replaced
    note: Optional[str] = None

    def count(self, action: str) -> int:
        return sum(c.action == action for c in self.changes)


def _registrations(result: dict):
    from offline.harness import Registration

    regs = []
    for r in result.get("resources", []):
        r = dict(r)
        r["secret_inputs"] = set(r.get("secret_inputs") or [])
        regs.append(Registration(**r))
    return regs


def _node_name(reg) -> Optional[str]:
    return (reg.inputs.get("tags") or {}).get("Name") if reg.type == INSTANCE else None


def compare(stack: str, base: dict, head: dict) -> StackDiff:
    from offline.review import review_inputs

    result = StackDiff(stack)
    if "refused" in head:
        result.refused = head["refused"]
        return result
    if "refused" in base:
        result.note = f"the base did not evaluate ({base['refused'][:200]}); everything shows as added"
    old = {r.urn: r for r in _registrations(base)}
    new = {r.urn: r for r in _registrations(head)}
    replaced_ids: set[str] = set()
    decided: dict[str, Change] = {}
    # Replacements propagate: an input holding the ID of a replaced resource becomes unknown, and
    # where that input forces replacement, the dependent is replaced too. Iterate to a fixpoint.
    for _ in range(10):
        grew = False
        for urn, n in new.items():
            if urn not in old or not n.custom:
                continue
            o = old[urn]
            a, b = review_inputs(o), review_inputs(n)
            keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            unknown = sorted(k for k, v in n.inputs.items() if _mentions(v, replaced_ids) and k not in keys)
            ignored = sorted(k for k in keys + unknown if k in n.ignore_changes)
            effective = [k for k in keys + unknown if k not in n.ignore_changes]
            forcing = sorted(k for k in effective if k in REPLACE_ON.get(n.type, frozenset()))
            action = "replace" if forcing else ("update" if effective else None)
            if action is None and not ignored:
                continue
            node = _node_name(o)
            if node and _node_name(n) != node:
                node = f"{node} -> {_node_name(n)}"
            change = Change(action or "update", urn, n.type, n.name, node, sorted(set(keys + unknown)),
                            forcing, ignored)
            if action is None:
                change.action = "unchanged"
            if decided.get(urn) != change:
                decided[urn] = change
                if action == "replace" and o.id and o.id not in replaced_ids:
                    replaced_ids.add(o.id)
                    grew = True
        if not grew:
            break
    changes = [c for c in decided.values() if c.action != "unchanged" or c.ignored]
    changes += [Change("add", u, r.type, r.name, _node_name(r)) for u, r in new.items() if u not in old and r.custom]
    changes += [Change("delete", u, r.type, r.name, _node_name(r)) for u, r in old.items() if u not in new and r.custom]
    order = {"replace": 0, "delete": 1, "add": 2, "update": 3, "unchanged": 4}
    result.changes = sorted(changes, key=lambda c: (order[c.action], c.type, c.name))
    etcd_nodes = {n["name"] for n in base.get("outputs", {}).get("nodes", []) if "etcd" in n.get("roles", [])}
    result.etcd = sorted(f"{c.node.split(' -> ')[0]} ({'deleted' if c.action == 'delete' else 'replaced'})"
                         for c in result.changes
                         if c.node and c.node.split(" -> ")[0] in etcd_nodes and c.action in ("delete", "replace"))
    return result


def _mentions(value: Any, ids: set[str]) -> bool:
    if not ids:
        return False
    if isinstance(value, str):
        return value in ids
    if isinstance(value, dict):
        return any(_mentions(v, ids) for v in value.values())
    if isinstance(value, list):
        return any(_mentions(v, ids) for v in value)
    return False


# ---- rendering ------------------------------------------------------------------------------------

SYMBOL = {"add": "+", "delete": "-", "update": "~", "replace": "+-", "unchanged": " "}


def _line(c: Change) -> str:
    what = f"{SYMBOL[c.action]} {c.action:<7} {c.type.split(':')[-1]} {c.name}" + (f" ({c.node})" if c.node else "")
    if c.replaced_by:
        what += f"  replaced because of: {', '.join(c.replaced_by)}"
    other = [k for k in c.changed if k not in c.replaced_by and k not in c.ignored]
    if other:
        what += f"  changed: {', '.join(other)}"
    if c.ignored:
        what += f"  ignored (ignore_changes): {', '.join(c.ignored)}"
    return what


def _headline(d: StackDiff) -> str:
    if d.refused:
        return f"{d.stack}: `pulumi preview` would stop"
    return (f"{d.stack}: {d.count('add')} to add, {d.count('replace')} to replace, {d.count('update')} to update, "
            f"{d.count('delete')} to delete")


def render_text(diffs: list[StackDiff]) -> str:
    lines = []
    for d in diffs:
        lines.append(_headline(d))
        if d.refused:
            lines += [f"  {line}" for line in d.refused.splitlines()]
        if d.note:
            lines.append(f"  note: {d.note}")
        if d.etcd:
            lines.append(f"  etcd members deleted or replaced: {', '.join(d.etcd)}")
        lines += [f"  {_line(c)}" for c in d.changes]
        lines.append("")
    return "\n".join(lines)


def render_markdown(diffs: list[StackDiff], base: str) -> str:
    out = [f"### Offline plan diff against `{base}`", "",
           "Computed offline from the stack files (no cloud credentials): what each stack's next "
           "`pulumi up` would add, replace, update or delete.", ""]
    for d in diffs:
        out += [f"#### {_headline(d)}", ""]
        if d.refused:
            out += ["```", d.refused, "```", ""]
            continue
        if d.note:
            out += [f"> {d.note}", ""]
        if d.etcd:
            out += [f"**etcd members deleted or replaced:** {', '.join(d.etcd)}", ""]
        if not d.changes:
            out += ["No changes.", ""]
            continue
        out += ["| | resource | node | why |", "|---|---|---|---|"]
        for c in d.changes:
            why = "; ".join(x for x in (
                f"replaced because of {', '.join(c.replaced_by)}" if c.replaced_by else "",
                f"changed {', '.join(k for k in c.changed if k not in c.replaced_by and k not in c.ignored)}"
                if [k for k in c.changed if k not in c.replaced_by and k not in c.ignored] else "",
                f"ignored: {', '.join(c.ignored)}" if c.ignored else "") if x)
            out.append(f"| {c.action} | `{c.type.split(':')[-1]} {c.name}` | {c.node or ''} | {why} |")
        out.append("")
    return "\n".join(out)


# ---- the command ----------------------------------------------------------------------------------

def diff_stacks(base_ref: str, repo: Path, stacks: list[str], include_fixtures: bool) -> list[StackDiff]:
    from offline.stacks import environments

    head_root = repo
    dirs = [Path("stacks")] + ([Path("tests/stacks")] if include_fixtures else [])
    with tempfile.TemporaryDirectory() as tmp:
        base_root = checkout(base_ref, repo, Path(tmp) / "base")
        names = stacks or sorted({p.name[len("Pulumi."):-len(".yaml")] for d in dirs for p in (head_root / d).glob("Pulumi.*.yaml")})
        if not stacks and not include_fixtures:
            names = [n for n in names if n in environments()] or names
        diffs = []
        for stack in names:
            head_file = next((head_root / d / f"Pulumi.{stack}.yaml" for d in dirs if (head_root / d / f"Pulumi.{stack}.yaml").exists()), None)
            base_file = next((base_root / d / f"Pulumi.{stack}.yaml" for d in dirs if (base_root / d / f"Pulumi.{stack}.yaml").exists()), None)
            if head_file is None:
                diffs.append(StackDiff(stack, note="the stack file was removed; its stack is not destroyed by a merge"))
                continue
            base = evaluate(base_root, base_file, None) if base_file else {"resources": [], "outputs": {}}
            previous = base.get("outputs") or None
            head = evaluate(head_root, head_file, previous)
            d = compare(stack, base, head)
            if base_file is None:
                d.note = "a new stack"
            diffs.append(d)
        return diffs


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--dump"]:
        root, stack_file, previous, out = argv[1:5]
        sys.path.insert(0, str(Path(root).resolve()))
        dump(Path(root), Path(stack_file), json.loads(Path(previous).read_text()), Path(out))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stacks", nargs="*", help="default: every stack in stacks/")
    ap.add_argument("--base", default="origin/main", help="git ref to compare against (default origin/main)")
    ap.add_argument("--repo", default=str(ROOT), help="the checkout whose working tree is the head")
    ap.add_argument("--format", choices=("text", "markdown"), default="text")
    ap.add_argument("--all", action="store_true", help="also the test-only stacks in tests/stacks/")
    args = ap.parse_args(argv)
    diffs = diff_stacks(args.base, Path(args.repo), args.stacks, args.all)
    print(render_markdown(diffs, args.base) if args.format == "markdown" else render_text(diffs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
