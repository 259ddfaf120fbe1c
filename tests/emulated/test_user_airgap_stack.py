"""A user's own air-gapped stack in stacks/ plans offline (tests over stacks/ hold for any valid stack): the emulated
account holds the fixtures' buckets (tests/stacks/account-objects.json) but not the user's, so an offline plan says it
did not check that bucket, as a warning, and `pulumi preview` against the real account checks it
(components/assembly/preflight.py). A real run (not under mocks) still refuses a bucket AWS does not answer for:
S3 HeadBucket answers 404 NoSuchBucket for a bucket that does not exist (Amazon S3 API Reference, HeadBucket)."""

from __future__ import annotations

import json

import pytest

from rke_aws_offline.engine import harness
from tests.support.configs import scenario_config

USER_BUCKET = "acme-rke2-offline-bits"


def _user_stack() -> dict[str, str]:
    config = scenario_config("rke2-airgap")
    airgap = json.loads(config["rke-aws:airgap"])
    config["rke-aws:airgap"] = json.dumps({**airgap, "artifactsBucket": USER_BUCKET})
    assert USER_BUCKET not in harness.FIXTURE_OBJECTS.read_text()
    return config


def test_a_user_air_gapped_stack_plans_offline_with_a_warning():
    run = harness.run_program(_user_stack(), stack="acme-airgap")
    assert run.of_type("aws:ec2/vpcEndpoint:VpcEndpoint") and not run.of_type("aws:ec2/internetGateway:InternetGateway")
    warned = [text for level, text in run.logs if level == "warning" and USER_BUCKET in text]
    assert warned and "not checked offline" in warned[0] and "pulumi preview" in warned[0], run.logs


def test_a_fixture_bucket_is_still_checked_offline():
    """The fixtures' bucket is in the emulated account: what it lacks is still refused offline."""
    config = scenario_config("rke2-airgap")
    spec = next(s for s in harness.fixture_objects(config))
    bucket = spec.split("@")[0]
    objects = {spec: [k for k in harness.fixture_objects(config)[spec] if "images" not in k]}
    from rke_aws_offline.engine.emulated_account import MotoMocks

    with pytest.raises(Exception, match=r"airgap.artifactsBucket.*lacks"):
        harness.run_program(config, mocks=MotoMocks(config.get("aws:region", "us-west-2"), objects=objects))
    assert bucket in json.dumps(config)
