"""Instance user data as cloud-init reads it: decoded, decompressed, parsed."""

from __future__ import annotations

import base64
import copy
import functools

import yaml

from rke_aws_offline.engine import harness
from rke_aws_offline.report.review import decode_user_data


def user_data(reg: harness.Registration) -> str:
    """An instance registration's user data as cloud-init reads it (decoded, decompressed)."""

    text = decode_user_data(reg.inputs)
    assert isinstance(text, str), f"{reg.urn}: no user data"
    return text


def cloud_config(reg: harness.Registration) -> dict:
    """An instance registration's user data, decoded and parsed (it must be a #cloud-config document), with
    PyYAML's SafeLoader, as cloud-init parses it (canonical/cloud-init cloudinit/safeyaml.py `load`: a SafeLoader
    subclass that adds only the python/unicode tag). A fresh document each call, parsed once per text: a node's
    document holds its scripts as quoted scalars, which PyYAML's Python scanner reads at ~0.1 s a document, and
    hundreds of tests read the same few nodes."""
    text = user_data(reg)
    assert text.startswith("#cloud-config\n"), f"{reg.urn}: user data is not cloud-config"
    return copy.deepcopy(_parsed(text))


@functools.lru_cache(maxsize=256)
def _parsed(text: str) -> dict:
    return yaml.safe_load(text)


def written_file(doc: dict, path: str) -> str | None:
    """Content of a cloud-init `write_files` entry, or None."""
    return next((f["content"] for f in doc.get("write_files") or [] if f["path"] == path), None)


def server_ips(run: harness.ProgramRun) -> list[str]:
    """The servers' addresses as the node outputs report them (RKE2 servers, RKE1 controlplane nodes)."""
    return sorted(n["privateIp"] for n in run.outputs["nodes"] if "controlplane" in n["roles"])


def raw(reg: harness.Registration) -> bytes:
    """What EC2 receives for an instance: its user data before base64."""
    return base64.b64decode(reg.inputs["userDataBase64"], validate=True)
