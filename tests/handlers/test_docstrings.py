"""Docstring parsing: descriptions and parameter descriptions in three conventions."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mcp_core.handlers._docstrings import parse_docstring


class TestParseDocstring:
    """Google, NumPy and Sphinx parameter sections, removed from the description."""

    def test_google(self) -> None:
        """``Args:`` items with types and continuation lines; other sections kept."""
        parsed = parse_docstring(
            """Summary line.

            Body text.

            Args:
                first (int): The first
                    one.
                second: The second.

            Raises:
                ValueError: when odd.
            """
        )
        assert dict(parsed.params) == {"first": "The first one.", "second": "The second."}
        assert (
            parsed.description
            == "Summary line.\n\nBody text.\n\nRaises:\n    ValueError: when odd."
        )

    def test_numpy(self) -> None:
        """``Parameters`` underlined; several names on one line share a description."""
        parsed = parse_docstring(
            """Summary.

            Parameters
            ----------
            x, y : float
                Coordinates.
            label : str
                A label.

            Returns
            -------
            float
            """
        )
        assert dict(parsed.params) == {
            "x": "Coordinates.",
            "y": "Coordinates.",
            "label": "A label.",
        }
        assert parsed.description == "Summary.\n\nReturns\n-------\nfloat"

    def test_sphinx(self) -> None:
        """``:param name:`` fields (with or without a type) and ``:type:`` lines are removed."""
        parsed = parse_docstring(
            """Summary.

            :param int count: How many,
                at most.
            :type count: int
            :param name: Who.
            :returns: Something.
            """
        )
        assert dict(parsed.params) == {"count": "How many, at most.", "name": "Who."}
        assert parsed.description == "Summary.\n\n:returns: Something."

    def test_nothing(self) -> None:
        """No docstring, no description."""
        assert parse_docstring(None).description is None
        assert parse_docstring("   ").params == {}

    @given(st.text())
    def test_never_fails(self, text: str) -> None:
        """Any text parses; the description is stripped or None."""
        parsed = parse_docstring(text)
        assert parsed.description is None or parsed.description == parsed.description.strip()
