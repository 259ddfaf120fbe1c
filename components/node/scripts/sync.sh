# shellcheck shell=sh
# The servers' manifest sync (rke-aws-sync-manifests); after retry.sh and ssm.sh.
# A fragment: components/node/scripts.py puts it after the script's header, which sets
#   ROOT MANIFESTS MANIFEST_REQUEST PREFIX
# (shellcheck takes upper-case names for the environment's). Everything below the marker line
# goes into the script byte for byte.
# ---- fragment ----

# Mirror the parameters under MANIFEST_PATH into RKE2's manifests directory: <name>.yaml holds a
# manifest, <name>.url the address of one to download. Files this script wrote whose parameter
# is gone are removed. Every server converges on the same content, whatever its age.
# Every page (SSM answers at most MaxResults a time); a short read would delete files.
mkdir -p "$ROOT$MANIFESTS"
downloads=$(mktemp)
pages=$(mktemp)
trap 'rm -f "$downloads" "$pages"' EXIT
request=$MANIFEST_REQUEST
while :; do
  answer=$(ssm GetParametersByPath "$request") || exit 1
  printf '%s\n' "$answer" >> "$pages"
  request=$(printf %s "$answer" | python3 -c 'import json, sys
token = json.load(sys.stdin).get("NextToken")
if token:
    request = json.loads(sys.argv[1])
    request["NextToken"] = token
    print(json.dumps(request))' "$MANIFEST_REQUEST") || exit 1
  [ -n "$request" ] || break
done
python3 -c '
import json, os, sys
directory, prefix = sys.argv[1], sys.argv[2]
wanted = {}
text, at, decoder = open(sys.argv[3]).read(), 0, json.JSONDecoder()
while text[at:].strip():
    page, at = decoder.raw_decode(text, at + len(text[at:]) - len(text[at:].lstrip()))
    for parameter in page.get("Parameters", []):
        wanted[prefix + parameter["Name"].rsplit("/", 1)[1]] = parameter["Value"]
for name in sorted(os.listdir(directory)):
    base = name[:-len(".source")] if name.endswith(".source") else name
    if name.startswith(prefix) and base not in wanted and base[:-len(".yaml")] + ".url" not in wanted:
        os.remove(os.path.join(directory, name))
for name, value in sorted(wanted.items()):
    if name.endswith(".url"):
        print(name[:-len(".url")] + ".yaml", value)
        continue
    path = os.path.join(directory, name)
    old = open(path).read() if os.path.exists(path) else None
    if old != value:
        fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # some hold credentials
        with os.fdopen(fd, "w") as f:
            f.write(value)
        os.replace(path + ".tmp", path)
' "$ROOT$MANIFESTS" "$PREFIX" "$pages" > "$downloads"
while read -r file url; do
  if [ "$(cat "$ROOT$MANIFESTS/$file.source" 2>/dev/null)" != "$url" ]; then
    download "$url" "$ROOT$MANIFESTS/$file.download"
    mv "$ROOT$MANIFESTS/$file.download" "$ROOT$MANIFESTS/$file"
    printf %s "$url" > "$ROOT$MANIFESTS/$file.source"
  fi
done < "$downloads"
