"""rke-aws offline bench (issue 8): `make bench`, or `python -m bench [--write] [--quick]`.

For N in SIZES nodes and both distributions it
1. times the offline evaluation of `__main__.py` (rke_aws_offline.engine.harness.run_program under MotoMocks)
   against two baselines that register the same resources through the same harness and mocks:
   `baseline` with the provider SDKs' classes (pulumi_aws.ec2.Instance, ...) and `floor` with plain
   `pulumi.CustomResource`s, neither with components, validation, planning or outputs;
   fits time = a + b*N;
2. builds the deploy graph from the recorded dependencies: longest chain, critical path, and
   whether any instance depends on another instance or on another node's outputs;
3. estimates `pulumi up` wall time from that graph with bench/latencies.py;
4. reports the targets (pass/fail) and, when the 1.3 ratio target is missed, a cProfile of
   where the program spends the extra time.

It is a measurement, not a test: it exits 0 whether targets are met or not.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import gc
import hashlib
import json
import os
import platform
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/run.py`
    sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from bench import arguments, baseline, configs, graph, latencies, profiling, runner  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
MAINS = {
    "program": runner.PROGRAM_MAIN,
    "baseline": HERE / "baseline_typed_main.py",  # same resources via pulumi_aws / pulumi_kubernetes / pulumi_random classes
    "floor": HERE / "baseline_main.py",  # same resources via plain pulumi.CustomResource
}
SERIES = tuple(MAINS)

SIZES = (10, 100, 500)  # --sizes 10,100,250,500 adds a point to the fit
REPEATS = {10: 5, 100: 5, 250: 3, 500: 3}
RATIO_TARGET = 1.3
RATIO_AT = 500
# Linear growth: the linear fit explains the timings, and a node costs no more between 100 and
# 500 nodes than between 10 and 100 (25 % slack for noise).
R2_TARGET = 0.99
MARGINAL_SLACK = 1.25
# `pulumi up --parallel` defaults to unbounded (math.MaxInt32) in Pulumi CLI 3.x; 16 shown for contrast.
PARALLEL_SHOWN = (None, 16)
# What-if: CPython's default is (700, 10, 10); a larger third threshold means fewer full collections.
WHAT_IF_THRESHOLD = (700, 10, 100)


@dataclass
class Case:
    distribution: str
    nodes: int
    resources: int = 0
    t: dict[str, runner.Timing] = field(default_factory=lambda: {s: runner.Timing() for s in SERIES})
    equivalence: dict[str, str] = field(default_factory=dict)
    edges: int = 0
    chain: list[str] = field(default_factory=list)
    critical_s: float = 0.0
    critical: list[str] = field(default_factory=list)
    phase1_path_types: list[str] = field(default_factory=list)
    instances_behind_nat: int = 0  # instances with a NAT gateway among their (transitive) dependencies
    schedule_s: dict[int | None, float] = field(default_factory=dict)
    phase2_s: float = 0.0
    phase2: list[str] = field(default_factory=list)
    check: graph.InstanceCheck | None = None
    release_downstream_of_instance: bool | None = None
    types: set[str] = field(default_factory=set)
    spec: list = field(default_factory=list, repr=False)  # baseline.SPEC for this config
    inputs_digest: str = ""  # of every resource's inputs, to check the what-if runs change nothing
    error: str = ""

    def ratio(self, over: str = "baseline", cpu: bool = False) -> float:
        p, b = self.t["program"], self.t[over]
        return p.cpu_median / b.cpu_median if cpu else p.wall_median / b.wall_median


def cost(r) -> float:
    return latencies.create_seconds(r.type, r.custom)


def _norm(v):
    if hasattr(v, "text") and not isinstance(v, (str, bytes)):
        return ["asset", v.text]
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_norm(x) for x in v]
    return v


def _same_inputs(a: dict, b: dict) -> bool:
    return _norm(a) == _norm(b)


def inputs_digest(run) -> str:
    doc = sorted((r.type, r.name, _norm(r.inputs)) for r in run.resources if r.custom)
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=repr).encode()).hexdigest()


def equivalence(prog, base) -> str:
    """Does the baseline register the same resources (type, name), inputs and dependency edges?"""
    p = {(r.type, r.name): r for r in prog.resources if r.custom}
    b = {(r.type, r.name): r for r in base.resources if r.custom}
    if set(p) != set(b):
        return f"DIFFERENT resource sets: program-only {sorted(set(p) - set(b))[:3]}, baseline-only {sorted(set(b) - set(p))[:3]}"
    key_p = {r.urn: (r.type, r.name) for r in prog.resources}
    key_b = {r.urn: (r.type, r.name) for r in base.resources}
    inputs = sum(1 for k in p if not _same_inputs(p[k].inputs, b[k].inputs))
    gp, gb = graph.Graph.of(prog), graph.Graph.of(base)
    edges_p = {(key_p[d], key_p[u]) for u, ds in gp.deps.items() for d in ds}
    edges_b = {(key_b[d], key_b[u]) for u, ds in gb.deps.items() for d in ds}
    secrets = sum(1 for k in p if p[k].secret_inputs != b[k].secret_inputs)
    ok = inputs == 0 and edges_p == edges_b and secrets == 0
    return ("same" if ok else "DIFFERENT") + f": {len(p)} resources, {len(p) - inputs} identical inputs, " \
        f"{len(edges_p & edges_b)}/{len(edges_p)} dependency edges, {len(p) - secrets} identical secret markings"


def derive_spec(d: str, n: int, stack: str):
    """One untimed program run with ID-recording mocks; sets baseline.SPEC from it."""
    mocks = runner.MotoMocks(configs.REGION)
    full = runner.run_main(MAINS["program"], configs.stack_config(d, n), stack, mocks=mocks)
    baseline.SPEC[:] = baseline.derive(full, runner.ids_by_type_and_name(mocks))
    return full


def measure(case: Case, repeats: int, log) -> None:
    d, n = case.distribution, case.nodes
    stack = configs.stack_name(d, n)
    cfg = configs.stack_config(d, n)
    full = derive_spec(d, n, stack)
    case.spec = list(baseline.SPEC)
    case.inputs_digest = inputs_digest(full)
    case.resources = sum(1 for r in full.resources if r.custom)
    for s in ("baseline", "floor"):
        case.equivalence[s] = equivalence(full, runner.run_main(MAINS[s], cfg, stack))
    # Timed, interleaved so all three see the same machine load.
    for _ in range(repeats):
        for s in SERIES:
            runner.timed(lambda: runner.run_main(MAINS[s], cfg, stack), case.t[s])
    log(f"  {d:4} {n:4} nodes: " + ", ".join(f"{s} {case.t[s].wall_median:.3f} s" for s in SERIES)
        + f"; program/baseline {case.ratio():.2f}  ({case.resources} resources)")

    # Deploy graph. Phase 1 = first `pulumi up` (no kubeconfig yet); phase 2 = what kubeconfig adds.
    g_full = graph.Graph.of(full)
    case.check = graph.check_instances(g_full)
    releases = [u for u in g_full.order if g_full.res[u].type == graph.RELEASE]
    if releases:
        case.release_downstream_of_instance = any(u in case.check.downstream_of_instances for u in releases)
    case.types = {r.type for r in g_full.res.values()}
    g1 = graph.Graph.of(runner.run_main(MAINS["program"], configs.stack_config(d, n, kubeconfig=False), stack))
    case.edges = g1.edges
    case.chain = [g1.label(u) for u in g1.longest_chain()]
    case.critical_s, path = g1.critical_path(cost)
    case.critical = [f"{g1.label(u)} ({cost(g1.res[u]):g} s)" for u in path]
    case.phase1_path_types = [g1.res[u].type for u in path]
    case.instances_behind_nat = sum(
        1 for u, r in g1.res.items() if r.type == graph.INSTANCE
        and any(g1.res[a].type == NAT_GATEWAY for a in _ancestors(g1, u)))
    for p in PARALLEL_SHOWN:
        case.schedule_s[p] = g1.schedule(cost, p)
    extra = set(g_full.res) - set(g1.res)
    if extra:
        g2 = graph.Graph.of(full, only=extra)
        case.phase2_s, path2 = g2.critical_path(cost)
        case.phase2 = [f"{g2.label(u)} ({cost(g2.res[u]):g} s)" for u in path2]


def _ancestors(g: graph.Graph, u: str) -> set[str]:
    seen: set[str] = set()
    todo = list(g.deps.get(u, []))
    while todo:
        d = todo.pop()
        if d not in seen:
            seen.add(d)
            todo.extend(g.deps.get(d, []))
    return seen


# -- analysis ---------------------------------------------------------------------------------

def linear_fit(xs: list[float], ys: list[float]) -> tuple[float, float, float]:
    """Least squares y = a + b x: (a, b, R²)."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=False)) / sxx
    a = my - b * mx
    ss_res = sum((y - (a + b * x)) ** 2 for x, y in zip(xs, ys, strict=False))
    ss_tot = sum((y - my) ** 2 for y in ys)
    return a, b, (1 - ss_res / ss_tot if ss_tot else 1.0)


def growth(cases: list[Case], series: str, non_gc: bool = False) -> dict:
    xs = [c.nodes for c in cases]
    ys = [c.t[series].non_gc_median if non_gc else c.t[series].wall_median for c in cases]
    a, b, r2 = linear_fit(xs, ys)
    t = dict(zip(xs, ys, strict=False))
    out: dict = {"a": a, "b": b, "r2": r2, "t": t}
    if {10, 100, 500} <= set(t):
        out["t500/t100"] = t[500] / t[100]
        lo, hi = (t[100] - t[10]) / 90, (t[500] - t[100]) / 400
        out["marginal"] = hi / lo if lo > 0 else float("inf")
    return out


# Issue 13: instances no longer wait for the NAT gateway (their boot scripts retry for 15 minutes),
# so the first `pulumi up` is as long as the NAT gateway's own chain, not NAT gateway + instance.
CRITICAL_PATH_TARGET = 120.0
NAT_GATEWAY = "aws:ec2/natGateway:NatGateway"


def critical_path_ok(case: Case) -> tuple[bool, str]:
    if case.instances_behind_nat:
        return False, f"{case.instances_behind_nat} instances wait for a NAT gateway"
    if case.critical_s > CRITICAL_PATH_TARGET:
        return False, f"critical path {case.critical_s:g} s > {CRITICAL_PATH_TARGET:g} s"
    return True, ""


@contextlib.contextmanager
def _c_yaml():
    """`yaml.safe_dump` through libyaml's C emitter (same output, ~5x faster) while inside."""
    saved = yaml.safe_dump

    def c_safe_dump(data, stream=None, **kw):
        return yaml.dump(data, stream, Dumper=yaml.CSafeDumper, **kw)

    yaml.safe_dump = c_safe_dump
    try:
        yield
    finally:
        yaml.safe_dump = saved


@contextlib.contextmanager
def _gc_threshold():
    saved = gc.get_threshold()
    gc.set_threshold(*WHAT_IF_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*saved)


def what_if(cases: list[Case], log) -> list[str]:
    """The two fixes the profile points at, applied from outside the program, one run each:
    YAML through libyaml's C emitter, and fewer full GC collections."""
    out = []
    variants = [("C YAML", ("program",), (_c_yaml,)), ("GC threshold", ("program", "baseline"), (_gc_threshold,)),
                ("both", ("program",), (_c_yaml, _gc_threshold))]
    if not yaml.__with_libyaml__:
        variants = variants[1:2]
    for c in cases:
        stack = configs.stack_name(c.distribution, c.nodes)
        baseline.SPEC[:] = c.spec
        cfg = configs.stack_config(c.distribution, c.nodes)
        got: dict[tuple[str, str], float] = {}
        same = True
        for label, series, patches in variants:
            for s in series:
                t = runner.Timing()
                with contextlib.ExitStack() as stack_ctx:
                    for p in patches:
                        stack_ctx.enter_context(p())
                    run = runner.timed(lambda: runner.run_main(MAINS[s], cfg, stack), t)
                if s == "program":
                    same = same and inputs_digest(run) == c.inputs_digest
                del run
                got[(label, s)] = t.wall[0]
        log(f"  what-if {c.distribution} {c.nodes}: " + ", ".join(f"{k[0]}/{k[1]} {v:.3f} s" for k, v in got.items()))
        p0, b0 = c.t["program"].wall_median, c.t["baseline"].wall_median
        b_gc = got.get(("GC threshold", "baseline"), b0)
        row = [c.distribution, str(c.nodes), f"{p0:.3f} / {p0 / b0:.2f}"]
        for label, _series, _p in [("C YAML", 0, 0), ("GC threshold", 0, 0), ("both", 0, 0)]:
            v = got.get((label, "program"))
            base = b_gc if "GC" in label or label == "both" else b0
            row.append(f"{v:.3f} / {v / base:.2f}" if v is not None else "–")
        row.append("yes" if same else "NO")
        out.append("| " + " | ".join(row) + " |")
    return out


def profile_section(cases: list[Case], log) -> list[str]:
    out: list[str] = []
    for c in cases:
        stack = configs.stack_name(c.distribution, c.nodes)
        baseline.SPEC[:] = c.spec
        cfg = configs.stack_config(c.distribution, c.nodes)
        log(f"  profiling {c.distribution} {c.nodes} nodes")
        runner.release()
        p = profiling.profile(lambda: runner.run_main(MAINS["program"], cfg, stack))
        runner.release()
        b = profiling.profile(lambda: runner.run_main(MAINS["baseline"], cfg, stack))
        tp, tb = profiling.total(p), profiling.total(b)
        extra = tp - tb
        out.append(f"**{c.distribution}, {c.nodes} nodes**: under cProfile program {tp:.2f} s, baseline {tb:.2f} s, "
                   f"extra {extra:.2f} s. Own time by package, program − baseline: " + ", ".join(
                       f"{k} {v:+.2f} s" for k, v in sorted(
                           ((k, profiling.by_package(p).get(k, 0.0) - profiling.by_package(b).get(k, 0.0))
                            for k in set(profiling.by_package(p)) | set(profiling.by_package(b))),
                           key=lambda kv: -kv[1])[:5]) + ".")
        out.append("")
        out.append("| program function (file:function) | calls | cumulative s | share of program |")
        out.append("|---|---:|---:|---:|")
        for name, ct, nc in profiling.project_cumulative(p)[:6]:
            out.append(f"| `{name}` | {nc} | {ct:.2f} | {ct / tp:.0%} |")
        out.append("")
        out.append("| own time, program − baseline (file:function) | calls (program / baseline) | difference s | share of extra |")
        out.append("|---|---:|---:|---:|")
        fp, fb = profiling.by_function(p), profiling.by_function(b)
        diff = sorted(((k, fp.get(k, (0.0, 0)), fb.get(k, (0.0, 0))) for k in set(fp) | set(fb)),
                      key=lambda r: -(r[1][0] - r[2][0]))
        for k, (ta, na), (tb_, nb) in diff[:8]:
            out.append(f"| `{k}` | {na} / {nb} | {ta - tb_:+.2f} | {(ta - tb_) / extra:.0%} |")
        out.append("")
    return out


# -- report -----------------------------------------------------------------------------------

def machine() -> str:
    def ver(p: str) -> str:
        try:
            return metadata.version(p)
        except metadata.PackageNotFoundError:
            return "?"
    return (f"`nproc` {os.cpu_count()}, {platform.python_implementation()} {platform.python_version()}, "
            f"{platform.system()} {platform.release()} {platform.machine()}; pulumi {ver('pulumi')}, "
            f"pulumi-aws {ver('pulumi-aws')}, pulumi-kubernetes {ver('pulumi-kubernetes')}, PyYAML {ver('PyYAML')}; "
            f"{_dt.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}")


def fmt_t(t: runner.Timing) -> str:
    return f"{t.wall_median:.3f} ({min(t.wall):.3f}–{max(t.wall):.3f})"


def report(cases: list[Case], what_if_rows: list[str], prof: list[str], elapsed: float, argv: list[str]) -> str:
    ok_cases = [c for c in cases if not c.error]
    L: list[str] = []
    w = L.append
    w("# rke-aws offline bench")
    w("")
    w(f"Machine: {machine()}. Command: `python -m bench{' ' if argv else ''}{' '.join(argv)}`; whole run {elapsed:.0f} s.")
    w("")
    w(f"Configs (bench/configs.py): {configs.REGION}, VPC {configs.VPC_CIDR}, {configs.AZS} AZs, NAT gateway per AZ, "
      f"{configs.SERVERS} controlplane+etcd servers + worker pools of at most {configs.pool_capacity()} nodes "
      f"(117 per pool per AZ), kubeconfig set (CCM provider and Helm release registered too).")
    w("")
    w("## 1. Offline evaluation: program vs baselines")
    w("")
    w("Median wall seconds of one `rke_aws_offline.engine.harness.run_program` evaluation (min–max). Same harness, mocks and "
      "process for all three, runs interleaved, previous run's garbage collected before each timed run. "
      "**baseline**: the program's resources (same types, names, inputs, secrets, options, dependency edges; "
      "checked below) registered with the provider SDK classes (`pulumi_aws.ec2.Instance`, ...) by "
      "`bench/baseline_typed_main.py`. **floor**: the same with plain `pulumi.CustomResource` "
      "(`bench/baseline_main.py`). Neither has components, validation, planning or stack outputs.")
    w("")
    w("| distribution | nodes | resources | runs | program s | baseline s | floor s | program / baseline | "
      "program / floor | GC share: program / baseline (full collections) |")
    w("|---|---:|---:|---:|---|---|---|---:|---:|---:|")
    for c in ok_cases:
        p = c.t["program"]
        w(f"| {c.distribution} | {c.nodes} | {c.resources} | {len(p.wall)} | {fmt_t(p)} | {fmt_t(c.t['baseline'])} | "
          f"{fmt_t(c.t['floor'])} | **{c.ratio():.2f}** | {c.ratio('floor'):.2f} | "
          f"{p.gc_median / p.wall_median:.0%} / {c.t['baseline'].gc_median / c.t['baseline'].wall_median:.0%} "
          f"({statistics.median(p.gc_full):g} / {statistics.median(c.t['baseline'].gc_full):g}) |")
    for c in cases:
        if c.error:
            w(f"| {c.distribution} | {c.nodes} | – | – | FAILED: {c.error} | | | | | |")
    w("")
    eqs = [(c, s, e) for c in ok_cases for s, e in c.equivalence.items()]
    if eqs and all(e.startswith("same") for _, _, e in eqs):
        c, s, e = eqs[-1]
        w(f"Equivalence: in every config both baselines register the same resource set, inputs, secrets and "
          f"dependency edges as the program (e.g. {c.distribution}/{c.nodes}: {e.split(': ', 1)[1]}).")
    else:
        w("Equivalence: " + "; ".join(f"{c.distribution}/{c.nodes} {s}: {e}" for c, s, e in eqs))
    w("")
    w("### Growth with node count (least-squares t = a + b·N over all sizes)")
    w("")
    w("| distribution | series | a (s) | b (ms/node) | R² | t(500)/t(100) (5 = proportional) | per-node cost 100→500 ÷ 10→100 |")
    w("|---|---|---:|---:|---:|---:|---:|")
    growths: dict[tuple[str, str], dict] = {}
    for d in configs.DISTRIBUTIONS:
        cs = [c for c in ok_cases if c.distribution == d]
        if len(cs) < 2:
            continue
        for s, non_gc in (("program", False), ("program", True), ("baseline", False), ("baseline", True), ("floor", False)):
            label = s + (" without GC time" if non_gc else "")
            g = growths[(d, label)] = growth(cs, s, non_gc)
            ratio = f"{g['t500/t100']:.2f}" if "t500/t100" in g else "–"
            marginal = f"{g['marginal']:.2f}" if "marginal" in g else "–"
            w(f"| {d} | {label} | {g['a']:.3f} | {g['b'] * 1000:.2f} | {g['r2']:.4f} | {ratio} | {marginal} |")
    w("")
    if what_if_rows:
        w("### What-if: the fixes from section 5, applied from outside the program (one run each, largest size)")
        w("")
        w("Seconds / ratio to the baseline. *C YAML*: `yaml.safe_dump` through libyaml's `CSafeDumper`. *GC threshold*: "
          f"`gc.set_threshold{WHAT_IF_THRESHOLD}` (CPython default (700, 10, 10)); ratio against the baseline run the "
          "same way. *Same inputs*: every resource's inputs are byte-identical to the normal run.")
        w("")
        w("| distribution | nodes | program now | C YAML | GC threshold | both | same inputs |")
        w("|---|---:|---|---|---|---|---|")
        L.extend(what_if_rows)
        w("")
    w("## 2. Deploy graph (phase 1: the first `pulumi up`, no kubeconfig yet)")
    w("")
    w("Edges: each resource's recorded `dependencies` (the SDK expands a component into its children), its "
      "explicit provider, and a custom parent. \"Another node's outputs\": another instance's ID, ARN, ENI or public "
      "IP/DNS in an instance's inputs. A planned private IP (the RKE2 registration address) is a plan-time "
      "constant, not an output, and creates no edge.")
    w("")
    w("| distribution | nodes | resources | edges | longest chain | instance → instance deps | uses another node's outputs | "
      "embeds another node's planned IP | Helm release downstream of an instance |")
    w("|---|---:|---:|---:|---:|---|---|---:|---|")
    for c in ok_cases:
        ck = c.check
        assert ck is not None
        rel = {None: "no release", True: "YES", False: "no"}[c.release_downstream_of_instance]
        w(f"| {c.distribution} | {c.nodes} | {c.resources} | {c.edges} | {len(c.chain)} | "
          f"{'none' if not ck.depends_on_instance else f'{len(ck.depends_on_instance)} instances'} | "
          f"{'none' if not ck.uses_runtime_outputs else f'{len(ck.uses_runtime_outputs)} instances'} | "
          f"{ck.uses_planned_ips} instances | {rel} |")
    w("")
    for d in configs.DISTRIBUTIONS:
        cs = [c for c in ok_cases if c.distribution == d]
        if not cs:
            continue
        c = cs[-1]
        w(f"**{d}, {c.nodes} nodes**")
        w("")
        w(f"- longest chain ({len(c.chain)} resources): " + " → ".join(c.chain))
        w(f"- critical path by create time ({c.critical_s:.0f} s): " + " → ".join(c.critical))
        if c.phase2:
            w("- phase 2 (after `pulumi config set --secret kubeconfig`): " + " → ".join(c.phase2)
              + f" = {c.phase2_s:.0f} s; the release depends only on the kubernetes provider, whose kubeconfig comes from config")
        w("")
    shapes = {tuple(graph.short(t) for t in c.phase1_path_types) for c in ok_cases}
    w(f"Critical-path shape identical in every config: {'yes' if len(shapes) == 1 else f'no ({len(shapes)} shapes)'}.")
    w("")
    w("## 3. Estimated `pulumi up` wall time")
    w("")
    w("List scheduling over the phase-1 graph: a resource starts when its dependencies exist, ready resources in "
      "registration order; create times from `bench/latencies.py` (below). Assumes `pulumi up`'s default `--parallel`, "
      "unbounded in Pulumi CLI 3.x (flag default `math.MaxInt32`, help \"Defaults to unbounded\"), so the estimate "
      "equals the critical path; `--parallel 16` for contrast. Excludes CLI/plugin start-up, the program's own "
      "evaluation (overlaps with creation), and cluster bootstrap (cloud-init, RKE/RKE2). EC2 allows bursts of 1000 "
      "RunInstances (resource bucket, refill 2/s), so 500 instances are not throttled.")
    w("")
    w("| distribution | nodes | critical path s | list schedule, unbounded s | `--parallel 16` s | phase 2 (CCM) s |")
    w("|---|---:|---:|---:|---:|---:|")
    for c in ok_cases:
        w(f"| {c.distribution} | {c.nodes} | {c.critical_s:.0f} | {c.schedule_s[None]:.0f} | {c.schedule_s[16]:.0f} | "
          f"{c.phase2_s:.0f} |")
    seen = set().union(*(c.types for c in ok_cases)) if ok_cases else set()
    unlisted = sorted(t for t in seen if t not in latencies.CREATE_SECONDS)
    w("")
    w("| type | create s | source |")
    w("|---|---:|---|")
    for t, (s, why) in latencies.CREATE_SECONDS.items():
        if t in seen:
            w(f"| {graph.short(t)} | {s:g} | {why} |")
    for t in unlisted:
        w(f"| {t} | {latencies.DEFAULT_SECONDS:g} | NOT LISTED in bench/latencies.py: default |")
    w("")
    w("## 4. Targets")
    w("")
    w("| target | result | detail |")
    w("|---|---|---|")
    at = [c for c in ok_cases if c.nodes == RATIO_AT]
    if at:
        ok = all(c.ratio() <= RATIO_TARGET for c in at)
        w(f"| program / baseline ≤ {RATIO_TARGET} at {RATIO_AT} nodes | {'PASS' if ok else 'FAIL'} | "
          + ", ".join(f"{c.distribution} {c.ratio():.2f} (CPU {c.ratio(cpu=True):.2f})" for c in at)
          + "; against the plain-CustomResource floor: " + ", ".join(f"{c.distribution} {c.ratio('floor'):.2f}" for c in at) + " |")
    else:
        w(f"| program / baseline ≤ {RATIO_TARGET} at {RATIO_AT} nodes | NOT MEASURED | size {RATIO_AT} not run |")
    for d in configs.DISTRIBUTIONS:
        g = growths.get((d, "program"))
        if not g:
            continue
        if "marginal" not in g:
            w(f"| time grows linearly with nodes ({d}) | NOT MEASURED | needs sizes 10, 100 and 500 |")
            continue
        ok = g["r2"] >= R2_TARGET and g["marginal"] <= MARGINAL_SLACK
        ng = growths[(d, "program without GC time")]
        w(f"| time grows linearly with nodes ({d}) | {'PASS' if ok else 'FAIL'} | R² {g['r2']:.4f} (≥ {R2_TARGET}); "
          f"a node costs {g['marginal']:.2f}× more from 100→500 than from 10→100 (≤ {MARGINAL_SLACK}); "
          f"t(500)/t(100) {g['t500/t100']:.2f}. Without GC time: {ng['marginal']:.2f}×, t(500)/t(100) {ng['t500/t100']:.2f} |")
    cp = [(c, *critical_path_ok(c)) for c in ok_cases]
    bad = [f"{c.distribution}/{c.nodes}: {why}" for c, ok, why in cp if not ok]
    inst_bad = [c for c in ok_cases if c.check and not c.check.ok]
    rel_bad = [c for c in ok_cases if c.release_downstream_of_instance]
    detail = "; ".join(bad) if bad else (f"every config: critical path ≤ {CRITICAL_PATH_TARGET:g} s "
                                          f"(max {max((c.critical_s for c in ok_cases), default=0):g} s), no instance waits for a NAT gateway")
    detail += ("; instance → instance dependencies in " + ", ".join(f"{c.distribution}/{c.nodes}" for c in inst_bad)
               if inst_bad else "; no instance depends on another instance or on another node's outputs")
    if ok_cases and not rel_bad:
        detail += "; the Helm release is downstream of no instance (separate phase-2 `pulumi up`)"
    w(f"| first `pulumi up` ≤ {CRITICAL_PATH_TARGET:g} s: instances boot while the NAT gateway is created, never wait for another instance | "
      f"{'PASS' if not bad and not inst_bad else 'FAIL'} | {detail} |")
    if prof:
        w("")
        w("## 5. Profile: where the program's extra time goes (ratio target missed)")
        w("")
        w("cProfile of one program run and one baseline run at the largest size (cProfile inflates times ~2×; "
          "compare shares). GC time is charged to whichever function was allocating when a collection ran.")
        w("")
        L.extend(prof)
    w("")
    w("Rerun: `make bench` (prints this report; ~3.5 min on 2 cores), `make bench BENCH_ARGS=--write` (also rewrites "
      "bench/RESULTS.md), `make bench BENCH_ARGS=--quick` (10 and 100 nodes, 3 runs, ~30 s), "
      "`BENCH_ARGS='--sizes 10,100,250,500'` (one more point for the fit, ~1 min more).")
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help=f"also write the report to {RESULTS.relative_to(ROOT)}")
    ap.add_argument("--quick", action="store_true", help="10 and 100 nodes, 3 runs each, no profile")
    ap.add_argument("--sizes", type=arguments.sizes, default=None)
    ap.add_argument("--repeats", type=arguments.count(1), default=None, help="timed runs per config (default: 5/5/3/3 by size)")
    ap.add_argument("--no-profile", action="store_true", help="skip the what-if runs and the cProfile section")
    ap.add_argument("--warmup", type=arguments.count(0), default=2, help="untimed warm-up rounds before the timings (default 2; "
                    "0: a check that the bench runs, tests/tooling/test_bench.py, times nothing it reports)")
    args = ap.parse_args(argv)
    sizes = args.sizes or ((10, 100) if args.quick else SIZES)
    t0 = time.perf_counter()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    log(f"bench: sizes {sizes}, distributions {configs.DISTRIBUTIONS}")
    try:  # warm-up: imports and first-run costs stay out of the timings
        for _ in range(args.warmup):
            derive_spec("rke2", 10, "warmup")
            for s in ("baseline", "floor"):
                runner.run_main(MAINS[s], configs.stack_config("rke2", 10), "warmup")
    except Exception:  # noqa: BLE001 - reported per case below
        traceback.print_exc()

    cases: list[Case] = []
    for n in sizes:
        for d in configs.DISTRIBUTIONS:
            c = Case(d, n)
            cases.append(c)
            try:
                measure(c, args.repeats or (3 if args.quick else REPEATS.get(n, 3)), log)
            except Exception as exc:  # noqa: BLE001 - a bench reports, it does not fail
                c.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                log(f"  {d} {n}: {c.error}")
                traceback.print_exc()

    what_if_rows: list[str] = []
    prof: list[str] = []
    largest = [c for c in cases if not c.error and c.nodes == max(sizes)]
    if largest and not args.quick and not args.no_profile:
        try:
            what_if_rows = what_if(largest, log)
            if any(c.ratio() > RATIO_TARGET for c in largest):
                prof = profile_section(largest, log)
        except Exception:  # noqa: BLE001
            traceback.print_exc()
    text = report(cases, what_if_rows, prof, time.perf_counter() - t0, argv)
    print(text)
    failed = [f"{c.distribution}/{c.nodes}" for c in cases if c.error]
    if failed:
        # A report of configs the program refused is no measurement: not written, and the exit says so.
        log(f"bench: {len(failed)} config(s) failed ({', '.join(failed)}); bench/RESULTS.md left as it was")
        return 1
    if args.write:
        # The commands' timings (bench/commands.py) are measured apart and kept.
        from bench import commands

        RESULTS.write_text(commands.keep_sections(RESULTS.read_text(), text) if RESULTS.exists() else text)
        log(f"bench: wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
