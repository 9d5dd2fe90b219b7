"""Prompt formats build the exact token sequence each model family was trained on."""

from __future__ import annotations

import pytest

from models.families import (
    CODEGEMMA,
    CODELLAMA,
    CODESTRAL,
    DEEPSEEK_CODER,
    FORMATS,
    PLAIN,
    QWEN_CODER,
    STARCODER2,
    detect_format,
)
from tests.unit.fake_vocab import CharVocab, chars

PRE, SUF, MID = 10, 11, 12


def vocab_for(prefix: str, suffix: str, middle: str | None, bos: int | None = 1) -> CharVocab:
    specials = {prefix: PRE, suffix: SUF}
    if middle:
        specials[middle] = MID
    return CharVocab(specials, bos=bos)


@pytest.mark.parametrize(
    ("fmt", "markers", "with_bos"),
    [
        (QWEN_CODER, ("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"), False),
        (STARCODER2, ("<fim_prefix>", "<fim_suffix>", "<fim_middle>"), False),
        (CODELLAMA, ("▁<PRE>", "▁<SUF>", "▁<MID>"), True),
        (DEEPSEEK_CODER, ("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"), True),
        (CODEGEMMA, ("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"), True),
    ],
)
def test_psm_formats_build_prefix_suffix_middle(fmt, markers, with_bos):
    vocab = vocab_for(*markers)
    tokens = fmt.build(vocab, "def f(", "):\n")
    expected = [PRE, *chars("def f("), SUF, *chars("):\n"), MID]
    assert tokens == ([1] if with_bos else []) + expected


def test_codestral_puts_suffix_first_and_ends_on_the_prefix():
    vocab = vocab_for("[PREFIX]", "[SUFFIX]", None)
    tokens = CODESTRAL.build(vocab, "x = ", "\nprint(x)")
    assert tokens == [1, SUF, *chars("\nprint(x)"), PRE, *chars("x = ")]


def test_plain_format_is_bos_and_prefix_only():
    tokens = PLAIN.build(CharVocab(bos=2), "import os\n", "ignored suffix")
    assert tokens == [2, *chars("import os\n")]


def test_plain_format_without_bos_token():
    assert PLAIN.build(CharVocab(bos=None), "x", "") == chars("x")


def test_special_token_text_in_source_stays_text():
    vocab = vocab_for("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>")
    tokens = QWEN_CODER.build(vocab, "s = '<|fim_prefix|>'", "\nprint(s)")
    # The marker typed in the file is tokenized as characters, not as the special token.
    assert tokens.count(PRE) == 1
    assert chars("<|fim_prefix|>") == tokens[1 + len("s = '") : 1 + len("s = '<|fim_prefix|>")]


@pytest.mark.parametrize("fmt", [QWEN_CODER, STARCODER2, CODESTRAL])
@pytest.mark.parametrize("suffix", ["", "\n", "  \n\n\t"])
def test_nothing_after_the_cursor_is_a_plain_continuation(fmt, suffix):
    """An empty FIM hole answers worse than the left-to-right text the model mostly saw."""
    middle = fmt.fim.middle if fmt.fim else None
    vocab = vocab_for(fmt.fim.prefix, fmt.fim.suffix, middle, bos=None)
    assert fmt.build(vocab, "def f():\n", suffix) == chars("def f():\n")


def test_code_after_the_cursor_keeps_the_fim_layout_however_far_down():
    vocab = vocab_for("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>")
    tokens = QWEN_CODER.build(vocab, "x = ", "\n\n\nprint(x)")
    assert tokens == [PRE, *chars("x = "), SUF, *chars("\n\n\nprint(x)"), MID]


def test_missing_marker_is_a_clear_error():
    vocab = CharVocab({"<|fim_prefix|>": PRE})
    with pytest.raises(ValueError, match="fim_suffix"):
        QWEN_CODER.build(vocab, "a", "b")


def test_every_format_is_registered_under_its_name():
    assert set(FORMATS) == {
        "qwen2.5-coder",
        "starcoder2",
        "codellama",
        "deepseek-coder",
        "codegemma",
        "codestral",
        "plain",
    }


def test_detects_qwen_coder_from_fim_tokens_and_architecture():
    vocab = vocab_for("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>")
    assert detect_format("qwen2", "Qwen2.5 Coder 1.5B", vocab, True) is QWEN_CODER


def test_shared_markers_are_told_apart_by_architecture():
    vocab = vocab_for("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>")
    assert detect_format("gemma", "codegemma-2b", vocab, True) is CODEGEMMA
    assert detect_format("gemma", "some gemma finetune", vocab, True) is CODEGEMMA


def test_detects_starcoder_deepseek_codellama_codestral():
    star = vocab_for("<fim_prefix>", "<fim_suffix>", "<fim_middle>")
    assert detect_format("starcoder2", "StarCoder2 3B", star, True) is STARCODER2
    deep = vocab_for("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>")
    assert detect_format("llama", "deepseek-coder-1.3b-base", deep, True) is DEEPSEEK_CODER
    llama = vocab_for("▁<PRE>", "▁<SUF>", "▁<MID>")
    assert detect_format("llama", "CodeLlama 7B", llama, True) is CODELLAMA
    mistral = vocab_for("[PREFIX]", "[SUFFIX]", None)
    assert detect_format("llama", "Codestral 22B", mistral, False) is CODESTRAL


def test_base_model_without_fim_is_plain():
    assert detect_format("gemma3", "Gemma 3 270m", CharVocab(), False) is PLAIN


def test_markers_without_fim_claim_or_family_name_stay_plain():
    # A vocabulary that happens to hold the markers does not make a model FIM-trained.
    vocab = vocab_for("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>")
    assert detect_format("llama", "my chat model", vocab, False) is PLAIN
