"""docs/features/airgap-os-fips.md "Air-gapped clusters and a private registry": its commands are the ones the program's plan-time check
expects (every key the check lists is uploaded), and they run: the checksum lines pass on the release's files
and stop on a tampered one. curl and aws are stubbed (no network); sha256sum, grep and bash are real.

Sources: rancher/rke2 scripts/checksum (sha256sum-<arch>.txt lists every artifact with <arch> in its name,
"<sum>  <file>"), install.sh (the files read from INSTALL_RKE2_ARTIFACT_PATH); rancher/system-upgrade-controller
release assets crd.yaml and system-upgrade-controller.yaml.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from rke_aws.node import airgap_artifacts
from rke_aws.settings import versions

ROOT = Path(__file__).resolve().parents[2]
BUCKET, PREFIX = "my-rke2-artifacts", "rke2"
SECTION = "## Air-gapped clusters and a private registry"


def _block() -> str:
    text = (ROOT / "docs" / "features" / "airgap-os-fips.md").read_text()
    section = text[text.index(SECTION):]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


def test_the_readme_commands_are_the_programs():
    crd, controller = versions.SUC_MANIFEST_URLS
    suc = [f"curl -sfLO {crd}", f"curl -sfLO {controller}"] + [
        f"aws s3 cp {k.rsplit('/', 1)[1]} s3://{BUCKET}/{k.rsplit('/', 1)[0]}/" for k in airgap_artifacts.suc_keys(PREFIX)]
    expected = airgap_artifacts.readme_commands(versions.RKE2_VERSION, ["x86_64", "arm64"], BUCKET, PREFIX)
    assert _block() == expected + "\n" + "\n".join(suc) + "\n"


STUBS = r'''
curl() {  # the release's files: each holds its own name; sha256sum-<arch>.txt the sums of the <arch> files
  for last; do :; done
  url=$last; name=${url##*/}
  case "$*" in *" -o "*) name=$(printf '%s\n' "$@" | sed -n '/^-o$/{n;p}') ;; esac
  case "$name" in
    sha256sum-*.txt)
      arch=${name#sha256sum-}; arch=${arch%.txt}
      for f in "rke2.linux-$arch.tar.gz" "rke2-images.linux-$arch.tar.zst" "rke2.linux-$arch"; do
        printf '%s  %s\n' "$(printf '%s' "$f" | sha256sum | cut -d' ' -f1)" "$f"
      done > "$name" ;;
    *) printf '%s' "$name" > "$name" ;;
  esac
  [ -z "${TAMPER:-}" ] || [ "$name" != "$TAMPER" ] || printf 'x' >> "$name"
}
aws() { printf '%s\n' "$*" >> uploads.log; }
'''


def _run(tmp_path: Path, tamper: str = "") -> subprocess.CompletedProcess:
    script = STUBS + _block()
    return subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "TAMPER": tamper},
                          capture_output=True, text=True)


def test_the_commands_run_and_upload_every_key_the_plan_checks(tmp_path):
    proc = _run(tmp_path)
    assert proc.returncode == 0, proc.stderr
    uploaded = set()
    for line in (tmp_path / "uploads.log").read_text().splitlines():
        _, _, file, target = line.split()
        uploaded.add(target.removeprefix(f"s3://{BUCKET}/") + file)
    needed = airgap_artifacts.needed_artifacts(PREFIX, versions.RKE2_VERSION, ["x86_64", "arm64"], upgrades=True)
    assert airgap_artifacts.missing_artifacts(uploaded, BUCKET, needed) == []


@pytest.mark.parametrize("tampered", ["rke2.linux-amd64.tar.gz", "rke2-images.linux-arm64.tar.zst"])
def test_a_tampered_download_stops_before_any_upload(tmp_path, tampered):
    proc = _run(tmp_path, tampered)
    assert proc.returncode != 0 and "FAILED" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert not (tmp_path / "uploads.log").exists()
