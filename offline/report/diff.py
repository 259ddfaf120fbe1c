"""`make diff BASE=<git ref>`: what a pull request changes, per stack and per resource, offline.

An estimate from the program's inputs: the real `pulumi preview --diff`, run where cloud credentials
exist, is authoritative (it sees the live state). For each stack, the program of the base ref runs
with the base's stack file, then the working tree's program runs with the working tree's stack file
and the base run's outputs as the stack's last outputs (what the engine would hand it after the base
was deployed). The two registrations are compared resource by resource, inputs before secrets are
masked (a changed secret is a change; its value is never shown), and judged as the providers would
(RULES below, each with the upstream file it comes from):

  + add       a resource the base did not have
  - delete    a resource the working tree no longer registers
  ~ update    changed inputs that the provider updates in place (an EC2 instance's type or user data:
              by stopping it, called out)
  +- replace  a changed input that forces a new resource, an input that takes the ID of a resource
              being replaced, or a resource whose provider is replaced
  ? unknown   may replace: a type without rules here, or a rule that needs what only AWS knows, or
              a component the provider builds itself (kubernetes:yaml/v2:ConfigFile) whose inputs changed

Inputs a resource ignores (ignore_changes) are listed but never count. Instances show their node
name; etcd members deleted, replaced or stopped are called out. If the working tree's program
refuses the change (the quorum or version guard, a bad config), that refusal is the stack's result,
as in `pulumi preview`; so is a second claim on one old resource through an alias (the engine's
"Duplicate resource alias"). Both programs run under the AWS-like mocks (IDs derived from names, so they
compare across runs) in subprocesses, each importing its own checkout's package (`rke_aws`, or
`components` before the package layout).

    rke-aws diff --base origin/main [--format markdown] [--preview-url URL] [--all] [stack ...]
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
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

# ---- what the providers decide: offline/engine/resource_types.py (one declaration per resource type) -------

from rke_aws_offline.engine.resource_types import (  # noqa: E402, F401 - the rules, and the names tests read through this module
    RULE_SOURCES,
    RULES,
    TYPES,
    TypeRules,
    Verdict,
    _active_cluster,
    instance_architectures,
)

INSTANCE = "aws:ec2/instance:Instance"


# ---- evaluating one checkout ---------------------------------------------------------------------

def stack_config(stack_file: Path) -> tuple[dict[str, str], list[str]]:
    """A stack file's config as the Pulumi CLI would hand it over (rke_aws.settings.stackfile.load_stack_text:
    secret only what is `secure:`), and the keys it marks secret.

    An encrypted value cannot be decrypted offline; it becomes the harness's placeholder plus a
    digest of its ciphertext, so re-encrypting a value (`pulumi config set --secret` with a new
    kubeconfig) changes the inputs it reaches and shows as "changed (secret)" without any text.
    The same ciphertext gives the same placeholder in both runs.
    """
    import hashlib

    from rke_aws.settings import stackfile
    from rke_aws_offline.engine import harness

    def placeholder(cipher: str) -> str:
        return f"{stackfile.SECURE_PLACEHOLDER} (ciphertext {hashlib.sha256(cipher.encode()).hexdigest()[:12]})"

    stack = stack_file.name[len("Pulumi."):-len(".yaml")]
    return stackfile.load_stack_text(stack_file.read_text(), stack_file.name, placeholder, harness.project_of(stack))


def result_of(run) -> dict:
    """A program run as plain JSON data (what `dump` writes and `compare` reads)."""
    return {
        "resources": [_jsonable(dataclasses.asdict(r)) for r in run.resources],
        "outputs": _jsonable(run.outputs),
        "secretOutputs": sorted(run.secret_outputs),
    }


def _request(stack_file: Path, previous: dict | None) -> dict:
    """What one evaluation needs, read by this checkout: the stack file as the Pulumi CLI reads it (a
    plain-text kubeconfig is refused, a bad file is this stack's result) and the last outputs."""
    stack = stack_file.name[len("Pulumi."):-len(".yaml")]
    try:
        config, secret_keys = stack_config(stack_file)
    except Exception as err:  # noqa: BLE001 - a refusal is this stack's result
        return {"stack": stack, "refused": str(err)}
    return {"stack": stack, "config": config, "secretKeys": secret_keys, "previous": previous}


def _evaluate_request(root: Path, request: dict) -> dict:
    """Run the program in `root` (in this process) on a `_request`; its registrations as plain JSON data."""
    from rke_aws_offline.engine import harness

    if "refused" in request:
        return {"refused": request["refused"]}
    try:
        run = harness.run_program(request["config"], stack=request["stack"], previous_outputs=request["previous"],
                                  main=root / "__main__.py", secret_keys=request["secretKeys"])
    except Exception as err:  # noqa: BLE001 - a refusal is this stack's result
        return {"refused": str(err)}
    return result_of(run)


def dump(root: Path, stack_file: Path, previous: dict | None, out: Path) -> None:
    """Run the program in `root` with `stack_file` (in this process) and write its registrations."""
    out.write_text(json.dumps(_evaluate_request(root, _request(stack_file, previous)), default=str))


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        items = [_jsonable(v) for v in value]
        return sorted(items) if isinstance(value, set) else items
    if hasattr(value, "text") and isinstance(value.text, str):  # a StringAsset
        return value.text
    return value


def evaluate(root: Path, stack_file: Path, previous: dict | None) -> dict:
    """The program of `root` on `stack_file` in a fresh interpreter, so `root`'s own package is imported
    (rke_aws_offline.engine.harness.run_program). The stack file is read here, by this checkout: the
    interpreter imports nothing of rke_aws before the program does."""
    request = _request(stack_file, previous)
    if "refused" in request:
        return {"refused": request["refused"]}
    with tempfile.TemporaryDirectory() as tmp:
        out, given = Path(tmp) / "run.json", Path(tmp) / "request.json"
        given.write_text(json.dumps(request))
        proc = subprocess.run(
            [sys.executable, "-m", "rke_aws_offline.report.diff", "--dump", str(root), str(given), str(out)],
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

ACTIONS = ("replace", "unknown", "delete", "add", "update")  # in the order a reviewer reads them


@dataclass
class Change:
    action: str  # add | delete | update | replace | unknown (may replace) | unchanged (only ignored inputs)
    urn: str
    type: str
    name: str
    node: str | None = None  # the node as it runs now (instances)
    changed: list[str] = field(default_factory=list)  # changed inputs (a.b for a decided sub-key)
    replaced_by: list[str] = field(default_factory=list)  # the inputs that force the replacement
    ignored: list[str] = field(default_factory=list)
    secret: list[str] = field(default_factory=list)  # changed inputs whose values are secret (never shown)
    why: list[str] = field(default_factory=list)  # the provider's reasons, where a rule gives one
    stops: bool = False  # updated by stopping the resource (an EC2 instance's type or user data)


@dataclass
class StackDiff:
    stack: str
    changes: list[Change] = field(default_factory=list)
    refused: str | None = None
    etcd: list[str] = field(default_factory=list)  # etcd members deleted, replaced, maybe replaced or stopped
    note: str | None = None
    stale: list[str] = field(default_factory=list)  # running nodes that keep what they booted (plan/stale.py)

    def count(self, action: str) -> int:
        return sum(c.action == action for c in self.changes)


def _registrations(result: dict):
    from rke_aws_offline.engine.harness import Registration

    known = {f.name for f in dataclasses.fields(Registration)}
    regs = []
    for r in result.get("resources", []):
        # Another checkout's harness may record more or fewer fields than this one.
        r = {k: v for k, v in r.items() if k in known}
        r["secret_inputs"] = set(r.get("secret_inputs") or [])
        regs.append(Registration(**r))
    return regs


def _node_name(reg) -> str | None:
    return (reg.inputs.get("tags") or {}).get("Name") if reg.type == INSTANCE else None


def _provider_urn(reg) -> str | None:
    return reg.provider.rsplit("::", 1)[0] if reg.provider else None


def judge(rules: TypeRules, old: dict, new: dict, changed: set, unknown: set) -> list[Verdict]:
    """The provider's verdicts on one resource's changed inputs (`unknown`: inputs whose new value
    is not known before the apply, e.g. the ID of a resource being replaced)."""
    verdicts: list[Verdict] = []
    decided: set[str] = set()
    for keys, condition in rules.conditions:
        if set(keys) & (changed | unknown):
            verdicts += condition(old, new, changed, unknown)
        decided |= set(keys)
    nested = dict(rules.nested)
    for key in sorted((changed | unknown) - decided):
        if key in rules.replace_on:
            verdicts.append(Verdict("replace", (key,)))
        elif key in nested:
            a, b = old.get(key) or {}, new.get(key) or {}
            subs = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k)) if isinstance(a, dict) and isinstance(b, dict) else []
            forcing = [s for s in subs if s in nested[key]]
            if key in unknown and not subs:
                verdicts.append(Verdict("unknown", (key,), "value not known offline: may replace"))
            elif forcing:
                verdicts.append(Verdict("replace", tuple(f"{key}.{s}" for s in forcing)))
                rest = [s for s in subs if s not in nested[key]]
                if rest:
                    verdicts.append(Verdict("update", tuple(f"{key}.{s}" for s in rest)))
            else:
                verdicts.append(Verdict("update", tuple(f"{key}.{s}" for s in subs) or (key,)))
        else:
            verdicts.append(Verdict("update", (key,)))
    return verdicts


def _comparable(reg) -> dict:
    from rke_aws_offline.report.review import review_inputs

    return review_inputs(reg, mask=False)


# Components the program defines itself (types in its own package) are only groupings: the engine
# has nothing to create, update or delete for them (pulumi/pulumi pkg/resource/deploy/step_generator.go
# diff: "If there is no provider for this resource (which should only happen for component
# resources)", no provider is asked). A component of a provider's package (a
# "remote" component: kubernetes:yaml/v2:ConfigFile, kubernetes:helm.sh/v4:Chart) is different: the
# engine hands it to the provider's Construct (pkg/resource/deploy/source_eval.go; pulumi/pulumi-kubernetes
# provider/pkg/provider/provider_construct.go maps those types to provider/pkg/provider/yaml/v2 and
# helm/v4), which reads the manifest or chart at preview time and registers the children itself, with
# the component's provider. Offline the mocks never see those children, so the component stands for
# them: changed inputs may change, replace or delete any of them; added or deleted, all of them are;
# a replaced provider replaces all of them.
OWN_PACKAGES = ("rke-aws", "pulumi")
REMOTE_WHY = "children decided by the provider: may replace"


def diffable(reg) -> bool:
    """A resource the engine asks a provider about: custom, or a component of a provider's package."""
    return bool(reg.custom) or reg.type.split(":", 1)[0] not in OWN_PACKAGES


class DuplicateAlias(Exception):
    """Two resources of the new program claim one old resource (pulumi/pulumi step_generator.go
    getOldResource: diag 2008 "Duplicate resource alias" / 2016 "Duplicate resource URN ... conflicting
    with alias"); `pulumi preview` stops with that error."""


def compare(stack: str, base: dict, head: dict) -> StackDiff:
    """What the next `pulumi up` of `head` does to the resources `base` registered, per resource.

    Inputs are compared before secrets are masked (a changed secret is a change), then only the
    names of secret inputs are shown. Each change is judged by RULES for its type; a type without
    rules is "unknown: may replace".
    """
    result = StackDiff(stack)
    if "refused" in head:
        result.refused = head["refused"]
        return result
    if "refused" in base:
        result.note = f"the base did not evaluate ({base['refused'][:200]}); everything shows as added"
    old = {r.urn: r for r in _registrations(base)}
    new = {r.urn: r for r in _registrations(head)}
    # The engine finds a resource's old state by its URN, then by its aliases and those inherited from
    # an aliased parent (harness.match_old_urns: pulumi/pulumi pkg/resource/deploy/step_generator.go
    # getOldResource): a child renamed or moved with an alias is the same resource, not a delete and a
    # create. A second claim is an engine error: the preview stops, and so does this diff.
    from rke_aws_offline.engine import harness

    try:
        match = harness.match_old_urns(list(new.values()), set(old), duplicate=DuplicateAlias)
    except DuplicateAlias as e:
        result.refused = str(e)
        return result
    claimed = set(match.values())
    replaced_ids: set[str] = set()
    replaced_providers: set[str] = set()
    maybe_providers: set[str] = set()
    decided: dict[str, Change] = {}
    # Replacements propagate: an input holding the ID of a replaced resource becomes unknown, and
    # where that input forces replacement, the dependent is replaced too; every resource a replaced
    # provider manages is replaced (the engine). Iterate to a fixpoint.
    for _ in range(20):
        grew = False
        for urn, n in new.items():
            if urn not in match or not diffable(n):
                continue
            o = old[match[urn]]
            a, b = _comparable(o), _comparable(n)
            keys = {k for k in set(a) | set(b) if a.get(k) != b.get(k)}
            unknown = {k for k, v in n.inputs.items() if _mentions(v, replaced_ids) and k not in keys}
            ignored = sorted(k for k in keys | unknown if k in n.ignore_changes)
            changed = {k for k in keys if k not in n.ignore_changes}
            unknown = {k for k in unknown if k not in n.ignore_changes}
            rules = RULES.get(n.type) if n.custom else None
            if not n.custom:
                verdicts = [Verdict("unknown", tuple(sorted(changed | unknown)), REMOTE_WHY)] if changed | unknown else []
            elif rules is None:
                verdicts = [Verdict("unknown", tuple(sorted(changed | unknown)),
                                    f"no replace rules for {n.type}: may replace")] if changed | unknown else []
            else:
                verdicts = judge(rules, o.inputs, n.inputs, changed, unknown)
            # replaceOnChanges: the engine turns a diff of these inputs into a replacement, whatever
            # the provider says (pulumi/pulumi pkg/resource/deploy/step_generator.go, applyReplaceOnChanges).
            forced = sorted(k for k in changed | unknown
                            if any(k == r or k.startswith(r + ".") for r in getattr(n, "replace_on_changes", ())))
            if forced:
                verdicts.append(Verdict("replace", tuple(forced), "replaceOnChanges (a resource option) replaces on "
                                                                  "any change of these inputs"))
            provider = _provider_urn(n)
            if provider in replaced_providers:
                verdicts.append(Verdict("replace", ("provider",), "its provider is replaced" if n.custom else
                                        "its provider is replaced, and with it every child it created"))
            elif provider in maybe_providers:
                verdicts.append(Verdict("unknown", ("provider",), "its provider may be replaced"))
            actions = {v.action for v in verdicts}
            action = next((x for x in ("replace", "unknown", "update") if x in actions), None)
            if action is None and not ignored:
                continue
            node = _node_name(o)
            if node and _node_name(n) != node:
                node = f"{node} -> {_node_name(n)}"
            shown = sorted({k for v in verdicts for k in v.keys if k != "provider"} | changed | unknown)
            shown = [k for k in shown if not any(s.startswith(k + ".") for s in shown)]  # a.b over a
            secret = sorted(k for k in shown if k.split(".")[0] in (o.secret_inputs | n.secret_inputs))
            stops = bool(rules and action == "update" and
                         any(v.action == "update" and set(v.keys) & rules.stops for v in verdicts))
            change = Change(action or "unchanged", urn, n.type, n.name, node, shown,
                            sorted({k for v in verdicts if v.action == "replace" for k in v.keys}), ignored, secret,
                            [f"{', '.join(v.keys)}: {v.why}" for v in verdicts if v.why], stops)
            if decided.get(urn) != change:
                decided[urn] = change
                if action == "replace" and o.id and o.id not in replaced_ids:
                    replaced_ids.add(o.id)
                    grew = True
                if n.type.startswith("pulumi:providers:") and action in ("replace", "unknown"):
                    target = replaced_providers if action == "replace" else maybe_providers
                    if urn not in target:
                        target.add(urn)
                        grew = True
        if not grew:
            break
    changes = [c for c in decided.values() if c.action != "unchanged" or c.ignored]
    changes += [Change("add", u, r.type, r.name, _node_name(r)) for u, r in new.items() if u not in match and diffable(r)]
    changes += [Change("delete", u, r.type, r.name, _node_name(r)) for u, r in old.items() if u not in claimed and diffable(r)]
    order = {a: i for i, a in enumerate(ACTIONS + ("unchanged",))}
    result.changes = sorted(changes, key=lambda c: (order[c.action], c.type, c.name))
    etcd_nodes = {n["name"] for n in base.get("outputs", {}).get("nodes", []) if "etcd" in n.get("roles", [])}
    what = {"delete": "deleted", "replace": "replaced", "unknown": "may be replaced", "update": "stopped"}
    result.etcd = sorted(f"{c.node.split(' -> ')[0]} ({what[c.action]})" for c in result.changes
                         if c.node and c.node.split(" -> ")[0] in etcd_nodes
                         and (c.action in ("delete", "replace", "unknown") or c.stops))
    result.stale = stale_lines(old, new, match, decided)
    return result


def stale_lines(old: dict, new: dict, match: dict, decided: dict) -> list[str]:
    """Instances that stay (not replaced) but whose inputs ask for another image, type, boot configuration
    or a smaller root volume: they keep running as they booted (ignore_changes) until rotated."""
    from rke_aws.plan import stale

    out = []
    for urn, n in new.items():
        if n.type != INSTANCE or urn not in match or getattr(decided.get(urn), "action", None) == "replace":
            continue
        o = old[match[urn]]
        name = _node_name(o) or n.name
        found = stale.stale_node({**stale.values_from_inputs(o.inputs), "name": name, "pool": n.name, "index": 0},
                                 stale.values_from_inputs(n.inputs))
        if found is not None:
            out.append(f"{name} ({n.name}): {found.what}")
    return sorted(out)


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

SYMBOL = {"add": "+", "delete": "-", "update": "~", "replace": "+-", "unknown": "?", "unchanged": " "}
LABEL = {"unknown": "unknown: may replace"}


def _changed_text(c: Change) -> str:
    """The changed inputs besides the forcing ones; secret ones by name only."""
    other = [k for k in c.changed if k not in c.replaced_by and k not in c.ignored]
    return ", ".join(f"{k} (secret)" if k in c.secret else k for k in other)


def _forcing_text(c: Change) -> str:
    return ", ".join(f"{k} (secret)" if k in c.secret else k for k in c.replaced_by)


def _line(c: Change) -> str:
    what = f"{SYMBOL[c.action]} {LABEL.get(c.action, c.action):<7} {c.type.split(':')[-1]} {c.name}"
    what += f" ({c.node})" if c.node else ""
    if c.replaced_by:
        what += f"  replaced because of: {_forcing_text(c)}"
    if _changed_text(c):
        what += f"  changed: {_changed_text(c)}"
    if c.stops:
        what += "  STOPS the instance"
    if c.why:
        what += f"  [{'; '.join(c.why)}]"
    if c.ignored:
        what += f"  ignored (ignore_changes): {', '.join(c.ignored)}"
    return what


def _headline(d: StackDiff) -> str:
    if d.refused:
        return f"{d.stack}: `pulumi preview` would stop"
    text = (f"{d.stack}: {d.count('add')} to add, {d.count('replace')} to replace, {d.count('update')} to update, "
            f"{d.count('delete')} to delete")
    return text + (f", {d.count('unknown')} unknown (may replace)" if d.count("unknown") else "")


def render_text(diffs: list[StackDiff]) -> str:
    lines = ["Offline estimate from the program's inputs; the real `pulumi preview --diff` decides.", ""]
    for d in diffs:
        lines.append(_headline(d))
        if d.refused:
            lines += [f"  {line}" for line in d.refused.splitlines()]
        if d.note:
            lines.append(f"  note: {d.note}")
        if d.etcd:
            lines.append(f"  etcd members deleted, replaced or stopped: {', '.join(d.etcd)}")
        lines += [f"  {_line(c)}" for c in d.changes]
        lines += [f"  stale (kept until `rotate`): {s}" for s in d.stale]
        lines.append("")
    return "\n".join(lines)


def render_markdown(diffs: list[StackDiff], base: str, preview_url: str | None = None) -> str:
    if preview_url:
        real = (f"The authoritative plan is the real `pulumi preview --diff` of each stack, run with cloud "
                f"credentials in [this workflow run]({preview_url}) (posted in its own comment).")
    else:
        real = ("No real `pulumi preview` runs for this pull request (no cloud credentials here, e.g. a pull "
                "request from a fork); a maintainer's branch or the deploy's own preview shows the authoritative plan.")
    out = [f"### Offline estimate: plan diff against `{base}`", "",
           "**This is an estimate**, computed offline from the program's inputs under mocks (no cloud "
           "credentials): what each stack's next `pulumi up` would add, replace, update or delete, judged with "
           "the providers' replace rules (`offline/report/diff.py`). It cannot see the live state, drift or values "
           "only the cloud knows. " + real, ""]
    for d in diffs:
        out += [f"#### {_headline(d)}", ""]
        if d.refused:
            out += ["```", d.refused, "```", ""]
            continue
        if d.note:
            out += [f"> {d.note}", ""]
        if d.etcd:
            out += [f"**etcd members deleted, replaced or stopped:** {', '.join(d.etcd)}", ""]
        if d.stale:
            out += ["**Stale nodes** (keep running as they booted until `rotate` replaces them):", ""]
            out += [f"- {s}" for s in d.stale] + [""]
        if not d.changes:
            out += ["No changes.", ""]
            continue
        out += ["| | resource | node | why |", "|---|---|---|---|"]
        for c in d.changes:
            why = "; ".join(x for x in (
                f"replaced because of {_forcing_text(c)}" if c.replaced_by else "",
                f"changed {_changed_text(c)}" if _changed_text(c) else "",
                "**stops the instance**" if c.stops else "",
                "; ".join(c.why),
                f"ignored: {', '.join(c.ignored)}" if c.ignored else "") if x)
            out.append(f"| {LABEL.get(c.action, c.action)} | `{c.type.split(':')[-1]} {c.name}` | {c.node or ''} | {why} |")
        out.append("")
    return "\n".join(out)


# ---- the command ----------------------------------------------------------------------------------

def diff_stacks(base_ref: str, repo: Path, stacks: list[str], include_fixtures: bool) -> list[StackDiff]:
    from rke_aws_offline.engine.stacks import environments

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
    if argv[:1] == ["--dump"]:  # evaluate(): one program run on a request it wrote
        root, given, out = argv[1:4]
        result = _evaluate_request(Path(root).resolve(), json.loads(Path(given).read_text()))
        Path(out).write_text(json.dumps(result, default=str))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stacks", nargs="*", help="default: every stack in stacks/")
    ap.add_argument("--base", default="origin/main", help="git ref to compare against (default origin/main)")
    ap.add_argument("--repo", default=str(ROOT), help="the checkout whose working tree is the head")
    ap.add_argument("--format", choices=("text", "markdown"), default="text")
    ap.add_argument("--all", action="store_true", help="also the test-only stacks in tests/stacks/")
    ap.add_argument("--preview-url", help="the workflow run where the real `pulumi preview --diff` ran (markdown links it)")
    args = ap.parse_args(argv)
    diffs = diff_stacks(args.base, Path(args.repo), args.stacks, args.all)
    print(render_markdown(diffs, args.base, args.preview_url) if args.format == "markdown" else render_text(diffs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
