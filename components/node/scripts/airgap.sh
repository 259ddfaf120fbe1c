# shellcheck shell=sh
# An air-gapped RKE2 node's artifacts (before rke2.sh; after s3.sh): RKE2's tarball, its checksums and its
# image archive for this release and architecture, from the artifacts bucket with the instance role, into
# the directory RKE2's install.sh installs from, with install.sh itself. rke2.sh then "downloads" that
# install.sh (INSTALL_SCRIPT_URL is its file:// URL, which curl copies) and runs it with
# INSTALL_RKE2_ARTIFACT_PATH: install.sh then installs the tarball (the method is tar on every OS once
# that variable is set), verifies it and the image archive against sha256sum-<arch>.txt, and moves the
# archive into /var/lib/rancher/rke2/agent/images (rancher/rke2 install.sh: setup_env,
# stage_local_checksums, stage_local_airgap_tarball, stage_local_tarball, install_airgap_tarball).
# Only these files are fetched: install.sh copies every other rke2-images-*.linux-<arch>* file of
# the directory into the images directory unverified, image lists (.txt) included, which RKE2 would then
# read as images to pull (research sheet 35 §1, pitfall 2).
# A fragment: components/node/scripts.py puts it after the script's header, which sets
#   ROOT WORK ARTIFACTS_BUCKET RELEASE_PREFIX ARCH ARTIFACT_FILES
# (shellcheck takes upper-case names for the environment's). Everything below the marker line
# goes into the script byte for byte.
# ---- fragment ----

mkdir -p "$ROOT$WORK/artifacts"
for file in $ARTIFACT_FILES; do
  retry s3_get "$ARTIFACTS_BUCKET" "$RELEASE_PREFIX$file" "$ROOT$WORK/artifacts/$file"
done
log "RKE2 artifacts for $ARCH from s3://$ARTIFACTS_BUCKET/$RELEASE_PREFIX"
INSTALL_RKE2_ARTIFACT_PATH="$ROOT$WORK/artifacts"
export INSTALL_RKE2_ARTIFACT_PATH
