"""Search figures: the tool index at 10k and 100k tools, and a pure-Python BM25 library beside it.

    python bench/search.py                 # 10k and 100k, each size in a fresh process
    python bench/search.py --sizes 2000    # any sizes
    python bench/search.py --smoke         # 1k, a few queries; CI keeps it working

For each size, in a fresh process (``bench/tool_catalogue.py`` catalogue, split over ten
sources as a gateway of ten servers would be):

- **build**: a new :class:`~mcp_core.search.ToolIndex` reading the loaded registry: seconds, and
  the process's resident memory before and after (SQLite's pages and the index's rows);
- **query**: 200 natural queries ("send email in slack"), top 8, latency p50/p99: with no
  visibility rule, and with a rule hiding half the tools (the index then ranks over the other
  half, asking the rule about every tool);
- **update**: one of the ten sources reloads with 100 of its tools changed, then with all of
  them replaced: the registry's reload, then the index's refresh (rows rewritten for that
  source only);
- **bm25s** (a maintained BM25 library on NumPy/SciPy) over the same words: index build, memory
  and top-8 query latency over the whole catalogue; and the build over the visible half, which
  is what it would cost per session to rank over what a session may see.

The report is printed and written into ``docs/benchmarks.md`` between the ``search:begin`` and
``search:end`` markers. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import random
import statistics
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.tool_catalogue import ACTIONS, OBJECTS, collection, systems  # noqa: E402
from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef, Tool  # noqa: E402
from mcp_core.registry import Registry  # noqa: E402
from mcp_core.search import Fields, ToolIndex  # noqa: E402
from mcp_core.visibility import ALWAYS, SessionInfo, predicate  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- search:begin -->", "<!-- search:end -->"
PARTS = 10


def _rss() -> int:
    """Resident memory of this process, in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


class _Part:
    """One of the ten sources: its collection can be replaced, then reloaded."""

    def __init__(self, elements: ElementCollection) -> None:
        self.collection = elements

    def kinds(self) -> ElementKind:
        return ElementKind.TOOL

    async def provide(self) -> ElementCollection:
        return self.collection


def _queries(size: int, count: int) -> list[str]:
    pick = random.Random(7)  # noqa: S311 -- the same queries every run, not a secret
    names = systems(size)
    return [
        f"{pick.choice(ACTIONS)[0]} {pick.choice(OBJECTS).replace('_', ' ')} in {pick.choice(names)}"
        for _ in range(count)
    ]


def _quantiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": statistics.median(ordered) * 1000,
        "p99_ms": ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))] * 1000,
    }


def _half(ref: ElementRef, session: SessionInfo) -> bool:  # noqa: ARG001 -- a rule's signature
    return zlib.crc32(ref.key.encode()) % 2 == 0


def _edited(element: Element, note: str) -> Element:
    tool = element.definition
    if not isinstance(tool, Tool):
        raise TypeError(f"only tools are edited, got {element.ref}")
    changed = Tool(
        name=tool.name,
        title=tool.title,
        description=f"{tool.description} {note}",
        input_schema=tool.input_schema,
    )
    return Element(definition=changed, handler=element.handler)


async def _measure(size: int, queries: int) -> dict[str, Any]:
    catalogue = list(collection(size))
    step = -(-size // PARTS)
    parts = [_Part(ElementCollection(catalogue[i : i + step])) for i in range(0, size, step)]
    registry = Registry([(part, 0) for part in parts], validator=None)
    await registry.load()
    session = SessionInfo(session_id="bench")
    figures: dict[str, Any] = {"size": size}

    gc.collect()
    before = _rss()
    started = time.perf_counter()
    index = ToolIndex(registry)
    await index.refresh()
    figures["build_s"] = time.perf_counter() - started
    gc.collect()
    figures["build_mb"] = (_rss() - before) / 2**20

    asked = _queries(size, queries)
    for label, rule in (("all", ALWAYS), ("half", predicate(_half))):
        samples = []
        for query in asked:
            started = time.perf_counter()
            await index.search(query, session, rule)
            samples.append(time.perf_counter() - started)
        figures[f"query_{label}"] = _quantiles(samples)

    part = parts[len(parts) // 2]
    for label, count in (("update_100", 100), ("update_all", len(part.collection))):
        elements = list(part.collection)
        part.collection = ElementCollection(
            [_edited(e, label) if i < count else e for i, e in enumerate(elements)]
        )
        started = time.perf_counter()
        await registry.reload(part)
        reloaded = time.perf_counter()
        await index.refresh()
        figures[label] = {
            "tools": count,
            "reload_ms": (reloaded - started) * 1000,
            "index_ms": (time.perf_counter() - reloaded) * 1000,
        }
    figures["bm25s"] = _bm25s(catalogue, asked, session)
    index.close()
    return figures


def _bm25s(catalogue: list[Element], asked: list[str], session: SessionInfo) -> dict[str, Any]:
    try:
        bm25s: Any = importlib.import_module("bm25s")
    except ImportError:
        return {"missing": True}
    from mcp_core.search import query_terms  # noqa: PLC0415 -- beside the import it serves

    corpus = [[w for column in Fields.of(e).columns for w in column] for e in catalogue]
    gc.collect()
    before = _rss()
    started = time.perf_counter()
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    figures: dict[str, Any] = {"build_s": time.perf_counter() - started}
    gc.collect()
    figures["build_mb"] = (_rss() - before) / 2**20
    samples = []
    for query in asked:
        terms = list(query_terms(query))
        started = time.perf_counter()
        retriever.retrieve([terms], k=8, show_progress=False)
        samples.append(time.perf_counter() - started)
    figures["query_all"] = _quantiles(samples)
    visible = [words for e, words in zip(catalogue, corpus, strict=True) if _half(e.ref, session)]
    started = time.perf_counter()
    bm25s.BM25().index(visible, show_progress=False)
    figures["build_visible_half_s"] = time.perf_counter() - started
    return figures


def _report(results: list[dict[str, Any]]) -> str:
    lines = [
        (
            "| tools | index build | memory | query p50 / p99, no rule | query p50 / p99, half "
            "hidden | one source reloads: 100 tools changed | all its tools changed |"
        ),
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        q, h, u1, u2 = r["query_all"], r["query_half"], r["update_100"], r["update_all"]
        lines.append(
            f"| {r['size']:,} | {r['build_s']:.2f} s | {r['build_mb']:.0f} MB "
            f"| {q['p50_ms']:.1f} / {q['p99_ms']:.1f} ms | {h['p50_ms']:.1f} / {h['p99_ms']:.1f} ms "
            f"| {u1['index_ms']:.0f} ms (reload {u1['reload_ms']:.0f} ms) "
            f"| {u2['index_ms']:.0f} ms for {u2['tools']:,} tools (reload {u2['reload_ms']:.0f} ms) |"
        )
    lines += [
        "",
        "bm25s over the same words (whole catalogue, no visibility):",
        "",
        "| tools | index build | memory | query p50 / p99 | build over the visible half |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        b = r["bm25s"]
        if b.get("missing"):
            lines.append(f"| {r['size']:,} | not installed | | | |")
            continue
        q = b["query_all"]
        lines.append(
            f"| {r['size']:,} | {b['build_s']:.2f} s | {b['build_mb']:.0f} MB "
            f"| {q['p50_ms']:.1f} / {q['p99_ms']:.1f} ms | {b['build_visible_half_s']:.2f} s |"
        )
    return "\n".join(lines)


def _write(report: str) -> None:
    text = DOC.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{DOC} has no {BEGIN} ... {END} markers to write between")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{BEGIN}\n{report}\n{END}{tail}")


def main() -> None:
    """Measure each size in a fresh process, print the report, write it into the docs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--smoke", action="store_true", help="1k tools, 10 queries, no doc")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.one is not None:
        print(json.dumps(anyio.run(_measure, options.one, options.queries)))
        return
    sizes = [1000] if options.smoke else [int(s) for s in options.sizes.split(",")]
    queries = 10 if options.smoke else options.queries
    results = []
    for size in sizes:
        out = subprocess.run(
            [sys.executable, __file__, "--one", str(size), "--queries", str(queries)],
            check=True,
            capture_output=True,
            text=True,
        )
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    report = _report(results)
    print(report)
    if not options.smoke:
        _write(report)


if __name__ == "__main__":
    main()
