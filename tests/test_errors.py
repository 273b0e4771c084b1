"""The error tree's one helper: how much client input an error may repeat."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mcp_core.elements import ElementKind, ElementRef
from mcp_core.errors import (
    INPUT_ECHO_LIMIT,
    ArgumentValidationError,
    ElementNotFoundError,
    clip_input,
)


class TestClipInput:
    """clip_input keeps short text, and head, tail and a count of the rest of long text."""

    @given(st.text(max_size=INPUT_ECHO_LIMIT))
    def test_short_text_is_kept(self, text: str) -> None:
        """Up to the limit, the text comes back unchanged."""
        assert clip_input(text) == text

    @given(st.text(min_size=INPUT_ECHO_LIMIT + 1, max_size=5000), st.integers(2, 300))
    def test_long_text_is_bounded(self, text: str, limit: int) -> None:
        """Longer text keeps its head and tail and says how many characters were left out."""
        clipped = clip_input(text, limit)
        if len(text) <= limit:
            assert clipped == text
            return
        keep = limit // 2
        elided = len(text) - 2 * keep
        assert clipped == f"{text[:keep]}…[{elided} characters elided]…{text[-keep:]}"
        assert len(clipped) <= limit + 40

    def test_the_verdict_survives(self) -> None:
        """A validator's message about a huge value still ends with what is wrong."""
        message = repr("x" * 1_000_000) + " is not of type 'integer'"
        assert clip_input(message).endswith("is not of type 'integer'")


class TestErrorsClipWhatTheyQuote:
    """Errors built from client input hold a bounded echo of it."""

    def test_argument_errors(self) -> None:
        """Pointers, messages and the summary are all clipped."""
        error = ArgumentValidationError(
            "bad: " + "m" * 100_000, errors=[("/" + "k" * 100_000, "v" * 100_000)]
        )
        assert len(str(error)) < 10 * INPUT_ECHO_LIMIT
        ((pointer, message),) = error.errors
        assert len(pointer) < 2 * INPUT_ECHO_LIMIT
        assert len(message) < 2 * INPUT_ECHO_LIMIT

    def test_not_found(self) -> None:
        """A not-found error about a huge name has a bounded message; its ref is intact."""
        ref = ElementRef(ElementKind.TOOL, "t" * 100_000)
        error = ElementNotFoundError(f"{ref} not found", ref=ref)
        assert len(str(error)) < 10 * INPUT_ECHO_LIMIT
        assert error.ref is ref
