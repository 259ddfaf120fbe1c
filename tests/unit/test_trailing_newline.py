"""A value with a newline after it is not the value: Python's `$` "matches at the end of the string or just before
the newline at the end of the string" (Python docs, re — Regular expression syntax), so a validator written as
`re.match(r"^...$")` accepted `reports\n` as a service account name and `0\n` as a registry host (found by
hypothesis in tests/unit/test_registry_rules.py). Each validator here takes the plain value and refuses it with a
trailing newline; the settings' own patterns guard this with `(?!\\n)` (settings/patterns.py whole)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rke_aws.aws import vpc_endpoints
from rke_aws.plan import identity_issuer, identity_roles
from rke_aws.settings import registry_hosts
from rke_aws.settings.rules.ccm import VERSION_TAG_RE
from rke_aws.state import migrations


@pytest.mark.parametrize("accepts,value", [
    (lambda v: not identity_roles.parse_service_account(v)[1], "apps/reports"),
    (registry_hosts.is_registry_host, "registry.corp.example:5000"),
    (vpc_endpoints.is_ecr_registry, "123456789012.dkr.ecr.us-west-2.amazonaws.com"),
    (lambda v: VERSION_TAG_RE.search(v) is not None, "registry.k8s.io/provider-aws/cloud-controller-manager:v1.33.4"),
    (lambda v: migrations.ENDPOINT_RE.match(v) is not None, "api.c1.rke-aws.internal"),
    (lambda v: identity_issuer.s3_issuer_url(v, "us-west-2", "amazonaws.com") is not None, "rke-aws-oidc-c1"),
])
def test_a_trailing_newline_is_refused(accepts, value):
    assert accepts(value)
    try:
        accepted = accepts(value + "\n")
    except ValueError:
        accepted = False
    assert not accepted, repr(value + "\n")


@given(st.text(alphabet="abc.-:0123456789", min_size=1, max_size=20))
def test_no_registry_host_ends_in_a_newline(text):
    assert not registry_hosts.is_registry_host(text + "\n")
