"""The feature combination matrix (issue 32, "Also"): every pair of features in tests/support/combinations.py's
table is planned and judged by its rule (the rules cite their sources there), the few known three-way
interactions too, and the README's table is the table's.

Cost: the pairs that work are planned inside a few combined configurations (combinations.combined_configs),
each once per session and shared by the xdist workers; refused pairs stop before any resource exists.
"""

# split: this module mixes levels (issue 33 §7.2); the tests of the matrix itself -> tests/unit.

from __future__ import annotations

import itertools

import pytest

from tests.support import combinations as m
from tests.support.once import workers_dir

NAMES = [f.name for f in m.FEATURES]
PAIRS = [frozenset(p) for p in itertools.combinations(NAMES, 2)]


@pytest.fixture(scope="session")
def shared(tmp_path_factory):
    """The directory every xdist worker of this run sees (None without xdist: the process cache is enough)."""
    return workers_dir(tmp_path_factory)


def _cell_id(pair: frozenset[str]) -> str:
    return "+".join(m.order(pair))


def _cells() -> list:
    """One cell per pair, interleaved by the configuration it is planned in, so that the xdist workers
    plan different configurations at the same time instead of waiting for each other's."""
    by_config: dict[m.Combined, list[frozenset[str]]] = {}
    for pair in PAIRS:
        by_config.setdefault(m.config_for(pair), []).append(pair)
    out = []
    for row in itertools.zip_longest(*by_config.values()):
        for pair in row:
            if pair is None:
                continue
            reason = m.xfail_reason(m.RULES[pair], pair)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(pair, id=_cell_id(pair), marks=marks))
    return out


# ---- the table itself ---------------------------------------------------------------------------------

def test_every_pair_of_features_has_exactly_one_rule():
    """A feature added to the table without a rule for each pair fails here ("new features later join
    the matrix")."""
    missing = [_cell_id(p) for p in PAIRS if p not in m.RULES]
    unknown = [sorted(p) for p in m.RULES if not p <= set(NAMES)]
    assert not missing, f"pairs without a rule: {missing}"
    assert not unknown, f"rules naming features the table does not have: {unknown}"
    assert len(set(NAMES)) == len(NAMES)


def test_every_rule_and_feature_cites_a_source():
    for pair, verdict in m.RULES.items():
        assert verdict.source.strip(), f"{_cell_id(pair)}: no source"
    for feature in m.FEATURES:
        assert feature.source.strip() and feature.title.strip(), feature.name


def test_every_working_pair_meets_in_a_combined_configuration_with_only_working_pairs():
    configs = m.combined_configs()
    for config in configs:
        for pair in m.pairs_of(config.features):
            assert isinstance(m.RULES[pair], m.Works), f"{config.features}: {_cell_id(pair)} is {m.RULES[pair]}"
            assert not m.pending_feature(pair), config.features
        assert config.emulated == any(m.RULES[p].account for p in m.pairs_of(config.features)), config
    for pair in PAIRS:
        if isinstance(m.RULES[pair], m.Works) and not m.pending_feature(pair):
            assert any(pair <= set(c.features) for c in configs), _cell_id(pair)


def test_features_write_only_their_own_keys_and_alternatives_share_one():
    """Each feature's function adds keys to the base; two features of one key are alternatives (refused
    pairs excepted, like split roles' nlb endpoint against dns)."""
    for a, b in itertools.combinations(NAMES, 2):
        wa, wb = m.written_keys(a), m.written_keys(b)
        clash = {k for k in set(wa) & set(wb) if wa[k] != wb[k] and k != "nodePools"}
        verdict = m.RULES[frozenset((a, b))]
        if clash:
            assert isinstance(verdict, (m.Alternatives, m.Refused)), f"{a} + {b} both write {clash}: {verdict}"
        if isinstance(verdict, m.Alternatives):
            m.judge_alternatives(a, b, verdict)


# ---- every pair ---------------------------------------------------------------------------------------------

def _judged(request, judge) -> None:
    """An expected failure (issue 32's items, findings) reports its message alone: its traceback is
    known, and formatting dozens of them costs the suite time."""
    try:
        judge()
    except AssertionError as err:
        if request.node.get_closest_marker("xfail") is None:
            raise
        pytest.fail(str(err), pytrace=False)


@pytest.mark.parametrize("pair", _cells())
def test_pair(pair, shared, request):
    verdict = m.RULES[pair]
    a, b = m.order(pair)
    if isinstance(verdict, m.Alternatives):
        m.judge_alternatives(a, b, verdict)
        return
    where = m.config_for(pair)
    outcome = m.planned(where.features, where.emulated, shared)
    if isinstance(verdict, m.Refused):
        _judged(request, lambda: m.judge_refused(outcome, verdict))
    else:
        _judged(request, lambda: m.judge_works(outcome, pair, verdict.checks))


@pytest.mark.parametrize("triple", [
    pytest.param(t, id="+".join(t.features), marks=[pytest.mark.xfail(
        strict=True, reason=f"matrix finding (not in issue 32 items 1-10): {t.finding}")] if t.finding else [])
    for t in m.TRIPLES])
def test_triple(triple, shared, request):
    """Only where a known interaction takes three features (combinations.TRIPLES); other triples are not judged."""
    for pair in m.pairs_of(triple.features):
        assert isinstance(m.RULES[pair], m.Works), f"{sorted(pair)}: a triple of pairs that work"
    outcome = m.planned(triple.features, False, shared)
    _judged(request, lambda: m.judge_works(outcome, triple.features, (triple.check,)))


# ---- the README ------------------------------------------------------------------------------------------

def test_readme_table_is_the_matrix():
    text = m.README.read_text()
    assert m.README_BEGIN in text and m.README_END in text, "docs/reference/combinations.md has no Feature combinations table"
    assert m.readme_text(text) == text, "docs/reference/combinations.md: the table differs: python -m tests.support.combinations --write"
