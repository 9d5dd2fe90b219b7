"""Which verified repair is what the author meant: the ranking of candidates."""

from __future__ import annotations

import ast
import difflib
import functools
import itertools
import re
from collections import Counter
from dataclasses import dataclass

from daemon.checks.keywords import KEYWORDS as LANGUAGE_KEYWORDS
from daemon.checks.keywords import slips_left, used_once
from daemon.checks.names import builtin_names, one_slip_apart
from daemon.lexer import Token
from daemon.repair.diagnosis import Problems, shared_ends
from daemon.repair.layout import layout_mismatches
from daemon.repair.scan import scan

# Lines around the change in which a token counts as "near the error" (not invented).
NEAR_LINES = 3
# Words that are structure, not content, in the languages the repair supports.
_KEYWORD_TEXT = """
    and as async await break case catch class const continue def default do elif else enum
    export extends final finally fn for from func function go if impl import in instanceof
    interface is lambda let loop match mod mut new nonlocal not of or pass pub raise return
    self static struct super switch this throw try type use var void where while with yield
"""
KEYWORDS = frozenset(_KEYWORD_TEXT.split()).union(*LANGUAGE_KEYWORDS.values())
_WORD = re.compile(r"\w+")
_NAME_START = re.compile(r"[A-Za-z_]")
# The literals a lost opener can join to the name before it.
_LITERALS = frozenset({"True", "False", "None", "true", "false", "null", "undefined", "nil"})
# Two candidates whose judged scores differ by less than this (nats) are a close call.
CLOSE_SCORE = 1.0


@dataclass(frozen=True)
class Change:
    """What a candidate does to the tokens of the document."""

    added: tuple[Token, ...]
    removed: tuple[Token, ...]

    def invented(self, nearby: frozenset[str], split: Split | None = None) -> int:
        """Names, numbers and words of strings it adds that appear nowhere near the change
        (the parts of a joined word it splits are the author's)."""
        extra = _words(self.added) - _words(self.removed)
        parts = split.parts if split else frozenset()
        return sum(n for word, n in extra.items() if word not in nearby and word not in parts)

    def lost(self, split: Split | None = None) -> int:
        """The author's names, numbers and string literals that the change removes (a word
        respelt as the keyword it is one slip from, ``retrun`` as ``return``, is not lost; nor
        a joined word it splits)."""
        gone = _words(self.removed) - _words(self.added)
        for word in split.joined if split else ():
            del gone[word]
        spelt = {t.text for t in self.added if t.text in KEYWORDS}
        for word in [w for w in gone if any(one_slip_apart(w, k) for k in spelt)]:
            del gone[word]
        strings = sum(t.kind == "string" for t in self.removed)
        strings -= sum(t.kind == "string" for t in self.added)
        return sum(gone.values()) + max(0, strings)

    def deleted_punctuation(self) -> int:
        return max(0, sum(t.kind == "punct" for t in self.removed) - _punct(self.added))


@dataclass(frozen=True)
class Split:
    """Joined words a change splits (``printx`` into ``print`` and ``x``), and their parts."""

    joined: frozenset[str]
    parts: frozenset[str]
    # Of the joined words, those only one of whose parts the file knows (``_joined``): weaker
    # evidence than two known parts, counted against the change among equals.
    weak: int = 0


def splits(change: Change, known: frozenset[str], original: str) -> Split:
    """The words ``change`` removes that it puts back as two neighbouring words the file knows
    (``known``; or one it knows that is a literal after a name, or a function it calls before
    one: ``_joined``), where the removed word is used once in ``original`` (a slip, not a
    name)."""
    gone = _words(change.removed) - _words(change.added)
    added = [w for t in change.added if t.kind != "punct" for w in _WORD.findall(t.text)]
    joined: set[str] = set()
    parts: set[str] = set()
    weak = 0
    for first, second in itertools.pairwise(added):
        word = first + second
        if word in gone and _joined(first, second, known, original) and used_once(word, original):
            joined.add(word)
            parts.update((first, second))
            weak += not (_known(first, known) and _known(second, known))
    return Split(frozenset(joined), frozenset(parts), weak)


def joined_left(region: str, text: str, known: frozenset[str]) -> int:
    """Words of ``region`` that ``text`` still uses once and that split into two words as
    ``_joined`` reads them: a word that a lost bracket joined, left in place."""
    count = 0
    for word in set(_WORD.findall(region)):
        if len(word) < 3 or not used_once(word, text):
            continue
        if any(_joined(word[:i], word[i:], known, text) for i in range(1, len(word))):
            count += 1
    return count


def _joined(first: str, second: str, known: frozenset[str], text: str) -> bool:
    """Whether ``first`` and ``second`` read as two words a lost bracket joined: both known to
    the file; or a name before a literal (``getpeercertTrue`` for ``getpeercert(True)``); or a
    function the file calls, or its comments name as a call, before a name (``defined__X`` for
    ``defined(__X)``, ``lzma_codestrm`` where a comment says ``lzma_code()``)."""
    if _known(first, known) and _known(second, known):
        return True
    if not _NAME_START.match(first) or not _NAME_START.match(second):
        return False
    if second in _LITERALS:
        return len(first) >= 3
    return first in _called(text)


# A name called in the text (or named as a call in its comments): ``name(``, not ``x.name(``.
_CALL = re.compile(r"(?<![\w.])(\w+)\s*\(")


@functools.lru_cache(maxsize=16)
def _called(text: str) -> frozenset[str]:
    return frozenset(_CALL.findall(text))


def _known(word: str, known: frozenset[str]) -> bool:
    return word.isdigit() or word in known


def _words(tokens: tuple[Token, ...]) -> Counter[str]:
    words: Counter[str] = Counter()
    for token in tokens:
        if token.kind == "punct":
            continue
        words.update(w for w in _WORD.findall(token.text) if w not in KEYWORDS)
    return words


def known_words(language: str, tokens: list[Token]) -> frozenset[str]:
    """The words a document uses, with the language's keywords and globals."""
    words = {w for t in tokens if t.kind != "punct" for w in _WORD.findall(t.text)}
    return frozenset(words | KEYWORDS | builtin_names(language))


def pairs(tokens: list[Token]) -> set[tuple[str, str]]:
    """The document's member accesses and calls by name: ``os .``, ``. path``, ``print (``.
    What a name is written beside tells a call from a value and an attribute from an item
    (``os.path`` where the file writes ``.path`` elsewhere; not ``count(`` where ``count`` is
    never called); other neighbours say little of the author, and are left out."""
    found = set()
    for a, b in itertools.pairwise(tokens):
        if a.kind == "word" and b.text == "(" and a.text in KEYWORDS:
            continue  # ``return (`` and ``if (`` are the author's layout, not a call
        if "." in (a.text, b.text) and (a.text[:1].isdigit() or b.text[:1].isdigit()):
            continue  # ``1.5``: a number's point, not a member
        if (a.kind == "word" and b.text in ".(") or (a.text == "." and b.kind == "word"):
            found.add((a.text, b.text))
    return found


def unfamiliar_pairs(language: str, tokens: list[Token], text: str, original: str) -> int:
    """Calls and member accesses that ``text`` makes by inserting a ``(`` or ``.``: each that
    ``original`` (whose tokens are ``tokens``) has nowhere counts one (``value(`` where
    ``value`` is never called), each it has elsewhere minus one (``self.dest`` where the file
    writes ``.dest``); and each member access it parts with a closer counts one. Code a moved
    quote turns from string into tokens is the author's, not counted."""
    start, tail = shared_ends(original, text)
    end = len(text) - tail
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    after, _ = scan(language, text)
    inserted = [i for i, t in enumerate(after) if start <= offsets[t.line] + t.column < end]
    new = {i for i in inserted if after[i].text in ".("}
    known = pairs(tokens)
    # A closer put between a name and its member (``[os].path``) parts a member access the
    # file makes (``os.path``).
    parted = sum(
        1
        for i in inserted
        if after[i].text in ")]"
        and 0 < i < len(after) - 1
        and after[i + 1].text == "."
        and (after[i - 1].text, ".") in known
    )
    if not new:
        return parted
    around = [after[j : j + 2] for i in new for j in (i - 1, i) if j >= 0]
    made = set().union(*(pairs(list(pair)) for pair in around))
    # A method called on another object (``stdout.readline()``) is that object's business.
    methods = {(after[i - 1].text, "(") for i in new if i >= 2 and after[i - 2].text == "."}
    return parted + len(made - known - methods) - len(made & known)


def _punct(tokens: tuple[Token, ...]) -> int:
    return sum(t.kind == "punct" for t in tokens)


def meaning(language: str, text: str) -> str:
    """What a document means, layout aside: equal for two repairs that differ in whitespace
    only (in Python, indentation is meaning: its syntax tree is compared)."""
    if language == "python":
        try:
            return ast.dump(ast.parse(text))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
    tokens, _ = scan(language, text)
    return "\x00".join(t.text for t in tokens)


def token_change(language: str, before: str, after: str) -> Change:
    old, _ = scan(language, before)
    new, _ = scan(language, after)
    # A repair changes a few tokens in one place: match the unchanged ends directly, and
    # leave only the middle to the (quadratic) sequence matcher.
    head = 0
    while head < min(len(old), len(new)) and old[head].text == new[head].text:
        head += 1
    tail = 0
    while (
        tail < min(len(old), len(new)) - head
        and old[len(old) - 1 - tail].text == new[len(new) - 1 - tail].text
    ):
        tail += 1
    old, new = old[head : len(old) - tail], new[head : len(new) - tail]
    matcher = difflib.SequenceMatcher(
        None, [t.text for t in old], [t.text for t in new], autojunk=False
    )
    added: list[Token] = []
    removed: list[Token] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed.extend(old[i1:i2])
            added.extend(new[j1:j2])
    return Change(tuple(added), tuple(removed))


def keeps_every_token(language: str, before: str, after: str) -> bool:
    """Whether ``after`` holds every token of ``before``, in order (it only adds)."""
    return not token_change(language, before, after).removed


def nearby_words(language: str, text: str, first_line: int, last_line: int) -> frozenset[str]:
    """The names, numbers and strings within ``NEAR_LINES`` of the lines that change."""
    low, high = first_line - NEAR_LINES, last_line + NEAR_LINES
    tokens, _ = scan(language, text)  # the document's tokens, scanned once for every candidate
    return frozenset(_words(tuple(t for t in tokens if low <= t.line <= high)))


@dataclass
class Candidate:
    """A verified repair of one round, with what the ranking knows of it."""

    text: str
    origin: str  # the rule or model pass that proposed it, for `assist fix --json`
    invented: int = 0
    lost: int = 0
    layout: int = 0
    size: int = 0
    deletes: int = 0  # punctuation it removes (an insertion is the likelier slip)
    misspelt: int = 0  # misspelt keywords, or joined words, it leaves where it changes
    unfamiliar: int = 0  # calls and member accesses it makes the file has nowhere, less known ones
    remaining: int = 0  # syntax errors left after it (the next rounds' work)
    score: float | None = None  # the model's log-likelihood of the changed lines
    meaning: str = ""
    after: Problems | None = None  # the document's problems with it applied (its check)

    # Best first: fewest invented or lost tokens (a name, number or string nowhere near the error,
    # or the author's word removed; a misspelt keyword or joined word left in place counts as one);
    # the fewest brackets that disagree with the layout; the fewest errors left for later rounds;
    # the model's judgement (the changed lines' log-likelihood, when it was asked); the calls and
    # member accesses the file has nowhere, less those it has elsewhere; the least punctuation
    # deleted (undoing a doubled ``))`` is not counted); the smallest change. A repair that splits
    # a word a lost bracket joined (``printx)``), used once, into two the file knows invents and
    # loses nothing.
    def key(self) -> tuple[int, int, int, float, int, int, int]:
        judged = -self.score if self.score is not None else 0.0
        changed = self.invented + self.lost + self.misspelt
        facts = (self.layout, self.remaining, judged, self.unfamiliar, self.deletes, self.size)
        return (changed, *facts)


def changed_lines(old: str, new: str) -> range:
    """The lines of ``old`` that ``new`` changes (for an insertion: where it lands)."""
    a, b = old.split("\n"), new.split("\n")
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return range(head, max(head + 1, len(a) - tail))


def describe(language: str, original: str, text: str, origin: str, size: int) -> Candidate:
    """A candidate with the facts its rank is made of."""
    change = token_change(language, original, text)
    lines = changed_lines(original, text)
    nearby = nearby_words(language, original, lines.start, lines.stop)
    region = "\n".join(original.split("\n")[lines.start : lines.stop])
    tokens, _ = scan(language, original)
    known = known_words(language, tokens)
    split = splits(change, known, original)
    return Candidate(
        text=text,
        origin=origin,
        invented=change.invented(nearby, split),
        lost=change.lost(split),
        layout=layout_mismatches(language, text),
        size=size,
        deletes=0 if _undoubles(original, text) else change.deleted_punctuation(),
        misspelt=slips_left(language, region, text) + joined_left(region, text, known),
        unfamiliar=unfamiliar_pairs(language, tokens, text, original) + split.weak,
        meaning=meaning(language, text),
    )


def _undoubles(original: str, text: str) -> bool:
    """Whether ``text`` is ``original`` less one of two equal characters side by side (a
    doubled ``))`` undone: as likely a slip as a lost one, so not counted as a deletion)."""
    if len(text) != len(original) - 1:
        return False
    start, tail = shared_ends(original, text)
    if start + tail != len(text):
        return False
    char = original[start]
    return original[start - 1 : start] == char or original[start + 1 : start + 2] == char


def ranked(candidates: list[Candidate]) -> list[Candidate]:
    """Best first; one candidate per meaning (the best of each stays)."""
    seen: set[str] = set()
    unique: list[Candidate] = []
    for candidate in sorted(candidates, key=Candidate.key):
        if candidate.meaning not in seen:
            seen.add(candidate.meaning)
            unique.append(candidate)
    return unique


def close_call(best: Candidate, runner_up: Candidate) -> bool:
    """Whether two candidates that mean different things are too close to choose between."""
    if best.key()[:2] != runner_up.key()[:2]:
        return False
    if best.score is None or runner_up.score is None:
        return False
    return abs(best.score - runner_up.score) < CLOSE_SCORE
