"""The bench still runs (`python -m bench`, README "Performance"): its synthetic configs are ones the
program accepts and its baselines register what the program registers. A bench that measured only
failures once went unnoticed (a plain-text kubeconfig the program had learned to refuse)."""

from __future__ import annotations

import subprocess
import sys

from rke_aws_offline.engine import harness
from tests.support.configs import parse_config


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
