# shellcheck shell=sh
# A boot script's first step with a proxy (`proxy`); after retry.sh. The SSM agent (a snap on Ubuntu)
# started before cloud-init wrote its drop-in with the proxy: systemd reloads and the agent restarts,
# so that Session Manager reaches AWS through the proxy too (AWS Systems Manager User Guide,
# "Configure SSM Agent to use a proxy on Linux nodes": a systemd override with http_proxy,
# https_proxy and no_proxy=169.254.169.254).
# A fragment: components/node/scripts.py puts it after the script's header, which sets
#   SSM_AGENT_UNIT
# (shellcheck takes upper-case names for the environment's). Everything below the marker line
# goes into the script byte for byte.
# ---- fragment ----

systemctl daemon-reload
if systemctl is-active --quiet "$SSM_AGENT_UNIT"; then
  systemctl restart "$SSM_AGENT_UNIT" || log "the SSM agent did not restart with the proxy: Session Manager may not reach AWS"
fi
