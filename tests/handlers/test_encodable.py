"""Whether a result can be sent as UTF-8 JSON, and repairing text that quotes a client."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_core.handlers import MAX_RESULT_DEPTH
from mcp_core.handlers._encodable import repaired, unencodable


def nested(depth: int) -> Any:
    """A list nested ``depth`` levels deep."""
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


class TestUnencodable:
    """Every way a value can fail to be sent is named, with its place; the value never is."""

    @given(JSON)
    def test_json_values_are_sendable(self, value: object) -> None:
        """Anything JSON can carry (without lone surrogates) passes."""
        text_ok = all(not any(0xD800 <= ord(ch) <= 0xDFFF for ch in s) for s in _strings(value))
        assert (unencodable(value) is None) == text_ok

    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            (
                {"content": [{"text": "a\ud800b"}]},
                "$.content[0].text: the string holds a lone surrogate at index 1",
            ),
            ({"x": float("nan")}, "$.x: nan is not a JSON number"),
            ({"x": [float("-inf")]}, "$.x[0]: -inf is not a JSON number"),
            ({"x": object()}, "$.x: a value of type object is not JSON"),
            ({1: "a"}, "$: an object key of type int (keys must be strings)"),
            ({"\udfff": 1}, "$: an object key: the string holds a lone surrogate"),
        ],
    )
    def test_problems_name_the_place(self, value: object, expected: str) -> None:
        """The message starts with the JSONPath of the culprit and says what is wrong."""
        problem = unencodable(value)
        assert problem is not None
        assert problem.startswith(expected)
        assert "\ud800" not in problem

    def test_nesting_deeper_than_clients_parse_is_refused(self) -> None:
        """At the limit it passes; one level more is refused with a short path."""
        assert unencodable(nested(MAX_RESULT_DEPTH)) is None
        problem = unencodable(nested(MAX_RESULT_DEPTH + 1))
        assert problem is not None
        assert problem.endswith(
            f"nested more than {MAX_RESULT_DEPTH} levels deep; flatten the value"
        )
        assert len(problem) < 200

    def test_a_very_deep_value_does_not_recurse(self) -> None:
        """A value far deeper than the interpreter's recursion limit is checked without crashing."""
        assert unencodable(nested(100_000)) is not None


class TestRepaired:
    """Lone surrogates become U+FFFD; sendable values come back unchanged."""

    def test_replaces_lone_surrogates_everywhere(self) -> None:
        """Keys, values and nested strings are repaired."""
        value = {"a\ud800": ["x\udfffy", 1, None], "b": "fine"}
        assert repaired(value) == {"a\ufffd": ["x\ufffdy", 1, None], "b": "fine"}
        assert unencodable(repaired(value)) is None

    @given(JSON)
    def test_sendable_values_are_unchanged(self, value: object) -> None:
        """A value without surrogates is equal to its repair."""
        if unencodable(value) is None:
            assert repaired(value) == value


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []
