"""SourceDiagnostic and describe_source."""

from __future__ import annotations

import dataclasses
import time

import pytest

from mcp_core.elements import ElementCollection, ElementRef
from mcp_core.sources import (
    CachedSource,
    IsolatedSource,
    PrefixedSource,
    SourceDiagnostic,
    StaticSource,
)
from mcp_core.sources._diagnostics import describe_source
from mcp_core.stores import MemoryStore


class TestSourceDiagnostic:
    """SourceDiagnostic is a small, frozen, validated value."""

    def test_is_frozen_and_stamped(self) -> None:
        """Fields cannot be reassigned; at defaults to the current wall-clock time."""
        before = time.time()
        diagnostic = SourceDiagnostic(source="S()", kind="failed", message="boom")
        assert before <= diagnostic.at <= time.time()
        assert diagnostic.ref is None
        with pytest.raises(dataclasses.FrozenInstanceError):
            diagnostic.message = "other"  # type: ignore[misc]  # the mutation under test

    def test_rejects_an_unknown_kind(self) -> None:
        """The kind is one of the five documented values."""
        with pytest.raises(ValueError, match="must be one of"):
            SourceDiagnostic(source="S()", kind="broken", message="x")  # type: ignore[arg-type]  # the mistake under test

    def test_equality_is_by_value(self) -> None:
        """Two diagnostics with the same fields are equal and hash alike."""
        ref = ElementRef.tool("t")
        one = SourceDiagnostic(source="S()", kind="skipped", message="m", ref=ref, at=1.0)
        two = SourceDiagnostic(source="S()", kind="skipped", message="m", ref=ref, at=1.0)
        assert one == two
        assert hash(one) == hash(two)

    def test_str_is_a_log_line(self) -> None:
        """str() gives kind, source, element and message on one line."""
        diagnostic = SourceDiagnostic(
            source="S()", kind="skipped", message="bad schema", ref=ElementRef.tool("t"), at=0.0
        )
        assert str(diagnostic) == "[skipped] S(): tool 't': bad schema"


class _Plain:
    """A source-like object that kept object.__repr__."""


class TestDescribeSource:
    """describe_source nests the reprs of wrappers and their inner sources."""

    def test_nests_wrappers(self) -> None:
        """A chain of wrappers reads like the expression that built it."""
        source = CachedSource(
            PrefixedSource(IsolatedSource(StaticSource(ElementCollection())), "app"), MemoryStore()
        )
        assert describe_source(source) == (
            "CachedSource(PrefixedSource(IsolatedSource(StaticSource("
            "ElementCollection(<0 elements, kinds=none>))), 'app'))"
        )

    def test_default_repr_has_no_address(self) -> None:
        """An object without its own repr is named by its qualified type, stable across runs."""
        assert describe_source(_Plain()) == f"{__name__}._Plain"
