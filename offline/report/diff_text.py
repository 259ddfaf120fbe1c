"""The offline diff as a reviewer reads it: text for a terminal, markdown for a pull-request comment.

Per stack: the headline (how many resources are added, replaced, updated, deleted), the head program's
warnings and notes, a refusal as `pulumi preview` would stop with it; then per changed resource one line
(action, resource, node, why), and under it one line per changed input with its old and new values
(`instanceType: t3.xlarge → m5.xlarge`; a secret: `changed (secret)`) and one per note (what an ignored
input means for the running resource). A line of the model is one of those; adding a note is a line.
"""

from __future__ import annotations

from typing import Any

from rke_aws_offline.report.compare import MISSING, Change, StackDiff
from rke_aws_offline.report.values import ELLIPSIS, short

SYMBOL = {"add": "+", "delete": "-", "update": "~", "replace": "+-", "unknown": "?", "unchanged": " "}
LABEL = {"unknown": "unknown: may replace"}
# Leaves of one changed input shown before "… and n more" (a policy, a user-data summary).
MAX_LEAVES = 8
VALUE_WIDTH = 70
ARROW = "→"


def _changed_text(c: Change) -> str:
    """The changed inputs besides the forcing ones; secret ones by name only."""
    other = [k for k in c.changed if k not in c.replaced_by and k not in c.ignored]
    return ", ".join(f"{k} (secret)" if k in c.secret else k for k in other)


def _forcing_text(c: Change) -> str:
    return ", ".join(f"{k} (secret)" if k in c.secret else k for k in c.replaced_by)


def _leaves(key: str, old: Any, new: Any) -> list[tuple[str, Any, Any]]:
    """(path, old, new) for each differing leaf under `key` (dicts compared key by key)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in list(old) + [k for k in new if k not in old]:
            a, b = old.get(k, MISSING), new.get(k, MISSING)
            if a != b:
                out += _leaves(f"{key}.{k}", a, b)
        return out
    return [(key, old, new)]


def _show(value: Any) -> str:
    return "(unset)" if value is MISSING else short(value, VALUE_WIDTH)


def value_lines(c: Change) -> list[str]:
    """`key: old → new` per changed (or ignored) input; secret ones as `key: changed (secret)`."""
    lines = []
    for key in [k for k in c.changed if k != "provider"] + c.ignored:
        if key in c.secret:
            lines.append(f"{key}: changed (secret)")
            continue
        if key not in c.values:
            if key not in c.ignored:
                lines.append(f"{key}: known only after the update")
            continue
        leaves = _leaves(key, *c.values[key])
        lines += [f"{path}: {_show(a)} {ARROW} {_show(b)}" for path, a, b in leaves[:MAX_LEAVES]]
        if len(leaves) > MAX_LEAVES:
            lines.append(f"{key}: {ELLIPSIS} and {len(leaves) - MAX_LEAVES} more")
    return lines


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


def change_lines(c: Change, indent: str = "  ") -> list[str]:
    """The change's line, then its values and notes beneath it."""
    return [indent + _line(c)] + [f"{indent}      {line}" for line in value_lines(c) + c.notes]


def headline(d: StackDiff) -> str:
    if d.refused:
        return f"{d.stack}: `pulumi preview` would stop"
    text = (f"{d.stack}: {d.count('add')} to add, {d.count('replace')} to replace, {d.count('update')} to update, "
            f"{d.count('delete')} to delete")
    return text + (f", {d.count('unknown')} unknown (may replace)" if d.count("unknown") else "")


def render_text(diffs: list[StackDiff]) -> str:
    lines = ["Offline estimate from the program's inputs; the real `pulumi preview --diff` decides.", ""]
    for d in diffs:
        lines.append(headline(d))
        lines += [f"  {m}" for m in d.diagnostics]
        if d.refused:
            lines += [f"  {line}" for line in d.refused.splitlines()]
        if d.note:
            lines.append(f"  note: {d.note}")
        if d.etcd:
            lines.append(f"  etcd members deleted, replaced or stopped: {', '.join(d.etcd)}")
        for c in d.changes:
            lines += change_lines(c)
        lines += [f"  stale (kept until `rke-aws rotate <stack>`): {s}" for s in d.stale]
        lines.append("")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(diffs: list[StackDiff], base: str, preview_url: str | None = None) -> str:
    if preview_url:
        real = (f"The authoritative plan is the real `pulumi preview --diff` of each stack, run with cloud "
                f"credentials in [this workflow run]({preview_url}) (posted in its own comment).")
    else:
        real = ("No real `pulumi preview` runs for this pull request (no cloud credentials here, e.g. a pull "
                "request from a fork); a maintainer's branch or the deploy's own preview shows the authoritative plan.")
    out = [f"### Offline estimate: plan diff against `{base}`", "",
           "**This is an estimate**, computed offline from the program's inputs in an emulated AWS account (no cloud "
           "credentials): what each stack's next `pulumi up` would add, replace, update or delete, judged with "
           "the providers' replace rules (`offline/report/diff.py`). It cannot see the live state, drift or values "
           "only the cloud knows. " + real, ""]
    for d in diffs:
        out += [f"#### {headline(d)}", ""]
        if d.diagnostics:
            out += [f"> {m}" for m in d.diagnostics] + [""]
        if d.refused:
            out += ["```", d.refused, "```", ""]
            continue
        if d.note:
            out += [f"> {d.note}", ""]
        if d.etcd:
            out += [f"**etcd members deleted, replaced or stopped:** {', '.join(d.etcd)}", ""]
        if d.stale:
            out += ["**Stale nodes** (keep running as they booted until `rke-aws rotate <stack>` replaces them):", ""]
            out += [f"- {_cell(s)}" for s in d.stale] + [""]
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
            details = "<br>".join(f"`{_cell(line)}`" if ARROW in line else _cell(line)
                                  for line in value_lines(c) + c.notes)
            why = "<br>".join(x for x in (_cell(why), details) if x)
            out.append(f"| {LABEL.get(c.action, c.action)} | `{c.type.split(':')[-1]} {c.name}` | {c.node or ''} | {why} |")
        out.append("")
    return "\n".join(out)
