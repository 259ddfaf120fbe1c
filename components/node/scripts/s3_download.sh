# shellcheck shell=sh
# An air-gapped server's manifest sync (after retry.sh, ssm.sh and s3.sh): `download` also takes
# s3://<bucket>/<key>, fetched with the instance role through the VPC's S3 gateway endpoint (s3.sh),
# so the manifests the sync downloads (system-upgrade-controller's, from the artifacts bucket:
# components/node/airgap_artifacts.py suc_keys) never name a public host. Redefines retry.sh's
# `download`; everything else goes through curl as before.
# A fragment: components/node/scripts.py puts it after the script's header (and s3.sh, which reads REGION
# and S3_HOST), which sets
#   nothing it reads itself
# (shellcheck takes upper-case names for the environment's). Everything below the marker line
# goes into the script byte for byte.
# ---- fragment ----

download() {  # download URL FILE
  case "$1" in
    s3://*)
      object=${1#s3://}
      s3_get "${object%%/*}" "${object#*/}" "$2"
      ;;
    *)
      curl --fail --silent --show-error --location --connect-timeout 10 --max-time 300 -o "$2.part" "$1" &&
        mv "$2.part" "$2"
      ;;
  esac
}
