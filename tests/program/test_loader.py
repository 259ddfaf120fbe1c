"""A stack file as the Pulumi CLI reads it, and a fuzz of everything the CLI can hand the program.

The real CLI parses the stack file (gopkg.in/yaml.v3) and hands the program a flat map of strings
(pulumi/pulumi sdk/go/common/resource/config: Map.Decrypt, Plaintext.marshalText); offline,
stackfile.load_stack_text does the same. The rows below pin what the CLI does with each YAML oddity;
the fuzz tests then throw malformed documents and random values at every key: the only failure
allowed is a configuration error (ConfigError, or the program's RunError), never another exception.
"""

# split: this module mixes levels (issue 33 §7.2); the tests that run the program or the diff's dump ->
# tests/program.

from __future__ import annotations

import copy
import json
import string

import pulumi
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rke_aws.diagnostics import ConfigError
from rke_aws.settings import sections, stackfile
from rke_aws.settings.fields import NULL_PROBLEM
from rke_aws.settings.messages import stack_keys
from rke_aws.settings.resolve import ClusterConfig
from rke_aws_offline.engine import harness
from tests.support.hostile import NAMESPACE_TYPOS, OTHER_NAMESPACES
from tests.support.stackconfig import parse_flat

BASE = yaml.safe_load(harness.stack_file("rke2-dev").read_text())


def doc_text(**config_lines: str) -> str:
    """The rke2-dev stack file with `key: <raw YAML>` lines added or replaced."""
    cfg = {k: v for k, v in BASE["config"].items() if k not in config_lines}
    text = yaml.safe_dump({"config": cfg}, sort_keys=False)
    return text + "".join(f"  {k}: {v}\n" for k, v in config_lines.items())


def load(text: str) -> tuple[dict, list]:
    return stackfile.load_stack_text(text, "Pulumi.test.yaml")


def parse_text(text: str, stack: str = "test") -> ClusterConfig:
    flat, secret = load(text)
    return parse_flat(flat, project="rke-aws", stack=stack, region=flat.get("aws:region"), secret_keys=secret)


def problems(text: str, stack: str = "test") -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_text(text, stack)
    return info.value.problems


# --- what the CLI hands the program ------------------------------------------------------------------

@pytest.mark.parametrize("raw, flat", [
    ("~", ""),  # yaml.v3 leaves config.Value zero for a null node: the empty string (the CLI warns)
    ("", ""),
    ("null", ""),
    ("yes", "yes"),  # YAML 1.2 booleans only: `yes`, `on` stay text
    ("on", "on"),
    ("True", "true"),
    ("0x1F", "31"),  # Go's ParseInt with base 0
    ("017", "15"),
    ("0o17", "15"),
    ("1_000", "1000"),
    ("3.0", "3"),  # Go's JSON text of a float64
    ("1e21", "1e+21"),
    ("0.000001", "0.000001"),
    ("1e-7", "1e-7"),
    ("2001-12-14", "2001-12-14"),  # timestamps stay text for an untyped target
    ("!!binary aGVsbG8=", "hello"),
    ("!!str 3", "3"),
    ("'0x1F'", "0x1F"),
    ("[1, ~, true, 1.5]", "[1,null,true,1.5]"),
    ("{b: 1, a: [x]}", '{"a":["x"],"b":1}'),  # Go sorts map keys
    ("=", "="),
    ("1:20", "1:20"),  # no YAML 1.1 sexagesimal
])
def test_scalars_and_structures_become_the_text_the_cli_passes(raw, flat):
    got, secret = load(f"config:\n  rke-aws:x: {raw}\n")
    assert got == {"rke-aws:x": flat} and secret == []


def test_keys_are_namespaced_as_the_cli_does():
    got, _ = load("config:\n  distribution: rke2\n  aws:config:region: us-east-1\n")
    assert got == {"rke-aws:distribution": "rke2", "aws:region": "us-east-1"}


def test_secure_values_and_only_they_are_secret():
    got, secret = load("config:\n  rke-aws:kubeconfig: {secure: v1:abc}\n  rke-aws:tags: {team: {secure: v1:x}}\n"
                       "  rke-aws:clusterId: kubeconfig\n")
    assert secret == ["rke-aws:kubeconfig", "rke-aws:tags"]
    assert got["rke-aws:kubeconfig"] == stackfile.SECURE_PLACEHOLDER
    assert json.loads(got["rke-aws:tags"]) == {"team": stackfile.SECURE_PLACEHOLDER}
    assert stackfile.secret_keys_of(got) == secret


@pytest.mark.parametrize("text, fragment", [
    ("- a\n- b\n", "Pulumi.test.yaml: is a list, not a map"),
    ("just text\n", "Pulumi.test.yaml: is a str"),
    ("config: [a, b]\n", "config: is a list, not a map"),
    ("config: 3\n", "config: is a int"),
    ("config:\n  rke-aws:x: &a [*a]\n", "rke-aws:x: holds a recursive alias"),
    ("a: &a {b: *a}\nconfig:\n  rke-aws:x: *a\n", "rke-aws:x: holds a recursive alias"),
    ("config:\n  rke-aws:x: .nan\n", "rke-aws:x: nan cannot be a configuration value"),
    ("config:\n  rke-aws:x: -.inf\n", "cannot be a configuration value"),
    ("config:\n  rke-aws:x: {1: a}\n", "rke-aws:x: has a map key that is not text"),
    ("config:\n  rke-aws:x: 1\n  rke-aws:x: 2\n", "mapping key 'rke-aws:x' already defined"),
    ("config:\n  a:b:c: 1\n", "a:b:c: could not parse it as a configuration key"),
    ("config:\n  3: x\n", "the key 3 is not text"),
    ("config:\n  rke-aws:x: !!python/object:os.system x\n", "not valid YAML as the Pulumi CLI reads it"),
    ("config:\n  rke-aws:x: !custom x\n", "not valid YAML"),
    ("config: {rke-aws:x: [\n", "not valid YAML"),
    ("config:\n  rke-aws:x: " + "[" * 2000 + "]" * 2000 + "\n", "nests deeper"),
])
def test_stack_files_the_cli_refuses_are_config_errors(text, fragment):
    with pytest.raises(ConfigError) as info:
        load(text)
    assert any(fragment in p for p in info.value.problems), info.value.problems


def test_alias_bomb_is_refused_quickly():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    with pytest.raises(ConfigError, match="excessive aliasing"):
        load("\n".join(lines) + "\nconfig:\n  rke-aws:nodePools: *a8\n")


# --- YAML the program used to mishandle: each a config error naming the key --------------------------------

@pytest.mark.reads_stacks
def test_null_cluster_id_is_the_stack_name_not_null():
    cfg = parse_text(doc_text(**{"rke-aws:clusterId": "~"}), stack="prod-eu")
    assert cfg.cluster_id == "prod-eu"  # the CLI passes "" and Pulumi.yaml's default "" means the stack name
    flat, secret_keys = load(doc_text(**{"rke-aws:clusterId": "~"}))
    flat["rke-aws:clusterId"] = "null"  # what a CLI treating nulls as null (announced) would pass
    with pytest.raises(ConfigError) as info:
        parse_flat(flat, project="rke-aws", stack="prod-eu", region="us-east-1", secret_keys=secret_keys)
    assert info.value.problems == ["rke-aws:clusterId: " + NULL_PROBLEM]


@pytest.mark.parametrize("lines, expected", [
    ({"rke-aws:network": "~"}, "rke-aws:network: is empty (what the Pulumi CLI passes for `key: ~`"),
    ({"rke-aws:tags": ""}, "rke-aws:tags: is empty"),
    ({"rke-aws:hardening": "~"}, "rke-aws:hardening: is empty"),
    ({"rke-aws:protectServers": "yes"}, 'rke-aws:protectServers: "yes" is not a boolean; use true or false'),
    ({"rke-aws:network": "!!binary aGVsbG8="}, 'rke-aws:network: "hello" is not an object'),
    ({"rke-aws:clusterId": "!!binary cHJvZAo="}, 'rke-aws:clusterId: "prod\\n" is not a cluster ID'),
    ({"rke-aws:network": "{vpcCidr: ~, availabilityZones: 2}"}, "rke-aws:network.vpcCidr: is null"),
    ({"rke-aws:nodePools": "{name: x}"}, "rke-aws:nodePools: {\"name\": \"x\"} is not a non-empty list of pools"),
    ({"rke-aws:clusterId": "123"}, 'rke-aws:clusterId: "123" is not a cluster ID'),
    ({"rke-aws:distribution": "[rke2]"}, 'rke-aws:distribution: "[\\"rke2\\"]" is not a distribution'),
    ({"rke-aws:tags": "{team: {secure: v1:abc}}"}, "rke-aws:tags: is encrypted"),
    ({"rke-aws:kubeconfig": "'apiVersion: v1'"}, "rke-aws:kubeconfig: is stored as plain text"),
])
def test_yaml_oddities_end_in_a_message_naming_the_key(lines, expected):
    found = problems(doc_text(**lines))
    assert any(p.startswith(expected) for p in found), found


def test_encrypted_kubeconfig_is_accepted_and_secret():
    cfg = parse_text(doc_text(**{"rke-aws:kubeconfig": "{secure: v1:abc}"}))
    assert cfg.kubeconfig is not None


def test_make_plan_refuses_a_plain_text_kubeconfig_like_the_cli(tmp_path, monkeypatch):
    """harness.run_stack (make plan, the snapshots) reads the stack file the CLI's way: a plain-text
    kubeconfig is not secret there, and the program refuses it, as under `pulumi preview`."""
    path = tmp_path / "Pulumi.plain.yaml"
    path.write_text(doc_text(**{"rke-aws:kubeconfig": "'apiVersion: v1\\nkind: Config\\n'"}))
    monkeypatch.setattr(harness, "FIXTURE_STACKS_DIR", tmp_path)
    with pytest.raises(pulumi.RunError, match="rke-aws:kubeconfig: is stored as plain text"):
        harness.run_stack("plain")


# --- the fuzz: malformed documents and random values for every key ------------------------------------------

HOSTILE_CHARS = "\x00\t\n\r\x1b\x7f\u00a0\u200b\u200e\u202e\ufeff\u0663\u06f3\u0967\u00e9\U0001f600'\"\\:#&*!|>%@`{}[],-~ "
texts = st.one_of(
    st.text(alphabet=st.sampled_from(string.ascii_letters + string.digits + "./-_:@=+ " + HOSTILE_CHARS), max_size=40),
    st.sampled_from(["", "null", "~", "true", "yes", "10.0.0.0/255.0.0.0", "0.0.0.0/0", "latest", "sg-prod", "xn--a",
                     "v1.\u0663\u0663.5", "--v=4\u200b", "   ", "rke2", "manifest", "nlb", "cis", "ami-0123456789abcdef0"]),
    st.integers(1000, 20000).map(lambda n: "x" * n),
)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True),
                    texts, st.just({"secure": "v1:abc"}))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.one_of(texts, st.integers(0, 3)), inner, max_size=4)), max_leaves=12)
deep = st.integers(50, 300).map(lambda n: json.loads("[" * n + "]" * n))
RAW = ["~", "!!binary aGk=", "&a [*a]", ".nan", "yes", "0x10", "2001-12-14", "!!str 3", "{secure: v1:x}", "[1, [2, [3]]]",
       "!!set {a, b}", "!!omap [a: 1]", "'\\u200b'", "\"\\t\"", "|\n    multi\n    line"]

SECTION_KEYS = [(section, key) for section, model in sections.SECTIONS.items() for key in stack_keys(model)]
POOL_KEYS = list(sections.POOL_KEYS)
JUNK_KEYS = ["rke_aws:x", "random:length", "rke-aws:nope", "plain", "aws:region", "kubernetes:context", "pulumi:tags"]


# hostile_docs' strategies that do not depend on the example, built once: a strategy made inside a draw is made and
# validated again at every draw (a list is no key for Hypothesis's strategy cache). The same strategies draw the same
# documents.
_COUNTS = st.integers(1, 4)
_VALUES = st.one_of(texts, scalars, values, deep, st.sampled_from(RAW).map(lambda r: ("RAW", r)))
_WHERE = st.sampled_from(["top", "section", "pool", "junk"])
_TOP_KEYS = st.sampled_from(sections.TOP_LEVEL_KEYS)
_SECTION_KEYS = st.sampled_from(SECTION_KEYS)
_POOL_KEYS = st.sampled_from(POOL_KEYS)
_JUNK_KEYS = st.sampled_from(JUNK_KEYS)
_ONE_IN_TEN = st.integers(0, 9)


@st.composite
def hostile_docs(draw):
    doc = copy.deepcopy(BASE)
    cfg = doc["config"]
    raw: dict[str, str] = {}
    for _ in range(draw(_COUNTS)):
        value = draw(_VALUES)
        if isinstance(value, tuple):
            marker = f"RAWSNIPPET{len(raw)}"
            raw[marker] = value[1]
            value = marker
        where = draw(_WHERE)
        if where == "top":
            cfg[f"rke-aws:{draw(_TOP_KEYS)}"] = value
        elif where == "section":
            section, key = draw(_SECTION_KEYS)
            target = cfg.setdefault(f"rke-aws:{section}", {})
            if isinstance(target, dict):
                target[key] = value
        elif where == "pool":
            pools = cfg.get("rke-aws:nodePools")
            if isinstance(pools, list) and pools and isinstance(pools[0], dict):
                pools[draw(st.integers(0, len(pools) - 1))][draw(_POOL_KEYS)] = value
        else:
            cfg[draw(_JUNK_KEYS)] = value
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=draw(st.booleans()), width=10_000)
    for marker, snippet in raw.items():
        text = text.replace(marker, snippet.replace("\n", "\n" + " " * 4), 1)
    if draw(_ONE_IN_TEN) == 0:
        text = draw(st.sampled_from(["- a\n", "config: [1]\n", "config: x\n", "", "---\n...\n", "\t\n", "config:\n  a: &a [*a]\n",
                                     "config: {a: 1, a: 2}\n", text.replace("config:", "config: ~\nx:", 1)]))
    return text


FUZZ = settings(derandomize=True, database=None, max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])


@FUZZ
@given(hostile_docs())
def test_fuzzed_stack_files_fail_only_with_config_errors(text):
    try:
        flat, secret = load(text)
        parse_flat(flat, project="rke-aws", stack="fuzz", region=flat.get("aws:region"), secret_keys=secret)
    except ConfigError as err:
        assert err.problems and all(isinstance(p, str) and p for p in err.problems)
        assert all(p.split(": ", 1)[0] and ": " in p for p in err.problems), err.problems


@settings(derandomize=True, database=None, max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(hostile_docs())
def test_fuzzed_stack_files_through_the_program(text):
    """The whole program: a RunError with the program's message or a plan, nothing else."""
    try:
        flat, secret = load(text)
    except ConfigError:
        return
    try:
        harness.run_program(flat, stack="fuzz", secret_keys=secret)
    except pulumi.RunError as err:
        assert str(err).startswith("invalid stack configuration"), str(err)[:500]


@FUZZ
@given(st.dictionaries(st.sampled_from([f"rke-aws:{k}" for k in sections.TOP_LEVEL_KEYS] + JUNK_KEYS),
                       st.one_of(texts, values.map(lambda v: json.dumps(v, allow_nan=True)))))
def test_any_flat_map_the_cli_can_hand_over_fails_only_with_config_errors(flat):
    """What a program can receive is a map of strings, whatever the file said (ESC, `config set`)."""
    secret = [k for k in flat if "secure" in k]
    try:
        parse_flat({"aws:region": "us-east-1", **flat}, project="rke-aws", stack="fuzz", region="us-east-1",
                     secret_keys=secret)
    except ConfigError:
        pass


def test_offline_diff_refuses_a_plain_text_kubeconfig_like_the_cli(tmp_path):
    from rke_aws_offline.report import diff

    stack_file = tmp_path / "Pulumi.plain.yaml"
    stack_file.write_text(doc_text(**{"rke-aws:kubeconfig": "'apiVersion: v1\\nkind: Config\\n'"}))
    out = tmp_path / "out.json"
    diff.dump(harness.ROOT, stack_file, None, out)
    assert "rke-aws:kubeconfig: is stored as plain text" in json.loads(out.read_text())["refused"]
    stack_file.write_text(doc_text(**{"rke-aws:kubeconfig": "{secure: v1:abc}"}))
    diff.dump(harness.ROOT, stack_file, None, out)
    assert "resources" in json.loads(out.read_text())


@pytest.mark.parametrize("key, value, suggestion", NAMESPACE_TYPOS)
def test_a_near_miss_of_the_namespace_is_warned_about(key, value, suggestion):
    """Other namespaces belong to other programs (pulumi/pulumi pkg/workspace/config.go: the CLI namespaces a
    project's keys with its name), so a typo of this project's is a warning with the key it meant, not a refusal."""
    flat, secret = load(doc_text())
    cfg = parse_flat({**flat, key: value}, project="rke-aws", stack="test", region="us-east-1", secret_keys=secret)
    found = [d for d in cfg.diagnostics if d.key == key]
    assert [(d.code, d.severity) for d in found] == [("config.namespace-typo", "warning")]
    assert suggestion in found[0].message


@pytest.mark.parametrize("key", OTHER_NAMESPACES)
def test_other_programs_namespaces_are_not_judged(key):
    flat, secret = load(doc_text())
    cfg = parse_flat({**flat, key: "x"}, project="rke-aws", stack="test", region="us-east-1", secret_keys=secret)
    assert not [d for d in cfg.diagnostics if d.key == key]
