"""Compiled JSON Schemas: the one place that talks to ``jsonschema``.

The dialect is the schema's ``$schema`` when it names one, else Draft 2020-12 (what MCP
2025-11-25 specifies). ``format`` is an annotation, as Draft 2020-12 says by default: a value of
the wrong format is caught where it is converted to the parameter's type instead.

``jsonschema`` (with ``referencing``, ``attrs`` and the bundled meta-schemas) is imported where a
schema is compiled or meta-checked, not with this module (ADR 0057): the schemas mcp-core derives
from signatures are plainly valid (:func:`_plainly_valid`), and the invoker checks simple
signatures without a compiled schema, so a plain app serves without ever importing it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeGuard, final

if TYPE_CHECKING:
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
        from jsonschema import Draft202012Validator, validators  # noqa: PLC0415 -- ADR 0057

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
    if _plainly_valid(schema, root=True):
        return []
    return _meta_schema_problems(schema)


def _meta_schema_problems(schema: Mapping[str, Any]) -> list[tuple[str, str]]:
    """:func:`schema_problems` by ``jsonschema`` itself, for every schema."""
    from jsonschema import Draft202012Validator, validators  # noqa: PLC0415 -- ADR 0057

    dialect = validators.validator_for(schema, default=Draft202012Validator)
    meta_dialect = validators.validator_for(dialect.META_SCHEMA, default=dialect)
    meta = meta_dialect(dialect.META_SCHEMA, format_checker=meta_dialect.FORMAT_CHECKER)
    found = sorted(meta.iter_errors(schema), key=lambda error: str(error.json_path))
    return [(str(error.json_path), str(error.message)) for error in found]


# -- schemas valid at a glance ---------------------------------------------------------------------
#
# A sufficient condition for :func:`_meta_schema_problems` to find nothing, decided without
# jsonschema: Draft 2020-12 (no ``$schema``, or that one), and only keywords whose meta-schema
# rule is a plain type check listed here (those of derived schemas, and then some). Anything
# else (another dialect, ``pattern``, ``$id``, ``if``, an unknown non-``x-`` keyword, a value of
# the wrong type) is left to jsonschema, so the verdicts are exactly its own; the hypothesis test
# in tests/handlers/test_jsonschema.py holds the two to agreement.

_DRAFT_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"
_SIMPLE_TYPES: Final = frozenset(
    {"array", "boolean", "integer", "null", "number", "object", "string"}
)
_LOCAL_DEF_PREFIX: Final = "#/$defs/"


def _is_schema(value: object) -> bool:
    return _plainly_valid(value)


def _is_schema_map(value: object) -> bool:
    return isinstance(value, dict) and all(
        isinstance(key, str) and _plainly_valid(item) for key, item in value.items()
    )


def _is_schema_list(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(_plainly_valid(item) for item in value)


def _is_number(value: object) -> TypeGuard[float]:
    return type(value) is int or (type(value) is float and math.isfinite(value))


def _is_count(value: object) -> bool:
    return type(value) is int and value >= 0


def _is_string(value: object) -> bool:
    return type(value) is str


def _is_bool(value: object) -> bool:
    return type(value) is bool


def _is_array(value: object) -> bool:
    return isinstance(value, list)


def _is_anything(_value: object) -> bool:
    return True


def _is_names(value: object) -> bool:
    return (
        isinstance(value, list)
        and all(type(item) is str for item in value)
        and len(set(value)) == len(value)
    )


def _is_type(value: object) -> bool:
    if type(value) is str:
        return value in _SIMPLE_TYPES
    return (
        isinstance(value, list)
        and bool(value)
        and all(type(item) is str and item in _SIMPLE_TYPES for item in value)
        and len(set(value)) == len(value)
    )


def _is_local_ref(value: object) -> bool:
    # "#/$defs/Name" (what pydantic writes) is a valid uri-reference whatever format checkers
    # are installed; any other reference is left to jsonschema.
    return (
        type(value) is str
        and value.startswith(_LOCAL_DEF_PREFIX)
        and value[len(_LOCAL_DEF_PREFIX) :].replace("_", "a").replace("-", "a").isalnum()
        and value.isascii()
    )


def _is_positive(value: object) -> bool:
    return _is_number(value) and value > 0


_KEYWORDS: Final[Mapping[str, Callable[[object], bool]]] = {
    "$comment": _is_string,
    "$defs": _is_schema_map,
    "$ref": _is_local_ref,
    "additionalProperties": _is_schema,
    "allOf": _is_schema_list,
    "anyOf": _is_schema_list,
    "const": _is_anything,
    "contains": _is_schema,
    "default": _is_anything,
    "deprecated": _is_bool,
    "description": _is_string,
    "enum": _is_array,
    "examples": _is_array,
    "exclusiveMaximum": _is_number,
    "exclusiveMinimum": _is_number,
    "format": _is_string,
    "items": _is_schema,
    "maxItems": _is_count,
    "maxLength": _is_count,
    "maxProperties": _is_count,
    "maximum": _is_number,
    "minItems": _is_count,
    "minLength": _is_count,
    "minProperties": _is_count,
    "minimum": _is_number,
    "multipleOf": _is_positive,
    "not": _is_schema,
    "oneOf": _is_schema_list,
    "prefixItems": _is_schema_list,
    "properties": _is_schema_map,
    "readOnly": _is_bool,
    "required": _is_names,
    "title": _is_string,
    "type": _is_type,
    "uniqueItems": _is_bool,
    "writeOnly": _is_bool,
}


def _plainly_valid(schema: object, *, root: bool = False) -> bool:
    """Whether ``schema`` is certainly valid Draft 2020-12 (False: ask jsonschema)."""
    if type(schema) is bool:
        return True
    if not isinstance(schema, dict):
        return False
    keywords = _KEYWORDS
    for key, value in schema.items():
        check = keywords.get(key)
        if check is not None:
            if not check(value):
                return False
        elif key == "$schema":
            if not root or value != _DRAFT_2020_12:
                return False
        elif not (isinstance(key, str) and key.startswith("x-")):
            return False
    return True
