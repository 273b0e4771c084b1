"""DependencyInjectorContainer: dependency-injector providers as handler services, by path or class."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from dependency_injector import containers, providers

from mcp_core.elements import Element, HandlerRef, Tool
from mcp_core.errors import HandlerResolutionError
from mcp_core.handlers import ClientGateway, Invoker
from mcp_core.handlers.containers import DependencyInjectorContainer
from mcp_core.handlers.testing import RecordingGateway


class Repository:
    """A dependency of the service."""

    def __init__(self) -> None:
        self.rows = {1: "Dune"}


class Operations:
    """One service for many tools: it answers with the tool's name and a row."""

    def __init__(self, repository: Repository) -> None:
        self.repository = repository

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:
        """Name the operation and read a row."""
        return f"{gateway.element.ref.key}: {self.repository.rows[arguments['id']]}"


async def make_awaitable() -> str:
    """An async factory: it cannot serve a synchronous lookup."""
    return "never"


class Api(containers.DeclarativeContainer):
    """The API's providers."""

    repository = providers.Singleton(Repository)
    operations = providers.Singleton(Operations, repository=repository)
    twice = providers.Factory(Repository)
    later = providers.Coroutine(make_awaitable)


class Services(containers.DeclarativeContainer):
    """The application's container, with the API mounted."""

    api = providers.Container(Api)
    repository = providers.Singleton(Repository)


def test_ids_are_provider_paths_and_classes_their_one_provider() -> None:
    """Dotted paths reach mounted containers; a class made by two providers is not guessed."""
    adapter = DependencyInjectorContainer(Services())
    assert adapter.has("api.operations")
    assert adapter.has("repository")
    assert not adapter.has("operations")
    assert not adapter.has("api")
    service = adapter.get("api.operations")
    assert isinstance(service, Operations)
    assert adapter.get("api.operations") is service  # a Singleton stays one
    assert adapter.has(f"{__name__}:Operations")
    assert adapter.get(f"{__name__}.Operations") is service
    # Repository is made by three providers (two Singletons, one Factory): ambiguous.
    assert not adapter.has(f"{__name__}:Repository")


def test_refusals_name_the_id_and_the_fix() -> None:
    """An unknown id lists the known ones; an awaitable provider is refused, not leaked."""
    adapter = DependencyInjectorContainer(Services())
    with pytest.raises(HandlerResolutionError, match=r"no provider 'nope'; known providers: api\."):
        adapter.get("nope")
    with pytest.raises(HandlerResolutionError, match="made an awaitable"):
        adapter.get("api.later")
    with pytest.raises(TypeError, match="dependency-injector container instance"):
        DependencyInjectorContainer(Services)  # type: ignore[arg-type]  # the class, not an instance


async def test_one_service_serves_every_tool_through_the_invoker() -> None:
    """HandlerRef('api.operations') on two tools: one service, built with its dependency."""
    invoker = Invoker(container=DependencyInjectorContainer(Services()))
    schema = {"type": "object", "properties": {"id": {"type": "integer"}}}
    results = []
    for name in ("book_get", "book_show"):
        element = Element(
            definition=Tool(name=name, input_schema=schema), handler=HandlerRef("api.operations")
        )
        result = await invoker.call_tool(element, {"id": 1}, RecordingGateway(element=element))
        results.append(result["content"][0]["text"])
    assert results == ["book_get: Dune", "book_show: Dune"]
