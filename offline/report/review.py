"""Registrations as a reviewer reads them: JSON policies and YAML manifests parsed, user data
summarised, secrets masked. Used by the plan (offline/report/plan_report.py) and the diff (offline/report/diff.py).

Imports nothing from components/: the diff runs it beside another checkout's program.
"""

from __future__ import annotations

import base64
import copy
import gzip
import hashlib
import json
import re
from typing import Any

import yaml

from rke_aws_offline.engine.records import Registration

MASK = "****"
# libyaml's parser when present (yaml.safe_load's documents, faster): rke_aws.plan.cluster_documents.
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Inputs holding JSON documents (IAM policies) that are shown parsed.
JSON_INPUTS = ("policy", "assumeRolePolicy")
# NAME='value' settings, and the proxy variables the header exports (the upper-case ones: the lower-case
# copies say the same).
ASSIGNMENT = re.compile(r"^(?:export )?([A-Z][A-Z0-9_]*)='(.*)'$")
RELEASE = "kubernetes:helm.sh/v3:Release"


def cloud_config(text: str) -> dict | None:
    if not isinstance(text, str) or not text.startswith("#cloud-config"):
        return None
    try:
        doc = yaml.load(text, Loader=YAML_LOADER)  # noqa: S506 - CSafeLoader / SafeLoader
    except yaml.YAMLError:
        return None
    return doc if isinstance(doc, dict) else None


def decode_user_data(inputs: dict) -> str | None:
    """An instance's user data as cloud-init reads it: `userDataBase64` un-base64ed and, when gzip
    (components/node/cloud_init.py encode_user_data), decompressed; or the plain `userData` of nodes created
    before user data was compressed."""
    encoded = inputs.get("userDataBase64")
    if not isinstance(encoded, str):
        text = inputs.get("userData")
        return text if isinstance(text, str) else None
    raw = base64.b64decode(encoded)
    if raw[:2] == b"\x1f\x8b":  # gzip's magic, as cloud-init checks it (util.decomp_gzip)
        raw = gzip.decompress(raw)
    return raw.decode()


def script_settings(script: str) -> dict[str, str]:
    """The settings block of a generated boot script (NAME='value' lines)."""
    out = {}
    for line in script.splitlines():
        m = ASSIGNMENT.match(line)
        if m:
            out[m.group(1)] = m.group(2).replace("'\\''", "'")
    return out


def user_data_summary(text: str) -> dict[str, Any]:
    """What a reviewer needs of user data: the files it writes, the boot script's settings, and a
    digest that changes with any byte of it (the configs section shows the node configs whole)."""
    doc = cloud_config(text) or {}
    out: dict[str, Any] = {"sha256": hashlib.sha256((text or "").encode()).hexdigest()[:16],
                           "files": sorted(f.get("path") for f in doc.get("write_files") or [])}
    for f in doc.get("write_files") or []:
        if f.get("path", "").endswith("rke-aws-bootstrap"):
            out["bootSettings"] = script_settings(f.get("content") or "")
    out["runcmd"] = doc.get("runcmd")
    return out


def parsed(value: Any) -> Any:
    """A YAML/JSON document string as data (manifests in SSM parameters), else the value itself."""
    if not isinstance(value, str) or "\n" not in value:
        return value
    try:
        docs = [d for d in yaml.load_all(value, Loader=YAML_LOADER)]  # noqa: S506 - CSafeLoader / SafeLoader
    except yaml.YAMLError:
        return value
    if len(docs) == 1 and isinstance(docs[0], (dict, list)):
        return docs[0]
    if docs and all(isinstance(d, dict) for d in docs):
        return docs
    return value


def review_inputs(reg: Registration, mask: bool = True) -> dict[str, Any]:
    """A registration's inputs as a reviewer reads them. `mask=False`: secrets kept, for comparing
    two runs (the diff compares first and shows only the names of changed secret inputs)."""
    inputs = copy.deepcopy(reg.inputs)
    for key in reg.secret_inputs if mask else ():
        inputs[key] = MASK
    for key in JSON_INPUTS:
        if isinstance(inputs.get(key), str) and inputs[key] != MASK:
            try:
                inputs[key] = json.loads(inputs[key])
            except ValueError:
                pass
    if "userData" in inputs:
        inputs["userData"] = user_data_summary(inputs["userData"])
    if isinstance(inputs.get("userDataBase64"), str) and inputs["userDataBase64"] != MASK:
        inputs["userDataBase64"] = user_data_summary(decode_user_data(inputs) or "")
    if reg.type == "aws:ssm/parameter:Parameter" and "insecureValue" in inputs:
        inputs["insecureValue"] = parsed(inputs["insecureValue"])
    if reg.type == RELEASE:
        inputs["valueYamlFiles"] = [parsed(getattr(a, "text", a)) for a in inputs.get("valueYamlFiles") or []]
    return inputs
