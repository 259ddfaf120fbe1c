#!/usr/bin/env python3
"""A stand-in for curl in the boot-script tests, behind tests/support/stubs/curl (which answers instance metadata
itself): answers SSM, the supervisor probe and downloads from the state in $STUB_STATE (a JSON file),
and logs every call to $STUB_LOG."""
import json
import os
import sys

state_path, log_path = os.environ["STUB_STATE"], os.environ["STUB_LOG"]
with open(state_path) as f:
    state = json.load(f)

VALUED = {"-X", "-H", "-o", "--data", "--user", "--aws-sigv4", "--max-time", "--connect-timeout", "-d", "--noproxy"}
args, headers, opts, url = sys.argv[1:], {}, {}, None
i = 0
while i < len(args):
    a = args[i]
    if a in VALUED:
        v = args[i + 1]
        if a == "-H":
            k, _, val = v.partition(":")
            headers[k.strip().lower()] = val.strip()
        else:
            opts[a] = v
        i += 2
        continue
    if not a.startswith("-"):
        url = a
    i += 1
target = headers.get("x-amz-target", "")
with open(log_path, "a") as f:
    entry = {"url": url, "target": target, "data": opts.get("--data"), "sigv4": opts.get("--aws-sigv4")}
    # What curl would go through: its --noproxy and the proxy variables it reads (only when set, so the
    # log of a run without a proxy stays as it was).
    if "--noproxy" in opts:
        entry["noproxy"] = opts["--noproxy"]
    entry.update({k: os.environ[k] for k in ("http_proxy", "https_proxy", "no_proxy") if k in os.environ})
    f.write(json.dumps(entry) + "\n")


def validation(message):  # SSM's answer to a request outside its API limits
    fail(json.dumps({"__type": "ValidationException", "message": message}), 22)


def save():
    with open(state_path, "w") as f:
        json.dump(state, f)


def fail(body, code=22):
    if "--fail-with-body" in args:
        sys.stdout.write(body)
    sys.exit(code)


def answer(text):
    if "-o" in opts:
        with open(opts["-o"], "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    sys.exit(0)


# (Before the fake clock reaches STUB_ONLINE_AT, tests/support/stubs/curl answers for everything outside the
# instance: nothing does, as for a node that boots before its NAT gateway is available.)
if url.startswith("https://ssm."):
    if state.get("ssm_host") and url != f"https://{state['ssm_host']}/":
        fail("wrong endpoint", 6)
    # Signed with the instance role's keys as tests/support/stubs/curl hands them out from IMDS: the key pair in
    # --user, the session token in its header. Anything else is what SigV4 gets with wrong keys.
    if opts.get("--user") != "AKIA:secret" or headers.get("x-amz-security-token") != "session":
        fail(json.dumps({"__type": "UnrecognizedClientException",
                         "message": "The security token included in the request is invalid."}))
    action = target.split(".")[-1]
    body = json.loads(opts["--data"])
    params = state["parameters"]
    denied = state.get("denied", [])
    if action == "GetParameter":
        name = body["Name"]
        if name in denied:
            fail(json.dumps({"__type": "AccessDeniedException", "Message": f"not authorized to perform ssm:GetParameter on {name}"}))
        if name not in params:
            fail(json.dumps({"__type": "ParameterNotFound"}))
        answer(json.dumps({"Parameter": {"Name": name, "Value": params[name]}}))
    if action == "PutParameter":
        # SSM API reference, PutParameter: Value is required, "Length Constraints: Minimum length of 1".
        if not body.get("Value"):
            validation("1 validation error detected: Value at 'value' failed to satisfy constraint: "
                       "Member must have length greater than or equal to 1")
        if body["Name"] in denied:
            fail(json.dumps({"__type": "AccessDeniedException", "Message": f"not authorized to perform ssm:PutParameter on {body['Name']}"}))
        params[body["Name"]] = body["Value"]
        state.setdefault("puts", []).append(body)
        save()
        answer(json.dumps({"Version": 2}))
    if action == "GetParametersByPath":
        # Pages of MaxResults (SSM's limit is 10), the next one named by NextToken, as SSM does.
        prefix = body["Path"].rstrip("/") + "/"
        found = [{"Name": k, "Value": v} for k, v in sorted(params.items()) if k.startswith(prefix) and "/" not in k[len(prefix):]]
        # SSM API reference, GetParametersByPath: MaxResults "Valid Range: Minimum value of 1.
        # Maximum value of 10." A request outside it is refused, not clamped.
        if "MaxResults" in body and not 1 <= int(body["MaxResults"]) <= 10:
            validation(f"1 validation error detected: Value '{body['MaxResults']}' at 'maxResults' failed to "
                       "satisfy constraint: Member must have value less than or equal to 10")
        size = min(int(body.get("MaxResults", 10)), int(state.get("page_size", 10)))
        start = int(body.get("NextToken", "0"))
        page = {"Parameters": found[start:start + size]}
        if start + size < len(found):
            page["NextToken"] = str(start + size)
        answer(json.dumps(page, indent=state.get("indent")))
    fail("unknown action")
if url.endswith(":9345/cacerts"):
    host = url.split("//")[1].split(":")[0]
    if host in state.get("serving", []):
        answer("-----BEGIN CERTIFICATE-----")
    sys.exit(7)  # connection refused
if url in state.get("downloads", {}):
    answer(state["downloads"][url])
fail("not found")
