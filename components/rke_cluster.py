"""RkeCluster: everything one RKE or RKE2 cluster needs on AWS, and the CCM in it, from its arguments.

`RkeCluster(name, args, opts)` reads the cluster's last state (components/state), resolves and plans it
(components/plan/planner.py) before anything is registered (a refusal registers nothing), then wires the
parts in components/assembly/ and exports its state for the next update: nested under the cluster's key
(several clusters in one program), or flat at the top level with `stateVersion` (`flat_outputs=True`: this
repository's 0.x stacks, __main__.py).

Existing stacks keep their resources: the components were children of the stack before they were children
of this one, and each carries an alias to that parent (the engine then finds every child of theirs too:
pulumi/pulumi pkg/resource/deploy/step_generator.go generateAliases / inheritedChildAlias; the Python
SDK sends alias specs, sdk/python/lib/pulumi/runtime/resource.py prepare_aliases, and leaves the
children's inherited aliases to the engine). tests/program/test_urns.py checks it for every stack.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi

from .assembly import boot, foundation, in_cluster, outputs, preflight, secrets, storage
from .assembly import identity as workload_identity
from .diagnostics import ConfigError, Diagnostic, Severity
from .plan import identity as identity_plan
from .plan import planner
from .plan.environment import Environment
from .plan.model import ClusterSpec
from .settings.args import RkeClusterArgs
from .settings.resolve import ClusterConfig as StackConfig
from .settings.resolve import Running
from .settings.resolve import resolve as resolve_config
from .state import io
from .state.migrations import HistoryError
from .state.model import ClusterState

TYPE = "rke-aws:index:RkeCluster"


class RkeAwsError(pulumi.RunError):
    """A refused cluster: every problem at once (`diagnostics`); the CLI prints the message alone."""

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = ()):
        super().__init__(message)
        self.diagnostics = list(diagnostics)


def resolve(args: RkeClusterArgs, name: str, previous: ClusterState | None, *, flat_outputs: bool) -> StackConfig:
    """The configuration checked against the cluster's last state (ConfigError: every problem). The cluster ID
    defaults to the stack's name (flat outputs: a stack of its own) or else the component's name."""
    running = Running(kubernetes_version=previous.kubernetes_version, etcd_members=len(previous.etcd_members),
                      ccm_install=previous.running_ccm_install()) if previous else Running()  # type: ignore[arg-type]
    project = args.prefix[:-1] if args.prefix else pulumi.get_project()
    return resolve_config(args, project=project, stack=pulumi.get_stack(), name=None if flat_outputs else name,
                          running=running)


@dataclass
class _Program:
    """What one program declared: flat outputs are the stack's own, and a cluster ID names one cluster."""
    cluster_ids: set[str] = field(default_factory=set)
    flat: bool = False


_PROGRAMS: weakref.WeakKeyDictionary[Any, _Program] = weakref.WeakKeyDictionary()


def _program() -> _Program:
    from pulumi.runtime import settings

    key = settings.get_root_resource() or settings.SETTINGS
    return _PROGRAMS.setdefault(key, _Program())


def plan(name: str, args: RkeClusterArgs, *, flat_outputs: bool = False, outputs_key: str | None = None,
         environment: Environment | None = None) -> ClusterSpec:
    """The cluster's last state, its configuration resolved against it, and its plan; raises RkeAwsError
    (nothing registered) with every problem."""
    try:
        previous = io.read(None if flat_outputs else (outputs_key or name))
        cfg = resolve(args, name, previous, flat_outputs=flat_outputs)
        env = environment or Environment.from_runtime()
        spec = ClusterSpec(cfg, planner.build(cfg, previous, env), previous)
        # What an air-gapped cluster needs from the account (its facts sit above plan/: assembly/preflight.py).
        found = preflight.airgap_problems(spec, env)
        problems = [d for d in found if d.severity == Severity.ERROR]
        if problems:
            raise ConfigError(problems, prefix=f"{cfg.project}:")
        if found:
            spec = dataclasses.replace(spec, plan=dataclasses.replace(spec.plan,
                                                                      warnings=spec.plan.warnings + tuple(found)))
        return spec
    except ConfigError as err:
        raise RkeAwsError(str(err), err.diagnostics) from None
    except HistoryError as err:
        raise RkeAwsError(str(err)) from None


class RkeCluster(pulumi.ComponentResource):
    """The cluster's AWS resources and what is installed in it. `state`: what the next update reads back
    (also exported: flat, or under `outputs_key`, default the cluster's name)."""

    state: dict[str, Any]
    spec: ClusterSpec

    def __init__(self, name: str, args: RkeClusterArgs, opts: pulumi.ResourceOptions | None = None, *,
                 flat_outputs: bool = False, outputs_key: str | None = None,
                 environment: Environment | None = None):
        program = _program()
        if flat_outputs and program.flat:
            raise RkeAwsError(f"cluster {name}: flat_outputs=True, but another cluster of this program already "
                              "exports its state at the top level; give this one its own key (flat_outputs=False)")
        provider = opts.provider if opts is not None else None
        env = environment or Environment.from_runtime(provider)
        spec = plan(name, args, flat_outputs=flat_outputs, outputs_key=outputs_key, environment=env)
        cfg = spec.config
        if cfg.cluster_id in program.cluster_ids:
            raise RkeAwsError(f"cluster {name}: clusterId {cfg.cluster_id} is another cluster's of this program; "
                              "every resource is named by it, so each cluster needs its own")
        program.cluster_ids.add(cfg.cluster_id)
        program.flat = program.flat or flat_outputs
        super().__init__(TYPE, name, None, opts)
        self.spec = spec
        cluster = spec.plan
        prefix = f"{cfg.project}:"
        for warning in cfg.warnings:
            pulumi.log.warn(warning)
        for diagnostic in cluster.warnings:
            pulumi.log.warn(diagnostic.render(prefix))
        for diagnostic in cluster.notes:
            pulumi.log.info(diagnostic.render(prefix))

        # Children of the stack before they were children of this component (module docstring).
        child = pulumi.ResourceOptions(parent=self, aliases=[pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)])
        base = foundation.build(name, spec, child)
        kept = storage.build(name, spec, child)
        identity = workload_identity.build(name, spec, child)
        prepared = in_cluster.prepare(name, spec, child, identity, base.network.vpc_id)
        tokens = secrets.build(name, spec, child)
        boot_dependencies = kept.boot_dependencies + (tokens.parameters if tokens else [])
        if identity is not None:
            boot_dependencies += [identity.key_parameter, identity.trusted_parameter]
        shipped = boot.manifests(name, spec, prepared, child)
        if shipped.component is not None:
            boot_dependencies += shipped.component.parameters
        machines = boot.machines(name, spec, base, tokens, shipped,
                                 secrets.parameter_access(spec, tokens, shipped.component, identity),
                                 kept.extra_policies, boot_dependencies, kept.etcd_s3, child,
                                 identity=workload_identity.rke2_identity(spec, identity),
                                 rke_identity=workload_identity.rke1_identity(spec, identity))
        # An explicit kubeconfig wins over the one the first server published (RKE2).
        kubeconfig = cfg.kubeconfig.get_secret_value() if cfg.kubeconfig is not None else cluster.published_kubeconfig
        installed = in_cluster.install(name, spec, prepared, kubeconfig, child,
                                       published=tokens is not None and tokens.published is not None)

        self.state = outputs.state(spec, base, prepared, tokens, shipped, machines, installed, flat=flat_outputs,
                                   identity=identity)
        self.identity = identity
        self.api_url = self.state[ClusterState.output_key("kubernetes_api_url")]
        self.vpc_id = base.network.vpc_id
        self.security_group_id = base.security.group_id
        self.subnet_ids = base.network.subnet_ids
        self.join_token = pulumi.Output.secret(tokens.join_token.token) if tokens else None
        self.kubeconfig_parameter = tokens.published.parameter_name if tokens and tokens.published else None
        self.register_outputs(ClusterState.wire(kubernetes_api_url=self.api_url, vpc_id=self.vpc_id,
                                                security_group_id=self.security_group_id))
        if flat_outputs:
            for key, value in self.state.items():
                pulumi.export(key, value)
        else:
            pulumi.export(outputs_key or name, self.state)

    def service_account_role(self, name: str, namespace: str, service_account: str, *,
                             policy_arns: Sequence[str] = (), policy: str | None = None) -> pulumi.Output[str]:
        """The ARN of a new IAM role that only `<namespace>/<service_account>` of this cluster may assume (IRSA;
        identity.serviceAccounts irsa): annotate that service account with `eks.amazonaws.com/role-arn: <ARN>`.
        `policy_arns`: managed policies to attach; `policy`: an inline policy (JSON)."""
        if self.identity is None:
            raise RkeAwsError(f"cluster {self.spec.config.cluster_id}: service_account_role needs "
                              "identity.serviceAccounts irsa")
        problems = identity_plan.role_problems(namespace, service_account, policy)
        if problems:
            raise RkeAwsError(f"service_account_role {name}: " + "; ".join(problems))
        return self.identity.service_account_role(name, namespace, service_account, policy_arns, policy).arn
