"""What a line's braces and words are once its strings and its comment are set aside: shared by the
parser's item-wise cut (``parser.parse_by_item``) and the language server's reading of a document
that does not parse yet (``lsp/context.py``)."""

from __future__ import annotations


def code_of(line: str) -> tuple[str, bool]:
    """The characters of ``line`` outside its strings (quotes included) and before its ``#`` comment,
    and whether a string is still open at the line's end (a string never spans lines)."""
    out: list[str] = []
    in_string = False
    i = 0
    while i < len(line):
        ch = line[i]
        if in_string:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "#":
            break
        else:
            out.append(ch)
        i += 1
    return "".join(out), in_string
