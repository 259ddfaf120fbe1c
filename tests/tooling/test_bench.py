"""The bench still runs (`python -m bench`, README "Performance"): its synthetic configs are ones the
program accepts and its baselines register what the program registers. A bench that measured only
failures once went unnoticed (a plain-text kubeconfig the program had learned to refuse)."""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import arguments
from bench import commands as bench_commands
from bench import run as bench_run
from rke_aws_offline.engine import harness
from tests.support.configs import parse_config
from tests.support.properties import examples


def test_the_bench_configs_are_valid_stacks():
    from bench import configs

    for distribution in configs.DISTRIBUTIONS:
        for kubeconfig in (False, True):
            cfg = configs.stack_config(distribution, 10, kubeconfig=kubeconfig)
            parse_config(cfg, configs.stack_name(distribution, 10))  # raises ConfigError if refused


def test_the_smallest_bench_runs_and_its_baselines_match_the_program():
    proc = subprocess.run([sys.executable, "-m", "bench", "--sizes", "10", "--repeats", "1", "--no-profile",
                           "--warmup", "0"],  # the warm-up only steadies timings this test does not read
                          cwd=harness.ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "FAILED" not in proc.stdout, proc.stderr[-3000:]
    assert "Equivalence: in every config both baselines register the same" in proc.stdout, proc.stdout[:3000]


@pytest.mark.parametrize("args, refusal", [
    (["--repeats", "0"], "argument --repeats: '0': a whole number, at least 1"),
    (["--repeats", "-2"], "argument --repeats: '-2': a whole number, at least 1"),
    (["--warmup", "-1"], "argument --warmup: '-1': a whole number, at least 0"),
    (["--sizes", "10,0"], "argument --sizes: '10,0': node counts separated by commas, each at least 1"),
    (["--sizes", "ten"], "argument --sizes: 'ten': node counts separated by commas, each at least 1"),
])
def test_the_bench_refuses_counts_it_cannot_run_naming_the_option(args, refusal, capsys):
    """`--repeats 0` used to run the default five (0 read as "not given") and a negative count no timed run at all;
    argparse now refuses them before any work, with the option and the value (usage and exit code 2)."""
    with pytest.raises(SystemExit) as done:
        bench_run.main(args)
    assert done.value.code == 2 and refusal in capsys.readouterr().err


def test_the_commands_bench_refuses_no_runs(capsys):
    """`python -m bench.commands --cpu --runs 0` ended in a traceback (the median of no runs); now refused first."""
    with pytest.raises(SystemExit) as done:
        bench_commands.main(["--cpu", "--no-suite", "--runs", "0"])
    assert done.value.code == 2 and "argument --runs: '0': a whole number, at least 1" in capsys.readouterr().err


@settings(max_examples=examples(200), deadline=None)
@given(st.one_of(st.integers(-5, 1000).map(str), st.text(max_size=6)))
def test_a_count_is_a_whole_number_at_least_its_least_or_refused(text):
    try:
        value = arguments.count(1)(text)
    except argparse.ArgumentTypeError as err:
        assert repr(text) in str(err)
        with contextlib.suppress(ValueError):
            assert int(text) < 1
    else:
        assert value == int(text) >= 1
