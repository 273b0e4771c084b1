"""Handlers: the protocols, functions as handlers, content values, and the Invoker.

- Protocols a framework implements when a handler must be an object: :class:`ToolHandler`,
  :class:`ResourceHandler`, :class:`ResourceTemplateHandler`, :class:`PromptHandler`, plus
  :class:`ArgumentFilter`, :class:`CompletionProvider`, and the seams :class:`ClientGateway` and
  :class:`Container`.
- Functions as elements: the marking decorators :func:`tool`, :func:`resource`,
  :func:`resource_template`, :func:`prompt`, :func:`completion`, and the eager derivations
  ``*_from_function``.
- What handlers return: :class:`Text`, :class:`Image`, :class:`Audio`,
  :class:`EmbeddedResource`, :class:`ResourceLink`, :class:`Message`, :class:`ToolResult`, and
  the ``normalize_*`` functions that turn any accepted return value into its wire shape.
- :func:`register_injection`: the hook through which other layers have parameters of their own
  types injected instead of published (the server layer registers the official SDK's
  ``Context``).
- :class:`Invoker`: what the server calls to run an element; :func:`escapes` says which
  exceptions a call may not contain, :func:`on_purpose` which ones a handler raised on purpose
  (:func:`from_user_frame` logs the others from the user's frame), :func:`unencodable` whether a
  result can be sent.
- :class:`Admission` and :class:`ElementLimits`: what an element must satisfy to enter a
  catalogue (valid schemas, bounded nesting and size), checked once per element.

Test doubles live in :mod:`mcp_core.handlers.testing`.
"""

from mcp_core.handlers._admission import Admission, ElementLimits
from mcp_core.handlers._containment import Failure, escapes
from mcp_core.handlers._content import (
    Audio,
    Content,
    EmbeddedResource,
    Image,
    Message,
    ResourceLink,
    Role,
    Text,
    ToolResult,
)
from mcp_core.handlers._decorators import completion, prompt, resource, resource_template, tool
from mcp_core.handlers._derive import (
    prompt_from_function,
    resource_from_function,
    resource_template_from_function,
    tool_from_function,
)
from mcp_core.handlers._encodable import MAX_RESULT_DEPTH
from mcp_core.handlers._functions import RequestedUri
from mcp_core.handlers._injection import register_injection
from mcp_core.handlers._invoker import HandlerTimeout, Invoker
from mcp_core.handlers._plan import validate_handler
from mcp_core.handlers._protocols import (
    ArgumentFilter,
    ClientGateway,
    CompletionProvider,
    Container,
    LogLevel,
    PromptHandler,
    ResourceHandler,
    ResourceTemplateHandler,
    ToolHandler,
)

__all__ = [
    "MAX_RESULT_DEPTH",
    "Admission",
    "ArgumentFilter",
    "Audio",
    "ClientGateway",
    "CompletionProvider",
    "Container",
    "Content",
    "ElementLimits",
    "EmbeddedResource",
    "Failure",
    "HandlerTimeout",
    "Image",
    "Invoker",
    "LogLevel",
    "Message",
    "PromptHandler",
    "RequestedUri",
    "ResourceHandler",
    "ResourceLink",
    "ResourceTemplateHandler",
    "Role",
    "Text",
    "ToolHandler",
    "ToolResult",
    "completion",
    "escapes",
    "prompt",
    "prompt_from_function",
    "register_injection",
    "resource",
    "resource_from_function",
    "resource_template",
    "resource_template_from_function",
    "tool",
    "tool_from_function",
    "validate_handler",
]
