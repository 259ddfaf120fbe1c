"""moto imported trimmed (offline/engine/emulated/moto_import.py): the names it patches exist in the locked moto,
and what the trimmed import answers equals what botocore's own data says.

moto 5.2 sources read (the locked version, .venv): core/base_backend.py (AccountSpecificBackend lists a
backend registry's regions through `get_session()`, a `boto3.Session` of its own, with get_available_partitions and
get_available_regions), ec2/models/availability_zones_and_regions.py (the region table, from fresh sessions),
ec2/models/instance_types.py (INSTANCE_TYPE_OFFERINGS read per region). botocore 1.x session.py
Session.get_available_regions: the service's model for its endpointPrefix (metadata), then the endpoint resolver
over the bundled endpoint data (regions.py EndpointResolver.get_available_endpoints); the trim reads the
endpointPrefix from moto_import.ENDPOINT_PREFIXES instead, and parses the endpoint data once.
"""

from __future__ import annotations

import boto3

from rke_aws_offline.engine.emulated import backends, moto_import
from rke_aws_offline.engine.emulated.provider_checks import ACCOUNT_ID, known_regions


def _regions(session: boto3.Session, service: str) -> list[str]:
    return [r for p in session.get_available_partitions() for r in session.get_available_regions(service, p)]


def _models_parsed(lists: moto_import.RegionLists) -> list[str]:
    """The services among ENDPOINT_PREFIXES whose models the region lists' session parsed (another test may have
    built a backend of a service outside it, whose list parses its model as botocore does)."""
    cache = lists._session.get_component("data_loader")._cache
    return [key[1] for key in cache if key[0] == "load_service_model" and key[1] in moto_import.ENDPOINT_PREFIXES]


def test_the_endpoint_prefixes_are_botocores():
    fresh = boto3.Session()
    for service, prefix in moto_import.ENDPOINT_PREFIXES.items():
        assert fresh._session.get_service_data(service)["metadata"].get("endpointPrefix", service) == prefix, service


def test_the_region_lists_are_botocores_without_parsing_service_models():
    """Every partition's regions of each service, as a fresh botocore session lists them (with and without the
    non-regional endpoints), from the endpoint data alone: no service's model is parsed (EC2's is 4 MB of JSON)."""
    moto_import.load()
    lists, fresh = moto_import.SESSION, boto3.Session()
    for service in moto_import.ENDPOINT_PREFIXES:
        for partition in fresh.get_available_partitions():
            for non_regional in (False, True):
                assert lists.get_available_regions(service, partition, non_regional) == \
                    fresh.get_available_regions(service, partition, non_regional), (service, partition)
    assert lists.get_available_partitions() == fresh.get_available_partitions()
    assert not _models_parsed(lists)


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
        assert not _models_parsed(moto_import.SESSION)
    finally:
        backends.stop()


def test_symmetric_keys_share_one_generated_pair_and_asymmetric_keys_keep_their_own():
    """A symmetric KMS key has no key pair in KMS (the KMS API reference, GetPublicKey: the public key of an
    asymmetric KMS key only); moto generates an RSA-2048 pair for every key (moto 5.2 kms/models.py KmsKey), 0.1 s
    each, twice per plan. After the trim, symmetric keys share one pair and an RSA key still gets its own."""
    moto_import.load()
    import moto.kms.models as kms_models

    assert kms_models.generate_private_key("SYMMETRIC_DEFAULT") is kms_models.generate_private_key("SYMMETRIC_DEFAULT")
    assert kms_models.generate_private_key("RSA_2048") is not kms_models.generate_private_key("RSA_2048")
    backends.start()
    try:
        kms = backends.kms("us-west-2")
        first = kms.create_key(None, "ENCRYPT_DECRYPT", "SYMMETRIC_DEFAULT", "", [])
        second = kms.create_key(None, "ENCRYPT_DECRYPT", "SYMMETRIC_DEFAULT", "", [])
        assert first.id != second.id
        assert first.private_key is second.private_key
    finally:
        backends.stop()


def test_an_instance_is_found_without_copying_every_reservation():
    """moto 5.2 ec2/models/instances.py: get_instance walks all_instances(), which copies each reservation first; the
    trim walks the reservations themselves. The same object for every instance (as moto's own all_instances()
    lists them), the same error for an unknown ID, and no reservation copied."""
    import copy

    import pytest
    from moto.ec2.exceptions import InvalidInstanceIdError

    moto_import.load()
    backends.start()
    try:
        ec2 = backends.client("ec2", "us-west-2")
        image = ec2.register_image(Name="rke-aws-test", RootDeviceName="/dev/sda1")["ImageId"]
        ids = [ec2.run_instances(ImageId=image, MinCount=1, MaxCount=1)["Instances"][0]["InstanceId"] for _ in range(3)]
        backend = backends.ec2("us-west-2")
        real_copy, copies = copy.copy, []
        copy.copy = lambda x: copies.append(x) or real_copy(x)  # type: ignore[assignment]
        try:
            found = [backend.get_instance(i) for i in ids]
        finally:
            copy.copy = real_copy  # type: ignore[assignment]
        assert copies == []
        listed = {i.id: i for i in backend.all_instances()}
        assert all(f is listed[i] for f, i in zip(found, ids, strict=True))
        with pytest.raises(InvalidInstanceIdError):
            backend.get_instance("i-0123456789abcdef0")
    finally:
        backends.stop()
