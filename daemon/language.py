"""Which language a file is written in, and one record of facts per language.
``detect_language`` names it; ``language_info`` gives its comments, strings, skeleton and tools."""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import Any, Literal

log = logging.getLogger(__name__)


_HANDLING: dict[str, re.Pattern[str]] = {
    "python": re.compile(r"\braise\b|\btry:|\bexcept\b|\bif not\b|\bisinstance\(|\bassert\b"),
    "go": re.compile(r"err != nil|errors\.New|fmt\.Errorf|\bpanic\("),
    "rust": re.compile(r"\bErr\(|\?;|\?\)|\.ok_or|\bpanic!|\bexpect\(|\bmatch\b"),
    "c": re.compile(r"==\s*NULL|!=\s*NULL|\bif\s*\(\s*!|\breturn\s+-1\b|\berrno\b|\bthrow\b"),
}
DEFAULT_HANDLING = re.compile(
    r"\bthrow\b|\btry\s*\{|\bcatch\b|\bif\s*\(\s*!|===?\s*(null|undefined)"
)


@dataclass(frozen=True)
class LanguageInfo:
    id: str
    name: str
    line_comment: str | None
    block_comment: tuple[str, str] | None
    ecosystem: str | None
    # What the code's own lexers need: the quotes that open a string within a line (Rust's
    # ``'`` is a lifetime or a char), strings in three quotes that may span lines (Python's),
    # and backticks: a template that spans lines (JavaScript) or a raw string that does and
    # has no escapes (Go).
    quotes: str = "\"'`"
    triple_quoted: bool = False
    backticks: Literal["none", "template", "raw"] = "none"
    # The statement a skeleton puts in a body not written yet, and what shows error handling or
    # input validation in a body.
    placeholder: str = "..."
    handling: re.Pattern[str] = DEFAULT_HANDLING
    # The tools that format or lint files of the language (the workspace's style).
    tools: frozenset[str] = frozenset()


_JS = ("javascript", "javascriptreact", "typescript", "typescriptreact")
_JS_PLACEHOLDER = 'throw new Error("not implemented");'
# Each language's own facts beyond its comments, where they are not the defaults.
_FACTS: dict[str, dict[str, Any]] = {
    "python": {"triple_quoted": True, "handling": _HANDLING["python"]},
    **{js: {"backticks": "template", "placeholder": _JS_PLACEHOLDER} for js in _JS},
    "go": {
        "backticks": "raw",
        "placeholder": 'panic("not implemented")',
        "handling": _HANDLING["go"],
    },
    "rust": {"quotes": '"', "placeholder": "todo!()", "handling": _HANDLING["rust"]},
    "java": {"placeholder": 'throw new UnsupportedOperationException("not implemented");'},
    "kotlin": {"placeholder": 'TODO("not implemented")'},
    "csharp": {"placeholder": "throw new NotImplementedException();"},
    "c": {"placeholder": "/* not implemented */", "handling": _HANDLING["c"]},
    "cpp": {
        "placeholder": 'throw std::logic_error("not implemented");',
        "handling": _HANDLING["c"],
    },
}
# The tools that format or lint each language.
_PRETTIER = (*_JS, "vue", "svelte", "json", "jsonc", "css", "scss", "less", "html", "markdown")
_TOOLS: dict[str, tuple[str, ...]] = {
    "ruff": ("python",),
    "black": ("python",),
    "prettier": (*_PRETTIER, "yaml", "graphql"),
    "eslint": (*_JS, "vue", "svelte"),
    "rustfmt": ("rust",),
    "clang-format": (
        *("c", "cpp", "cuda-cpp", "objective-c", "objective-cpp"),
        *("java", "csharp", "proto"),
    ),
    "gofmt": ("go",),
}


_C = ("/*", "*/")
_HTML = ("<!--", "-->")


def _table(*rows: LanguageInfo) -> dict[str, LanguageInfo]:
    """The rows by id, each with its facts beyond comments (``_FACTS``) and its tools."""
    table = {}
    for row in rows:
        tools = frozenset(tool for tool, ids in _TOOLS.items() if row.id in ids)
        table[row.id] = replace(row, **_FACTS.get(row.id, {}), tools=tools)
    return table


def languages_of_tool(tool: str) -> frozenset[str]:
    """The languages a formatter or linter works on."""
    return frozenset(_TOOLS.get(tool, ()))


_LANGUAGES: dict[str, LanguageInfo] = _table(
    LanguageInfo("python", "Python", "#", None, "python"),
    LanguageInfo("javascript", "JavaScript", "//", _C, "node"),
    LanguageInfo("javascriptreact", "JavaScript (JSX)", "//", _C, "node"),
    LanguageInfo("typescript", "TypeScript", "//", _C, "node"),
    LanguageInfo("typescriptreact", "TypeScript (TSX)", "//", _C, "node"),
    LanguageInfo("vue", "Vue", None, _HTML, "node"),
    LanguageInfo("svelte", "Svelte", None, _HTML, "node"),
    LanguageInfo("go", "Go", "//", _C, "go"),
    LanguageInfo("rust", "Rust", "//", _C, "rust"),
    LanguageInfo("java", "Java", "//", _C, "jvm"),
    LanguageInfo("kotlin", "Kotlin", "//", _C, "jvm"),
    LanguageInfo("scala", "Scala", "//", _C, "jvm"),
    LanguageInfo("groovy", "Groovy", "//", _C, "jvm"),
    LanguageInfo("clojure", "Clojure", ";", None, "jvm"),
    LanguageInfo("c", "C", "//", _C, "cmake"),
    LanguageInfo("cpp", "C++", "//", _C, "cmake"),
    LanguageInfo("cuda-cpp", "CUDA C++", "//", _C, "cmake"),
    LanguageInfo("objective-c", "Objective-C", "//", _C, None),
    LanguageInfo("objective-cpp", "Objective-C++", "//", _C, None),
    LanguageInfo("csharp", "C#", "//", _C, None),
    LanguageInfo("fsharp", "F#", "//", ("(*", "*)"), None),
    LanguageInfo("ruby", "Ruby", "#", ("=begin", "=end"), None),
    LanguageInfo("php", "PHP", "//", _C, None),
    LanguageInfo("lua", "Lua", "--", ("--[[", "]]"), None),
    LanguageInfo("shellscript", "Shell script", "#", None, None),
    LanguageInfo("fish", "Fish", "#", None, None),
    LanguageInfo("powershell", "PowerShell", "#", ("<#", "#>"), None),
    LanguageInfo("bat", "Batch", "REM", None, None),
    LanguageInfo("swift", "Swift", "//", _C, None),
    LanguageInfo("dart", "Dart", "//", _C, None),
    LanguageInfo("haskell", "Haskell", "--", ("{-", "-}"), None),
    LanguageInfo("elixir", "Elixir", "#", None, None),
    LanguageInfo("erlang", "Erlang", "%", None, None),
    LanguageInfo("ocaml", "OCaml", None, ("(*", "*)"), None),
    LanguageInfo("julia", "Julia", "#", ("#=", "=#"), None),
    LanguageInfo("r", "R", "#", None, None),
    LanguageInfo("perl", "Perl", "#", None, None),
    LanguageInfo("zig", "Zig", "//", None, None),
    LanguageInfo("nim", "Nim", "#", ("#[", "]#"), None),
    LanguageInfo("sql", "SQL", "--", _C, None),
    LanguageInfo("html", "HTML", None, _HTML, None),
    LanguageInfo("xml", "XML", None, _HTML, None),
    LanguageInfo("css", "CSS", None, _C, None),
    LanguageInfo("scss", "SCSS", "//", _C, None),
    LanguageInfo("less", "Less", "//", _C, None),
    LanguageInfo("json", "JSON", None, None, None),
    LanguageInfo("jsonc", "JSON with comments", "//", _C, None),
    LanguageInfo("yaml", "YAML", "#", None, None),
    LanguageInfo("toml", "TOML", "#", None, None),
    LanguageInfo("ini", "INI", ";", None, None),
    LanguageInfo("markdown", "Markdown", None, _HTML, None),
    LanguageInfo("restructuredtext", "reStructuredText", None, None, None),
    LanguageInfo("latex", "LaTeX", "%", None, None),
    LanguageInfo("dockerfile", "Dockerfile", "#", None, None),
    LanguageInfo("makefile", "Makefile", "#", None, None),
    LanguageInfo("cmake", "CMake", "#", ("#[[", "]]"), None),
    LanguageInfo("terraform", "Terraform", "#", _C, None),
    LanguageInfo("proto", "Protocol Buffers", "//", _C, None),
    LanguageInfo("graphql", "GraphQL", "#", None, None),
    LanguageInfo("vim", "Vim script", '"', None, None),
    LanguageInfo("tcl", "Tcl", "#", None, None),
    LanguageInfo("awk", "AWK", "#", None, None),
    LanguageInfo("pip-requirements", "pip requirements", "#", None, "python"),
)


def _invert(groups: dict[str, str]) -> dict[str, str]:
    """{language: "word word ..."} as {word: language}; tables read best grouped by language."""
    return {word: language for language, words in groups.items() for word in words.split()}


# Editor ids, vim filetypes, emacs modes and interpreter names that mean a canonical id.
_ALIASES = _invert(
    {
        "python": "py python3 pyi pypy",
        "javascript": "js node nodejs js2 bun",
        "javascriptreact": "jsx",
        "typescript": "ts deno ts-node tsx-node",
        "typescriptreact": "tsx typescript-tsx tsx-ts",
        "go": "golang",
        "rust": "rs",
        "kotlin": "kt kts",
        "cpp": "c++ cxx cc hpp",
        "cuda-cpp": "cuda",
        "objective-c": "objc",
        "objective-cpp": "objcpp objc++",
        "csharp": "cs c#",
        "fsharp": "fs f#",
        "ruby": "rb",
        "shellscript": "sh bash zsh ksh dash ash shell shell-script",
        "powershell": "ps1 pwsh",
        "bat": "batch cmd",
        "haskell": "hs runhaskell runghc",
        "elixir": "ex exs",
        "erlang": "erl escript",
        "ocaml": "ml",
        "julia": "jl",
        "perl": "pl cperl",
        "r": "rscript",
        "lua": "luajit",
        "markdown": "md gfm",
        "restructuredtext": "rst",
        "latex": "tex",
        "yaml": "yml",
        "jsonc": "json5",
        "dockerfile": "docker",
        "makefile": "make gmake makefile-gmake makefile-bsdmake",
        "html": "htm xhtml",
        "scss": "sass",
        "terraform": "tf hcl",
        "proto": "protobuf proto3",
        "graphql": "gql",
        "vim": "viml",
        "tcl": "tclsh",
        "awk": "gawk mawk nawk",
        "pip-requirements": "requirements",
    }
)

# Special file names, compared lowercased.
_FILENAMES = _invert(
    {
        "makefile": "makefile gnumakefile bsdmakefile",
        "dockerfile": "dockerfile containerfile",
        "cmake": "cmakelists.txt",
        "ruby": "gemfile rakefile vagrantfile podfile brewfile",
        "groovy": "jenkinsfile",
        "toml": "pipfile cargo.lock uv.lock poetry.lock pdm.lock",
        "jsonc": "tsconfig.json jsconfig.json .eslintrc .babelrc",
        "json": ".prettierrc",
        "yaml": ".clang-format _clang-format",
        "shellscript": ".bashrc .bash_profile .profile .zshrc .zprofile .envrc",
        "ini": ".editorconfig .gitconfig",
        "python": "snakefile sconstruct",
    }
)

_EXTENSIONS = _invert(
    {
        "python": ".py .pyi .pyw .pyx",
        "javascript": ".js .mjs .cjs",
        "javascriptreact": ".jsx",
        "typescript": ".ts .mts .cts",
        "typescriptreact": ".tsx",
        "vue": ".vue",
        "svelte": ".svelte",
        "go": ".go",
        "rust": ".rs",
        "java": ".java",
        "kotlin": ".kt .kts",
        "scala": ".scala .sc",
        "groovy": ".groovy .gradle",
        "clojure": ".clj .cljs .cljc .edn",
        "c": ".c .h",
        "cpp": ".cpp .cc .cxx .c++ .hpp .hh .hxx .h++ .ipp .tpp .inl .ixx .cppm .ino",
        "cuda-cpp": ".cu .cuh",
        "objective-c": ".m",
        "objective-cpp": ".mm",
        "csharp": ".cs .csx",
        "fsharp": ".fs .fsx .fsi",
        "ruby": ".rb .rake .gemspec .ru",
        "php": ".php .phtml",
        "lua": ".lua",
        "shellscript": ".sh .bash .zsh .ksh",
        "fish": ".fish",
        "powershell": ".ps1 .psm1",
        "bat": ".bat .cmd",
        "swift": ".swift",
        "dart": ".dart",
        "haskell": ".hs .lhs",
        "elixir": ".ex .exs .heex",
        "erlang": ".erl .hrl",
        "ocaml": ".ml .mli",
        "julia": ".jl",
        "r": ".r .rmd",
        "perl": ".pl .pm .t",
        "zig": ".zig",
        "nim": ".nim",
        "sql": ".sql",
        "html": ".html .htm .xhtml",
        "xml": ".xml .xsd .xsl .xslt .svg .plist .csproj .fsproj .pom",
        "css": ".css",
        "scss": ".scss .sass",
        "less": ".less",
        "json": ".json",
        "jsonc": ".jsonc .json5 .code-workspace",
        "yaml": ".yaml .yml",
        "toml": ".toml",
        "ini": ".ini .cfg",
        "markdown": ".md .markdown .mdx",
        "restructuredtext": ".rst",
        "latex": ".tex",
        "dockerfile": ".dockerfile",
        "makefile": ".mk .mak",
        "cmake": ".cmake",
        "terraform": ".tf .tfvars .hcl",
        "proto": ".proto",
        "graphql": ".graphql .gql",
        "vim": ".vim",
        "tcl": ".tcl",
        "awk": ".awk",
    }
)

# magika's content labels that are neither a canonical id nor an alias of one.
_MAGIKA_LABELS = {
    "objectivec": "objective-c",
    "gemfile": "ruby",
    "gemspec": "ruby",
    "gradle": "groovy",
}

# Ids a client sends when it knows nothing; detection carries on as if none was given.
_NO_LANGUAGE = frozenset({"plaintext", "text", "txt", "plain", "unknown", "untitled", ""})
_ID_SHAPE = re.compile(r"[a-z][a-z0-9+#._-]{0,39}")
_CPP_IN_HEADER = re.compile(
    r"^\s*(?:namespace\b|template\s*<|class\s+\w+[^;]*\{|#include\s*<(?:string|vector|memory|"
    r"iostream|map|utility|optional)>|using\s+namespace\b)|\bstd::",
    re.MULTILINE,
)
_VIM_MODELINE = re.compile(r"(?:^|\s)(?:vi|vim|ex)(?:[<=>]?\d+)?:\s*(?:set?\s+)?(.*)")
_VIM_FILETYPE = re.compile(r"(?:^|[\s:])(?:ft|filetype|syntax|syn)=([\w.+#-]+)")
_EMACS_MODELINE = re.compile(r"-\*-\s*(.*?)\s*-\*-")
_EMACS_MODE = re.compile(r"(?:^|;)\s*mode\s*:\s*([\w+#-]+)", re.IGNORECASE)


def _canonical(name: str | None) -> str | None:
    """The canonical id for a known id or alias, or None."""
    if not name:
        return None
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    return key if key in _LANGUAGES else None


def language_info(language_id: str | None) -> LanguageInfo | None:
    """Facts about a language, by canonical id or alias; None for an unknown one."""
    canonical = _canonical(language_id)
    return _LANGUAGES[canonical] if canonical else None


def known_languages() -> list[str]:
    return sorted(_LANGUAGES)


def _from_editor_id(language_id: str | None) -> str | None:
    if language_id is None:
        return None
    key = language_id.strip().lower()
    if key in _NO_LANGUAGE:
        return None
    canonical = _canonical(key)
    if canonical:
        return canonical
    # Keep an id we don't know (an editor may know better), but not arbitrary text.
    return key if _ID_SHAPE.fullmatch(key) else None


def _from_path(path: str) -> str | None:
    name = PurePath(path.replace("\\", "/")).name
    lower = name.lower()
    if lower in _FILENAMES:
        return _FILENAMES[lower]
    # Dockerfile.dev, Makefile.linux: the file name wins over the variant suffix.
    if lower.startswith(("dockerfile.", "containerfile.")):
        return "dockerfile"
    if lower.startswith("makefile."):
        return "makefile"
    if lower.startswith("requirements") and lower.endswith((".txt", ".in")):
        return "pip-requirements"
    suffix = PurePath(lower).suffix
    return _EXTENSIONS.get(suffix) if suffix else None


def _from_shebang(first_line: str) -> str | None:
    if not first_line.startswith("#!"):
        return None
    words = first_line[2:].split()
    if not words:
        return None
    program = PurePath(words[0]).name
    rest = words[1:]
    if program == "env":
        # env [-S] [-i] [-u NAME] [NAME=value ...] interpreter ...
        program = ""
        skip_next = False
        for word in rest:
            if skip_next:
                skip_next = False
            elif word in ("-u", "--unset", "-C", "--chdir"):
                skip_next = True
            elif word.startswith("-") or "=" in word:
                continue
            else:
                program = PurePath(word).name
                rest = rest[rest.index(word) + 1 :]
                break
    program = program.lower()
    if program == "uv" and rest[:2] == ["run", "--script"]:
        return "python"
    base = re.sub(r"[\d.]+$", "", program) or program
    return _canonical(base) or _canonical(program)


def _from_modeline(text: str) -> str | None:
    # Only the edges of the text count, and only they are split (the text may be large).
    head = text[:4096].splitlines()[:5]
    tail = text[-4096:].splitlines()[-5:] if len(text) > 4096 or len(head) == 5 else []
    for line in head + tail:
        vim = _VIM_MODELINE.search(line)
        if vim:
            filetype = _VIM_FILETYPE.search(vim.group(1))
            if filetype and (found := _canonical(filetype.group(1))):
                return found
        emacs = _EMACS_MODELINE.search(line)
        if emacs:
            body = emacs.group(1)
            mode = _EMACS_MODE.search(body)
            name = mode.group(1) if mode else (body if ":" not in body else "")
            name = name.strip().lower().removesuffix("-mode").removesuffix("-ts")
            if found := _canonical(name):
                return found
    return None


class _MagikaDetector:
    """magika loaded once per process on first use; None when it is not installed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._model: Any = None
        self._failed = False

    def label(self, text: str) -> str | None:
        with self._lock:
            if self._model is None and not self._failed:
                try:
                    from magika import Magika

                    self._model = Magika()
                except Exception as exc:  # ImportError, or a broken onnxruntime install
                    log.debug("magika unavailable, content detection skipped: %s", exc)
                    self._failed = True
            if self._model is None:
                return None
            try:
                # magika looks at the start and the end of a file; a bounded sample is enough.
                data = text.encode("utf-8", "replace")
                if len(data) > 65536:
                    data = data[:32768] + data[-32768:]
                result = self._model.identify_bytes(data)
                return str(result.output.label)
            except Exception as exc:
                log.debug("magika failed: %s", exc)
                return None


_MAGIKA = _MagikaDetector()


def _is_untitled(path: str | None) -> bool:
    if not path:
        return True
    if path.startswith("untitled:"):
        return True
    return re.fullmatch(r"untitled-\d+", PurePath(path).name.lower()) is not None


def detect_language(
    path: str | None, text: str | None, language_id: str | None = None
) -> str | None:
    """The canonical LSP languageId of a document, or None when nothing tells.

    Order: the editor's languageId, special file names, the extension, a shebang, a vim or
    emacs modeline, then (for extension-less or untitled files only) magika on the content.
    """
    found = _from_editor_id(language_id)
    if found:
        return found
    if path:
        found = _from_path(path)
        if (
            found == "c"
            and path.lower().endswith(".h")
            and text
            and _CPP_IN_HEADER.search(text[:65536])
        ):
            # A .h file is C unless it plainly holds C++ (editors guess too; C is the safer read).
            return "cpp"
        if found:
            return found
    if not text:
        return None
    found = _from_shebang(text.split("\n", 1)[0].strip())
    if found:
        return found
    found = _from_modeline(text)
    if found:
        return found
    # Content detection guesses; an extension we don't know is better left unknown than guessed.
    if _is_untitled(path) or not PurePath((path or "").replace("\\", "/")).suffix:
        label = _MAGIKA.label(text) if text.strip() else None
        if label and label not in ("txt", "unknown", "empty"):
            return _MAGIKA_LABELS.get(label) or _canonical(label)
    return None
