"""Where a pool's nodes get their addresses (components/plan/nodes.py `_slot_ips`): the slots of a pool block in a
subnet's node range (the subnet's second quarter, split into MAX_POOL_BLOCKS blocks).

The facts checked come from outside the function: AWS reserves the first four addresses and the last one of every
subnet (Amazon VPC User Guide, "Subnet CIDR blocks"); a block's slots stay inside that block, so two pools never share
an address; nodes.py's FIRST_SLOT keeps a block's edges free, so a block of at most 256 addresses (every block of a
subnet of /19 or smaller) holds no address ending in .0 or .255. A larger block's slots run across such addresses,
which are ordinary host addresses in AWS (hypothesis found it: a /16's first block)."""

from __future__ import annotations

import ipaddress

from hypothesis import given, settings
from hypothesis import strategies as st

from rke_aws.plan import nodes
from rke_aws.settings.field_patterns import MAX_SUBNET_PREFIX, MIN_SUBNET_PREFIX
from rke_aws.settings.fields import MAX_POOL_BLOCKS
from tests.support.properties import examples


@settings(max_examples=examples(300), deadline=None)
@given(prefix=st.integers(MIN_SUBNET_PREFIX, MAX_SUBNET_PREFIX), second=st.integers(0, 255),
       third=st.integers(0, 255), block=st.integers(0, MAX_POOL_BLOCKS - 1))
def test_a_blocks_slots_are_addresses_aws_leaves_to_instances_inside_the_block(prefix, second, third, block):
    subnet = ipaddress.IPv4Network((f"10.{second}.{third}.0", prefix), strict=False)
    quarter = subnet.num_addresses // 4
    size = quarter // MAX_POOL_BLOCKS
    first = int(subnet.network_address) + quarter + block * size  # the block's first address
    slots = [ipaddress.IPv4Address(s) for s in nodes._slot_ips(str(subnet), block)]
    reserved = {*list(subnet)[:4], subnet.broadcast_address}
    assert not reserved & set(slots)
    assert all(first <= int(a) < first + size for a in slots)
    if size <= 256:
        assert not [a for a in slots if str(a).endswith((".0", ".255"))]
    assert len(set(slots)) == len(slots)
    if slots:  # the lowest slot, the first a pool's node takes, starts FIRST_SLOT into the block
        assert int(slots[0]) == first + nodes.FIRST_SLOT
        assert [int(a) for a in slots] == list(range(int(slots[0]), int(slots[0]) + len(slots)))


def test_a_large_block_offers_every_address_but_its_edges():
    """A /20 subnet: a node range of 1,024 addresses, 8 blocks of 128; a block keeps 10 addresses at its start and
    one at its end, so 117 nodes fit (bench/configs.py's pools of 117 per zone rely on it)."""
    slots = nodes._slot_ips("10.0.16.0/20", 0)
    assert (slots[0], slots[-1], len(slots)) == ("10.0.20.10", "10.0.20.126", 117)
