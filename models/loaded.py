"""A model loaded into llama.cpp, with what assist needs to know about it."""

from __future__ import annotations

import ctypes
import functools
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import llama_cpp
import numpy as np
from llama_cpp import Llama, _internals

from models.backend import active_backend, cpu_threads, gpu_offload_supported, route_llama_logs
from models.families import FORMATS, PromptFormat, detect_format
from models.fingerprint import model_fingerprint
from models.gguf import GGUFHeader
from models.pieces import PieceIndex
from models.resolve import HOW_TO_GET_A_MODEL, ModelNotFound, ResolvedModel

# Texts whose agreeing tokens are remembered (indentations and words come back).
_AGREEING_KEPT = 256

log = logging.getLogger(__name__)
# Texts whose tokens are remembered: a prompt is cut to its budget line by line, and the same
# request again (a cache hit needs its prompt built to find its key) counts the same lines.
TOKENIZED_TEXTS = 4096

# The ``flash_attn`` setting, as llama.cpp's context parameter.
_FLASH_ATTN = {
    "auto": llama_cpp.LLAMA_FLASH_ATTN_TYPE_AUTO,
    "on": llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED,
    "off": llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED,
}

# Special tokens that open a reasoning ("thinking") section in the vocabularies that have one.
# Context left free beside a prompt and its answer (a healed lead's tokens, a stop's look-ahead).
CONTEXT_SPARE_TOKENS = 8
THINKING_MARKERS = (
    "<think>",
    "<thinking>",
    "<|thinking|>",
    "<|begin_of_thought|>",
    "<|start_thinking|>",
    "<reasoning>",
    "<|reasoning|>",
    "◁think▷",
)


@dataclass
class ModelFacts:
    """Everything about the loaded model that /health, doctor and the prompt builder report."""

    path: str
    source: str
    name: str
    architecture: str
    fingerprint: str
    prompt_format: str
    fim_tokens: dict[str, int]
    eog_tokens: list[int]
    stop_tokens: list[int]
    stop_strings: list[str]
    suppressed_tokens: list[int]
    backend: str  # llama.cpp's compute backend: "CUDA", "Metal", "CPU" (not a remote server)
    gpu_offload: bool
    n_gpu_layers: int  # layers offloaded to the GPU (0 without offload)
    n_layers: int
    n_threads: int
    flash_attn: str  # the setting: "auto", "on" or "off"
    n_ctx: int
    n_ctx_train: int
    load_seconds: float
    extra: dict[str, str] = field(default_factory=dict)


def prompt_room(n_ctx: int, answer_tokens: int) -> int:
    """The most prompt tokens a context of ``n_ctx`` holds beside an answer of
    ``answer_tokens``."""
    return n_ctx - answer_tokens - CONTEXT_SPARE_TOKENS


def _load(
    path: Path,
    n_ctx: int,
    n_batch: int,
    threads: int,
    layers: int,
    vocab_only: bool,
    flash_attn: str,
) -> Llama:
    """llama.cpp's model and context, or ``ModelNotFound`` saying why it could not load."""
    try:
        return Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_batch=n_batch,
            n_ubatch=n_batch,
            n_threads=threads,
            n_threads_batch=threads,
            n_gpu_layers=layers,
            swa_full=True,  # sliding-window models keep the whole prefix, so it can be reused
            vocab_only=vocab_only,  # remote generation: the vocabulary, not the weights
            flash_attn=flash_attn == "on",
            verbose=False,
        )
    except (ValueError, RuntimeError, OSError) as exc:
        raise ModelNotFound(
            f"llama.cpp could not load {path} ({exc}); the file may be corrupt or "
            f"of an architecture this llama.cpp build does not know. {HOW_TO_GET_A_MODEL}"
        ) from exc


# Owns the Llama object (use it from the engine's worker thread only), whose context holds
# ``sequences`` sequences: each in a KV stream of its own of n_ctx cells or, with ``unified``, all
# in one cache of kv_cells cells where a copied prefix is shared (attention then runs over every
# cell in use, so its cost grows with all the documents held). Answers the Vocabulary protocol for
# prompt formats (the vocabulary is read-only after load and safe from any thread), and knows the
# model's family, FIM markers, stop tokens, reasoning tokens to suppress and its fingerprint. With
# vocab_only only the vocabulary is loaded: generation runs on the remote servers, and text_of
# spells a token prompt out for them.
class LoadedModel:
    def __init__(
        self,
        resolved: ResolvedModel,
        n_ctx: int,
        n_batch: int,
        n_threads: int | None,
        n_gpu_layers: int,
        prompt_format: str | None,
        fingerprint_memo: Path | None,
        sequences: int = 1,
        kv_cells: int | None = None,
        unified: bool = False,
        vocab_only: bool = False,
        flash_attn: str = "auto",
    ) -> None:
        route_llama_logs()
        offload = gpu_offload_supported()
        threads = n_threads or cpu_threads()
        layers = n_gpu_layers if offload else 0
        started = time.perf_counter()
        self.llm = _load(resolved.path, n_ctx, n_batch, threads, layers, vocab_only, flash_attn)
        self.unified = unified or sequences == 1
        if not vocab_only and (
            sequences > 1 or (kv_cells or n_ctx) != n_ctx or flash_attn == "auto"
        ):
            cells = (kv_cells or n_ctx) if self.unified else n_ctx * sequences
            self._use_sequences(sequences, cells, self.unified, _FLASH_ATTN[flash_attn])
        load_seconds = time.perf_counter() - started
        n_layers = int(llama_cpp.llama_model_n_layer(self.llm.model))
        self.vocab = self.llm._model.vocab
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self.vocab))
        self._bos = int(self.llm.token_bos())
        self._tokens_of = functools.lru_cache(maxsize=TOKENIZED_TEXTS)(self._text_tokens)
        self._piece_buffer = ctypes.create_string_buffer(256)
        self._starting: dict[str, tuple[int, ...]] = {}
        self._stripped: list[bytes] | None = None  # each token's bytes, leading blanks removed
        self._starting_lock = threading.Lock()
        self._pieces: PieceIndex | None = None
        self._agreeing: dict[tuple[bytes, bool], np.ndarray] = {}  # the last texts asked about

        fim = self._fim_tokens()
        header = resolved.header
        self.format: PromptFormat = self._prompt_format(prompt_format, header, len(fim) == 3)
        stop_tokens, stop_strings = self._stops()
        eog = [t for t in self._candidate_eog() if llama_cpp.llama_vocab_is_eog(self.vocab, t)]
        suppressed = [t for m in THINKING_MARKERS if (t := self.special_token(m)) is not None]

        self.facts = ModelFacts(
            path=str(resolved.path),
            source=resolved.source,
            name=header.name or resolved.path.stem,
            architecture=header.architecture,
            fingerprint=model_fingerprint(resolved.path, fingerprint_memo),
            prompt_format=self.format.name,
            fim_tokens=fim,
            eog_tokens=eog,
            stop_tokens=sorted(set(stop_tokens) | set(eog)),
            stop_strings=stop_strings,
            suppressed_tokens=suppressed,
            backend=active_backend(),
            gpu_offload=offload,
            n_gpu_layers=min(n_layers, n_layers if layers < 0 else layers),
            n_layers=n_layers,
            n_threads=threads,
            flash_attn=flash_attn,
            n_ctx=n_ctx,
            n_ctx_train=int(self.llm._model.n_ctx_train()),
            load_seconds=load_seconds,
        )

    def _fim_tokens(self) -> dict[str, int]:
        """The vocabulary's fill-in-the-middle tokens it has."""
        fim = {
            "prefix": int(llama_cpp.llama_vocab_fim_pre(self.vocab)),
            "suffix": int(llama_cpp.llama_vocab_fim_suf(self.vocab)),
            "middle": int(llama_cpp.llama_vocab_fim_mid(self.vocab)),
        }
        return {k: v for k, v in fim.items() if v >= 0}

    def _prompt_format(self, named: str | None, header: GGUFHeader, has_fim: bool) -> PromptFormat:
        """The prompt format the setting names, else the one the model's header and
        vocabulary show."""
        if not named:
            return detect_format(header.architecture, header.name, self, has_fim)
        if named not in FORMATS:
            raise ModelNotFound(
                f"unknown prompt format {named!r}; known: {', '.join(sorted(FORMATS))}"
            )
        return FORMATS[named]

    def _stops(self) -> tuple[list[int], list[str]]:
        """The format's stop pieces: those the vocabulary has as one special token, and the
        others as strings."""
        stop_tokens: list[int] = []
        stop_strings: list[str] = []
        for piece in self.format.stop:
            token = self.special_token(piece)
            if token is None:
                stop_strings.append(piece)
            else:
                stop_tokens.append(token)
        return stop_tokens, stop_strings

    def _use_sequences(self, sequences: int, cells: int, unified: bool, flash: int) -> None:
        """Replace the context ``Llama`` made with one of ``sequences`` sequences and ``cells``
        KV cells: shared by all (``unified``) or split evenly into a stream per sequence; and
        flash attention as ``flash`` says (``Llama`` knows only on and off, not llama.cpp's
        "auto", which turns it on where every layer's device supports it)."""
        params = llama_cpp.llama_context_params.from_buffer_copy(self.llm.context_params)
        params.n_ctx = cells
        params.n_seq_max = sequences
        params.kv_unified = unified
        params.flash_attn_type = flash
        self.llm._ctx.close()
        try:
            self.llm._ctx = _internals.LlamaContext(
                model=self.llm._model, params=params, verbose=False
            )
        except ValueError as exc:
            raise ModelNotFound(
                f"llama.cpp could not make a context of {sequences} sequences and {cells} KV "
                f"cells ({exc}); lower 'parallel', 'kv_slots' or 'n_ctx'"
            ) from exc
        self.llm.context_params = params

    def _candidate_eog(self) -> list[int]:
        ids = {
            int(llama_cpp.llama_vocab_eos(self.vocab)),
            int(llama_cpp.llama_vocab_eot(self.vocab)),
        }
        for piece in (
            "<end_of_turn>",
            "<|endoftext|>",
            "<|im_end|>",
            "<|eot_id|>",
            "</s>",
            "<eos>",
        ):
            token = self.special_token(piece)
            if token is not None:
                ids.add(token)
        return sorted(t for t in ids if t >= 0)

    # -- Vocabulary protocol ----------------------------------------------------------------
    def tokenize_text(self, text: str) -> list[int]:
        """The tokens of ``text`` as plain text (special markers in it are not special)."""
        return list(self._tokens_of(text))

    def _text_tokens(self, text: str) -> tuple[int, ...]:
        return tuple(self._tokenize(text.encode("utf-8", "surrogatepass"), special=False))

    def special_token(self, piece: str) -> int | None:
        tokens = self._tokenize(piece.encode("utf-8"), special=True)
        if len(tokens) != 1:
            return None
        attr = int(llama_cpp.llama_vocab_get_attr(self.vocab, tokens[0]))
        # A plain-text token that happens to spell the marker is not a marker.
        if attr & (llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_USER_DEFINED):
            return tokens[0]
        return None

    @property
    def context(self) -> llama_cpp.llama_context_p:
        """llama.cpp's context: the KV cache and the decoder the engine steps."""
        return self.llm.ctx

    @property
    def bos_token(self) -> int | None:
        return self._bos if self._bos >= 0 else None

    def _tokenize(self, data: bytes, special: bool) -> list[int]:
        if not data:
            return []
        capacity = len(data) + 8
        buffer = (llama_cpp.llama_token * capacity)()
        count = llama_cpp.llama_tokenize(
            self.vocab, data, len(data), buffer, capacity, False, special
        )
        if count < 0:
            capacity = -count
            buffer = (llama_cpp.llama_token * capacity)()
            count = llama_cpp.llama_tokenize(
                self.vocab, data, len(data), buffer, capacity, False, special
            )
        return list(buffer[:count])

    # -- decoding (worker thread only) ----------------------------------------------------
    def piece(self, token: int) -> bytes:
        """The bytes of one token, whatever their length (llama-cpp-python cuts at 32)."""
        return _token_bytes(self.vocab, token, self._piece_buffer)

    def tokens_starting_with(self, text: str) -> tuple[int, ...]:
        """The tokens whose text, after any white space it begins with, starts with ``text``
        (a comment marker: every token that opens a comment). The vocabulary's pieces are read
        once (about 0.15 s for 150,000 tokens), then each ``text`` costs a scan of them and is
        remembered; any thread."""
        with self._starting_lock:
            found = self._starting.get(text)
            if found is None:
                if self._stripped is None:
                    buffer = ctypes.create_string_buffer(256)
                    self._stripped = [
                        _token_bytes(self.vocab, token, buffer).lstrip(b" \t\r\n")
                        for token in range(self.n_vocab)
                    ]
                wanted = text.encode("utf-8")
                found = self._starting[text] = tuple(
                    token for token, piece in enumerate(self._stripped) if piece.startswith(wanted)
                )
            return found

    def agreeing(self, text: bytes, *, to_code: bool = False) -> np.ndarray:
        """The tokens that can begin ``text`` (token healing's choice, ``models.pieces``), never
        an end of the answer; the vocabulary is indexed on first use (about 0.6 s for 150,000
        tokens; the engine does it aside when it starts); any thread."""
        with self._starting_lock:
            pieces = self._piece_index()
            found = self._agreeing.get((text, to_code))
            if found is None:
                if len(self._agreeing) >= _AGREEING_KEPT:
                    self._agreeing.clear()
                found = pieces.agreeing(text, to_code=to_code)
                self._agreeing[(text, to_code)] = found
            return found

    def after_blanks(self) -> np.ndarray:
        """The tokens that may follow a lead that ends in blanks (``models.pieces``)."""
        with self._starting_lock:
            return self._piece_index().after_blanks()

    def _piece_index(self) -> PieceIndex:
        if self._pieces is None:
            buffer = ctypes.create_string_buffer(256)
            pieces = [_token_bytes(self.vocab, t, buffer) for t in range(self.n_vocab)]
            ends = {*self.facts.stop_tokens, *self.facts.suppressed_tokens}
            self._pieces = PieceIndex(pieces, ends)
        return self._pieces

    def text_of(self, tokens: list[int]) -> str:
        """A token prompt as text, markers spelled out (``<|fim_prefix|>``), a leading BOS
        left out: what a remote server tokenizes back into the same prompt."""
        if tokens and tokens[0] == self.bos_token:
            tokens = tokens[1:]
        buffer = ctypes.create_string_buffer(256)
        parts = []
        for token in tokens:
            n = llama_cpp.llama_token_to_piece(self.vocab, token, buffer, len(buffer), 0, True)
            if n < 0:
                buffer = ctypes.create_string_buffer(-n)
                n = llama_cpp.llama_token_to_piece(self.vocab, token, buffer, len(buffer), 0, True)
            parts.append(buffer.raw[:n])
        return b"".join(parts).decode("utf-8", errors="replace")

    def close(self) -> None:
        self.llm.close()


def _token_bytes(
    vocab: llama_cpp.llama_vocab_p, token: int, buffer: ctypes.Array[ctypes.c_char]
) -> bytes:
    """The bytes of one token, read into ``buffer`` (a longer one when it does not fit)."""
    n = llama_cpp.llama_token_to_piece(vocab, token, buffer, len(buffer), 0, False)
    if n < 0:
        buffer = ctypes.create_string_buffer(-n)
        n = llama_cpp.llama_token_to_piece(vocab, token, buffer, len(buffer), 0, False)
    return buffer.raw[:n]
