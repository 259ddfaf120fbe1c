"""etcd snapshots to S3: the bucket, the keys each distribution reads, and who may touch what.

Key lists here are written from the distributions' sources, not taken from components/:
- RKE1 `services.etcd.backup_config` (rancher/rke types/rke_types.go BackupConfig, S3BackupConfig;
  yaml.v2 names an untagged struct field by its lower-cased name: `s3backupconfig`);
- RKE2 server keys (tests/support/rke2_keys.py).
"""

# split: this module mixes levels (issue 33 §7.2); the pure tests -> tests/unit; the emulated-account one ->
# tests/emulated; the script run -> tests/tooling.

from __future__ import annotations

import json

import pytest
import yaml

from rke_aws.aws import backups
from rke_aws.node import rke2_config
from rke_aws_offline.engine import harness
from tests.support import iam_eval
from tests.support.configs import set_key
from tests.support.rke2_keys import RKE2_AGENT_KEYS, RKE2_SERVER_KEYS
from tests.support.runs import run_stack_cached
from tests.support.userdata import cloud_config, written_file

RKE_BACKUP_CONFIG_KEYS = {"enabled", "interval_hours", "retention", "s3backupconfig", "safe_timestamp", "timeout"}
RKE_S3_KEYS = {"access_key", "secret_key", "bucket_name", "region", "endpoint", "custom_ca", "folder"}
RKE_ETCD_SERVICE_KEYS = {"image", "extra_args", "extra_binds", "extra_env", "win_extra_args", "win_extra_binds",
                         "win_extra_env", "external_urls", "ca_cert", "cert", "key", "path", "uid", "gid",
                         "snapshot", "retention", "creation", "backup_config"}
# S3 endpoints per partition, as AWS documents them (not from components/settings/partitions.py).
S3_ENDPOINT = {"us-east-1": "s3.us-east-1.amazonaws.com", "us-west-2": "s3.us-west-2.amazonaws.com",
               "eu-west-1": "s3.eu-west-1.amazonaws.com", "eu-central-1": "s3.eu-central-1.amazonaws.com",
               "us-gov-west-1": "s3.us-gov-west-1.amazonaws.com",
               "cn-north-1": "s3.cn-north-1.amazonaws.com.cn"}
PARTITION = {"us-gov-west-1": "aws-us-gov", "cn-north-1": "aws-cn"}


def _bucket_and_folder(run) -> tuple[str, str]:
    location = run.outputs["etcdSnapshotLocation"]
    assert location.startswith("s3://"), location
    bucket, _, folder = location[len("s3://"):].partition("/")
    return bucket, folder


def _rke2_configs(run) -> dict[str, dict]:
    return {r.inputs["tags"]["Name"]: yaml.safe_load(written_file(cloud_config(r), rke2_config.RKE2_CONFIG_PATH))
            for r in run.of_type("aws:ec2/instance:Instance")}


# ---- the bucket ---------------------------------------------------------------------------------

def test_every_stack_snapshots_into_its_own_locked_down_bucket(stack_run):
    run = stack_run
    bucket, folder = _bucket_and_folder(run)
    cid, region = run.outputs["clusterId"], run.outputs["region"]
    configured = json.loads(run.config.get("rke-aws:etcdBackup") or "{}").get("folder")
    assert folder == (configured or cid), f"{run.stack}: folder {folder!r}"  # the folder given, else the cluster ID
    assert 3 <= len(bucket) <= 63 and bucket == bucket.lower() and bucket.startswith(cid[:40]), bucket
    # (workload identity's issuer bucket is public by design: tests/program/test_identity.py)
    (b,) = [b for b in run.of_type("aws:s3/bucket:Bucket") if "rke-aws:identity:" not in b.urn]
    assert b.inputs["bucket"] == bucket, b.urn
    assert b.inputs["tags"].get(f"kubernetes.io/cluster/{cid}") == "owned", f"{b.urn}: no cluster tag"
    assert not b.inputs.get("forceDestroy"), f"{b.urn}: snapshots must outlive a careless destroy"

    def one(typ):
        (reg,) = [r for r in run.of_type(typ) if r.inputs["bucket"] == b.state.get("bucket", bucket)]
        return reg

    versioning = one("aws:s3/bucketVersioning:BucketVersioning")
    assert versioning.inputs["versioningConfiguration"]["status"] == "Enabled", versioning.urn
    sse = one("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration")
    assert sse.inputs["rules"][0]["applyServerSideEncryptionByDefault"]["sseAlgorithm"] == "AES256", sse.urn
    block = one("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")
    assert all(block.inputs[k] is True for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls",
                                                 "restrictPublicBuckets")), block.urn
    policy = one("aws:s3/bucketPolicy:BucketPolicy")
    partition = PARTITION.get(region, "aws")
    arn = f"arn:{partition}:s3:::{bucket}"
    doc = json.loads(policy.inputs["policy"])
    # A bucket policy names its principals; this one applies to everyone, so it is evaluated as if
    # it were each caller's own (tests/support/iam_eval.py evaluates identity policies).
    assert all(st["Principal"] == "*" for st in doc["Statement"]), policy.urn
    doc = {**doc, "Statement": [{k: v for k, v in st.items() if k != "Principal"} for st in doc["Statement"]]}
    for resource in (arn, f"{arn}/{folder}/x"):
        assert iam_eval.decision(doc, "s3:GetObject", resource, {"aws:SecureTransport": "false"}) == iam_eval.DENY, \
            f"{policy.urn}: plain HTTP not refused on {resource}"
        assert iam_eval.decision(doc, "s3:GetObject", resource, {"aws:SecureTransport": "true"}) != iam_eval.DENY
    lifecycle = one("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration")
    (rule,) = lifecycle.inputs["rules"]
    # Current snapshots are pruned by count (RKE2/RKE), never by age: a cluster that stopped
    # snapshotting keeps its last ones. Old versions go after expireDays, then their delete markers.
    assert rule["status"] == "Enabled" and "days" not in rule["expiration"], lifecycle.urn
    assert rule["expiration"]["expiredObjectDeleteMarker"] is True, lifecycle.urn
    assert rule["noncurrentVersionExpiration"]["noncurrentDays"] == 30, f"{lifecycle.urn}: old versions kept forever"
    # S3 refuses concurrent changes to one bucket (409 OperationAborted): each setting waits for
    # the one before, the policy for the public access block; `pulumi destroy` leaves all of it.
    settings = [block, versioning, sse, policy, lifecycle]
    for before, after in zip([b] + settings, settings, strict=False):
        assert before.urn in after.dependencies, f"{after.urn} does not wait for {before.urn}"
    for reg in [b] + settings:
        assert reg.retain_on_delete, f"{reg.urn}: `pulumi destroy` would delete it (or fail on a full bucket)"


def test_bucket_names_are_valid_and_unique_per_account_and_region():
    longest = "c" + "-x" * 21  # 43 characters: the longest clusterId
    names = {backups.bucket_name(longest, acct, region) for acct in ("111111111111", "222222222222")
             for region in ("us-east-1", "eu-west-1")}
    assert len(names) == 4, names
    for name in names | {backups.bucket_name("a", "111111111111", "us-east-1")}:
        # S3's rules: 3-63 characters, lowercase letters, digits and hyphens, letter or digit at both ends.
        assert 3 <= len(name) <= 63 and name.replace("-", "").isalnum() and name == name.lower(), name
        assert name[0].isalnum() and name[-1].isalnum() and "--" not in name.replace("-etcd-", "."), name


def test_the_bucket_name_is_known_at_preview_and_the_same_in_every_run():
    """A preview must show the bucket the update creates, and every later update must name the same
    bucket (a new name would replace it, ForceNew `bucket`): no random part, nothing per process."""
    import subprocess
    import sys

    stack = "rke2-govcloud"  # tests/stacks: snapshots on, the per-cluster bucket
    preview = harness.run_stack(stack, preview=True)
    update = run_stack_cached(stack)
    (a,), (b,) = preview.of_type("aws:s3/bucket:Bucket"), update.of_type("aws:s3/bucket:Bucket")
    assert isinstance(a.inputs.get("bucket"), str) and a.inputs["bucket"] == b.inputs["bucket"], (a.inputs, b.inputs)
    assert update.outputs["etcdSnapshotLocation"].startswith(f"s3://{a.inputs['bucket']}/")
    # another interpreter with another hash seed computes the same name
    code = "from rke_aws.plan.names import bucket_name; print(bucket_name('c1', '111111111111', 'eu-west-1'))"
    other = subprocess.run([sys.executable, "-c", code], cwd=harness.ROOT, capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"}).stdout.strip()
    assert other == backups.bucket_name("c1", "111111111111", "eu-west-1")


def test_the_emulated_account_holds_the_bucket_as_configured():
    from rke_aws_offline.engine import emulated_account

    run, mocks = emulated_account.build(harness.stack_config("rke2-govcloud"), "rke2-govcloud")
    try:
        s3 = mocks.client("s3")
        bucket, _ = _bucket_and_folder(run)
        assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
        assert s3.get_bucket_location(Bucket=bucket)["LocationConstraint"] == "us-gov-west-1"
        assert all(s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"].values())
        assert "aws:SecureTransport" in s3.get_bucket_policy(Bucket=bucket)["Policy"]
        tags = {t["Key"]: t["Value"] for t in s3.get_bucket_tagging(Bucket=bucket)["TagSet"]}
        assert tags["kubernetes.io/cluster/rke2-govcloud"] == "owned"
    finally:
        mocks.stop()


# ---- what the nodes read ------------------------------------------------------------------------

@pytest.mark.parametrize("stack", ["rke2-dev", "rke2-prod", "rke2-govcloud", "rke2-china"])
def test_rke2_servers_snapshot_with_their_role_and_agents_do_not(stack):
    run = run_stack_cached(stack)
    bucket, folder = _bucket_and_folder(run)
    region = run.outputs["region"]
    servers = {n["name"] for n in run.outputs["nodes"] if "etcd" in n["roles"]}
    for name, doc in _rke2_configs(run).items():
        s3 = {k: v for k, v in doc.items() if k.startswith("etcd-")}
        if name in servers:
            assert set(doc) <= RKE2_SERVER_KEYS, f"{name}: {sorted(set(doc) - RKE2_SERVER_KEYS)} are not server keys"
            assert s3["etcd-s3"] is True and s3["etcd-s3-bucket"] == bucket and s3["etcd-s3-folder"] == folder, name
            assert s3["etcd-s3-region"] == region and s3["etcd-s3-endpoint"] == S3_ENDPOINT[region], name
            assert s3["etcd-snapshot-schedule-cron"] == "0 */6 * * *" and s3["etcd-snapshot-retention"] == 28, name
            assert not any("key" in k or "token" in k for k in s3), f"{name}: static S3 credentials"
        else:
            assert set(doc) <= RKE2_AGENT_KEYS, f"{name}: {sorted(set(doc) - RKE2_AGENT_KEYS)} are not agent keys"
            assert not s3, f"{name}: an agent with etcd keys"


@pytest.mark.parametrize("stack", ["rke-dev", "rke-prod", "rke-phase2"])
def test_rke1_cluster_yml_backs_up_to_s3_with_the_etcd_nodes_role(stack):
    run = run_stack_cached(stack)
    bucket, folder = _bucket_and_folder(run)
    region = run.outputs["region"]
    etcd = yaml.safe_load(run.outputs["rkeClusterYml"])["services"]["etcd"]
    assert set(etcd) <= RKE_ETCD_SERVICE_KEYS and etcd["snapshot"] is True, etcd
    backup = etcd["backup_config"]
    assert set(backup) <= RKE_BACKUP_CONFIG_KEYS and set(backup["s3backupconfig"]) <= RKE_S3_KEYS, backup
    assert backup["enabled"] is True and backup["interval_hours"] == 6 and backup["retention"] == 28, backup
    s3 = backup["s3backupconfig"]
    assert s3 == {"bucket_name": bucket, "region": region, "folder": folder, "endpoint": S3_ENDPOINT[region]}, s3


def _snapshot_grants(run) -> dict[str, dict]:
    return {g.inputs["role"]: json.loads(g.inputs["policy"]) for g in run.of_type("aws:iam/rolePolicy:RolePolicy")
            if g.name.endswith("-etcd-snapshots")}


def test_only_the_snapshotting_role_reaches_the_bucket_and_only_its_folder(stack_run):
    run = stack_run
    bucket, folder = _bucket_and_folder(run)
    partition = PARTITION.get(run.outputs["region"], "aws")
    arn = f"arn:{partition}:s3:::{bucket}"
    grants = _snapshot_grants(run)
    roles = {r.urn: r for r in run.of_type("aws:iam/role:Role")}
    # etcd runs on controlplane pools, or (RKE2 split roles) on etcd-only servers with a role of their own.
    split = run.outputs["distribution"] == "rke2" and any(n["roles"] == ["etcd"] for n in run.outputs["nodes"])
    cp_role = next(r.state["name"] for r in roles.values() if r.name.endswith("-etcd" if split else "-controlplane"))
    assert set(grants) == {cp_role}, f"{run.stack}: snapshot grants on {sorted(grants)}; etcd runs on {cp_role}'s nodes"
    doc = grants[cp_role]
    allowed = lambda action, resource: iam_eval.allowed(doc, action, resource)  # noqa: E731
    # k3s checks the bucket with HeadBucket (s3:ListBucket, no prefix) before each snapshot.
    assert allowed("s3:ListBucket", arn), "HeadBucket refused: every snapshot would fail"
    for action in ("s3:PutObject", "s3:GetObject", "s3:DeleteObject"):
        assert allowed(action, f"{arn}/{folder}/etcd-snapshot-1"), action
        assert allowed(action, f"{arn}/{folder}/.metadata/etcd-snapshot-1"), action
        assert not allowed(action, f"{arn}/other-cluster/etcd-snapshot-1"), f"{action} outside the folder"
        assert not allowed(action, f"arn:{partition}:s3:::someone-elses/{folder}/x"), f"{action} on another bucket"
    assert not allowed("s3:DeleteBucket", arn) and not allowed("s3:PutBucketPolicy", arn)
    assert not any(a.startswith("kms:") for st in doc["Statement"] for a in st["Action"]), "KMS grant without a key"


def _variant(stack: str, **backup) -> harness.ProgramRun:
    cfg = harness.stack_config(stack)
    set_key(cfg, "etcdBackup", backup)
    return harness.run_program(cfg, stack=stack)


def test_an_existing_bucket_is_used_not_created():
    run = _variant("rke2-dev", bucket="platform-etcd-snapshots", folder="dev/etcd")
    assert not run.of_type("aws:s3/bucket:Bucket"), "created a bucket although one was named"
    assert run.outputs["etcdSnapshotLocation"] == "s3://platform-etcd-snapshots/dev/etcd"
    (doc,) = _snapshot_grants(run).values()
    assert iam_eval.allowed(doc, "s3:PutObject", "arn:aws:s3:::platform-etcd-snapshots/dev/etcd/s1")
    assert not iam_eval.allowed(doc, "s3:PutObject", "arn:aws:s3:::platform-etcd-snapshots/prod/etcd/s1")
    for name, conf in _rke2_configs(run).items():
        if "etcd-s3" in conf:
            assert conf["etcd-s3-bucket"] == "platform-etcd-snapshots" and conf["etcd-s3-folder"] == "dev/etcd", name


def test_a_kms_key_encrypts_the_bucket_and_is_granted_for_that_key_only():
    key = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    run = _variant("rke2-dev", kmsKeyArn=key)
    (sse,) = run.of_type("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration")
    rule = sse.inputs["rules"][0]
    assert rule["applyServerSideEncryptionByDefault"] == {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": key}, sse.urn
    assert rule["bucketKeyEnabled"] is True, f"{sse.urn}: one KMS call per object"
    (doc,) = _snapshot_grants(run).values()
    for action in ("kms:GenerateDataKey", "kms:Decrypt"):  # upload and restore
        assert iam_eval.allowed(doc, action, key), action
        assert not iam_eval.allowed(doc, action, key.replace("1234abcd", "99999999")), f"{action} on another key"


def test_disabled_snapshots_leave_no_trace():
    run = _variant("rke2-dev", enabled=False)
    assert not run.of_type("aws:s3/bucket:Bucket") and not _snapshot_grants(run)
    assert "etcdSnapshotLocation" not in run.outputs
    for name, conf in _rke2_configs(run).items():
        assert not [k for k in conf if k.startswith("etcd-s3")], name
    rke = _variant("rke-dev", enabled=False)
    assert "etcd" not in (yaml.safe_load(rke.outputs["rkeClusterYml"]).get("services") or {})


def test_schedule_and_retention_follow_the_config():
    run = _variant("rke2-dev", intervalHours=24, retention=14, expireDays=90)
    (rule,) = run.of_type("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration")[0].inputs["rules"]
    assert rule["noncurrentVersionExpiration"]["noncurrentDays"] == 90
    servers = [c for c in _rke2_configs(run).values() if c.get("etcd-s3")]
    assert servers and all(c["etcd-snapshot-schedule-cron"] == "0 0 * * *" and c["etcd-snapshot-retention"] == 14
                           for c in servers), servers
    rke = _variant("rke-dev", intervalHours=12, retention=4)
    backup = yaml.safe_load(rke.outputs["rkeClusterYml"])["services"]["etcd"]["backup_config"]
    assert backup["interval_hours"] == 12 and backup["retention"] == 4


def test_rke1_etcd_only_pools_are_warned_about():
    cfg = harness.stack_config("rke-dev")
    pools = json.loads(cfg["rke-aws:nodePools"])
    for p in pools:
        if "etcd" in p["roles"]:
            p["roles"] = ["controlplane"]
    pools.append({"name": "etcd", "roles": ["etcd"], "count": 3, "subnet": pools[0].get("subnet", "private")})
    set_key(cfg, "nodePools", pools)
    run = harness.run_program(cfg, stack="rke-etcd-split")
    warned = [m for lvl, m in run.logs if lvl == "warning" and "etcdBackup" in m]
    assert warned and "etcd" in warned[0] and "worker" in warned[0], run.logs


def test_snapshots_turned_on_for_a_running_cluster_say_what_the_servers_need():
    """Running servers read config.yaml at first boot only: the update lists the keys to add."""
    before = _variant("rke2-prod", enabled=False)
    cfg = harness.stack_config("rke2-prod")
    after = harness.run_program(cfg, stack="rke2-prod", previous_outputs=before.outputs)
    (warning,) = [m for lvl, m in after.logs if lvl == "warning" and m.startswith("rke-aws:etcdBackup")]
    servers = [c for c in _rke2_configs(after).values() if c.get("etcd-s3")]
    for key, value in servers[0].items():
        if key.startswith("etcd-"):
            assert f"{key}: {json.dumps(value)}" in warning, (key, warning)
    assert "systemctl restart rke2-server" in warning, warning
    # Once deployed with snapshots, nothing more to say.
    again = harness.run_program(cfg, stack="rke2-prod", previous_outputs=after.outputs)
    assert not [m for _, m in again.logs if m.startswith("rke-aws:etcdBackup")]
    rke_before = _variant("rke-prod", enabled=False)
    rke_after = harness.run_program(harness.stack_config("rke-prod"), stack="rke-prod", previous_outputs=rke_before.outputs)
    assert [m for lvl, m in rke_after.logs if lvl == "warning" and "`rke up`" in m and "etcdBackup" in m], rke_after.logs


def test_a_bucket_kept_by_an_earlier_destroy_is_used_not_created_again():
    """retain_on_delete leaves the bucket; a new `pulumi up` would fail creating it in every region
    (terraform-provider-aws internal/service/s3/bucket.go checks first in us-east-1, where S3 itself
    would answer 200): it is used, unmanaged, and the update says so (tests/program/day2/test_day2_backups.py has
    the sequences and the bucket of another account)."""
    from rke_aws_offline.engine.emulated_account import MotoMocks

    first = run_stack_cached("rke2-prod")
    bucket, _ = _bucket_and_folder(first)
    mocks = MotoMocks("us-west-2")
    mocks.buckets.add(bucket)
    again = harness.run_program(harness.stack_config("rke2-prod"), stack="rke2-prod", mocks=mocks)  # a new stack
    assert not again.of_type("aws:s3/bucket:Bucket"), "would try to create a bucket that exists"
    assert again.outputs["etcdSnapshotLocation"] == first.outputs["etcdSnapshotLocation"]
    assert _snapshot_grants(again), "the servers still need the grant"
    (note,) = [m for lvl, m in again.logs if lvl == "warning" and f"the bucket {bucket} exists already" in m]
    assert "does not declare it" in note, note
    # The stack's own bucket (in its last outputs, created by its last update) is never looked up as someone else's.
    mocks = MotoMocks("us-west-2", created_before=[r.name for r in first.of_type("aws:s3/bucket:Bucket")])
    mocks.buckets.add(bucket)
    managed = harness.run_program(harness.stack_config("rke2-prod"), stack="rke2-prod", mocks=mocks,
                                  previous_outputs=first.outputs)
    assert managed.of_type("aws:s3/bucket:Bucket") and not [lk for lk in managed.lookups if "getBucket" in lk.token]
