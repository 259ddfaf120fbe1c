# shellcheck shell=sh
# The private registry's credentials (before rke2.sh; after ssm.sh): RKE2 reads
# /etc/rancher/rke2/registries.yaml when it starts (rke2-docs install/private_registry.md). Its text is
# rendered by components/node/registries.py and written by cloud-init as a template; the password is a
# SecureString fetched here with the node's role and put in place of the template's placeholder (a JSON
# string is a YAML double-quoted scalar), so that it never appears in user data.
# A fragment: components/node/scripts.py puts it after the script's header, which sets
#   ROOT WORK REGISTRIES_TEMPLATE REGISTRIES REGISTRY_PASSWORD_REQUEST REGISTRY_PASSWORD_PLACEHOLDER
# (shellcheck takes upper-case names for the environment's). Everything below the marker line
# goes into the script byte for byte.
# ---- fragment ----

retry fetch_secret "$REGISTRY_PASSWORD_REQUEST" "$ROOT$WORK/registry-password"
if ! (umask 077 && python3 -c 'import json, sys
template, password, placeholder, out = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
text = open(template).read()
if text.count(placeholder) < 1:
    sys.exit("rke-aws: the registries template has no password placeholder")
with open(password) as f:
    secret = f.read()
with open(out, "w") as f:
    f.write(text.replace(placeholder, json.dumps(secret, ensure_ascii=False)))' \
  "$ROOT$REGISTRIES_TEMPLATE" "$ROOT$WORK/registry-password" "$REGISTRY_PASSWORD_PLACEHOLDER" "$ROOT$REGISTRIES.tmp"); then
  rm -f "$ROOT$WORK/registry-password" "$ROOT$REGISTRIES.tmp"
  log "registries.yaml NOT written: RKE2 cannot pull from the private registry"
  exit 1
fi
mv "$ROOT$REGISTRIES.tmp" "$ROOT$REGISTRIES"
rm -f "$ROOT$WORK/registry-password"
log "registries.yaml written with the registry's credentials"
