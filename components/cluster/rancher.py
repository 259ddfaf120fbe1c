"""The cluster registered in Rancher as an imported cluster (`rancher`), through the rancher2 provider.

Helm mode (`ccm.install: helm`): the registration manifest (the cluster registration token's
`manifest_url`) is applied through the Kubernetes provider as a ConfigFile, once a kubeconfig reaches
the cluster. Manifest mode: the servers download it into RKE2's manifests directory from a SecureString
parameter holding the address (components/cluster/manifests.py; the address carries the registration
token), so no kubeconfig is needed. Who writes the upgrade Plans: components/plan/rancher.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from ..settings import versions

# The rancher2 Cluster's output holding the registration token (pulumi_rancher2 Cluster.cluster_registration_token,
# outputs.ClusterClusterRegistrationToken): every field but the IDs, name, labels and annotations embeds the token.
REGISTRATION_TOKEN_OUTPUT = "clusterRegistrationToken"


@dataclass(frozen=True)
class RancherRegistrationArgs:
    url: str
    token: pulumi.Input[str]
    cluster_name: str
    cluster_id: str
    annotations: dict[str, str]
    agent_env: dict[str, str] = field(default_factory=dict)  # plan.rancher.agent_env: the agent's proxy


class RancherRegistration(pulumi.ComponentResource):
    """The imported cluster in Rancher; `manifest_url`: its registration manifest's address (secret)."""

    def __init__(self, name: str, args: RancherRegistrationArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("rke-aws:rancher:RancherRegistration", name, None, opts)
        # Imported here, by the stacks that register with Rancher only: the SDK costs a plan without Rancher a
        # third of a bare `import pulumi_aws` (bench/RESULTS.md, issue 33.7).
        import pulumi_rancher2 as rancher2

        # An explicit provider: rancher2:* stack keys and RANCHER_* variables play no part; TLS is
        # verified (insecure false: the token goes with every call).
        self.provider = rancher2.Provider(
            f"{name}-rancher",
            api_url=args.url,
            token_key=pulumi.Output.secret(args.token),
            insecure=False,
            timeout=versions.RANCHER_API_TIMEOUT,
            opts=pulumi.ResourceOptions(parent=self),
        )
        # No driver configuration: an imported cluster (rke2_config would be Rancher's own upgrade path).
        self.cluster = rancher2.Cluster(
            f"{name}-rancher-cluster",
            name=args.cluster_name,
            description=f"rke-aws cluster {args.cluster_id} (imported; managed by Pulumi)",
            annotations=args.annotations,
            # Behind a proxy the agent connects out through it (Rancher never connects in).
            agent_env_vars=[rancher2.ClusterAgentEnvVarArgs(name=k, value=v) for k, v in args.agent_env.items()] or None,
            opts=pulumi.ResourceOptions(
                parent=self, provider=self.provider,
                # The registration token and the addresses and commands that embed it (manifestUrl, command,
                # nodeCommand, insecureCommand, windowsNodeCommand, ...) are one output object; the engine
                # marks only top-level outputs secret, and pulumi-rancher2 marks caCert and kubeConfig alone.
                additional_secret_outputs=[REGISTRATION_TOKEN_OUTPUT]),
        )
        self.manifest_url = pulumi.Output.secret(self.cluster.cluster_registration_token.apply(
            lambda t: t.manifest_url if t is not None else None))
        self.register_outputs({"clusterId": self.cluster.id})


@dataclass(frozen=True)
class RancherAgentArgs:
    provider: k8s.Provider
    manifest_url: pulumi.Input[str]


class RancherAgent(pulumi.ComponentResource):
    """Helm mode: the registration manifest (Rancher's agent in cattle-system), through the Kubernetes provider.

    Kept on delete: the engine deletes the manifest's objects before the imported cluster (they depend on
    it), but Rancher's cleanup of a deleted imported cluster goes through this agent (plan/rancher.py), and
    that cleanup deletes the agent itself. The manifest's objects inherit the option (pulumi/pulumi
    pkg/resource/deploy/source_eval.go inheritFromParent: a remote component's children take its
    retainOnDelete; pulumi-kubernetes registers them with Parent(component) only)."""

    def __init__(self, name: str, args: RancherAgentArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("rke-aws:rancher:RancherAgent", name, None, opts)
        self.manifest = k8s.yaml.v2.ConfigFile(
            f"{name}-rancher-agent", file=args.manifest_url,
            opts=pulumi.ResourceOptions(parent=self, provider=args.provider, retain_on_delete=True))
        self.register_outputs({})
