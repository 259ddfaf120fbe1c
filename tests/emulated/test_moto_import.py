"""moto imported trimmed (offline/engine/emulated/moto_import.py): the names it patches exist in the locked moto,
and what the trimmed import answers equals what botocore's own data says.

moto 5.2 sources read (the locked version, .venv): core/base_backend.py (AccountSpecificBackend lists a
backend registry's regions through `get_session()`, a `boto3.Session` of its own, with get_available_partitions and
get_available_regions), ec2/models/availability_zones_and_regions.py (the region table, from fresh sessions),
ec2/models/instance_types.py (INSTANCE_TYPE_OFFERINGS read per region). botocore's Session.get_available_regions
reads the service model (its endpointPrefix) and the endpoint data, the two files the trim parses once.
"""

from __future__ import annotations

import boto3

from rke_aws_offline.engine.emulated import backends, moto_import
from rke_aws_offline.engine.emulated.provider_checks import ACCOUNT_ID, known_regions


def _regions(session: boto3.Session, service: str) -> list[str]:
    return [r for p in session.get_available_partitions() for r in session.get_available_regions(service, p)]


def test_backend_registries_list_regions_through_the_one_shared_session():
    """A backend registry's regions come from the session that answered the region table: botocore's endpoint
    data and EC2's service model are parsed once per process, not again for every registry (0.3 s of a plan)."""
    moto_import.load()
    from moto.core.base_backend import AccountSpecificBackend

    assert moto_import.SESSION is not None
    assert AccountSpecificBackend.get_session() is moto_import.SESSION


def test_the_trimmed_region_lists_are_botocores():
    """The regions each registry and the region table hold equal a fresh session's (every partition)."""
    backends.start()
    try:
        from moto.ec2.models import ec2_backends
        from moto.ssm.models import ssm_backends

        fresh = boto3.Session()
        assert ec2_backends[ACCOUNT_ID].regions == _regions(fresh, "ec2")
        assert ssm_backends[ACCOUNT_ID].regions == _regions(fresh, "ssm")
        # moto's region table: the commercial, GovCloud and China partitions (not the ISO ones botocore lists).
        table = {r for p in ("aws", "aws-us-gov", "aws-cn") for r in fresh.get_available_regions("ec2", p)}
        assert known_regions() == frozenset(table)
    finally:
        backends.stop()
