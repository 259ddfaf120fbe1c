"""A stack file that is not YAML is refused as an editor shows a parse error (issue 34.7, design §9.4): the file,
line and column (from 1), the problem, then the line and a caret under the column (PyYAML's problem_mark)."""

from __future__ import annotations

import pytest

from rke_aws.diagnostics import ConfigError
from rke_aws.settings import stackfile

WHERE = "stacks/Pulumi.dev.yaml"


@pytest.mark.parametrize("text, line, column, problem", [
    ("config:\n  a: 1\n   b: 2\n", 3, 5, "mapping values are not allowed here"),
    ("config:\n  rke-aws:x: !custom x\n", 2, 14, "could not determine a constructor for the tag '!custom'"),
    ("config:\n  rke-aws:nodePools: [a, b\n", 2, 27, "expected ',' or ']'"),
])
def test_a_yaml_error_names_file_line_and_column(text, line, column, problem):
    with pytest.raises(ConfigError) as info:
        stackfile.load_stack_text(text, WHERE)
    (message,) = info.value.problems
    head, shown, caret = message.split("\n")
    assert head.startswith(f"{WHERE}:{line}:{column}: not valid YAML as the Pulumi CLI reads it: ") and problem in head
    assert shown.strip() == text.splitlines()[line - 1].strip()
    # The caret sits under the column in the line as shown.
    indent = len(shown) - len(text.splitlines()[line - 1])
    assert caret.index("^") == indent + column - 1
