"""Key rotation by identity.keyGeneration (plan/identity.py key_step) follows the order the core
identity_apiserver.transition proves safe (kops docs/operations/rotate-secrets.md: create, promote, distrust;
kubernetes pkg/serviceaccount/jwt.go: a token verifies with any trusted key by kid): every neighbouring pair of
states accepts each other's tokens, a new key is trusted everywhere before any server signs with it, and at most
two keys are published."""

from __future__ import annotations

import pytest

from rke_aws.plan.identity import key_step


def _walk(trusted, signer, target, running=True, limit=10):
    states = [(tuple(trusted), signer)]
    for _ in range(limit):
        nxt = key_step(states[-1][0], states[-1][1], target, running)
        if nxt == states[-1]:
            return states
        states.append(nxt)
    raise AssertionError(f"no steady state: {states}")


def _accepts(state, token_signer):
    trusted, _ = state
    return token_signer is None or token_signer in trusted


@pytest.mark.parametrize("start, target", [(((), None), 1), (((1,), 1), 2), (((1, 2), 2), 3), (((1,), None), 1),
                                           (((1, 2), 1), 2), (((1,), 1), 4)])
def test_every_step_accepts_the_tokens_of_the_step_before(start, target):
    states = _walk(*start, target)
    for before, after in zip(states, states[1:], strict=False):
        # Servers run both states while they are replaced one by one: each must accept what the other signs.
        assert _accepts(after, before[1]) and _accepts(before, after[1]), (before, after)
        assert len(after[0]) <= 2, after
        # A key signs only once it was trusted in the state before (every server has it).
        if after[1] is not None and after[1] != before[1]:
            assert after[1] in before[0], (before, after)
    assert states[-1][1] == target


def test_a_new_cluster_starts_signing():
    assert key_step((), None, 1, running=False) == ((1,), 1)
    assert key_step((), None, 3, running=False) == ((3,), 3)


def test_the_rotation_steps_one_update_each():
    assert _walk((1,), 1, 2) == [((1,), 1), ((1, 2), 1), ((1, 2), 2)]
    # The next rotation first drops the key that no longer signs.
    assert _walk((1, 2), 2, 3) == [((1, 2), 2), ((2,), 2), ((2, 3), 2), ((2, 3), 3)]


def test_turning_the_issuer_on_trusts_before_signing():
    assert _walk((), None, 1) == [((), None), ((1,), None), ((1,), 1)]
