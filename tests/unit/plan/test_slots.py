"""Where a pool's nodes get their addresses (components/plan/nodes.py `_slot_ips`): the slots of a pool block in a
subnet's node range (the subnet's second quarter, split into MAX_POOL_BLOCKS blocks).

The facts checked come from outside the function: AWS reserves the first four addresses and the last one of every
subnet (Amazon VPC User Guide, "Subnet CIDR blocks"); a block's slots stay inside that block, so two pools never share
an address; nodes.py's FIRST_SLOT keeps a block's edges free, so a block of at most 256 addresses (every block of a
subnet of /19 or smaller) holds no address ending in .0 or .255. A larger block's slots run across such addresses,
which are ordinary host addresses in AWS (a property test found it: a /16's first block). Every subnet size and
block is checked, not a sample: the cases are few."""

from __future__ import annotations

import ipaddress

from rke_aws.plan import nodes
from rke_aws.settings.field_patterns import MAX_SUBNET_PREFIX, MIN_SUBNET_PREFIX
from rke_aws.settings.fields import MAX_POOL_BLOCKS

# Every subnet size the schema allows and every block: 13 x 8 cases, all of them. The subnet's own address matters
# only through its alignment to its size, so two bases (low and high in 10/8) stand for every other.
CASES = [(prefix, base, block) for prefix in range(MIN_SUBNET_PREFIX, MAX_SUBNET_PREFIX + 1)
         for base in ("10.0.0.0", "10.255.255.0") for block in range(MAX_POOL_BLOCKS)]


def test_a_blocks_slots_are_addresses_aws_leaves_to_instances_inside_the_block():
    for prefix, base, block in CASES:
        subnet = ipaddress.IPv4Network((base, prefix), strict=False)
        quarter = subnet.num_addresses // 4
        size = quarter // MAX_POOL_BLOCKS
        first = int(subnet.network_address) + quarter + block * size  # the block's first address
        slots = [int(ipaddress.IPv4Address(s)) for s in nodes._slot_ips(str(subnet), block)]
        network = int(subnet.network_address)
        reserved = {network, network + 1, network + 2, network + 3, int(subnet.broadcast_address)}
        case = f"{subnet} block {block}"
        assert not reserved & set(slots), case
        assert all(first <= a < first + size for a in slots), case
        if size <= 256:
            assert not [a for a in slots if a % 256 in (0, 255)], case
        assert len(set(slots)) == len(slots), case
        if slots:  # the lowest slot, the first a pool's node takes, starts FIRST_SLOT into the block
            assert slots[0] == first + nodes.FIRST_SLOT, case
            assert slots == list(range(slots[0], slots[0] + len(slots))), case


def test_a_large_block_offers_every_address_but_its_edges():
    """A /20 subnet: a node range of 1,024 addresses, 8 blocks of 128; a block keeps 10 addresses at its start and
    one at its end, so 117 nodes fit (bench/configs.py's pools of 117 per zone rely on it)."""
    slots = nodes._slot_ips("10.0.16.0/20", 0)
    assert (slots[0], slots[-1], len(slots)) == ("10.0.20.10", "10.0.20.126", 117)
