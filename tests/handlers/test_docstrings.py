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

    def test_sphinx_continuation_starting_with_a_role(self) -> None:
        """A continuation line may start with a role (``:class:``); it is not a new field."""
        parsed = parse_docstring(
            """Connect.

            :param tls: ``True`` to do a TLS handshake and return a
                :class:`~anyio.streams.tls.TLSStream` instead
            :param host: Where.

            .. versionadded:: 3.1
            """
        )
        assert dict(parsed.params) == {
            "tls": "``True`` to do a TLS handshake and return a "
            ":class:`~anyio.streams.tls.TLSStream` instead",
            "host": "Where.",
        }
        assert parsed.description == "Connect.\n\n.. versionadded:: 3.1"

    def test_sphinx_unindented_continuation(self) -> None:
        """Continuation lines written without an indent still belong to their field."""
        parsed = parse_docstring(
            """Kill clients.
            :param skipme: If True, then the client calling the command
            will not get killed.
            :param addr: Kills a client by its address.
            .. versionadded:: 2.0
            """
        )
        assert dict(parsed.params) == {
            "skipme": "If True, then the client calling the command will not get killed.",
            "addr": "Kills a client by its address.",
        }
        assert parsed.description == "Kill clients.\n.. versionadded:: 2.0"

    def test_sphinx_field_of_several_paragraphs(self) -> None:
        """A field's body may go on, indented, after a blank line; an unindented one ends it."""
        parsed = parse_docstring(
            """Connect.

            :param attempts:
                Deprecated: configure ``retry`` instead.

                Number of times to retry.
            :param retry: The retry object.

            For more information, see the manual.
            """
        )
        assert dict(parsed.params) == {
            "attempts": "Deprecated: configure ``retry`` instead. Number of times to retry.",
            "retry": "The retry object.",
        }
        assert parsed.description == "Connect.\n\nFor more information, see the manual."

    def test_nested_parentheses_and_stars(self) -> None:
        """A Google type may nest parentheses; a Sphinx ``**kwargs`` field names ``kwargs``."""
        google = parse_docstring(
            """Divide.

            Args:
                children (Sequence(Layout)): The layouts.
            """
        )
        sphinx = parse_docstring("Field.\n\n:param **extra: Added to the schema.\n")
        assert dict(google.params) == {"children": "The layouts."}
        assert dict(sphinx.params) == {"extra": "Added to the schema."}

    def test_numpy_arguments_header(self) -> None:
        """NumPy's ``Arguments`` header (as numpy itself writes it) is a parameter section."""
        parsed = parse_docstring(
            """Parse.

            Arguments
            ---------
            signature : str
                The signature.
            """
        )
        assert dict(parsed.params) == {"signature": "The signature."}
        assert parsed.description == "Parse."

    def test_nothing(self) -> None:
        """No docstring, no description."""
        assert parse_docstring(None).description is None
        assert parse_docstring("   ").params == {}

    @given(st.text())
    def test_never_fails(self, text: str) -> None:
        """Any text parses; the description is stripped or None."""
        parsed = parse_docstring(text)
        assert parsed.description is None or parsed.description == parsed.description.strip()
