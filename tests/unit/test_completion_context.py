"""Context in the completion pipeline (scripted engine): it reaches the prompt where the line
names what it defines (a fast-path line that names nothing of it is shown none; a deep body all
of it), and neither an exact nor a typed cache hit is served across different context."""

from __future__ import annotations

from daemon.protocol import ContextSnippet
from tests.unit.scripted_backend import ScriptedBackend, in_turn
from tests.unit.test_completion_pipeline import BODY, STATEMENT, collect, pipeline, request

TOTAL = ContextSnippet(
    path="lib/calc.py", text="def total(a: int, b: int) -> int:\n    ...\n", kind="import"
)
OTHER = ContextSnippet(path="lib/other.py", text="def other() -> None:\n    ...\n", kind="import")
# A line that uses what TOTAL defines.
USES_TOTAL = "def add(a, b):\n    return total(a, b) + "


def prompt_text(tokens: list[int]) -> str:
    return "".join(chr(t - 1000) for t in tokens if t >= 1000)


async def test_context_reaches_the_prompt_and_the_cache_key():
    backend = ScriptedBackend(in_turn("total", "total", "total"))
    completions = pipeline(backend)
    plain = await collect(await completions.start(request(USES_TOTAL), "alice"))
    with_context = await collect(
        await completions.start(request(USES_TOTAL, context=[TOTAL]), "alice")
    )
    assert not with_context[-1].cached  # a different prompt: not the first one's answer
    assert len(backend.runs) == 2
    first, second = (prompt_text(run.tokens) for run in backend.runs)
    assert "def total" not in first
    assert "# Path: lib/calc.py\n# def total(a: int, b: int) -> int:\n" in second
    assert with_context[-1].prompt_tokens > plain[-1].prompt_tokens
    again = await collect(await completions.start(request(USES_TOTAL, context=[TOTAL]), "bob"))
    assert again[-1].cached and again[-1].cache_match == "exact"
    off = pipeline(backend, context_budget_tokens=0)
    unused = await collect(await off.start(request(USES_TOTAL, context=[TOTAL]), "carol"))
    assert unused[-1].cached  # nothing placed: the prompt, and so the answer, of no context


async def test_a_line_that_names_nothing_of_the_context_is_shown_none_of_it():
    backend = ScriptedBackend(in_turn("a + b", "a + b", "    return a + b\n"))
    completions = pipeline(backend)
    plain = await collect(await completions.start(request(STATEMENT), "alice"))
    unnamed = await collect(await completions.start(request(STATEMENT, context=[TOTAL]), "alice"))
    # The same prompt as without context, so the same answer, served from the cache.
    assert unnamed[-1].cached and unnamed[-1].prompt_tokens == plain[-1].prompt_tokens
    assert len(backend.runs) == 1
    # A deep body is written from its definition's line: it is shown every snippet.
    await collect(await completions.start(request(BODY, mode="deep", context=[TOTAL]), "alice"))
    assert "# def total(a: int, b: int) -> int:" in prompt_text(backend.runs[-1].tokens)


async def test_a_typed_hit_needs_the_same_context():
    backend = ScriptedBackend(in_turn("total(b, a)", "total(a, b)"))
    completions = pipeline(backend)
    named = "def add(a, b):\n    return total(a, b) + "
    both = [TOTAL, OTHER]
    await collect(await completions.start(request(named, context=both), "alice"))
    typed = request(named + "tot", context=both)
    hit = await collect(await completions.start(typed, "alice"))
    assert hit[-1].cache_match == "typed" and len(backend.runs) == 1
    elsewhere = request(named + "tot", context=[TOTAL.model_copy(update={"path": "lib/calc2.py"})])
    miss = await collect(await completions.start(elsewhere, "alice"))
    assert miss[-1].cache_match is None and len(backend.runs) == 2


async def test_a_call_is_fitted_to_the_signature_the_prompt_showed():
    called = "def add(a, b, c):\n    return total("
    named = TOTAL.model_copy(update={"name": "total"})
    backend = ScriptedBackend(in_turn("a, b, c)", "a, b, c)"))
    completions = pipeline(backend)
    fitted = await collect(await completions.start(request(called, context=[named]), "alice"))
    assert fitted[-1].text == "a, b)"
    final = next(e for e in fitted if getattr(e, "stage", None) == "final")
    assert "fit_call_arguments" in (final.reason or "")
    # Without the snippet the daemon does not know what total takes: the answer stands.
    plain = await collect(await completions.start(request(called), "alice"))
    assert plain[-1].text == "a, b, c)"
