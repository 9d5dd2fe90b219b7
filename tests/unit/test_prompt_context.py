"""Other files in the prompt: the repository layouts of Qwen2.5-Coder and StarCoder2, comment
blocks for every other format, whole snippets within the budget, a stable order, and no change
at all without context."""

from __future__ import annotations

from daemon.cursor import Cursor
from daemon.prompt.build import FORMAT_OVERHEAD, build_prompt
from daemon.prompt.context import PromptContext, comment_block, layout_files
from daemon.protocol import ContextSnippet
from models.families import CODEGEMMA, PLAIN, QWEN_CODER, STARCODER2
from tests.unit.fake_vocab import CharVocab, chars

QWEN_VOCAB = CharVocab(
    {
        "<|fim_prefix|>": 10,
        "<|fim_suffix|>": 11,
        "<|fim_middle|>": 12,
        "<|repo_name|>": 13,
        "<|file_sep|>": 14,
    },
    bos=None,
)
STARCODER_VOCAB = CharVocab(
    {
        "<fim_prefix>": 20,
        "<fim_suffix>": 21,
        "<fim_middle>": 22,
        "<repo_name>": 23,
        "<file_sep>": 24,
    },
    bos=None,
)
PREFIX = "from lib.a import f\n\nx = f(1)\ny = "
SUFFIX = "\nprint(y)\n"
DOCUMENT = PREFIX + SUFFIX
HEADER = "# Language: Python\n"


def snippet(path: str, text: str, kind: str = "import", line: int | None = None) -> ContextSnippet:
    return ContextSnippet(path=path, text=text, kind=kind, line=line)  # type: ignore[arg-type]


F = snippet("lib/a.py", "def f(n: int) -> int:\n    ...\n", line=4)
G = snippet("lib/b.py", "class G:\n    ...\n", line=0)
EDIT = snippet("lib/c.py", "total = compute()\nprint(total)\n", "recent", line=40)


def build(
    fmt, vocab, context=None, budget=2000, language="python", header=HEADER, document=DOCUMENT
):
    cursor = Cursor.locate(document, 3, 4)
    prompt_context = (
        PromptContext(context, 384, language, "app.py", "shop") if context is not None else None
    )
    return build_prompt(
        fmt,
        vocab,
        cursor,
        budget=budget,
        suffix_budget=64,
        header=header,
        context=prompt_context,
    )


def test_qwen_coder_gets_its_repository_layout():
    built = build(QWEN_CODER, QWEN_VOCAB, [F, EDIT])
    assert built.tokens == [
        13,
        *chars("shop\n"),
        14,
        *chars("lib/a.py\ndef f(n: int) -> int:\n    ...\n\n"),
        14,
        *chars("lib/c.py\ntotal = compute()\nprint(total)\n\n"),
        14,
        *chars("app.py\n"),
        10,
        *chars(HEADER + PREFIX),
        11,
        *chars(SUFFIX),
        12,
    ]
    assert built.context.tokens == built.tokens.index(10)
    assert [s.path for s in built.context.snippets] == ["lib/a.py", "lib/c.py"]


def test_starcoder2_gets_its_repository_layout_with_the_path_after_the_prefix_marker():
    built = build(STARCODER2, STARCODER_VOCAB, [F])
    assert built.tokens == [
        23,
        *chars("shop"),
        24,
        *chars("lib/a.py\ndef f(n: int) -> int:\n    ...\n"),
        24,
        20,
        *chars("app.py\n" + HEADER + PREFIX),
        21,
        *chars(SUFFIX),
        22,
    ]


def test_at_the_end_of_a_file_the_repository_layout_continues_the_file():
    """Nothing after the cursor: the current file's text follows its path, no FIM markers."""
    built = build(QWEN_CODER, QWEN_VOCAB, [F], document=PREFIX)
    assert built.tokens == [
        13,
        *chars("shop\n"),
        14,
        *chars("lib/a.py\ndef f(n: int) -> int:\n    ...\n\n"),
        14,
        *chars("app.py\n" + HEADER + PREFIX),
    ]
    assert built.context.tokens == len(built.tokens) - len(chars(HEADER + PREFIX))


def test_formats_without_repository_markers_get_comment_blocks_before_the_document():
    built = build(PLAIN, CharVocab(bos=1), [F, EDIT])
    blocks = (
        "# Path: lib/a.py\n# def f(n: int) -> int:\n#     ...\n\n"
        "# Path: lib/c.py\n# total = compute()\n# print(total)\n\n"
    )
    assert built.tokens == [1, *chars(blocks + HEADER + PREFIX)]
    assert built.prefix == PREFIX  # the window itself is untouched
    # A FIM format without repository markers, and a vocabulary without them, do the same.
    fim_vocab = CharVocab({"<|fim_prefix|>": 10, "<|fim_suffix|>": 11, "<|fim_middle|>": 12})
    gemma = build(CODEGEMMA, fim_vocab, [F, EDIT])
    assert gemma.tokens[:2] == [1, 10] and gemma.context.text == blocks
    no_markers = build(QWEN_CODER, fim_vocab, [F, EDIT])
    assert no_markers.context.text == blocks and no_markers.context.repository is None


def test_comment_blocks_follow_the_language():
    assert comment_block("a.ts", "let x = 1;\n\nlet y;\n", "typescript") == (
        "// Path: a.ts\n// let x = 1;\n//\n// let y;\n"
    )
    assert comment_block("a.css", "a { b: c }\n", "css") == "/* Path: a.css\na { b: c }\n*/\n"
    assert comment_block("a.css", "/* x */\n", "css") is None  # would close the comment
    assert comment_block("a.txt", "x\n", None) is None
    assert build(PLAIN, CharVocab(bos=1), [F], language=None).context.snippets == ()


def test_no_context_gives_the_prompt_of_before():
    before = build(QWEN_CODER, QWEN_VOCAB)
    assert before.tokens == [10, *chars(HEADER + PREFIX), 11, *chars(SUFFIX), 12]
    assert build(QWEN_CODER, QWEN_VOCAB, []).tokens == before.tokens
    cursor = Cursor.locate(DOCUMENT, 3, 4)
    off = build_prompt(
        QWEN_CODER,
        QWEN_VOCAB,
        cursor,
        budget=2000,
        suffix_budget=64,
        header=HEADER,
        context=PromptContext([F], 0, "python", "app.py", "shop"),
    )
    assert off.tokens == before.tokens and off.context.key == ""
    plain = build(PLAIN, CharVocab(bos=1))
    assert plain.tokens == [1, *chars(HEADER + PREFIX)]


def test_the_layout_order_is_stable_whatever_the_request_order():
    orders = [[F, G, EDIT], [EDIT, G, F], [G, EDIT, F]]
    prompts = {tuple(build(QWEN_CODER, QWEN_VOCAB, order).tokens) for order in orders}
    assert len(prompts) == 1
    files = layout_files([EDIT, G, F, snippet("lib/b.py", "X = 1\n", line=9)])
    # Imports first, by path; snippets of one file by line; recent edits after.
    assert files == [
        ("lib/a.py", "def f(n: int) -> int:\n    ...\n"),
        ("lib/b.py", "class G:\n    ...\n\nX = 1\n"),
        ("lib/c.py", "total = compute()\nprint(total)\n"),
    ]


def test_snippets_go_in_whole_in_the_requests_order_within_the_budget():
    big = snippet("lib/big.py", "".join(f"def f{i}(): ...\n" for i in range(40)))
    cursor = Cursor.locate(DOCUMENT, 3, 4)

    def placed(context, context_budget, budget=2000):
        return build_prompt(
            QWEN_CODER,
            QWEN_VOCAB,
            cursor,
            budget=budget,
            suffix_budget=64,
            header=HEADER,
            context=PromptContext(context, context_budget, "python", "app.py", "shop"),
        )

    # Room for F and the edit, not for the big one: it is skipped whole, the others go in.
    built = placed([F, big, EDIT], 120)
    assert [s.path for s in built.context.snippets] == ["lib/a.py", "lib/c.py"]
    assert built.context.dropped == 1 and built.context.tokens <= 120
    assert "f0" not in "".join(chr(t - 1000) for t in built.tokens if t >= 1000)
    # Less room: the snippet sent last goes first.
    tight = placed([F, EDIT], 70)
    assert [s.path for s in tight.context.snippets] == ["lib/a.py"]
    # A generous context budget never takes more than half of what the window could have.
    budget = 300
    starved = placed([F, G, EDIT, big], 10_000, budget)
    assert starved.context.tokens <= (budget - len(chars(HEADER)) - FORMAT_OVERHEAD) // 2
    assert len(starved.tokens) <= budget
    assert starved.prefix == PREFIX


def test_context_keys_differ_with_the_context_placed():
    one = build(QWEN_CODER, QWEN_VOCAB, [F]).context.key
    two = build(QWEN_CODER, QWEN_VOCAB, [F, G]).context.key
    assert one and two and one != two
    assert (
        build(PLAIN, CharVocab(bos=1), [F]).context.key
        != build(PLAIN, CharVocab(bos=1), [G]).context.key
    )
