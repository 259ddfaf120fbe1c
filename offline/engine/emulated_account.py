"""Pulumi mocks backed by an emulated AWS account (moto, in process): every offline run of the program (the
plan, the diff, snapshots, the doctor's `--emulated`, the tests).

Every AWS resource the program registers is created in a moto account, so IDs, private IPs, private DNS names
and public IPs come from moto, and moto's refusals (unknown subnet, address outside the subnet or already taken,
duplicate rule, unknown instance profile, ...) fail the run. The account stays up after the run (until `stop()`),
so it can be inspected with boto3 (components/ops/doctor.py `--emulated`, tests/emulated/test_doctor.py).

One moto per process (offline/engine/emulated/backends.py): each account starts it with every backend empty,
so accounts come and go as programs run; only one is active at a time. moto is imported trimmed, on first use
(offline/engine/emulated/moto_import.py).

What an account holds besides what the program creates: the region's default VPC, Canonical's Ubuntu images
(provider_checks.UBUNTU_IMAGES), and what its constructor asks for: `zones` (the region's zones it has; moto's
table otherwise), `unoffered` (instance type, zone) pairs EC2 does not offer there (an overlay on moto's
offerings data), `images` (AMI ID -> architecture, virtualization type; None: any image a stack names exists,
as its file assumes), `key_pairs` (None: any key pair a stack names exists), `foreign_buckets` (another
account's buckets HeadBucket still answers for), and `setup(mocks)` for anything else (tests/support/
accounts.py builds subnets, instances, parameters, ... of an account through it).

Determinism: moto draws every identifier from one seedable Random. The run seeds it once at start, and again
before each resource from that resource's type and name, so IDs do not depend on the order in which Pulumi's
worker threads happen to register resources.

Where moto is laxer than AWS, the gap is closed here or in the handlers (marked "moto gap"). No network and no
credentials are used: the session carries fake keys and moto intercepts every call while the mock is active.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pulumi

from rke_aws_offline.engine.emulated import backends
from rke_aws_offline.engine.emulated import seed as seeding
from rke_aws_offline.engine.emulated.invokes import InvokeHandlers
from rke_aws_offline.engine.emulated.provider_checks import (
    ACCOUNT_ID,
    CANONICAL_OWNERS,
    ROOT_DEVICE,
    UBUNTU_CREATED,
    UBUNTU_IMAGES,
    partition_of,
    region_refusal,
    ubuntu_image_id,
    vendor_image_id,
    vendor_images,
)
from rke_aws_offline.engine.emulated.resources import EmulatedAwsError, ResourceHandlers
from rke_aws_offline.engine.harness import unwrap_secrets
from rke_aws_offline.engine.resource_types import TYPES

__all__ = ["ACCOUNT_ID", "EmulatedAwsError", "MotoMocks", "build", "build_stack", "emulator_refusal"]


class MotoMocks(ResourceHandlers, InvokeHandlers, pulumi.runtime.Mocks):
    """Pulumi mocks that create every resource in an in-process moto account.

    Use as `with MotoMocks(region) as mocks: harness.run_program(config, stack, mocks=mocks)`, or call
    `start()` / `stop()` (harness.run_program starts an account it is given, and stops it after the run when it
    started it). Only one emulated account can be active in a process at a time.
    `key_pairs`: key pairs the account holds; None (default): also any key pair a stack names, created on first
    use, as the stack assumes it exists. `images`: AMIs the account holds besides Canonical's (ID ->
    {architecture, virtualizationType}); None (default): any image a stack names, as an x86_64 HVM image.
    `setup(mocks)` runs right after start, with the account active (create pre-existing resources through
    `mocks.client(...)` or the backends).
    """

    _active: MotoMocks | None = None
    _class_lock = threading.Lock()

    def __init__(self, region: str, seed: str = "rke-aws", key_pairs: Iterable[str] | None = None,
                 create_missing_key_pairs: bool | None = None,
                 setup: Callable[[MotoMocks], None] | None = None, *, zones: Iterable[str] | None = None,
                 unoffered: Iterable[tuple[str, str]] = (), images: Mapping[str, Mapping[str, str]] | None = None,
                 foreign_buckets: Iterable[str] = (), objects: Mapping[str, Iterable[str]] | None = None,
                 existing_subnets: Mapping[str, Mapping[str, Any]] | None = None, created_before: Iterable[str] = ()):
        self.region = region
        self.seed = seed
        self.key_pairs = tuple(key_pairs or ())
        self.create_missing_key_pairs = (key_pairs is None) if create_missing_key_pairs is None else create_missing_key_pairs
        self.setup = setup
        self.zone_names = None if zones is None else tuple(zones)
        self.unoffered = frozenset(unoffered)
        self.images = None if images is None else {k: dict(v) for k, v in images.items()}
        self.foreign_buckets = set(foreign_buckets)
        # Buckets the account holds with their object keys ("name" in the account's region, "name@region" in
        # another): a user's artifacts bucket, filled before the program runs.
        self.objects = {k: tuple(v) for k, v in (objects or {}).items()}
        # What the account holds before the run besides the above, created through moto's APIs at start
        # (offline/engine/emulated/seed.py; a test may fill these before the account starts): a user's subnets
        # (id -> {cidr, az, vpc, public | route, hostnameType}) and their VPCs' DNS attributes (VPC -> (support,
        # hostnames)), addresses in use, instances (private IP -> tags) and the spot request that launched one
        # (private IP -> request ID), SSM parameters (name -> value), empty buckets, and security groups and
        # rules an earlier release left (group ID -> {vpcId, tags}; rule ID -> {groupId, ..., tags}).
        self.existing: dict[str, dict[str, Any]] = {k: dict(v) for k, v in (existing_subnets or {}).items()}
        self.vpc_dns: dict[str, tuple[bool, bool]] = {}
        self.taken_ips: set[str] = set()
        self.instances: dict[str, dict[str, str]] = {}
        self.spot_requests_at: dict[str, str] = {}
        self.parameters: dict[str, str] = {}
        self.buckets: set[str] = set()
        self.security_groups: dict[str, dict[str, Any]] = {}
        self.security_group_rules: dict[str, dict[str, Any]] = {}
        # Resources (names) an earlier update created, which this run's registrations update rather than create
        # (the engine holds them in its state): an instance is not launched again (resources.py _instance: its image
        # and key pair are not asked for; one the account holds at its address is that instance), a bucket the
        # account holds is that bucket.
        self.created_before = frozenset(created_before)
        self.resources: list[tuple[str, str, dict]] = []
        self.ids: dict[str, str] = {}  # "<type>::<name>" -> physical ID
        self._lock = threading.RLock()
        self._started = False
        # moto gap: RunInstances with spot market options creates no spot request in moto; AWS does, and
        # DescribeInstances filters by it (spot-instance-request-id). Instance ID -> request ID.
        self.spot_requests: dict[str, str] = {}
        # A region AWS does not have: the provider refuses every call (moto would raise KeyError).
        self.refusal = region_refusal(region)
        self.partition = "aws" if self.refusal else partition_of(region)

    # ---- lifecycle -------------------------------------------------------------------------

    @property
    def active(self) -> bool:
        return self._started

    def start(self) -> MotoMocks:
        if self.active:
            return self
        with MotoMocks._class_lock:
            if MotoMocks._active is not None:
                raise RuntimeError("another emulated AWS account is active; stop() it first")
            backends.start()
            MotoMocks._active = self
            self._started = True
        if self.refusal:
            return self  # an account in no region: every call is refused (see _require_active)
        try:
            self._seed(f"{self.seed}:{self.region}")
            self._ec2b().describe_vpcs()  # creates the region's default VPC now, under the run's seed
            self._check_zones()
            self._publish_images()
            self._fill_buckets()
            for key in self.key_pairs:
                self._seed(f"{self.seed}:keypair::{key}")
                self._ec2b().create_key_pair(key, "rsa", {})
            self._seed(f"{self.seed}:existing")
            self._hold_existing()
            if self.setup:
                self.setup(self)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        with MotoMocks._class_lock:
            if self._started:
                backends.stop()
                self._started = False
            if MotoMocks._active is self:
                MotoMocks._active = None

    def __deepcopy__(self, memo: dict) -> MotoMocks:
        # An account is a live handle (moto's backends, a lock), not a value: a copied run shares it.
        return self

    def __copy__(self) -> MotoMocks:
        return self

    def __enter__(self) -> MotoMocks:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def session(self) -> Any:
        """A boto3 session on the emulated account (only while it is active)."""
        if not self.active:
            raise RuntimeError("the emulated AWS account is not active")
        return backends.session(self.region)

    def client(self, service: str) -> Any:
        """A boto3 client on the emulated account in its region (only while it is active)."""
        self._require_active(f"{service} client")
        return backends.client(service, self.region)

    def _require_active(self, what: str) -> None:
        # Never restart a stopped account here: a registration that arrives after its run failed (from Pulumi's
        # worker threads) would otherwise start an account nobody stops, and the next run would find "another
        # emulated AWS account is active".
        if not self.active:
            raise EmulatedAwsError(f"AccountStopped: {what}: the emulated AWS account is not active")
        if self.refusal:
            raise EmulatedAwsError(self.refusal)

    def _seed(self, seed: str) -> None:
        from moto.moto_api._internal import mock_random

        mock_random.seed(seed)

    # ---- what the account holds ----------------------------------------------------------------

    def _zones(self) -> list[Any]:
        zones = self._ec2b().describe_availability_zones()
        return [z for z in zones if self.zone_names is None or z.name in self.zone_names]

    def _check_zones(self) -> None:
        if self.zone_names is not None:
            known = {z.name for z in self._ec2b().describe_availability_zones()}
            unknown = sorted(set(self.zone_names) - known)
            if unknown:
                raise ValueError(f"{self.region} has no zones {unknown} (moto's zones there: {sorted(known)})")

    def _check_zone(self, zone: str, label: str) -> None:
        if self.zone_names is not None and zone not in self.zone_names:
            raise EmulatedAwsError(f"InvalidParameterValue: {label}: Value ({zone}) for parameter availabilityZone "
                                   f"is invalid. Subnets can currently only be created in the following "
                                   f"availability zones: {', '.join(self.zone_names)}.")

    def _fill_buckets(self) -> None:
        s3 = backends.s3(self.region)
        for spec, keys in sorted(self.objects.items()):
            name, _, region = spec.partition("@")
            s3.create_bucket(name, region or self.region)
            for key in keys:
                s3.put_object(name, key, b"")
        for name in sorted(self.buckets - {spec.partition("@")[0] for spec in self.objects}):
            s3.create_bucket(name, self.region)

    def _hold_existing(self) -> None:
        ec2 = self.client("ec2") if (self.existing or self.taken_ips or self.instances or self.security_groups
                                     or self.security_group_rules) else None
        if self.existing:
            seeding.network(ec2, self.existing, self.vpc_dns)
        if self.taken_ips:
            seeding.taken_addresses(ec2, self.taken_ips - set(self.instances))  # an instance's address is taken
        if self.instances:
            ids = seeding.instances(ec2, self.instances, ubuntu_image_id(self.region, "amd64"))
            self.spot_requests.update({ids[ip]: rid for ip, rid in self.spot_requests_at.items()})
        if self.security_groups or self.security_group_rules:
            seeding.security_groups(ec2, self.security_groups, self.security_group_rules)
        for name, value in sorted(self.parameters.items()):
            self.client("ssm").put_parameter(Name=name, Value=value, Type="SecureString")

    def _publish_images(self) -> None:
        # moto gap: its built-in AMIs have no Canonical Ubuntu 24.04 image, and RegisterImage would make the
        # image ours, not Canonical's; so the image is put into the backend directly.
        for arch, name in UBUNTU_IMAGES.items():
            self._put_image(ubuntu_image_id(self.region, arch), name, CANONICAL_OWNERS[self.partition], arch, "hvm")
        for vendor, owner, arch, name in vendor_images(self.partition):  # RHEL, Rocky, SUSE, AL2023 (issue 35)
            self._put_image(vendor_image_id(self.region, vendor, arch), name, owner, arch, "hvm")
        for ami, spec in (self.images or {}).items():
            self._put_image(ami, f"image {ami}", ACCOUNT_ID, spec.get("architecture", "x86_64"),
                            spec.get("virtualizationType", "hvm"))

    def _put_image(self, ami: str, name: str, owner: str, architecture: str, virtualization: str) -> Any:
        from moto.ec2.models.amis import Ami

        b = self._ec2b()
        b.amis[ami] = Ami(b, ami, name=name, owner_id=owner, public=owner != ACCOUNT_ID,
                          virtualization_type=virtualization, architecture=architecture, hypervisor="xen",
                          root_device_type="ebs", root_device_name=ROOT_DEVICE, region_name=self.region,
                          creation_date=UBUNTU_CREATED)
        return b.amis[ami]

    def _image(self, ami: str | None, label: str) -> Any:
        """The image `ami` (an instance's, or one a look-up names): refused when the account lacks it, unless
        the account takes any image a stack names (images=None)."""
        image = self._ec2b().amis.get(ami) if ami else None
        if image is None and ami and self.images is None and ami.startswith("ami-"):
            image = self._put_image(ami, f"image {ami}", ACCOUNT_ID, "x86_64", "hvm")
        if image is None:
            raise EmulatedAwsError(f"InvalidAMIID.NotFound: {label}: the image id '[{ami}]' does not exist")
        return image

    # ---- Pulumi mocks --------------------------------------------------------------------------

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        typ, name = args.typ, args.name
        inputs = unwrap_secrets(dict(args.inputs))
        with self._lock:
            self._require_active(f"{typ.split(':')[-1]} {name}")
            self._seed(f"{self.seed}:{typ}::{name}")
            self.resources.append((typ, name, inputs))
            handler = self._HANDLERS.get(typ) or self._OUTSIDE_AWS.get(typ)
            if handler is None and args.custom:
                # Never fake what is not known: a new resource type is declared in offline/engine/resource_types.py
                # with its handler in offline/engine/emulated/resources.py before the emulated account accepts it.
                raise EmulatedAwsError(f"UnknownResourceType: {typ} {name}: the emulated account does not know this "
                                       "resource type; declare it in offline/engine/resource_types.py")
            try:
                rid, extra = handler(self, name, inputs) if handler else (f"{name}-id", {})  # a component
            except EmulatedAwsError:
                raise
            except Exception as err:
                answer = backends.refusal(err)
                if answer is None:
                    raise
                raise EmulatedAwsError(f"{answer[0]}: {typ.split(':')[-1]} {name}: {answer[1]}") from None
            self.ids[f"{typ}::{name}"] = rid
            state = dict(inputs)
            state.update(extra)
            return rid, state

    def call(self, args: pulumi.runtime.MockCallArgs):
        """An invoke. AWS's refusal comes back as the invoke's failure, as the engine returns a provider's
        error to the program (which may catch it); raising here would instead fail the whole run from Pulumi's
        RPC bookkeeping, past the program."""
        tok, a = args.token, unwrap_secrets(dict(args.args))
        with self._lock:
            try:
                self._require_active(tok)
                try:
                    return self._call(tok, a)
                except EmulatedAwsError:
                    raise
                except Exception as err:
                    answer = backends.refusal(err)
                    if answer is None:
                        raise
                    raise EmulatedAwsError(f"{answer[0]}: {tok}: {answer[1]}") from None
            except EmulatedAwsError as err:
                return {}, [("", str(err))]

    # Which handler each type gets: offline/engine/resource_types.py (set below the class); outside AWS: the
    # random password, the Kubernetes objects and provider, which no AWS API answers.
    _OUTSIDE_AWS: dict[str, Any] = {}
    _HANDLERS: dict[str, Any] = {}
    KNOWN_TYPES: frozenset[str] = frozenset()


_EMULATED = {t: getattr(MotoMocks, r.emulate) for t, r in TYPES.items() if r.emulate is not None}
MotoMocks._HANDLERS = {t: h for t, h in _EMULATED.items() if t.startswith("aws:")}
MotoMocks._OUTSIDE_AWS = {t: h for t, h in _EMULATED.items() if not t.startswith("aws:")}
MotoMocks.KNOWN_TYPES = frozenset(_EMULATED)


# ---- running a stack in the emulated account ------------------------------------------------

def stack_prerequisites(config: Mapping[str, Any]) -> dict[str, Any]:
    """What a stack assumes its account already has: the SSH key pair it names (and, by default, any image
    it names)."""
    access = json.loads(config.get("rke-aws:access") or "{}") if isinstance(config.get("rke-aws:access"), str) else {}
    return {"key_pairs": [access["sshKeyName"]] if access.get("sshKeyName") else None}


def build(config: dict[str, str], stack: str, *, mocks: MotoMocks | None = None, preview: bool = False,
          **program: Any):
    """Run the program against a fresh emulated account; returns (run, mocks) with the account left active.

    The caller stops the account (`mocks.stop()`); on failure it is stopped here. `program`: the rest of
    harness.run_program's arguments (previous_outputs, main, project, secret_keys: the plan and diff of a
    user's project, rke_aws_offline.report).
    """
    from rke_aws_offline.engine import harness

    region = config.get("aws:region", "us-west-2")
    mocks = mocks or MotoMocks(region, objects=harness.fixture_objects(config))
    mocks.start()
    try:
        run = harness.run_program(config, stack=stack, preview=preview, mocks=mocks, **program)
    except BaseException as err:
        harness.drain_leftover_tasks()
        mocks.stop()
        refusal = emulator_refusal(err)
        if refusal is not None:  # the account's refusal, without Pulumi's wrapping
            _quiet_abandoned_refusals()
            raise EmulatedAwsError(str(refusal)) from err
        raise
    return run, mocks


def _quiet_abandoned_refusals() -> None:
    """Keep asyncio from logging, when they are garbage-collected, the many futures of a failed run that carry
    the refusal already raised ("Future exception was never retrieved")."""
    from pulumi.runtime.sync_await import _ensure_event_loop

    loop = _ensure_event_loop()
    previous = loop.get_exception_handler()
    if getattr(previous, "_rke_aws_quiet", False):
        return

    def handler(lp, context):
        if emulator_refusal(context.get("exception") or Exception()) is not None:
            return
        if previous is not None:
            previous(lp, context)
        else:
            lp.default_exception_handler(context)

    handler._rke_aws_quiet = True  # type: ignore[attr-defined]
    loop.set_exception_handler(handler)


def emulator_refusal(err: BaseException) -> EmulatedAwsError | None:
    """The emulated account's refusal behind an error of a program run, if that is what it is."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [err]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, EmulatedAwsError):
            return e
        # An error raised `from None` (the program's own clean messages) hides what it replaced.
        todo += [e.__cause__] + ([] if e.__suppress_context__ else [e.__context__])
    return None


def build_stack(stack: str, **kwargs):
    from rke_aws_offline.engine import harness

    return build(harness.stack_config(stack), stack, **kwargs)

