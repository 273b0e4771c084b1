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

__all__ = ["CompiledSchema", "reference_problems", "schema_problems"]


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
        from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]  # noqa: PLC0415 -- ADR 0057

        plain = dict(schema)
        problems = schema_problems(plain) or reference_problems(plain)
        if problems:
            where, message = problems[0]
            raise ValueError(f"not a valid JSON Schema at {where}: {message}")
        cls = validators.validator_for(plain, default=Draft202012Validator)
        # The dialects' own meta-schemas and nothing else: jsonschema's default registry fetches
        # a $ref to another document over the network, which a schema must never make us do.
        self._validator: Validator = cls(plain, registry=REGISTRY)

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


# -- references ------------------------------------------------------------------------------------
#
# Validation follows a schema's ``$ref``s. One pointing to another document would be fetched (a
# request to wherever a schema's author likes); one pointing nowhere fails every validation; and a
# chain of ``$ref``s (through ``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``/``then``/``else``,
# ``dependentSchemas``) that comes back to where it started without descending into the instance
# never ends. Each is found here, without jsonschema, once per schema.

# Keywords whose value is one subschema, a map of them, or a list of them; the marked ones apply
# their subschemas to the same instance (so following them does not descend into it).
_ONE: Final = {
    "additionalItems": False,
    "additionalProperties": False,
    "contains": False,
    "contentSchema": False,
    "else": True,
    "if": True,
    "items": False,
    "not": True,
    "propertyNames": False,
    "then": True,
    "unevaluatedItems": False,
    "unevaluatedProperties": False,
}
_MAP: Final = {
    "$defs": False,
    "definitions": False,
    "dependencies": True,
    "dependentSchemas": True,
    "patternProperties": False,
    "properties": False,
}
_LIST: Final = {"allOf": True, "anyOf": True, "items": False, "oneOf": True, "prefixItems": False}
_MAX_REFERENCE_PROBLEMS: Final = 3


def reference_problems(schema: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The ``$ref``s of ``schema`` that validation could not follow, as ``(JSON pointer, why)``.

    A ``$ref`` must point inside the schema (``#``, ``#/json/pointer``, ``#anchor``, or the
    schema's own ``$id`` followed by one of those) at something that exists, and no chain of
    them may lead back to its start without descending into the instance (``{"$ref": "#"}``
    does). A schema with an ``$id`` below its root is only checked for the first rule's "another
    document" part against the ``$id``s it declares. At most a few problems are reported.
    """
    nodes, refs, anchors, ids = _subschemas(schema)
    problems: list[tuple[str, str]] = []
    targets: dict[str, str] = {}
    for where, ref in refs:
        target, why = _resolve(schema, ref, anchors, ids)
        if why is not None:
            problems.append((where or "/", why))
        elif target is not None:
            targets[where] = target
    if problems or ids:
        return problems[:_MAX_REFERENCE_PROBLEMS]
    loop = _loop(nodes, targets)
    if loop is not None:
        problems.append(
            (
                loop or "/",
                (
                    f"$ref {_ref_at(refs, loop)!r} leads back here without descending into the "
                    "input, so validating anything against it would never end"
                ),
            )
        )
    return problems


def _ref_at(refs: list[tuple[str, str]], where: str) -> str:
    """The ``$ref`` found at ``where``."""
    return next(ref for at, ref in refs if at == where)


def _subschemas(
    schema: Mapping[str, Any],
) -> tuple[dict[str, list[str]], list[tuple[str, str]], dict[str, str], set[str]]:
    """Each subschema's pointer with its same-instance children; the refs; anchors; nested ids."""
    nodes: dict[str, list[str]] = {}
    refs: list[tuple[str, str]] = []
    anchors: dict[str, str] = {}
    ids: set[str] = set()
    stack: list[tuple[str, object]] = [("", schema)]
    while stack:
        where, node = stack.pop()
        if not isinstance(node, dict):
            continue
        children = nodes[where] = []
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                refs.append((where, value))
            elif key in ("$anchor", "$dynamicAnchor") and isinstance(value, str):
                anchors.setdefault(value, where)
            elif key == "$id" and isinstance(value, str) and where:
                ids.add(value)
            for at, member, same_instance in _members(f"{where}/{_escape(key)}", key, value):
                stack.append((at, member))
                if same_instance:
                    children.append(at)
    return nodes, refs, anchors, ids


def _members(head: str, key: str, value: object) -> list[tuple[str, object, bool]]:
    """The subschemas a keyword holds: each one's pointer, itself, and if it is same-instance."""
    if isinstance(value, dict) and key in _ONE:
        return [(head, value, _ONE[key])]
    if isinstance(value, dict) and key in _MAP:
        return [(f"{head}/{_escape(name)}", item, _MAP[key]) for name, item in value.items()]
    if isinstance(value, list) and key in _LIST:
        return [(f"{head}/{index}", item, _LIST[key]) for index, item in enumerate(value)]
    return []


def _escape(token: object) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def _resolve(
    schema: Mapping[str, Any], ref: str, anchors: Mapping[str, str], ids: set[str]
) -> tuple[str | None, str | None]:
    """Where ``ref`` leads (a pointer), or why it cannot be followed."""
    from urllib.parse import unquote  # noqa: PLC0415 -- only schemas with references need it

    own = schema.get("$id")
    if isinstance(own, str) and own and ref.startswith(own.split("#")[0]):
        ref = ref[len(own.split("#")[0]) :]
    if not ref.startswith("#") and ref:
        if ref.split("#")[0] in ids:
            return None, None  # an embedded document: left to the validator
        return None, (
            f"$ref {ref!r} refers to another document, which is never fetched; put what it "
            "refers to under $defs and refer to it as '#/$defs/...'"
        )
    fragment = unquote(ref[1:])
    if fragment and not fragment.startswith("/"):
        found = anchors.get(fragment)
        if found is None:
            return None, f"$ref {ref!r} names an anchor the schema does not declare"
        return found, None
    return _pointer(schema, ref, fragment.split("/")[1:] if fragment else [])


def _pointer(
    schema: Mapping[str, Any], ref: str, tokens: list[str]
) -> tuple[str | None, str | None]:
    """The subschema at the JSON pointer ``tokens`` (as a pointer), or why there is none."""
    node: object = schema
    names = [token.replace("~1", "/").replace("~0", "~") for token in tokens]
    for name in names:
        if isinstance(node, dict) and name in node:
            node = node[name]
        elif isinstance(node, list) and name.isdigit() and int(name) < len(node):
            node = node[int(name)]
        else:
            return None, f"$ref {ref!r} points at nothing in the schema"
    if not isinstance(node, dict | bool):
        return None, f"$ref {ref!r} points at something that is not a schema"
    return "".join(f"/{_escape(name)}" for name in names), None


def _loop(nodes: Mapping[str, list[str]], targets: Mapping[str, str]) -> str | None:
    """A subschema with a ``$ref`` on a same-instance cycle, if there is one."""
    done: set[str] = set()
    for start in nodes:
        if start in done:
            continue
        path: list[str] = []
        on_path: set[str] = set()
        stack: list[tuple[str, bool]] = [(start, False)]
        while stack:
            node, leaving = stack.pop()
            if leaving:
                on_path.discard(node)
                path.pop()
                done.add(node)
                continue
            if node in done:
                continue
            if node in on_path:
                return next((at for at in path[path.index(node) :] if at in targets), node)
            on_path.add(node)
            path.append(node)
            stack.append((node, True))
            following = list(nodes.get(node, ()))
            if node in targets:
                following.append(targets[node])
            stack.extend((child, False) for child in following)
    return None


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
