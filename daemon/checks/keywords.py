"""The keywords of each language the repair parses, and the misspellings of them people type.
``misspelt_keywords`` names the keywords a word one slip away could be (``retrun``, ``esle``).
"""

from __future__ import annotations

import functools
import keyword
import re
from collections import Counter

from daemon.checks.names import NAME, one_slip_apart

_C = """auto break case char const continue default do double else enum extern float for goto
    if inline int long register return short signed sizeof static struct switch typedef union
    unsigned void volatile while"""
_JAVASCRIPT = """async await break case catch class const continue debugger default delete do
    else export extends finally for function if import in instanceof let new return static
    super switch this throw try typeof var void while with yield"""
_WORDS: dict[str, str] = {
    "python": " ".join(keyword.kwlist),
    "javascript": _JAVASCRIPT,
    "typescript": _JAVASCRIPT
    + """ abstract declare enum implements interface namespace private protected public
    readonly type""",
    "go": """break case chan const continue default defer else fallthrough for func go goto if
    import interface map package range return select struct switch type var""",
    "rust": """as async await break const continue crate else enum extern false fn for if impl in
    let loop match mod move mut pub ref return self static struct super trait true type unsafe
    use where while""",
    "java": """abstract assert boolean break byte case catch char class const continue default do
    double else enum extends final finally float for if implements import instanceof int
    interface long native new package private protected public return short static super
    switch synchronized this throw throws transient try void volatile while""",
    "c": _C,
    "cpp": _C
    + """ catch class delete namespace new private protected public template this throw try
    using virtual""",
}
_WORDS["javascriptreact"] = _WORDS["javascript"]
_WORDS["typescriptreact"] = _WORDS["typescript"]
KEYWORDS: dict[str, frozenset[str]] = {
    name: frozenset(text.split()) for name, text in _WORDS.items()
}


# Shorter words are too often names one letter away from a keyword (``fo``, ``dif``, ``it``);
# a three-letter word counts only with the keyword's own letters swapped (``lte``, ``fro``).
SHORTEST = 4


# ``retrun``, ``improt``, ``fucntion``, ``esle``: a statement that starts with a word one slip
# away from a keyword (a letter swapped with its neighbour, one missing, one extra, one wrong) is
# most often that keyword. The repair's rules propose each keyword named here, and verification
# and ranking choose.
@functools.lru_cache(maxsize=8192)
def misspelt_keywords(language: str, word: str) -> tuple[str, ...]:
    """The keywords of ``language`` that ``word`` (not itself one) is one slip away from."""
    words = KEYWORDS.get(language, frozenset())
    if word in words or len(word) < 3:
        return ()
    if len(word) < SHORTEST:
        return tuple(
            sorted(k for k in words if sorted(k) == sorted(word) and one_slip_apart(word, k))
        )
    return tuple(sorted(k for k in words if len(k) >= SHORTEST and one_slip_apart(word, k)))


def slips_left(language: str, region: str, text: str) -> int:
    """The words of ``region`` that ``text`` still uses exactly once and that are one slip
    away from a keyword: a misspelt keyword the candidate ``text`` left in place."""
    words = {w for w in NAME.findall(region) if misspelt_keywords(language, w)}
    return sum(1 for w in words if used_once(w, text))


def used_once(word: str, text: str) -> bool:
    """Whether ``text`` has the name ``word`` exactly once (a slip, not the code's own name)."""
    if _WORD.fullmatch(word):
        return _words(text)[word] == 1  # a word between \b and \b is a whole run of \w
    return len(re.findall(rf"\b{re.escape(word)}\b", text)) == 1


_WORD = re.compile(r"\w+")


@functools.lru_cache(maxsize=16)
def _words(text: str) -> Counter[str]:
    """How often each run of word characters occurs in ``text`` (a repair asks about the same
    few texts, its candidates, many times)."""
    return Counter(_WORD.findall(text))
