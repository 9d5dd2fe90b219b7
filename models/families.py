"""Prompt formats of the common code-model families, and detection of a model's family.

Each format turns (prefix, suffix) into the exact token list the family was trained on. Source
text is tokenized as plain text (``<|endoftext|>`` typed in a user's file stays text); the FIM
markers are looked up as single special tokens. Formats that put the suffix first (SPM) keep
the typed-at end of the prompt last, which is what the KV prefix cache wants.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

# Bumped whenever a format's token layout changes, so cached results keyed by it expire.
PROMPT_FORMAT_VERSION = 1


class Vocabulary(Protocol):
    """What a prompt format needs from a tokenizer; the engine's model implements it."""

    def tokenize_text(self, text: str) -> list[int]:
        """Tokens of source text, with special-token text kept as text and no BOS."""
        ...

    def special_token(self, piece: str) -> int | None:
        """The id of the special token spelled ``piece``, or None when the vocabulary lacks it."""
        ...

    @property
    def bos_token(self) -> int | None: ...


@dataclass(frozen=True)
class FimMarkers:
    prefix: str
    suffix: str
    middle: str | None  # None when the format ends on the prefix (Codestral's SPM)


@dataclass(frozen=True)
class PromptFormat:
    name: str
    fim: FimMarkers | None
    order: Literal["psm", "spm"] = "psm"
    add_bos: bool = False
    stop: tuple[str, ...] = ()
    architectures: tuple[str, ...] = ()
    name_hints: tuple[str, ...] = field(default=())

    @property
    def supports_fim(self) -> bool:
        return self.fim is not None

    def markers_present(self, vocab: Vocabulary) -> bool:
        if self.fim is None:
            return True
        pieces = [self.fim.prefix, self.fim.suffix, *([self.fim.middle] if self.fim.middle else [])]
        return all(vocab.special_token(p) is not None for p in pieces)

    def build(self, vocab: Vocabulary, prefix: str, suffix: str) -> list[int]:
        """The token list for a completion at the point between ``prefix`` and ``suffix``."""
        head: list[int] = []
        if self.add_bos and vocab.bos_token is not None:
            head.append(vocab.bos_token)
        if self.fim is None:
            return [*head, *vocab.tokenize_text(prefix)]
        pre = _require(vocab, self.fim.prefix, self.name)
        suf = _require(vocab, self.fim.suffix, self.name)
        mid = _require(vocab, self.fim.middle, self.name) if self.fim.middle else None
        prefix_tokens = vocab.tokenize_text(prefix)
        suffix_tokens = vocab.tokenize_text(suffix)
        tail = [mid] if mid is not None else []
        if self.order == "spm":
            return [*head, suf, *suffix_tokens, pre, *prefix_tokens, *tail]
        return [*head, pre, *prefix_tokens, suf, *suffix_tokens, *tail]


def _require(vocab: Vocabulary, piece: str, family: str) -> int:
    token = vocab.special_token(piece)
    if token is None:
        raise ValueError(f"the vocabulary has no {piece!r} token required by the {family} format")
    return token


PLAIN = PromptFormat(name="plain", fim=None, add_bos=True)

QWEN_CODER = PromptFormat(
    name="qwen2.5-coder",
    fim=FimMarkers("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"),
    stop=(
        "<|endoftext|>",
        "<|fim_prefix|>",
        "<|fim_suffix|>",
        "<|fim_middle|>",
        "<|fim_pad|>",
        "<|repo_name|>",
        "<|file_sep|>",
        "<|im_start|>",
        "<|im_end|>",
    ),
    architectures=("qwen2", "qwen3"),
    name_hints=("qwen",),
)

STARCODER2 = PromptFormat(
    name="starcoder2",
    fim=FimMarkers("<fim_prefix>", "<fim_suffix>", "<fim_middle>"),
    stop=(
        "<|endoftext|>",
        "<file_sep>",
        "<fim_prefix>",
        "<fim_suffix>",
        "<fim_middle>",
        "<fim_pad>",
    ),
    architectures=("starcoder2", "starcoder"),
    name_hints=("starcoder",),
)

CODELLAMA = PromptFormat(
    name="codellama",
    fim=FimMarkers("▁<PRE>", "▁<SUF>", "▁<MID>"),
    add_bos=True,
    stop=("▁<EOT>", "</s>"),
    architectures=("llama",),
    name_hints=("codellama", "code llama", "code-llama"),
)

DEEPSEEK_CODER = PromptFormat(
    name="deepseek-coder",
    fim=FimMarkers("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"),
    add_bos=True,
    stop=("<｜end▁of▁sentence｜>", "<|EOT|>"),
    architectures=("llama", "deepseek2"),
    name_hints=("deepseek",),
)

CODEGEMMA = PromptFormat(
    name="codegemma",
    fim=FimMarkers("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"),
    add_bos=True,
    stop=("<|file_separator|>", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<eos>"),
    architectures=("gemma", "gemma2", "gemma3"),
    name_hints=("codegemma",),
)

CODESTRAL = PromptFormat(
    name="codestral",
    fim=FimMarkers("[PREFIX]", "[SUFFIX]", None),
    order="spm",
    add_bos=True,
    stop=("</s>",),
    architectures=("llama", "mistral"),
    name_hints=("codestral",),
)

FORMATS: dict[str, PromptFormat] = {
    f.name: f
    for f in (QWEN_CODER, STARCODER2, CODELLAMA, DEEPSEEK_CODER, CODEGEMMA, CODESTRAL, PLAIN)
}


def detect_format(
    architecture: str, model_name: str, vocab: Vocabulary, has_fim_tokens: bool
) -> PromptFormat:
    """Pick the prompt format for a loaded model.

    A FIM format is chosen only when the vocabulary holds its markers and the model says it is a
    FIM model (llama.cpp found FIM tokens) or its name names the family; otherwise plain prefix.
    Within shared markers (Qwen and CodeGemma both use ``<|fim_prefix|>``) the architecture decides.
    """
    name = model_name.lower()
    candidates = [f for f in FORMATS.values() if f.fim is not None and f.markers_present(vocab)]
    for fmt in candidates:
        named = any(hint in name for hint in fmt.name_hints)
        if named and (has_fim_tokens or architecture in fmt.architectures):
            return fmt
    if has_fim_tokens:
        for fmt in candidates:
            if architecture in fmt.architectures:
                return fmt
        if candidates:
            return candidates[0]
    return PLAIN
