"""`RkeClusterArgs`: a cluster's configuration as a program gives it, the same model a stack file is checked
with (same checks, same messages). Keyword arguments are the stack keys in snake_case, sections as typed
objects or maps (`node_pools=[NodePool(name="workers", roles=["worker"], count=3)]`, `network={"nat_gateways":
"perAz"}`); a bad value raises ConfigError listing every problem. Three other ways in:

- `from_stack_config(mapping)`: the stack file's own form (camelCase keys, no namespace), as YAML reads it;
- `from_flat_config(flat, namespace=..., stack=...)`: the flat map the Pulumi CLI hands a program;
- `from_pulumi_config()`: this stack's keys in the project's namespace (pulumi.get_project()).

These three also judge the rules that span keys (settings/rules/), every problem at once; a program's own
arguments meet those rules in settings/resolve.py, with what depends on the running cluster.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Self

from pydantic import Field, PrivateAttr

from ..diagnostics import ConfigError, Diagnostic, Severity, suggest
from . import partitions, stackconfig
from .sections import ClusterKeys
from .stackconfig import NAMESPACE, REGION_RE

__all__ = ["NAMESPACE", "RkeClusterArgs", "region_problems"]


def region_problems(region: Any, required: bool) -> list[Diagnostic]:
    """aws:region as the cluster's region: set (when `required`) and shaped like a region."""
    if region is None:
        return [Diagnostic("aws:region", "missing; set it with `pulumi config set aws:region <region>`",
                           "config.missing")] if required else []
    if not isinstance(region, str) or not REGION_RE.fullmatch(region):
        from .fields import shown  # noqa: PLC0415

        return [Diagnostic("aws:region", f"{shown(region)} is not an AWS region; write it like us-west-2",
                           "config.region", value=region)]
    if region not in partitions.OTHER_PARTITION_REGIONS and region not in partitions.known_regions():
        from .fields import shown  # noqa: PLC0415

        close = suggest(region, partitions.known_regions(region))
        fix = f"did you mean {close}?" if close else \
            f"use a region of the {partitions.of_region(region).name} partition, like {partitions.EXAMPLE_REGION[partitions.of_region(region).name]}"
        # The provider refuses it too (pulumi_aws.Provider skip_region_validation: "static validation of region name").
        return [Diagnostic("aws:region", f"{shown(region)} is not a region the AWS provider knows", "config.region-unknown",
                           value=region, fix=fix)]
    return []


class RkeClusterArgs(ClusterKeys):
    """A cluster's configuration (module docstring). `region`: the cluster's AWS region (not a stack key: a
    stack's is `aws:region`); unset, the provider's."""

    region: str | None = Field(None, exclude=True, description="The cluster's AWS region (a stack's aws:region).")
    # How keys are named in messages (the stack file's namespace, "rke-aws:"), and what reading the stack's
    # configuration warned about (settings/resolve.py logs them with the rest).
    _prefix: str | None = PrivateAttr(None)
    _notes: tuple[Diagnostic, ...] = PrivateAttr(())

    @property
    def prefix(self) -> str | None:
        return self._prefix

    @property
    def notes(self) -> tuple[Diagnostic, ...]:
        return self._notes

    @classmethod
    def from_stack_config(cls, config: Mapping[str, Any], *, secret_keys: Collection[str] | None = None,
                          region: str | None = None, namespace: str = NAMESPACE) -> Self:
        """The stack file's own form: `config:` keys without a namespace, values as YAML reads them (or the text
        `pulumi config set` stores). `secret_keys`: the keys stored encrypted (`secure:`); given, a kubeconfig or
        Rancher token stored as plain text is refused, and so is an encrypted value that is not a secret. Messages
        name keys `<namespace>:<key>`."""
        found = region_problems(region, required=False)
        checked = stackconfig.check(config, secret_keys=secret_keys, region=region, namespace=namespace, cls=cls)
        return cls._done(checked, found, region, namespace, ())

    @classmethod
    def from_flat_config(cls, flat: Mapping[str, Any], *, namespace: str, stack: str,
                         secret_keys: Collection[str] = ()) -> Self:
        """The flat map the Pulumi CLI hands a program (`"<namespace>:<key>" -> text`): this project's keys, the
        region from `aws:region`, the cluster ID from the stack name when clusterId is not set."""
        read = stackconfig.read_flat(flat, namespace=namespace, secret_keys=secret_keys)
        found = list(read.found) + region_problems(read.region, required=True)
        checked = stackconfig.check(read.config, secret_keys=read.secret_keys, region=read.region,
                                    written=read.written, default_cluster_id=(stack, "the stack name"),
                                    namespace=namespace, cls=cls)
        notes = tuple(d for d in read.found if d.severity != Severity.ERROR)
        return cls._done(checked, found, read.region if isinstance(read.region, str) else None, namespace, notes)

    @classmethod
    def from_pulumi_config(cls, namespace: str | None = None) -> Self:
        """This stack's configuration: the keys in `namespace` (default: the project's name, the namespace the
        CLI gives a project's keys). Keys of other namespaces belong to other programs and are not read."""
        import pulumi  # noqa: PLC0415 - the one reader of the Pulumi runtime
        from pulumi.runtime import config as runtime_config  # noqa: PLC0415

        raw: dict[str, Any] = dict(runtime_config.get_config_env())
        raw.update(runtime_config.CONFIG.get())
        secret = set(runtime_config.get_config_secret_keys_env()) | {k for k in raw if runtime_config.is_config_secret(k)}
        try:
            return cls.from_flat_config(raw, namespace=namespace or pulumi.get_project(), stack=pulumi.get_stack(),
                                        secret_keys=secret)
        except ConfigError as err:
            # Inside a program a refusal is the engine's RunError: the CLI prints its message alone, no traceback
            # (pulumi/runtime/stack.py run_pulumi_func; RkeCluster refuses the same way, rke_aws.RkeAwsError).
            refused = pulumi.RunError(str(err))
            refused.diagnostics = err.diagnostics  # type: ignore[attr-defined]
            raise refused from None

    @classmethod
    def _done(cls, checked: stackconfig.Checked, found: list[Diagnostic], region: str | None, namespace: str,
              notes: tuple[Diagnostic, ...]) -> Self:
        errors = [d for d in found + checked.found if d.severity == Severity.ERROR]
        if errors:
            raise ConfigError(errors, prefix=f"{namespace}:")
        valid = checked.keys.valid
        assert isinstance(valid, cls)
        args = valid.model_copy(update={"region": region}) if region is not None else valid
        args._prefix = f"{namespace}:"
        args._notes = notes
        return args
