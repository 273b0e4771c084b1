"""Compiled JSON Schemas: the one place that talks to ``jsonschema``.

The dialect is the schema's ``$schema`` when it names one, else Draft 2020-12 (what MCP
2025-11-25 specifies). ``format`` is an annotation, as Draft 2020-12 says by default: a value of
the wrong format is caught where it is converted to the parameter's type instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, final

from jsonschema import Draft202012Validator, validators
from jsonschema.protocols import Validator

__all__ = ["CompiledSchema", "schema_problems"]


@final
class CompiledSchema:
    """A schema checked and compiled once, then used to validate many instances."""

    __slots__ = ("_validator",)

    def __init__(self, schema: Mapping[str, Any]) -> None:
        """Compile ``schema`` (a plain JSON object).

        Raises:
            ValueError: ``schema`` is not a valid schema of its dialect; the message says where.
        """
        plain = dict(schema)
        problems = schema_problems(plain)
        if problems:
            where, message = problems[0]
            raise ValueError(f"not a valid JSON Schema at {where}: {message}")
        cls = validators.validator_for(plain, default=Draft202012Validator)
        self._validator: Validator = cls(plain)

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` satisfies the schema."""
        return self._validator.is_valid(instance)

    def problems(self, instance: Any) -> list[tuple[str, str]]:
        """Every violation as ``(JSON pointer, message)``, in document order; [] when valid."""
        found = [
            ("/" + "/".join(str(part) for part in error.absolute_path), str(error.message))
            for error in self._validator.iter_errors(instance)
        ]
        return sorted(found)


def schema_problems(schema: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Where and why ``schema`` (plain JSON) violates its dialect's meta-schema, in path order.

    The dialect is the schema's ``$schema`` when jsonschema knows it, else Draft 2020-12. Format
    assertions apply to the schema itself, so an invalid ``pattern`` regex is a problem. Each
    problem is ``(JSONPath, message)``; an empty list means the schema is valid.
    """
    dialect = validators.validator_for(schema, default=Draft202012Validator)
    meta_dialect = validators.validator_for(dialect.META_SCHEMA, default=dialect)
    meta = meta_dialect(dialect.META_SCHEMA, format_checker=meta_dialect.FORMAT_CHECKER)
    found = sorted(meta.iter_errors(schema), key=lambda error: str(error.json_path))
    return [(str(error.json_path), str(error.message)) for error in found]
