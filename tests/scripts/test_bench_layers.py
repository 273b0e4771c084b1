"""bench/_layers.py: a sample is charged to the innermost frame of a named layer."""

from __future__ import annotations

from bench import _layers

_ENTRY = "Starlette.__call__ (starlette/applications.py:96)"
_RUNNER = "serve_one (mcp/server/runner.py:836)"
_HANDLER = "RequestHandlers.call_tool (mcp_core/server/_requests.py:259)"


def _line(count: int, *frames: str) -> str:
    return ";".join(frames) + f" {count}"


def test_general_purpose_code_is_charged_to_its_caller() -> None:
    """A pydantic call under the SDK is the SDK's; json under mcp-core is mcp-core's; a loop is its own."""
    lines = [
        _line(3, _ENTRY, _RUNNER, "BaseModel.model_validate (pydantic/main.py:792)"),
        _line(1, _ENTRY, _RUNNER, _HANDLER, "dumps (json/__init__.py:231)"),
        _line(1, "BaseEventLoop._run_once (asyncio/base_events.py:1922)"),
    ]
    shares = _layers.layer_shares(lines)
    assert shares == {
        "SDK kernel (runner, middleware, OTel span, validation, serialization)": 0.6,
        "mcp-core handlers (resolve, visibility, invoke, result)": 0.2,
        "event loop (tasks, callbacks, socket calls)": 0.2,
    }


def test_focus_keeps_only_the_samples_through_a_frame() -> None:
    """Samples outside the request's handling (idle polling, start-up) are left out."""
    lines = [
        _line(2, _ENTRY, _RUNNER),
        _line(5, "BaseEventLoop._run_once (asyncio/base_events.py:1922)"),
        "not a sample line",
    ]
    assert _layers.layer_shares(lines, focus="Starlette.__call__") == {
        "SDK kernel (runner, middleware, OTel span, validation, serialization)": 1.0
    }


def test_a_stack_without_a_layer_is_unattributed() -> None:
    """Nothing on the stack belongs to a layer: counted apart, not dropped."""
    assert _layers.layer_shares([_line(1, "f (somewhere/else.py:1)")]) == {_layers.OTHER: 1.0}
