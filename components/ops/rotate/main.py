"""`rke-aws rotate <stack>`: the command (its command line: rke_aws_offline/cli.py), the stack's rotation
settings, the kubeconfig it uses and the --dry-run plan."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...plan import stale
from .. import kube as kubeapi
from .automation import ROOT, AutomationEngine
from .model import EngineBusy, EngineFailed, Stop, last_lines
from .rotation import Rotation


def rotation_settings(config: Mapping[str, str]) -> int:
    """rotation.maxUnavailableAgents from the stack's configuration (the model decides, as `pulumi up`)."""
    from pydantic import ValidationError

    from ...settings import messages, sections

    key, raw = next(((k, v) for k, v in config.items() if k.split(":", 1)[-1] == "rotation" and not k.startswith("aws:")),
                    ("rke-aws:rotation", None))
    value: Any = None
    if raw:
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
    try:
        with messages.pydantic_errors():
            section = sections.Rotation.model_validate(value if value is not None else {})
    except ValidationError as exc:
        found = messages.from_pydantic(sections.Rotation, exc, value)
        raise Stop("before anything changed", "; ".join(d.render(f"{key}.") for d in found),
                   "Fix the stack's configuration, then rotate again") from None
    return int(section.max_unavailable_agents)


def kubeconfig_text(stack: str, given: str | None, config: Mapping[str, str]) -> str:
    """--kubeconfig, else the stack's `kubeconfig`, else kubeconfig-<stack>.yaml (`make kubeconfig`)."""
    if given:
        return Path(given).read_text()
    stored = next((v for k, v in config.items() if k.split(":", 1)[-1] == "kubeconfig" and not k.startswith("aws:")), None)
    if stored:
        return stored
    default = Path(f"kubeconfig-{stack}.yaml")
    if default.exists():
        return default.read_text()
    raise Stop("before anything changed", "no kubeconfig",
               f"`make kubeconfig STACK={stack}` writes the admin kubeconfig (RKE2), or pass --kubeconfig FILE")


def plan_text(outputs: Mapping[str, Any], max_agents: int) -> str:
    """--dry-run: the stale nodes and the order rotate takes them in."""
    found = stale.from_outputs(outputs.get("nodes"))
    if not found:
        return "nothing is stale"
    agents = [s for s in found if not s.is_server]
    first = {str(n.get("name")) for n in outputs.get("nodes") or () if n.get("firstServer")}
    servers = sorted((s for s in found if s.is_server), key=lambda s: s.name in first)
    lines = [f"{len(found)} stale node(s); rotate replaces them in this order (agents {max_agents} at a time, "
             "then servers one at a time, the initialising server last):"]
    for i in range(0, len(agents), max_agents):
        lines.append(f"  {i // max_agents + 1}. " + "; ".join(s.line()[len("stale: "):] for s in agents[i:i + max_agents]))
    start = (len(agents) + max_agents - 1) // max_agents
    lines += [f"  {start + j + 1}. {s.line()[len('stale: '):]}" for j, s in enumerate(servers)]
    return "\n".join(lines)


def command(stack: str, kubeconfig: str | None, dry_run: bool, work_dir: Path = ROOT) -> int:
    """`rke-aws rotate <stack>` (its command line: rke_aws_offline/cli.py): 0 when done, 1 where it stopped."""
    try:
        engine = AutomationEngine(stack, work_dir=work_dir)
        config = engine.config()
        max_agents = rotation_settings(config)
        if dry_run:
            print(plan_text(engine.outputs(), max_agents))
            return 0
        try:
            kube = kubeapi.Kube.from_kubeconfig(kubeconfig_text(stack, kubeconfig, config))
        except kubeapi.Unreachable as err:
            raise Stop("before anything changed", str(err), "Nothing was changed; pass a usable --kubeconfig") from None
        Rotation(engine, kube, max_unavailable_agents=max_agents, stack=stack).run()
    except Stop as stop:
        print(f"error: {stop}", file=sys.stderr)
        return 1
    except (EngineBusy, EngineFailed) as err:
        print(f"error: {last_lines(str(err))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted before the rotation started: nothing was changed", file=sys.stderr)
        return 130
    return 0
