"""`primusc lsp` driven over stdio by a real LSP client (pytest-lsp), on the examples and stdlib.

Waits are hang guards only: each loop ends on what the server sent, never on elapsed time.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp", reason="pytest-lsp is in the `test` extra")
pytest.importorskip("pygls", reason="pygls is in the `lsp` extra")

from lsprotocol import types as lsp  # noqa: E402
from pygls import uris  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "llama3_1_70b_mi325x.prx"
GUARD = 120.0  # seconds before a wait is declared hung (never reached by a working server)


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=[sys.executable, "-m", "primus_lang.cli", "lsp"]))
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    caps = lsp.ClientCapabilities(
        text_document=lsp.TextDocumentClientCapabilities(
            hover=lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.Markdown]),
            completion=lsp.CompletionClientCapabilities(completion_item=lsp.ClientCompletionItemOptions(
                documentation_format=[lsp.MarkupKind.Markdown])),
            publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(code_description_support=True,
                                                                         related_information=True)),
    )
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=caps, root_uri=uris.from_fs_path(str(ROOT))))
    yield
    await lsp_client.shutdown_session()


pytestmark = pytest.mark.asyncio(loop_scope="module")


async def _until(check):  # type: ignore[no-untyped-def]
    """Poll what the client has received until ``check()`` returns something; the guard only
    turns a hang into a failure."""
    async def loop():  # type: ignore[no-untyped-def]
        while True:
            found = check()
            if found is not None:
                return found
            await asyncio.sleep(0.02)

    return await asyncio.wait_for(loop(), GUARD)


def _open(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    uri = uris.from_fs_path(str(path))
    assert uri is not None
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri, "primus", version, path.read_text() if text is None else text)))
    return uri


def _replace(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.diagnostics.pop(uri, None)
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(version, uri), [lsp.TextDocumentContentChangeWholeDocument(text)]))


async def _diagnostics(client: LanguageClient, uri: str) -> list[lsp.Diagnostic]:
    return list(await _until(lambda: client.diagnostics.get(uri)))


def _position(text: str, needle: str, offset: int = 0) -> lsp.Position:
    at = text.index(needle) + offset
    line = text.count("\n", 0, at)
    return lsp.Position(line, at - (text.rfind("\n", 0, at) + 1))


async def test_an_error_shows_at_its_range_and_clears_when_fixed(client: LanguageClient) -> None:
    text = EXAMPLE.read_text()
    uri = _open(client, EXAMPLE, text)
    assert await _diagnostics(client, uri) == []
    broken = text.replace("tp : 1 | 2 | 4 | 8", "tp : 1 | 2 | 4 | 8\n  tpp = 2")
    _replace(client, uri, broken, 2)
    [diag] = await _diagnostics(client, uri)
    assert diag.code == "P2009" or diag.code.startswith("P2")
    start = _position(broken, "tpp")
    assert diag.range.start == start
    assert diag.range.end == lsp.Position(start.line, start.character + 3)
    assert diag.code_description is not None and diag.code_description.href.endswith(str(diag.code))
    assert diag.related_information and "primusc explain" in diag.related_information[0].message
    _replace(client, uri, text, 3)
    assert await _diagnostics(client, uri) == []


async def test_a_near_miss_offers_the_quick_fix_its_help_names(client: LanguageClient) -> None:
    """`maximize tokens_per_gpuu`: the fix writes `tokens_per_gpu` over the misspelt word alone (the
    diagnostic underlines the whole statement), and applying it leaves a document without errors."""
    text = EXAMPLE.read_text()
    uri = _open(client, EXAMPLE, text)
    broken = text.replace("maximize tokens_per_gpu", "maximize tokens_per_gpuu")
    _replace(client, uri, broken, 2)
    [diag] = await _diagnostics(client, uri)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uri), diag.range, lsp.CodeActionContext([diag])))
    assert actions is not None
    [action] = actions
    assert isinstance(action, lsp.CodeAction) and action.kind == lsp.CodeActionKind.QuickFix
    assert action.edit is not None and action.edit.changes is not None
    [edit] = action.edit.changes[uri]
    start = _position(broken, "tokens_per_gpuu")
    assert (edit.range.start, edit.range.end, edit.new_text) == (
        start, lsp.Position(start.line, start.character + len("tokens_per_gpuu")), "tokens_per_gpu")
    rows = broken.split("\n")
    row = rows[start.line]
    rows[start.line] = row[:start.character] + edit.new_text + row[edit.range.end.character:]
    assert "\n".join(rows) == text
    _replace(client, uri, text, 3)
    assert await _diagnostics(client, uri) == []


async def test_hover_on_a_knob_a_field_a_model_and_a_code(client: LanguageClient) -> None:
    text = EXAMPLE.read_text()
    uri = _open(client, EXAMPLE, text)
    await _diagnostics(client, uri)

    async def hover(needle: str, offset: int = 0) -> str:
        found = await client.text_document_hover_async(
            lsp.HoverParams(lsp.TextDocumentIdentifier(uri), _position(text, needle, offset)))
        assert found is not None and isinstance(found.contents, lsp.MarkupContent)
        return found.contents.value

    assert "pipeline-parallel size" in await hover("pp : 1")
    assert "micro-batch size" in await hover("mbs :")
    model = await hover("model = llama3_1_70b", len("model = "))
    assert "models.llama3" in model and "| `hidden` | `8192` |" in model and "resolved" in model
    cluster = await hover("on mi325x_x8", len("on "))
    assert "| `nodes` | `8` |" in cluster
    assert "GEMM precision" in await hover("precision :")


async def test_hover_on_a_space_shows_its_counts(client: LanguageClient) -> None:
    text = EXAMPLE.read_text()
    uri = _open(client, EXAMPLE, text)
    await _diagnostics(client, uri)

    async def lens_done() -> str:
        lenses = await client.text_document_code_lens_async(lsp.CodeLensParams(lsp.TextDocumentIdentifier(uri)))
        title = lenses[0].command.title if lenses and lenses[0].command else ""
        return title

    title = ""
    for _ in range(int(GUARD / 0.05)):
        title = await lens_done()
        if "…" not in title:
            break
        await asyncio.sleep(0.05)
    assert title.startswith("28,728 raw · 5,544 legal · ") and title.endswith(" fitting")
    found = await client.text_document_hover_async(
        lsp.HoverParams(lsp.TextDocumentIdentifier(uri), _position(text, "space llama3", 7)))
    assert found is not None and isinstance(found.contents, lsp.MarkupContent)
    assert "| raw | 28,728 |" in found.contents.value and "| legal | 5,544 |" in found.contents.value


async def test_hover_on_a_diagnostic_explains_its_code(client: LanguageClient, tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("hover") / "bad.prx"
    text = "import clusters.amd (mi325x_x8)\nmodel m { num_layers = 2; hidden = 64 GiB }\n"
    path.write_text(text)
    uri = _open(client, path, text)
    diags = await _diagnostics(client, uri)
    assert diags
    found = await client.text_document_hover_async(
        lsp.HoverParams(lsp.TextDocumentIdentifier(uri), diags[0].range.start))
    assert found is not None and isinstance(found.contents, lsp.MarkupContent)
    assert f"primusc explain {diags[0].code}" in found.contents.value


async def test_completion_of_knobs_values_fields_imports_and_names(client: LanguageClient) -> None:
    text = EXAMPLE.read_text()
    uri = _open(client, EXAMPLE, text)
    await _diagnostics(client, uri)

    async def labels(edited: str, needle: str, offset: int) -> set[str]:
        _replace(client, uri, edited, 100 + len(edited))
        await _diagnostics(client, uri)
        got = await client.text_document_completion_async(
            lsp.CompletionParams(lsp.TextDocumentIdentifier(uri), _position(edited, needle, offset)))
        assert isinstance(got, lsp.CompletionList)
        return {i.label for i in got.items}

    knobs = await labels(text.replace("  cp : 1 | 2\n", "  cp : 1 | 2\n  \n"), "cp : 1 | 2\n  \n", len("cp : 1 | 2\n  "))
    assert {"tp", "pp", "precision", "recompute", "let", "require", "model"} <= knobs
    values = await labels(text.replace("sharding : dist_opt", "sharding : "), "sharding : ", len("sharding : "))
    assert values == {"none", "dist_opt", "fsdp"}
    modules = await labels(text.replace("import models.llama3 (llama3_1_70b)", "import "), "import \n", len("import "))
    assert {"models.llama3", "hardware.amd", "clusters.nvidia"} <= modules
    names = await labels(text.replace("(llama3_1_70b)", "("), "import models.llama3 (", len("import models.llama3 ("))
    assert {"llama3_1_70b", "llama3_1_8b", "*"} <= names
    models = await labels(text.replace("model = llama3_1_70b", "model = "), "model = ", len("model = "))
    assert models == {"llama3_1_70b"}
    edited = text.replace("model = llama3_1_70b", "model = llama3_1_70b { moe {  } }")
    fields = await labels(edited, "moe {  }", len("moe { "))
    assert {"num_experts", "top_k", "shared_experts"} <= fields
    _replace(client, uri, text, 1000)
    await _diagnostics(client, uri)


async def test_definition_goes_into_the_installed_stdlib(client: LanguageClient) -> None:
    from primus_lang.resources import data_dir

    text = EXAMPLE.read_text()
    uri = _open(client, EXAMPLE, text)
    await _diagnostics(client, uri)
    found = await client.text_document_definition_async(
        lsp.DefinitionParams(lsp.TextDocumentIdentifier(uri), _position(text, "model = llama3_1_70b", 9)))
    assert isinstance(found, lsp.Location)
    target = data_dir("stdlib") / "models" / "llama3.prx"
    assert uris.to_fs_path(found.uri) == str(target.resolve())
    line = target.read_text().split("\n")[found.range.start.line]
    assert line[found.range.start.character:].startswith("llama3_1_70b")
    module = await client.text_document_definition_async(
        lsp.DefinitionParams(lsp.TextDocumentIdentifier(uri), _position(text, "clusters.amd", 2)))
    assert isinstance(module, lsp.Location) and module.uri.endswith("clusters/amd.prx")


async def test_formatting_gives_the_formatter_s_text(client: LanguageClient, tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    from primus_lang.syntax.format import format_source

    text = EXAMPLE.read_text()
    messy = text.replace("tp : 1 | 2 | 4 | 8", "tp:1|2|4|8").replace("  gbs = 256", "      gbs=256")
    path = tmp_path_factory.mktemp("fmt") / "messy.prx"
    path.write_text(messy)
    uri = _open(client, path, messy)
    await _diagnostics(client, uri)
    edits = await client.text_document_formatting_async(lsp.DocumentFormattingParams(
        lsp.TextDocumentIdentifier(uri), lsp.FormattingOptions(tab_size=2, insert_spaces=True)))
    assert edits is not None and len(edits) == 1
    assert edits[0].new_text == format_source(messy, str(path)) == text
    assert edits[0].range.start == lsp.Position(0, 0)
    assert edits[0].range.end.line == messy.count("\n")
    uri2 = _open(client, EXAMPLE, text)
    await _diagnostics(client, uri2)
    same = await client.text_document_formatting_async(lsp.DocumentFormattingParams(
        lsp.TextDocumentIdentifier(uri2), lsp.FormattingOptions(tab_size=2, insert_spaces=True)))
    assert same is not None and list(same) == []


async def test_document_symbols_list_definitions_and_axes(client: LanguageClient) -> None:
    uri = _open(client, EXAMPLE)
    await _diagnostics(client, uri)
    found = await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(lsp.TextDocumentIdentifier(uri)))
    assert found is not None
    space = [s for s in found if isinstance(s, lsp.DocumentSymbol) and s.kind == lsp.SymbolKind.Module]
    assert [s.name for s in space] == ["llama3_1_70b_mi325x"]
    assert {"tp", "pp", "precision", "model"} <= {c.name for c in space[0].children or []}


async def test_bad_documents_give_diagnostics_not_a_crash(client: LanguageClient, tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("bad")
    big = "# filler\n" * (10 * 2**20 // 9)
    uri = _open(client, folder / "big.prx", big)
    [diag] = await _diagnostics(client, uri)
    assert diag.code == "P1010"

    nested = "space s on c { model = m " + "{ moe " * 5000 + "}" * 5001 + " }\n"
    uri = _open(client, folder / "nested.prx", nested)
    diags = await _diagnostics(client, uri)
    assert diags and all(str(d.code).startswith("P1") for d in diags)

    deep_expr = "space s on c { require " + "(" * 3000 + "tp" + ")" * 3000 + " }\n"
    uri = _open(client, folder / "deep.prx", deep_expr)
    assert await _diagnostics(client, uri)

    raw = b"model m {\n  num_layers = 2 # caf\xe9\n}\n"
    path = folder / "latin1.prx"
    path.write_bytes(raw)
    # what an editor shows for such a file (U+FFFD for the bad byte), and what JSON carries when
    # a client passes the byte through as a lone surrogate
    for text in (raw.decode("utf-8", "replace"), raw.decode("utf-8", "surrogateescape")):
        uri = _open(client, path, text)
        [diag] = await _diagnostics(client, uri)
        assert diag.code == "P1009"
        assert diag.range.start == lsp.Position(1, raw.split(b"\n")[1].index(b"\xe9"))

    # the server still answers after all of them
    uri = _open(client, EXAMPLE)
    assert await _diagnostics(client, uri) == []
