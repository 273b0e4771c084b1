"""CollectionFileSource: a dumped collection read back."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcp_core.elements._collection as collection_module
from mcp_core.elements import COLLECTION_VERSION, ElementCollection, ElementKind, ElementRef
from mcp_core.errors import CollectionFormatError, SourceError, SourceUnavailableError
from mcp_core.registry import Registry
from mcp_core.sources import CollectionFileSource
from tests.strategies import prompt_element, template_element, tool_element

COLLECTION = ElementCollection([tool_element("a"), template_element(), prompt_element("p")])


def dump(path: Path, collection: ElementCollection = COLLECTION) -> Path:
    """Write ``collection`` to ``path`` the way a build step does."""
    path.write_text(collection.to_json(indent=2), encoding="utf-8")
    return path


class TestCollectionFileSource:
    """CollectionFileSource round-trips dumps and reports unusable files clearly."""

    async def test_round_trips_a_dumped_collection(self, tmp_path: Path) -> None:
        """provide() returns a collection equal to the one dumped."""
        source = CollectionFileSource(dump(tmp_path / "elements.json"))
        assert await source.provide() == COLLECTION

    def test_kinds_come_from_the_file(self, tmp_path: Path) -> None:
        """Without declared kinds, kinds() is the union of the kinds recorded in the file."""
        source = CollectionFileSource(dump(tmp_path / "elements.json"))
        assert (
            source.kinds() == ElementKind.TOOL | ElementKind.RESOURCE_TEMPLATE | ElementKind.PROMPT
        )

    def test_kinds_follow_a_rewritten_file(self, tmp_path: Path) -> None:
        """kinds() is cached per file version: rewriting the file changes the answer."""
        path = dump(tmp_path / "elements.json")
        source = CollectionFileSource(path)
        assert ElementKind.PROMPT in source.kinds()
        dump(path, ElementCollection([tool_element("only")]))
        os.utime(path, ns=(0, 1))  # a different mtime even on coarse-grained file systems
        assert source.kinds() == ElementKind.TOOL

    def test_declared_kinds_win_without_reading(self, tmp_path: Path) -> None:
        """Declared kinds are answered as is, even before the file exists."""
        source = CollectionFileSource(tmp_path / "later.json", kinds=ElementKind.TOOL)
        assert source.kinds() == ElementKind.TOOL

    async def test_one_invalid_entry_costs_only_itself(self, tmp_path: Path) -> None:
        """A bad name, a malformed template, garbage and a repeated ref are skipped one by one."""
        document = json.loads(COLLECTION.to_json())
        records = document["elements"]
        bad_name = json.loads(json.dumps(records[0]))
        bad_name["definition"]["name"] = "bad name!"
        bad_template = json.loads(json.dumps(records[1]))
        bad_template["definition"]["uriTemplate"] = "app://items/{id"
        repeated = json.loads(json.dumps(records[0]))
        document["elements"] = [bad_name, *records, bad_template, 42, repeated]
        path = tmp_path / "elements.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        source = CollectionFileSource(path)
        assert await source.provide() == COLLECTION
        found = [(d.kind, str(d.ref), d.message.split(" is ")[0]) for d in source.diagnostics()]
        assert found == [
            ("skipped", "tool 'bad name!'", "collection element #0"),
            ("skipped", "resource_template 'app://items/{id'", "collection element #4"),
            ("skipped", "None", "collection element #5"),
            (
                "skipped",
                "tool 'a'",
                "collection element #6 repeats tool 'a' of element #1; the first",
            ),
        ]
        assert all(
            d.message.endswith("fix or remove that entry, or re-dump the file")
            for d in source.diagnostics()
        )
        path.write_text(COLLECTION.to_json(), encoding="utf-8")
        await source.provide()
        assert source.diagnostics() == ()

    def test_unreadable_files_advertise_nothing(self, tmp_path: Path) -> None:
        """A missing, corrupt or future-version file advertises NONE: it can provide nothing."""
        (tmp_path / "corrupt.json").write_text("{not json", encoding="utf-8")
        future = json.loads(COLLECTION.to_json())
        future["version"] = COLLECTION_VERSION + 1
        (tmp_path / "future.json").write_text(json.dumps(future), encoding="utf-8")
        for name in ("missing.json", "corrupt.json", "future.json"):
            assert CollectionFileSource(tmp_path / name).kinds() == ElementKind.NONE

    async def test_a_missing_file_is_a_source_error(self, tmp_path: Path) -> None:
        """A missing file raises SourceError (not unavailable) naming the path, from the OSError."""
        path = tmp_path / "missing.json"
        source = CollectionFileSource(path)
        with pytest.raises(SourceError, match="cannot read collection file") as info:
            await source.provide()
        assert not isinstance(info.value, SourceUnavailableError)
        assert str(path) in str(info.value)
        assert info.value.source is source
        assert isinstance(info.value.__cause__, FileNotFoundError)

    async def test_a_corrupt_file_is_a_source_error(self, tmp_path: Path) -> None:
        """A corrupt file raises SourceError naming the path, caused by a CollectionFormatError."""
        path = tmp_path / "elements.json"
        path.write_text(COLLECTION.to_json()[:-10], encoding="utf-8")
        with pytest.raises(SourceError, match="is not usable: collection JSON is corrupt") as info:
            await CollectionFileSource(path).provide()
        assert str(path) in str(info.value)
        assert isinstance(info.value.__cause__, CollectionFormatError)

    async def test_a_future_version_is_a_source_error(self, tmp_path: Path) -> None:
        """A file from a newer format version says so, and how to fix it."""
        document = json.loads(COLLECTION.to_json())
        document["version"] = COLLECTION_VERSION + 1
        path = tmp_path / "elements.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        with pytest.raises(SourceError, match="newer than this mcp-core understands") as info:
            await CollectionFileSource(path).provide()
        assert isinstance(info.value.__cause__, CollectionFormatError)

    async def test_content_outside_declared_kinds_is_rejected(self, tmp_path: Path) -> None:
        """A file holding prompts under kinds=TOOL|RESOURCE_TEMPLATE is a configuration error."""
        path = dump(tmp_path / "elements.json")
        source = CollectionFileSource(path, kinds=ElementKind.TOOL | ElementKind.RESOURCE_TEMPLATE)
        with pytest.raises(SourceError, match="holds prompt elements, outside the declared kinds"):
            await source.provide()

    async def test_relative_paths_are_fixed_at_construction(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A relative path is resolved against the working directory when the source is made."""
        dump(tmp_path / "elements.json")
        monkeypatch.chdir(tmp_path)
        source = CollectionFileSource("elements.json")
        monkeypatch.chdir(tmp_path.parent)
        assert source.path == tmp_path / "elements.json"
        assert await source.provide() == COLLECTION

    def test_repr_shows_path_and_kinds(self, tmp_path: Path) -> None:
        """The repr names the path and any declared kinds."""
        path = tmp_path / "elements.json"
        assert repr(CollectionFileSource(path, kinds=ElementKind.TOOL)) == (
            f"CollectionFileSource({str(path)!r}, kinds=tool)"
        )


class TestHostileFile:
    """A file nested deeper than any decoder allows is an unusable file, never a crash."""

    async def test_deep_nesting(self, tmp_path: Path) -> None:
        """kinds() advertises nothing; provide() raises SourceError naming the file and the cause."""
        path = tmp_path / "deep.json"
        path.write_text("[" * 200_000, encoding="utf-8")
        source = CollectionFileSource(path)
        assert source.kinds() == ElementKind.NONE
        with pytest.raises(SourceError, match="nested too deeply") as caught:
            await source.provide()
        assert str(path) in str(caught.value)
        assert isinstance(caught.value.__cause__, CollectionFormatError)


class TestLookup:
    """lookup(ref) builds only the element at ref: the one provide() holds there."""

    @pytest.fixture
    def built(self, monkeypatch: pytest.MonkeyPatch) -> list[object]:
        """Every record the elements layer builds, recorded."""
        seen: list[object] = []
        original = collection_module._element_from_record

        def counting(record: object, schemas: Any) -> Any:
            seen.append(record)
            return original(record, schemas)

        monkeypatch.setattr(collection_module, "_element_from_record", counting)
        return seen

    async def test_builds_one_element(self, tmp_path: Path, built: list[object]) -> None:
        """Looking up one tool of 200 builds that one, equal to provide()'s."""
        many = ElementCollection(tool_element(f"t{i}") for i in range(200))
        source = CollectionFileSource(dump(tmp_path / "many.json", many))
        found = await source.lookup(ElementRef.tool("t150"))
        assert len(built) == 1
        assert found == many.get(ElementRef.tool("t150"))
        assert await source.lookup(ElementRef.tool("missing")) is None
        assert (await source.provide()).get(ElementRef.tool("t150")) == found

    async def test_agrees_on_bad_and_repeated_records(self, tmp_path: Path) -> None:
        """An invalid record is passed over for a later valid one; a repeated valid ref keeps the first."""
        document = json.loads(ElementCollection([tool_element("a"), tool_element("b")]).to_json())
        broken = json.loads(json.dumps(document["elements"][0]))
        broken["definition"]["title"] = 7  # not a string: the record is invalid
        later_a = json.loads(json.dumps(document["elements"][0]))
        later_a["definition"]["description"] = "the second a"
        first_b = document["elements"][1]
        second_b = json.loads(json.dumps(first_b))
        second_b["definition"]["description"] = "the second b"
        document["elements"] = [broken, first_b, later_a, second_b]
        path = tmp_path / "odd.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        source = CollectionFileSource(path)
        provided = await CollectionFileSource(path).provide()
        for name in ("a", "b", "c"):
            ref = ElementRef.tool(name)
            assert await source.lookup(ref) == provided.get(ref), name
        found = await source.lookup(ElementRef.tool("a"))
        assert found is not None
        assert found.definition.description == "the second a"

    @settings(max_examples=60, deadline=None)
    @given(
        records=st.lists(
            st.tuples(st.sampled_from("abcd"), st.booleans(), st.integers(0, 3)), max_size=12
        ),
        order=st.permutations(list("abcde")),
    )
    def test_lookups_in_any_order_agree_with_provide(
        self, records: list[tuple[str, bool, int]], order: list[str]
    ) -> None:
        """Repeated, invalid and missing refs, looked up in any order (the index grows as asked)."""
        template = json.loads(ElementCollection([tool_element("x")]).to_json())
        elements = []
        for name, valid, version in records:
            record = json.loads(json.dumps(template["elements"][0]))
            record["definition"]["name"] = name
            record["definition"]["description"] = f"version {version}"
            if not valid:
                record["definition"]["title"] = 7  # not a string: the record is invalid
            elements.append(record)
        template["elements"] = elements
        document = collection_module.CollectionDocument.parse(json.dumps(template))
        provided = document.collection(on_invalid=lambda _error: None)
        for name in order:
            ref = ElementRef.tool(name)
            assert document.element(ref) == provided.get(ref), name

    async def test_follows_a_rewritten_file(self, tmp_path: Path) -> None:
        """The parsed file is kept only while the file is unchanged."""
        path = dump(tmp_path / "elements.json")
        source = CollectionFileSource(path)
        assert await source.lookup(ElementRef.tool("a")) is not None
        dump(path, ElementCollection([tool_element("z")]))
        os.utime(path, ns=(0, 1))
        assert await source.lookup(ElementRef.tool("a")) is None
        assert await source.lookup(ElementRef.tool("z")) == tool_element("z")

    async def test_refuses_what_provide_refuses(self, tmp_path: Path) -> None:
        """A missing or corrupt file, or valid elements outside the declared kinds: SourceError."""
        missing = CollectionFileSource(tmp_path / "missing.json")
        with pytest.raises(SourceError, match="cannot read collection file"):
            await missing.lookup(ElementRef.tool("a"))
        corrupt = tmp_path / "corrupt.json"
        corrupt.write_text("{not json", encoding="utf-8")
        with pytest.raises(SourceError, match="not usable"):
            await CollectionFileSource(corrupt).lookup(ElementRef.tool("a"))
        declared = CollectionFileSource(dump(tmp_path / "e.json"), kinds=ElementKind.TOOL)
        with pytest.raises(SourceError, match="outside the declared kinds"):
            await declared.provide()
        with pytest.raises(SourceError, match="outside the declared kinds"):
            await declared.lookup(ElementRef.tool("a"))

    async def test_an_invalid_record_of_another_kind_is_no_refusal(self, tmp_path: Path) -> None:
        """provide() counts only valid elements against declared kinds; so does lookup()."""
        document = json.loads(ElementCollection([tool_element("a")]).to_json())
        document["elements"].append(
            {"kind": "prompt", "definition": {"name": ""}, "handler": "m:f"}
        )
        path = tmp_path / "e.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        source = CollectionFileSource(path, kinds=ElementKind.TOOL)
        assert await source.lookup(ElementRef.tool("a")) == (await source.provide()).get(
            ElementRef.tool("a")
        )

    async def test_a_registry_answers_a_call_from_one_element(
        self, tmp_path: Path, built: list[object]
    ) -> None:
        """Before its first load, a Registry over a 200-tool file resolves a tool by building one."""
        many = ElementCollection(tool_element(f"t{i}") for i in range(200))
        registry = Registry()
        registry.add_source(CollectionFileSource(dump(tmp_path / "many.json", many)))
        assert await registry.get_tool("t7") == many.get(ElementRef.tool("t7"))
        assert len(built) == 1
        assert len(await registry.tools()) == 200
