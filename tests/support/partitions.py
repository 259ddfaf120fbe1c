"""Partition-level constants tests share."""

from __future__ import annotations

import re

ARN = re.compile(r"arn:([a-z0-9-]+):")
