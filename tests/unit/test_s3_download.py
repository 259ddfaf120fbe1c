"""scripts/s3_download.sh: an air-gapped server's manifest sync fetches s3://<bucket>/<key> with the signed S3
GET of s3.sh (through the VPC's S3 gateway endpoint) and everything else with curl, as retry.sh's `download`
did; and the sync script carries it only when the cluster is air-gapped (its bytes are unchanged otherwise)."""

from __future__ import annotations

import subprocess

from rke_aws.node import rke2_config, scripts

STUBS = r'''
s3_get() { printf 's3_get %s %s %s\n' "$1" "$2" "$3" >> calls.log; printf 'from-s3' > "$3"; }
curl() { printf 'curl %s\n' "$*" >> calls.log; for last; do :; done; }
'''


def _run(tmp_path, call: str) -> list[str]:
    script = STUBS + scripts.fragment("s3_download") + call
    proc = subprocess.run(["sh", "-eu", "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return (tmp_path / "calls.log").read_text().splitlines()


def test_s3_urls_go_through_the_signed_s3_get(tmp_path):
    calls = _run(tmp_path, "download s3://corp-rke2-artifacts/rke2/system-upgrade-controller/v0.20.1/crd.yaml out.yaml\n")
    assert calls == ["s3_get corp-rke2-artifacts rke2/system-upgrade-controller/v0.20.1/crd.yaml out.yaml"]
    assert (tmp_path / "out.yaml").read_text() == "from-s3"


def test_other_urls_go_through_curl(tmp_path):
    calls = _run(tmp_path, "download https://rancher.corp.example/v3/import/x.yaml out.yaml || true\n")
    assert len(calls) == 1 and calls[0].startswith("curl ") and "https://rancher.corp.example/v3/import/x.yaml" in calls[0]


def _boot(**extra) -> rke2_config.Rke2Boot:
    return rke2_config.Rke2Boot(region="us-west-2", ssm_host="ssm.us-west-2.amazonaws.com", install_version="v1.33.5+rke2r1",
                                endpoint="api.c1.internal", server_ips=("10.0.0.10",), token_parameter="/t",
                                marker_parameter="/m", manifest_path="/rke-aws/c1/manifests", **extra)


def test_only_an_air_gapped_sync_carries_it():
    online = scripts.manifest_sync_script(_boot())
    airgapped = scripts.manifest_sync_script(_boot(airgap=True, airgap_bucket="corp-rke2-artifacts"))
    assert "s3_get" not in online and "S3_HOST" not in online
    assert "S3_HOST='s3.us-west-2.amazonaws.com'" in airgapped and 's3_get "${object%%/*}"' in airgapped
