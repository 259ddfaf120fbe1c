"""moto, once per process: the mock switched on and off around each program, its backends called directly, and
boto3 clients for whoever inspects the account (the doctor, tests).

A call through boto3 into moto costs 6-10 ms (botocore serializes, signs and parses; moto matches the URL,
parses the request and renders XML); the same backend method called directly costs well under a millisecond. The
emulated account's handlers (offline/engine/emulated/resources.py, invokes.py) call the backends directly, as
moto's own response classes do (moto 5.2: ec2/responses/*.py, iam/responses.py, ...), with the arguments those
pass; tests/emulated/test_backend_parity.py reads every resource back through boto3. moto's models and its
refusals are the same either way: its validation lives in the backends.
"""

from __future__ import annotations

import threading
from typing import Any

from rke_aws_offline.engine.emulated import moto_import
from rke_aws_offline.engine.emulated.provider_checks import ACCOUNT_ID, partition_of

_LOCK = threading.Lock()
_MOCK: Any = None  # moto's mock_aws(), created once per process
_SESSIONS: dict[str, Any] = {}  # region -> boto3 session (fake keys), for whoever inspects an account
_LOADER: Any = None  # botocore's data loader, shared by every session
_CLIENTS: dict[tuple[str, str], Any] = {}


def start() -> None:
    """Switch moto on with every backend empty (moto's reset: each backend is built again on first use)."""
    global _MOCK
    moto_import.load()
    with _LOCK:
        if _MOCK is None:
            from moto import mock_aws

            _MOCK = mock_aws()
        _MOCK.start(reset=True)


def stop() -> None:
    with _LOCK:
        if _MOCK is not None:
            _MOCK.stop()


def session(region: str = "us-east-1") -> Any:
    """A boto3 session on the emulated account in `region`, with explicit fake keys: nothing here ever reads the
    user's credentials. One per region and process, each over its own botocore session sharing one data loader
    (service models parsed once). Sharing the botocore session itself is wrong: every boto3.Session registers its
    S3 class hooks on it again ("Cannot inject class attribute upload_file"), and its region would leak."""
    global _LOADER
    with _LOCK:
        if region not in _SESSIONS:
            import boto3
            import botocore.session

            core = botocore.session.Session()
            if _LOADER is None:
                _LOADER = core.get_component("data_loader")
            else:
                core.register_component("data_loader", _LOADER)
            _SESSIONS[region] = boto3.Session(aws_access_key_id="testing", aws_secret_access_key="testing",
                                              aws_session_token="testing", region_name=region,
                                              botocore_session=core)
        return _SESSIONS[region]


def client(service: str, region: str) -> Any:
    """A boto3 client on the emulated account in `region` (cached per process)."""
    key = (service, region)
    if key not in _CLIENTS:
        kwargs: dict[str, Any] = {}
        if service == "iam" and partition_of(region) == "aws-us-gov":
            # moto gap: it picks the IAM backend from the region in the endpoint's host name, and GovCloud's
            # global endpoint (iam.us-gov.amazonaws.com) names none, so roles would land in the commercial
            # partition where EC2 in GovCloud cannot find their profiles.
            kwargs["endpoint_url"] = f"https://iam.{region}.amazonaws.com"
        _CLIENTS[key] = session(region).client(service, **kwargs)
    return _CLIENTS[key]


# ---- the backends, as moto's response classes reach them ----------------------------------------------

def ec2(region: str) -> Any:
    from moto.ec2.models import ec2_backends

    return ec2_backends[ACCOUNT_ID][region]


def iam(region: str) -> Any:
    from moto.iam.models import iam_backends

    return iam_backends[ACCOUNT_ID][partition_of(region)]


def ssm(region: str) -> Any:
    from moto.ssm.models import ssm_backends

    return ssm_backends[ACCOUNT_ID][region]


def s3(region: str) -> Any:
    from moto.s3.models import s3_backends

    return s3_backends[ACCOUNT_ID][partition_of(region)]


def kms(region: str) -> Any:
    from moto.kms.models import kms_backends

    return kms_backends[ACCOUNT_ID][region]


def route53(region: str) -> Any:
    from moto.route53.models import route53_backends

    return route53_backends[ACCOUNT_ID][partition_of(region)]


def elbv2(region: str) -> Any:
    from moto.elbv2.models import elbv2_backends

    return elbv2_backends[ACCOUNT_ID][region]


def refusal(err: BaseException) -> tuple[str, str] | None:
    """(code, message) of a refusal a moto backend raised, as AWS would answer it, or None for any other
    error. moto has two kinds: the older RESTError (error_type, message) and ServiceException (code,
    message)."""
    from moto.core.exceptions import ServiceException, _RESTError

    if isinstance(err, _RESTError):
        return str(err.error_type), str(err.message)
    if isinstance(err, ServiceException):
        return str(err.code), str(err.message)
    return None
