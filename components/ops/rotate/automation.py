"""The real engine of a rotation: the stack through Pulumi's Automation API (the Pulumi CLI underneath)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .model import EngineBusy, EngineFailed, Stop, last_lines

ROOT = Path(__file__).resolve().parents[3]  # the Pulumi project (Pulumi.yaml)


class AutomationEngine:
    """The stack through `pulumi.automation` (the CLI underneath): a local program in ROOT, the stack
    selected (never created), the real backend and the real AWS credentials of the environment."""

    def __init__(self, stack: str, work_dir: Path = ROOT, say: Callable[[str], None] = print,
                 opts: Any = None, select: Callable[..., Any] | None = None):
        from pulumi import automation as auto

        self._auto = auto
        self.say = say
        try:
            self.stack = (select or auto.select_stack)(stack_name=stack, work_dir=str(work_dir), opts=opts)
        except auto.errors.StackNotFoundError:
            raise Stop("before anything changed", f"no stack named {stack} in the selected backend",
                       "`pulumi login` to the backend that holds it (and `pulumi stack ls`), then rotate again") from None
        except auto.errors.CommandError as err:
            raise Stop("before anything changed", f"the stack could not be selected ({last_lines(str(err))})",
                       "Check `pulumi whoami` and `pulumi stack ls`, then rotate again") from None

    def _run(self, what: Callable[[], Any]) -> Any:
        errors = self._auto.errors
        try:
            return what()
        except errors.ConcurrentUpdateError as err:
            raise EngineBusy(str(err)) from None
        except errors.CommandError as err:
            raise EngineFailed(str(err)) from None

    def outputs(self) -> Mapping[str, Any]:
        return {k: v.value for k, v in self._run(self.stack.outputs).items()}

    def config(self) -> dict[str, str]:
        """The stack's configuration as the CLI gives it (secrets decrypted: the kubeconfig)."""
        return {k: v.value for k, v in self._run(self.stack.get_all_config).items()}

    def pending(self) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []

        def on_event(event: Any) -> None:
            pre = getattr(event, "resource_pre_event", None)
            meta = getattr(pre, "metadata", None)
            if meta is None or meta.type == "pulumi:pulumi:Stack":
                return
            op = getattr(meta.op, "value", str(meta.op))
            if op not in ("same", "read", "refresh"):
                found.append((op, meta.urn))

        self._run(lambda: self.stack.preview(on_event=on_event, color="never"))
        return found

    def replace(self, urns: Sequence[str]) -> None:
        names = ", ".join(u.rsplit("::", 1)[-1] for u in urns)
        # `protectServers: true` protects server instances; a protected resource cannot be replaced. Clear
        # the bit in the state (`pulumi state unprotect`, pulumi/pulumi pkg/cmd/pulumi/state/state_unprotect.go;
        # harmless when it is not set); the update registers the new instance protected again.
        ws = self.stack.workspace
        self._run(lambda: ws.pulumi_command.run(["state", "unprotect", "--stack", self.stack.name, "--yes", *urns],
                                                ws.work_dir, ws.env_vars))
        self._run(lambda: self.stack.up(target=list(urns), replace=list(urns), color="never",
                                        message=f"rke-aws rotate: replace {names}", on_output=self.say,
                                        suppress_progress=True))
