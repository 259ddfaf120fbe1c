"""Problems as data (rke_aws.diagnostics): a ConfigError renders today's problem sentences and Diagnostics
the same way, so checks can be converted one by one without changing a message."""

from __future__ import annotations

import pickle

from rke_aws.diagnostics import ConfigError, Diagnostic, Severity, Statement, suggest
from rke_aws.plan import history
from rke_aws.settings import errors


def test_sentences_render_as_before():
    err = ConfigError(["rke-aws:distribution: required", "aws:region: unknown"])
    assert err.problems == ["rke-aws:distribution: required", "aws:region: unknown"]
    assert str(err) == ("invalid stack configuration (2 problem(s)):\n"
                        "  - rke-aws:distribution: required\n  - aws:region: unknown")
    assert [d.code for d in err.diagnostics] == ["", ""]


def test_diagnostics_render_as_the_sentences_they_replace():
    found = [Diagnostic("nodePools[0].count", "must be at least 1 (got 0)", "pool.count"),
             Diagnostic("aws:region", "unknown region 'eu-wset-1'", "region.unknown", fix="did you mean eu-west-1?"),
             "rke-aws:kubeconfig: stored as plain text"]
    err = ConfigError(found)
    assert err.problems == ["rke-aws:nodePools[0].count: must be at least 1 (got 0)",
                            "aws:region: unknown region 'eu-wset-1'; did you mean eu-west-1?",
                            "rke-aws:kubeconfig: stored as plain text"]
    assert [(d.key, d.code) for d in err.diagnostics[:2]] == [("nodePools[0].count", "pool.count"),
                                                             ("aws:region", "region.unknown")]
    assert ConfigError(found[:1], prefix="cluster dev: ").problems == ["cluster dev: nodePools[0].count: must be at "
                                                                       "least 1 (got 0)"]


def test_the_value_is_never_rendered():
    d = Diagnostic("rancher.token", "is not a Rancher API token", "rancher.token", value="token-abc:s3cret")
    assert "s3cret" not in d.render() and "s3cret" not in str(ConfigError([d]))


def test_one_error_class_and_one_statement_class():
    assert errors.ConfigError is ConfigError and history.Statement is Statement
    assert history.CONFIRM_CLI_KEY == "confirmClusterState"
    # The code a refusal asks for is the statement's digest: stacks that confirmed one keep it valid.
    assert Statement("etcd", "x").code == "etcd-2d711642b7"


def test_a_config_error_survives_pickling():
    err = pickle.loads(pickle.dumps(ConfigError([Diagnostic("a", "b", "c", Severity.WARNING), "rke-aws:d: e"])))
    assert err.problems == ["rke-aws:a: b", "rke-aws:d: e"] and err.diagnostics[0].severity == Severity.WARNING


def test_suggest():
    assert suggest("perAZ", ["single", "perAz"]) == "perAz"
    assert suggest("zzz", ["single"]) is None and suggest(3, ["3"]) is None
