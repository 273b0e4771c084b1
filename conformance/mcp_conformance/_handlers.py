"""Real handlers, one per kind, that the kit's generated elements name by reference.

Generated elements carry ``HandlerRef("mcp_conformance._handlers:tool")`` and the like rather than
made-up import paths, so a registry whose validator resolves references (and checks that each
handler fits its definition's kind) accepts every element the kit means to be valid.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Final, final

from mcp_core.elements import ElementKind

__all__ = [
    "COMPLETION_PATH",
    "HANDLER_PATHS",
    "complete",
    "completed",
    "other_prompt",
    "other_resource",
    "other_resource_template",
    "other_tool",
    "prompt",
    "resource",
    "resource_template",
    "template_text",
    "tool",
]


@final
class _Tool:
    """A ToolHandler."""

    async def execute(self, arguments: Mapping[str, object], gateway: object) -> object:  # noqa: ARG002 -- the protocol's signature
        """Echo the arguments."""
        return dict(arguments)


@final
class _Resource:
    """A ResourceHandler."""

    async def read(self, uri: str, gateway: object) -> object:  # noqa: ARG002 -- the protocol's signature
        """The URI as text."""
        return uri


@final
class _ResourceTemplate:
    """A ResourceTemplateHandler."""

    async def read(self, uri: str, variables: Mapping[str, str], gateway: object) -> object:  # noqa: ARG002 -- the protocol's signature
        """The URI and the variables it was matched with, as text: which template answered shows."""
        return template_text(uri, variables)


def template_text(uri: str, variables: Mapping[str, str]) -> str:
    """What the kit's template handlers answer for ``uri`` matched with ``variables``."""
    return f"{uri} {json.dumps(dict(sorted(variables.items())), ensure_ascii=False)}"


@final
class _Prompt:
    """A PromptHandler."""

    async def get(self, arguments: Mapping[str, str], gateway: object) -> object:  # noqa: ARG002 -- the protocol's signature
        """One message echoing the arguments."""
        return f"{dict(arguments)}"


@final
class _Completion:
    """A CompletionProvider."""

    async def complete(
        self,
        value: str,
        context: Mapping[str, str],
        gateway: object,  # noqa: ARG002 -- the protocol's signature
    ) -> Sequence[str]:
        """The partial value itself, then ``name=value`` for each context argument, sorted.

        So a completion's answer shows what the provider was given (``server.answers``).
        """
        return completed(value, context)


def completed(value: str, context: Mapping[str, str]) -> list[str]:
    """What the kit's completion provider answers for ``value`` in ``context``."""
    return [value, *(f"{name}={given}" for name, given in sorted(context.items()))]


tool = _Tool()
other_tool = _Tool()
resource = _Resource()
other_resource = _Resource()
resource_template = _ResourceTemplate()
other_resource_template = _ResourceTemplate()
prompt = _Prompt()
other_prompt = _Prompt()
complete = _Completion()

HANDLER_PATHS: Final[dict[ElementKind, tuple[str, str]]] = {
    ElementKind.TOOL: (f"{__name__}:tool", f"{__name__}:other_tool"),
    ElementKind.RESOURCE: (f"{__name__}:resource", f"{__name__}:other_resource"),
    ElementKind.RESOURCE_TEMPLATE: (
        f"{__name__}:resource_template",
        f"{__name__}:other_resource_template",
    ),
    ElementKind.PROMPT: (f"{__name__}:prompt", f"{__name__}:other_prompt"),
}
"""Two import paths per kind, so generated elements differ in their handlers too."""

COMPLETION_PATH: Final = f"{__name__}:complete"
