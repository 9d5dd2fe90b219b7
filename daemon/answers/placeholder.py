"""Bodies that are placeholders, not code, and the tokens that spell them.
``# Your code here`` and ``pass``, ``todo!()``, a "not implemented" throw.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Sequence

from daemon.answers.comments import Tokenizer, comment_tokens
from daemon.language import language_info

# A statement that stands for code not written yet, in any of the languages assist knows.
_DO_NOTHING = re.compile(
    r"""(?ix)^(?:
        pass | \.\.\. | ;
      | raise \s+ NotImplementedError\b.*
      | (?:todo|unimplemented) ! \( .* \) ;?
      | TODO \( .* \) ;?
      | panic \( .* (?:not\ implemented|todo) .* \) ;?
      | throw \s+ new \s+ [\w.:]* (?:NotImplemented|UnsupportedOperation) \w* \( .* \) ;?
      | throw \s+ (?:new \s+)? [\w.:]* (?:Error|Exception|logic_error)
            \( \s* ["'`] (?:not\ implemented|todo) .* \) ;?
    )$""",
)
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
# The do-nothing statements of a language that one token can spell: forbidding them makes
# the model write something else in their place.
_SPELLINGS = {
    "python": ("pass", "..."),
    "rust": ("todo", "unimplemented"),
}
_LEADS = ("", " ", "\t")


# A placeholder has no statement but comments, docstrings and do-nothing statements (``pass``,
# ``...``, ``todo!()``, a "not implemented" throw). Python is read with ast; other languages line
# by line.
def is_placeholder(language: str | None, body: str) -> bool:
    """Whether ``body`` (the text inserted as a body) holds nothing but comments, docstrings
    and do-nothing statements. A blank body is not a placeholder: it is no body at all."""
    if not body.strip():
        return False
    info = language_info(language)
    if info is not None and info.id == "python":
        verdict = _python_placeholder(body)
        if verdict is not None:
            return verdict
    return _lines_placeholder(body, info.line_comment if info else None)


def placeholder_tokens(vocab: Tokenizer, language: str | None) -> tuple[int, ...]:
    """The tokens to forbid when a body is asked for again: those that alone spell one of
    ``language``'s do-nothing statements (with a space or tab before it, or none), and every
    token that opens a comment (asked again, a model keeps the comment that announced the
    placeholder and writes a stub under it: ``# Your code here`` and ``return 0``). Empty when
    the language has no do-nothing statement one token spells."""
    info = language_info(language)
    words: Sequence[str] = _SPELLINGS.get(info.id, ()) if info else ()
    found: list[int] = []
    for word in words:
        for lead in _LEADS:
            tokens = vocab.tokenize_text(lead + word)
            if len(tokens) == 1 and tokens[0] not in found:
                found.append(tokens[0])
    if found:
        found += [t for t in comment_tokens(vocab, language) if t not in found]
    return tuple(found)


def _python_placeholder(body: str) -> bool | None:
    """The Python verdict from the syntax tree; None when the body does not parse alone."""
    lines = body.strip("\n").split("\n")
    later = [line for line in lines[1:] if line.strip()]
    if later:  # the first line continues the cursor's, after indentation already typed
        lines[0] = later[0][: len(later[0]) - len(later[0].lstrip())] + lines[0].lstrip()
    try:
        tree = ast.parse(textwrap.dedent("\n".join(lines)))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return all(_does_nothing(node) for node in tree.body)


def _does_nothing(node: ast.stmt) -> bool:
    if isinstance(node, ast.Pass):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return isinstance(node.value.value, str) or node.value.value is Ellipsis
    if isinstance(node, ast.Raise) and node.exc is not None:
        raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"
    return False


def _lines_placeholder(body: str, line_comment: str | None) -> bool:
    text = _BLOCK_COMMENT.sub("", body)
    for line in text.split("\n"):
        code = line.strip()
        if not code or (line_comment and code.startswith(line_comment)):
            continue
        if line_comment and line_comment in code:
            code = code.split(line_comment, 1)[0].rstrip()
        if not _DO_NOTHING.match(code):
            return False
    return True
