"""A weather service: an mcp-core app the gateway reaches over streamable HTTP.

    mcp-core run examples/gateway/weather.py --transport http --port 8001

Setting ``WEATHER_ALERTS=1`` serves one more tool, ``alerts`` (a new release of the service).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

import anyio

from mcp_core import App, ClientGateway, Message

app = App("weather", version="2.0.0" if os.environ.get("WEATHER_ALERTS") else "1.0.0")

STATIONS = {"paris": (48.85, 2.35), "oslo": (59.91, 10.75), "lima": (-12.05, -77.04)}


@app.tool
async def forecast(city: str, gateway: ClientGateway, days: int = 3) -> str:
    """Forecast the weather in a city, day by day.

    Args:
        city: One of the stations (paris, oslo, lima).
        gateway: Injected: the channel back to the client.
        days: How many days ahead (1 to 7).
    """
    await gateway.log("info", f"forecasting {city} for {days} days", logger="weather")
    lines = []
    for day in range(1, days + 1):
        await gateway.progress(day, days, f"day {day}")
        await anyio.sleep(0.01)
        lines.append(f"day {day}: {15 + (hash((city, day)) % 10)} C")
    await gateway.log("info", f"{city} done", logger="weather")
    return f"{city}: " + "; ".join(lines)


@app.tool
async def explain(city: str, gateway: ClientGateway) -> str:
    """Ask the client's model to explain the forecast of a city in one sentence.

    Args:
        city: The city.
        gateway: Injected: the channel back to the client.
    """
    answer = await gateway.sample(
        [{"role": "user", "content": {"type": "text", "text": f"Explain the weather in {city}."}}],
        max_tokens=60,
    )
    content = answer.get("content")
    text = content.get("text") if isinstance(content, Mapping) else None
    return f"model says: {text}"


@app.resource("weather://stations", mime_type="application/json")
def stations() -> str:
    """Every station and its coordinates."""
    return json.dumps(STATIONS)


@app.resource_template("weather://city/{name}", mime_type="application/json")
def city(name: str) -> str:
    """One station's coordinates."""
    latitude, longitude = STATIONS.get(name.lower(), (0.0, 0.0))
    return json.dumps({"name": name, "latitude": latitude, "longitude": longitude})


@app.prompt
def briefing(city: str) -> list[Message]:
    """A morning weather briefing for a city.

    Args:
        city: The city.
    """
    return [Message.user(f"Write a two-line weather briefing for {city}.")]


if os.environ.get("WEATHER_ALERTS"):

    @app.tool
    def alerts(city: str) -> str:
        """Weather alerts for a city.

        Args:
            city: The city.
        """
        return f"no alerts for {city}"
