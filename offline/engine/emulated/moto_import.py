"""moto imported trimmed, once per process: what the plan pays for before its first AWS call.

`import moto.ec2.models` costs about four bare `import pulumi_aws` (issue 33 design §6.2), most of it for data a
plan never reads: three fresh boto3 sessions (each parsing botocore's endpoint data again) to list the regions of
each partition, and every region's instance-type offerings (150,000 rows) for a plan that asks about one region.
`load()` imports it with one shared session for the region lists and the offerings read per region on first use.
moto reads the offerings table only through `table[location_type][region]` and `.get(region, default)` (moto
5.2: ec2/models/instances.py run_instances, instance_types.py, spot_requests.py). Each service's backend registry
lists its regions through a session of its own (moto 5.2: core/base_backend.py AccountSpecificBackend.get_session),
which parses botocore's endpoint data and EC2's service model a second time (0.3 s of every plan): it gets the
same shared session. That session answers region lists from botocore's endpoint data alone (RegionLists): botocore
parses a service's whole model for its endpointPrefix (EC2's: 4 MB of JSON, 0.2 s), which for the services an
account builds is known. tests/emulated/test_moto_import.py holds the patched names to the locked moto and the
answers to an untrimmed import's.

moto looks an instance up by copying every reservation (`_instance_lookup_without_copies`): the same look-up
without the copies keeps a run's cost linear in its nodes.

moto also gives every KMS key a fresh RSA-2048 key pair (moto 5.2 kms/models.py KmsKey.__init__ through
kms/utils.py generate_private_key), a symmetric one included, which has none in KMS (GetPublicKey, Sign and Verify
take asymmetric keys only: the KMS API reference, GetPublicKey). Generating it costs 0.1-0.17 s, twice per plan
(the program's key and EC2's default EBS key aws/ebs): half of what the emulated account adds to a run. `load()`
gives every key that is not an RSA or ECC key one pair shared by the process, generated on first use; RSA and
ECC keys keep their own.
"""

from __future__ import annotations

import os
import threading
from typing import Any

_LOCK = threading.Lock()
_LOADED = False
# The one session (no credentials read) that answers moto's region lists in this process: a RegionLists.
SESSION: Any = None
# The endpointPrefix (botocore data/<service>/<version>/service-2.json, metadata) of the services whose backends an
# emulated account builds; tests/emulated/test_moto_import.py holds it to botocore's models.
ENDPOINT_PREFIXES = {"ec2": "ec2", "iam": "iam", "ssm": "ssm", "s3": "s3", "kms": "kms", "route53": "route53",
                     "sts": "sts", "elb": "elasticloadbalancing", "elbv2": "elasticloadbalancing"}


class RegionLists:
    """What moto asks a boto3 session while it lists regions (get_available_partitions, get_available_regions:
    moto 5.2 core/base_backend.py, ec2/models/availability_zones_and_regions.py), answered as botocore's
    Session.get_available_regions does (its endpoint resolver over the bundled endpoint data), with the
    endpointPrefix of ENDPOINT_PREFIXES' services taken from there instead of their parsed models."""

    def __init__(self) -> None:
        import botocore.session

        self._session = botocore.session.Session()
        self._resolver: Any = None

    def _endpoints(self) -> Any:
        if self._resolver is None:
            from botocore.regions import EndpointResolver

            loader = self._session.get_component("data_loader")
            data, path = loader.load_data_with_path("endpoints")
            self._resolver = EndpointResolver(data, uses_builtin_data=loader.is_builtin_path(path))
        return self._resolver

    def get_available_partitions(self) -> list[str]:
        return self._endpoints().get_available_partitions()

    def get_available_regions(self, service_name: str, partition_name: str = "aws",
                              allow_non_regional: bool = False) -> list[str]:
        prefix = ENDPOINT_PREFIXES.get(service_name)
        if prefix is None:
            return self._session.get_available_regions(service_name, partition_name, allow_non_regional)
        return self._endpoints().get_available_endpoints(prefix, partition_name, allow_non_regional)

    def __getattr__(self, name: str) -> Any:
        # Anything else moto might ask while importing: botocore's session answers it.
        return getattr(self._session, name)
# Set before moto is imported: moto's ~5,000 built-in AMIs cost 0.1 s per region and hold no image a stack
# asks for (the account publishes its own, rke_aws_offline.engine.emulated_account).
MOTO_ENV = {"MOTO_EC2_LOAD_DEFAULT_AMIS": "false"}


class _OfferingsByRegion(dict):
    """One location type's offerings, each region's file read the first time moto asks for that region."""

    def __init__(self, location_type: str, files: dict[str, str], load: Any):
        super().__init__()
        self._location_type, self._files, self._load_resource = location_type, files, load

    def _read(self, region: str) -> list | None:
        path = self._files.get(region)
        if path is None:
            return None
        rows = self._load_resource(path)
        for row in rows:
            row["LocationType"] = self._location_type
        dict.__setitem__(self, region, rows)
        return rows

    def __missing__(self, region: str) -> list:
        rows = self._read(region)
        if rows is None:
            raise KeyError(region)
        return rows

    def get(self, region: str, default: Any = None) -> Any:  # type: ignore[override]
        if dict.__contains__(self, region):
            return dict.__getitem__(self, region)
        rows = self._read(region)
        return default if rows is None else rows

    def __contains__(self, region: object) -> bool:
        return dict.__contains__(self, region) or region in self._files

    def regions(self) -> list[str]:
        return sorted(self._files)


def load() -> None:
    """Import moto's EC2, IAM, SSM, S3, KMS, Route 53, ELBv2 and STS models, trimmed (once per process)."""
    global _LOADED, SESSION
    if _LOADED:
        return
    with _LOCK:
        if _LOADED:
            return
        for key, value in MOTO_ENV.items():
            os.environ.setdefault(key, value)
        import boto3
        import moto.utilities.utils as moto_utils

        real_load = moto_utils.load_resource
        skipped: list[str] = []

        def load_resource(path: str, *args: Any, **kwargs: Any) -> Any:
            if "instance_type_offerings" in path:
                skipped.append(path)
                return []
            return real_load(path, *args, **kwargs)

        SESSION = RegionLists()
        real_session = boto3.Session

        def one_session(*args: Any, **kwargs: Any) -> Any:
            # moto's region table asks three fresh sessions for the regions of each partition.
            return real_session(*args, **kwargs) if args or kwargs else SESSION

        moto_utils.load_resource = load_resource
        boto3.Session = one_session  # type: ignore[misc]
        try:
            import moto.ec2.models  # noqa: F401 - the import being trimmed
            import moto.ec2.models.instance_types as instance_types
        finally:
            moto_utils.load_resource = real_load
            boto3.Session = real_session  # type: ignore[misc]
        from moto.core.base_backend import AccountSpecificBackend

        # The region lists of a backend registry: the session's only use there (get_available_partitions and
        # get_available_regions, which read no credentials).
        AccountSpecificBackend.get_session = classmethod(lambda cls: SESSION)  # type: ignore[method-assign,assignment]
        for location_type in list(instance_types.INSTANCE_TYPE_OFFERINGS):
            files = {os.path.basename(p).split(".")[0]: p for p in skipped if f"/{location_type}/" in p}
            instance_types.INSTANCE_TYPE_OFFERINGS[location_type] = _OfferingsByRegion(location_type, files, real_load)
        _share_symmetric_keys_pair()
        _instance_lookup_without_copies()
        _LOADED = True


def _instance_lookup_without_copies() -> None:
    """moto's EC2Backend.get_instance (moto 5.2 ec2/models/instances.py) finds an instance through all_instances(),
    which copies every reservation first (all_reservations: copy.copy of each) and tests an empty filter on every
    instance; the account's AssociateIamInstanceProfile, ModifyInstanceAttribute and AttachVolume each look the
    instance up, so a run of N nodes made about 3N²/2 copies (a fifth of a 500-node run's CPU, profiling every
    thread). The same walk over the reservations themselves finds the same instance object (a copy shares its reservation's
    list of instances) or raises the same error."""
    from moto.ec2.exceptions import InvalidInstanceIdError
    from moto.ec2.models.instances import InstanceBackend

    def get_instance(self: Any, instance_id: str) -> Any:
        for reservation in self.reservations.values():
            for instance in reservation.instances:
                if instance.id == instance_id:
                    return instance
        raise InvalidInstanceIdError(instance_id)

    InstanceBackend.get_instance = get_instance  # type: ignore[method-assign]


def _share_symmetric_keys_pair() -> None:
    import moto.kms.models as kms_models
    from moto.kms.utils import KeySpec

    real = kms_models.generate_private_key
    own_pair = set(KeySpec.rsa_key_specs()) | set(KeySpec.ecc_key_specs())
    shared: list[Any] = []
    lock = threading.Lock()

    def generate_private_key(key_spec: str) -> Any:
        if key_spec in own_pair:
            return real(key_spec)
        with lock:
            if not shared:
                shared.append(real(key_spec))
            return shared[0]

    kms_models.generate_private_key = generate_private_key
