"""The whole catalogue of any registry as one collection, from the catalogue and resolver roles.

The reference ``Registry`` can hand its effective collection over directly (``elements()``); a
third-party registry need only list and resolve. Every listed definition is resolved by its own
key (tools and prompts by name, resources by URI, templates through ``get(ref)`` when the
registry has it, else through ``get_resource`` of URIs the template expands to), and the element
found must carry
exactly the listed definition: a registry whose resolver disagrees with its catalogue is told so
rather than dumped half right.
"""

from __future__ import annotations

from mcp_core.elements import Definition, Element, ElementCollection, ElementKind, ResourceTemplate
from mcp_core.errors import ElementNotFoundError
from mcp_core.registry._protocols import (
    CatalogCollection,
    ElementAtRef,
    ElementCatalog,
    ElementResolver,
)

__all__ = ["collect"]


async def collect(catalog: ElementCatalog, resolver: ElementResolver) -> ElementCollection:
    """Every listed element, resolved, in catalogue order (tools, resources, templates, prompts).

    A registry with ``elements()`` (:class:`CatalogCollection`, the reference ``Registry``)
    answers directly.

    Raises:
        ElementNotFoundError: a listed definition does not resolve, or resolves to another
            definition (the registry breaks ``registry.resolver-agrees``).
    """
    if isinstance(catalog, CatalogCollection):
        collection = await catalog.elements()
        if isinstance(collection, ElementCollection):
            return collection

    async def resolve(definition: Definition) -> Element | None:
        ref = definition.ref
        if ref.kind is ElementKind.TOOL:
            return await resolver.get_tool(ref.key)
        if ref.kind is ElementKind.PROMPT:
            return await resolver.get_prompt(ref.key)
        if ref.kind is ElementKind.RESOURCE_TEMPLATE:
            if isinstance(resolver, ElementAtRef):
                return await resolver.get(ref)
            return await _template_by_uri(resolver, definition)
        resolved = await resolver.get_resource(ref.key)
        return resolved.element if resolved is not None else None

    found: list[Element] = []
    listed: list[Definition] = [
        *await catalog.tools(),
        *await catalog.resources(),
        *await catalog.resource_templates(),
        *await catalog.prompts(),
    ]
    for definition in listed:
        element = await resolve(definition)
        if element is None or element.definition != definition:
            what = "nothing" if element is None else f"{element.ref}, with another definition"
            raise ElementNotFoundError(
                f"{definition.ref} is listed, but resolving it gives {what}: the registry's "
                "resolver disagrees with its catalogue (law registry.resolver-agrees)",
                ref=definition.ref,
            )
        found.append(element)
    return ElementCollection(found)


async def _template_by_uri(resolver: ElementResolver, definition: Definition) -> Element | None:
    """The template element, reached through URIs it expands to (a few, in case one is taken)."""
    if not isinstance(definition, ResourceTemplate):
        return None
    template = definition.template
    for value in ("x", "mcp-core-probe", "0"):
        uri = template.expand(dict.fromkeys(template.variables, value))
        resolved = await resolver.get_resource(uri)
        if resolved is not None and resolved.element.ref == definition.ref:
            return resolved.element
    return None
