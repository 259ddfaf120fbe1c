"""The planner's only ways out of pure code: the account's look-ups (`Lookups`) and the running cluster
(`ClusterReader`). `Environment.from_runtime()` builds the real ones; unit tests pass fakes
(tests/support/fakes.py) and call the planner's steps with no Pulumi runtime.

Reading the cluster: through the kubeconfig this update has (components/plan/running.py), unless the
operator switches it off (`RKE_AWS_READ_CLUSTER=never`: a CI preview whose runner cannot reach the API
server, where every read would only wait for its deadline) or the program runs under Pulumi's mocks (an
offline plan: no cluster answers there, and kubeconfigs are placeholders). The day-2 guards then judge
against the last state and the user's confirmations, and say so.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from . import running
from .lookups import PulumiLookups

READ_CLUSTER_ENV = "RKE_AWS_READ_CLUSTER"  # "never": the operator's switch (module docstring)


class Lookups(Protocol):
    """What the planner asks the account; each method raises lookups.LookupFailed when the call fails."""

    def zones(self, regular_only: bool) -> list[str]: ...
    def subnet(self, subnet_id: str) -> Any: ...
    def vpc(self, vpc_id: str) -> Any: ...
    def subnet_route_table(self, subnet_id: str) -> Any: ...
    def main_route_table(self, vpc_id: str) -> Any: ...
    def network_interfaces(self, subnet_id: str, addresses: Sequence[str]) -> Any: ...
    def instances(self, filters: list[Any], states: Sequence[str]) -> Any: ...
    def account(self) -> str: ...
    def bucket(self, bucket: str) -> Any: ...
    def bucket_names(self, prefix: str) -> list[str]: ...
    def key_pair(self, name: str) -> Any: ...
    def instance_type(self, instance_type: str) -> Any: ...
    def instance_types(self, pattern: str) -> list[str]: ...
    def offerings(self, instance_types: Sequence[str], zones: Sequence[str]) -> set[tuple[str, str]]: ...
    def image(self, image_id: str) -> Any: ...
    def latest_image(self, owner: str | Sequence[str], name: str) -> Any: ...
    def security_groups(self, vpc_id: str, name: str) -> list[str]: ...
    def security_group_rule_ids(self, group_id: str) -> list[str]: ...
    def security_group_rule(self, rule_id: str) -> Any: ...
    def parameter(self, name: str) -> str: ...
    def objects(self, bucket: str, prefix: str) -> list[str]: ...
    def vpc_endpoint(self, vpc_id: str, service_name: str) -> Any: ...


# kubeconfig, RKE2? -> the cluster as read, or why it was not
ClusterReader = Callable[[str | None, bool], running.Reading]


def never_read(reason: str) -> ClusterReader:
    """A reader that reads nothing, for `reason`."""
    def read(kubeconfig: str | None, rke2: bool) -> running.Reading:
        access = running.parse_kubeconfig(kubeconfig)
        return running.Unreadable(access if isinstance(access, str) else reason)
    return read


@dataclass(frozen=True)
class Environment:
    lookups: Lookups
    cluster_reader: ClusterReader
    offline: bool = False  # under Pulumi's mocks: look-ups answer from the emulated account

    @classmethod
    def from_runtime(cls, provider: Any = None, cluster_reader: ClusterReader | None = None) -> Environment:
        """The real look-ups (through `provider` when given) and the real reader, or none (module
        docstring)."""
        offline = under_mocks()
        if cluster_reader is None:
            if os.environ.get(READ_CLUSTER_ENV, "").lower() == "never":
                cluster_reader = never_read(f"{READ_CLUSTER_ENV}=never: the cluster is not read")
            elif offline:
                cluster_reader = never_read("offline run: the cluster is not read")
            else:
                cluster_reader = running.read
        return cls(PulumiLookups(provider), cluster_reader, offline)


def under_mocks() -> bool:
    """The program runs under Pulumi's mocks (pulumi.runtime.set_mocks): an offline evaluation."""
    from pulumi.runtime import mocks, settings

    return isinstance(settings.get_monitor(), mocks.MockMonitor)
