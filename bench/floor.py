"""`python bench/floor.py CHECKOUT SPEC`: the floor of `python -m bench.commands --cpu`, in a fresh process.

The typed baseline (bench/baseline_typed_main.py: the resources a plan registers, with the provider SDKs' own
classes, no rke_aws) evaluated through CHECKOUT's harness and emulated account, as `rke-aws plan` evaluates the
program (its process policy too: no cyclic garbage collector, and no interpreter teardown at the end: offline/cli.py
_without_cyclic_gc and _end_process). SPEC
is a pickle of (config, stack, bench.baseline entries) that bench.commands derives from one run of the program.
Run as a file, so that CHECKOUT's `bench` and `rke_aws_offline` are the ones imported (`--base`)."""

from __future__ import annotations

import gc
import pickle
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    checkout, spec_file = Path(argv[0]).resolve(), Path(argv[1])
    sys.path.insert(0, str(checkout))
    gc.disable()
    from bench import baseline, runner

    config, stack, spec = pickle.loads(spec_file.read_bytes())
    baseline.SPEC[:] = spec
    run = runner.run_main(checkout / "bench" / "baseline_typed_main.py", config, stack)
    if len(run.resources) < len(spec):
        print(f"the floor registered {len(run.resources)} resources, the spec has {len(spec)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    import os

    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
