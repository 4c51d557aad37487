"""The tokenizer of Relay's text format.

Tokens: local names ``%x`` / ``%0``, global names ``@f`` (or ``@"any name"``), numbers with
an optional dtype suffix (``1``, ``-2.5f``, ``3i64``, ``1.5f16``, ``7u8``), strings with JSON
escapes, identifiers (operator names may contain dots: ``nn.conv2d``), punctuation, the
``#[version = "..."]`` header and the ``#[metadata]`` marker, after which the rest of the text
is the metadata section. Comments ``// ...`` and ``/* ... */`` (type comments) are skipped.

Lexical errors (an unknown character, an unterminated string or comment, a bad escape, a
malformed number) are collected as diagnostics; the tokenizer goes on so that every error in
a file is reported at once.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

LOCAL, GLOBAL, NUM, STR, IDENT, PUNCT, VERSION, EOF = (
    "local", "global", "number", "string", "identifier", "punctuation", "version", "end of input"
)

_MASTER = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<lcomment>//[^\n]*)
  | (?P<bcomment>/\*)
  | (?P<version>\#\[version\s*=\s*"(?P<vnum>[^"\n]*)"\s*\])
  | (?P<metadata>\#\[metadata\])
  | (?P<local>%(?:[A-Za-z_](?:[A-Za-z0-9_]|/(?=[A-Za-z_]))*|[0-9]+))
  | (?P<gquote>@")
  | (?P<global>@[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>-?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?[A-Za-z0-9_]*
      | -?(?:inf|nan)f(?:16|32|64)?(?![A-Za-z0-9_]))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
  | (?P<string>")
  | (?P<punct>=>|->|==|!=|<=|>=|[(){}\[\],;:=.?+*/<>-])
    """,
    re.VERBOSE,
)
_DIGITS = re.compile(r"[0-9]+")
_COMMENT_EDGE = re.compile(r"/\*|\*/")
_MORE_POINTS = re.compile(r"(?:\.[0-9A-Za-z_]+)+")
_JUNK = re.compile(r"[^\s()\[\]{},;]*")
_NUMBER = re.compile(
    r"(-?)([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|inf(?=f)|nan(?=f))([A-Za-z_][A-Za-z0-9_]*)?\Z"
)

# literal suffix -> dtype
SUFFIX_DTYPE = {
    "f": "float32",
    "f16": "float16",
    "f32": "float32",
    "f64": "float64",
    "i": "int32",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
}
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}


@dataclass(frozen=True, slots=True)
class Token:
    """A token: its kind, its value (name, number, string ...), its text and 1-based position."""

    kind: str
    value: object
    text: str
    line: int
    col: int
    dtype: str | None = None  # numbers: the literal's dtype
    explicit: bool = False  # numbers: written with a suffix

    def describe(self) -> str:
        if self.kind == EOF:
            return "end of input"
        return repr(self.text)


class Lexer:
    """Splits ``text`` into tokens; ``diagnostics`` collects ``(line, col, message)``."""

    def __init__(self, text: str):
        self.text = text
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.diagnostics: list = []
        self.metadata: str | None = None
        self.metadata_line = 0

    def pos(self, offset: int) -> tuple:
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def error(self, offset: int, msg: str) -> None:
        line, col = self.pos(offset)
        self.diagnostics.append((line, col, msg))

    def tokenize(self) -> list:
        text, n, i = self.text, len(self.text), 0
        out = []
        match = _MASTER.match
        while i < n:
            if out and out[-1].kind == PUNCT and out[-1].value == "." and text[i : i + 1].isdigit():
                m = _DIGITS.match(text, i)  # `%t.0.1`: field indices are plain integers
                line, col = self.pos(i)
                out.append(Token(NUM, int(m.group()), m.group(), line, col, "int32"))
                i = m.end()
                continue
            m = match(text, i)
            if m is None:
                ch = text[i]
                hint = " (a negative number must have its digits right after '-')" if ch == "-" else ""
                self.error(i, f"unexpected character {ch!r}{hint}")
                junk = _JUNK.match(text, i + 1)
                i = junk.end()  # skip the rest of the bad word: one error, not two
                continue
            kind = m.lastgroup
            if kind == "vnum":
                kind = "version"
            start, end = m.start(), m.end()
            if kind in ("ws", "lcomment"):
                i = end
                continue
            if kind == "bcomment":  # block comments nest, as in Relay
                i = self._comment_end(start, end, n)
                continue
            line, col = self.pos(start)
            if kind == "metadata":
                self.metadata = text[end:]
                self.metadata_line = line
                n = start  # the end of the program text
                break
            tok, i = self._token(kind, m, line, col)
            out.append(tok)
        line, col = self.pos(n)
        out.append(Token(EOF, None, "", line, col))
        return out

    def _comment_end(self, start: int, end: int, n: int) -> int:
        """Where the (nested) block comment opened at ``start`` ends (``n`` when unterminated,
        which is reported)."""
        depth, j = 1, end
        while depth and j < n:
            m2 = _COMMENT_EDGE.search(self.text, j)
            if m2 is None:
                break
            depth += 1 if m2.group() == "/*" else -1
            j = m2.end()
        if depth:
            self.error(start, "unterminated comment: '/*' without '*/'")
            return n
        return j

    def _token(self, kind: str, m, line: int, col: int) -> tuple:
        """``(token, end offset)`` of the lexeme ``m`` of the master pattern's group ``kind``."""
        text = self.text
        start, end = m.start(), m.end()
        if kind == "version":
            return Token(VERSION, m.group("vnum"), m.group(), line, col), end
        if kind == "local":
            return Token(LOCAL, m.group()[1:], m.group(), line, col), end
        if kind == "global":
            return Token(GLOBAL, m.group()[1:], m.group(), line, col), end
        if kind in ("gquote", "string"):
            s_start = start + 1 if kind == "gquote" else start
            value, end = self._string(s_start)
            tk = GLOBAL if kind == "gquote" else STR
            return Token(tk, value, text[start:end], line, col), end
        if kind == "number":
            tail = _MORE_POINTS.match(text, end)
            if tail is not None and "." not in m.group():
                tail = None  # `1.x` is not a number; `1.5.3` is a malformed one
            if tail is not None:
                end = tail.end()
                self.diagnostics.append(
                    (line, col, f"bad number {text[start:end]!r}: more than one decimal point")
                )
                return Token(NUM, 0, text[start:end], line, col, "int32"), end
            return self._number(m.group(), start, line, col), end
        if kind == "ident":
            return Token(IDENT, m.group(), m.group(), line, col), end
        return Token(PUNCT, m.group(), m.group(), line, col), end

    def _string(self, start: int) -> tuple:
        """Read the string literal whose opening quote is at ``start``; returns (value, end)."""
        text, n = self.text, len(self.text)
        i, buf = start + 1, []
        while i < n:
            ch = text[i]
            if ch == '"':
                value = "".join(buf)
                if any("\ud800" <= c <= "\udfff" for c in value):  # \ud83d\ude00 pairs
                    value = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
                return value, i + 1
            if ch == "\n":
                break
            if ch == "\\":
                esc = text[i + 1 : i + 2]
                if esc in _ESCAPES:
                    buf.append(_ESCAPES[esc])
                    i += 2
                    continue
                if esc == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2 : i + 6]):
                    buf.append(chr(int(text[i + 2 : i + 6], 16)))
                    i += 6
                    continue
                self.error(
                    i, f"bad escape sequence '\\{esc}' in string (expected one of "
                    '\\" \\\\ \\/ \\n \\t \\r \\b \\f \\uXXXX)'
                )
                i += 2
                continue
            buf.append(ch)
            i += 1
        self.error(start, "unterminated string literal (expected '\"' before the end of the line)")
        return "".join(buf), i

    def _number(self, s: str, start: int, line: int, col: int) -> Token:
        m = _NUMBER.match(s)
        bad = None
        value, dtype, explicit = 0, "int32", False
        if m is None:
            bad = "expected digits, an optional fraction and exponent, and a dtype suffix"
        else:
            sign, body, suffix = m.groups()
            is_float = any(c in body for c in ".eEn")  # n: inf / nan
            if suffix is None:
                dtype = "float32" if is_float else "int32"
                if not is_float and not -(2**31) <= int(sign + body) < 2**31:
                    dtype = "int64"  # an unsuffixed literal too big for int32, as Relay read it
            elif suffix in SUFFIX_DTYPE:
                dtype, explicit = SUFFIX_DTYPE[suffix], True
            else:
                bad = (
                    f"unknown suffix {suffix!r} (expected one of "
                    f"{', '.join(k for k in SUFFIX_DTYPE if k != 'i')})"
                )
            if bad is None:
                if dtype.startswith(("int", "uint")):
                    if is_float:
                        bad = f"an integer suffix {suffix!r} on the non-integer {sign}{body}"
                    else:
                        value = int(sign + body)
                else:
                    value = float(sign + body)
        if bad is not None:
            self.diagnostics.append((line, col, f"bad number {s!r}: {bad}"))
        return Token(NUM, value, s, line, col, dtype, explicit)


def tokenize(text: str) -> tuple:
    """``(tokens, diagnostics, metadata_text, metadata_line)`` for ``text``."""
    lx = Lexer(text)
    toks = lx.tokenize()
    return toks, lx.diagnostics, lx.metadata, lx.metadata_line


__all__ = ["Token", "Lexer", "tokenize", "SUFFIX_DTYPE"]
