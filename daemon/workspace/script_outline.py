"""The outline of a TypeScript or JavaScript module, read with tree-sitter: what it exports."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Literal

from daemon.workspace.outline import MAX_SUMMARY_CHARS, Definition, summarize

Dialect = Literal["typescript", "tsx", "javascript"]

# A declaration shown whole (interfaces, types, enums, constants) up to this size.
MAX_DECLARATION_LINES = 30
MAX_DECLARATION_CHARS = 2000
# A class shows this many members at most, within this many characters (methods first); a
# doc comment this many lines.
MAX_MEMBERS = 40
MAX_DEFINITION_CHARS = 1200
MAX_DOC_LINES = 10
_FUNCTIONS = frozenset(
    {"function_declaration", "generator_function_declaration", "function_signature"}
)
_CLASSES = frozenset({"class_declaration", "abstract_class_declaration", "class"})
_WHOLE = frozenset({"interface_declaration", "type_alias_declaration", "enum_declaration"})
_VARIABLES = frozenset({"lexical_declaration", "variable_declaration"})
_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)


@dataclass(frozen=True)
class ScriptImport:
    """One import of a module: ``names`` maps local names to the names the module exports
    (``default`` for a default import); ``namespace`` is the local name of ``* as ns`` or of a
    ``require``; a side-effect import has neither."""

    specifier: str
    names: dict[str, str]
    namespace: str | None
    position: int  # its order in the document


@dataclass
class ScriptOutline:
    exports: dict[str, Definition] = field(default_factory=dict)
    # Re-exports: (specifier, {exported name: name in that module}) or (specifier, None) for *.
    reexports: list[tuple[str, dict[str, str] | None]] = field(default_factory=list)
    imports: list[ScriptImport] = field(default_factory=list)
    top_level: list[Definition] = field(default_factory=list)

    def public(self) -> list[Definition]:
        if self.exports:
            unique = {id(d): d for d in self.exports.values()}
            return sorted(unique.values(), key=lambda d: d.line)
        return list(self.top_level)

    def summary(self, limit: int = MAX_SUMMARY_CHARS) -> str:
        return summarize(self.public(), "", limit)


_LANGUAGES: dict[Dialect, Any] = {}
_LANGUAGES_LOCK = threading.Lock()


def _parser(dialect: Dialect) -> Any:
    """A parser for ``dialect`` (the grammar is loaded once; a parser is made per call, since
    one is not safe to share between threads)."""
    import tree_sitter

    with _LANGUAGES_LOCK:
        language = _LANGUAGES.get(dialect)
        if language is None:
            if dialect == "javascript":
                import tree_sitter_javascript

                language = tree_sitter.Language(tree_sitter_javascript.language())
            else:
                import tree_sitter_typescript

                raw = (
                    tree_sitter_typescript.language_tsx()
                    if dialect == "tsx"
                    else tree_sitter_typescript.language_typescript()
                )
                language = tree_sitter.Language(raw)
            _LANGUAGES[dialect] = language
    return tree_sitter.Parser(language)


# An exported function shows its header (the body left out); a class its header and its public
# members' headers; an interface, type alias or enum its text (shortened when long); a const its
# declaration, or for a function value the part before the body. A ``/** ... */`` comment just
# above a declaration comes with it. Re-exports are remembered so that they can be followed. A
# module without ES exports (CommonJS) offers its top-level declarations instead. tree-sitter
# parses what it can of a file with errors, so an outline never fails.
def outline_script(source: str, dialect: Dialect) -> ScriptOutline:
    """The outline of a module's source."""
    data = source.encode("utf-8", "surrogatepass")
    tree = _parser(dialect).parse(data)
    return _Outliner(data).outline(tree.root_node)


class _Outliner:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.result = ScriptOutline()
        self.locals: dict[str, Definition] = {}

    def text(self, node: Any, end: Any = None) -> str:
        stop = end.start_byte if end is not None else node.end_byte
        return self.data[node.start_byte : stop].decode("utf-8", "replace")

    def outline(self, root: Any) -> ScriptOutline:
        children = list(root.named_children)
        pending: list[tuple[str, str]] = []  # export { local as exported }
        defaults: list[str] = []  # export default local
        for index, node in enumerate(children):
            doc = self._doc(children[index - 1], node) if index > 0 else ""
            if node.type == "import_statement":
                self._import(node)
            elif node.type == "export_statement":
                self._export(node, doc, pending, defaults)
            elif node.type == "ambient_declaration":
                for inner in node.named_children:
                    self._declare(inner, node, doc, exported=True)
            else:
                self._declare(node, node, doc, exported=False)
                if node.type in _VARIABLES:
                    self._requires(node)
        for local, exported in pending:
            if local in self.locals:
                self.result.exports[exported] = self.locals[local]
        for local in defaults:
            if local in self.locals:
                self.result.exports["default"] = self.locals[local]
        return self.result

    # -- imports ---------------------------------------------------------------------------
    def _import(self, node: Any) -> None:
        source = node.child_by_field_name("source")
        if source is None:
            return
        names: dict[str, str] = {}
        namespace = None
        for clause in node.named_children:
            if clause.type != "import_clause":
                continue
            for part in clause.named_children:
                if part.type == "identifier":
                    names[self.text(part)] = "default"
                elif part.type == "namespace_import":
                    ids = [c for c in part.named_children if c.type == "identifier"]
                    namespace = self.text(ids[-1]) if ids else None
                elif part.type == "named_imports":
                    names.update(self._specifiers(part, "import_specifier"))
        position = len(self.result.imports)
        specifier = _string(self.text(source))
        self.result.imports.append(ScriptImport(specifier, names, namespace, position))

    def _requires(self, node: Any) -> None:
        """``const x = require("./y")`` and ``const { a, b } = require("./y")``."""
        for declarator in node.named_children:
            if declarator.type != "variable_declarator":
                continue
            value = declarator.child_by_field_name("value")
            target = declarator.child_by_field_name("name")
            if value is None or target is None or value.type != "call_expression":
                continue
            function = value.child_by_field_name("function")
            arguments = value.child_by_field_name("arguments")
            if function is None or self.text(function) != "require" or arguments is None:
                continue
            strings = [a for a in arguments.named_children if a.type == "string"]
            if not strings:
                continue
            specifier = _string(self.text(strings[0]))
            position = len(self.result.imports)
            if target.type == "identifier":
                imp = ScriptImport(specifier, {}, self.text(target), position)
            else:
                names = {}
                for part in target.named_children:
                    if part.type == "shorthand_property_identifier_pattern":
                        names[self.text(part)] = self.text(part)
                imp = ScriptImport(specifier, names, None, position)
            self.result.imports.append(imp)

    # -- exports ---------------------------------------------------------------------------
    def _export(
        self, node: Any, doc: str, pending: list[tuple[str, str]], defaults: list[str]
    ) -> None:
        source = node.child_by_field_name("source")
        declaration = node.child_by_field_name("declaration")
        value = node.child_by_field_name("value")
        is_default = any(c.type == "default" for c in node.children)
        if source is not None:
            specifier = _string(self.text(source))
            clause = next((c for c in node.named_children if c.type == "export_clause"), None)
            if clause is None:
                self.result.reexports.append((specifier, None))
            else:
                self.result.reexports.append((specifier, self._clause(clause)))
            return
        if declaration is not None:
            names = self._declare(declaration, node, doc, exported=True)
            if is_default and names:
                self.result.exports["default"] = self.locals[names[0]]
            return
        if value is not None and is_default:
            if value.type == "identifier":
                defaults.append(self.text(value))
            elif value.type in _CLASSES or value.type in _FUNCTION_VALUES:
                self.result.exports["default"] = self._definition("default", value, node, doc)
            return
        clause = next((c for c in node.named_children if c.type == "export_clause"), None)
        if clause is not None:
            for exported, local in self._clause(clause).items():
                pending.append((local, exported))

    def _clause(self, clause: Any) -> dict[str, str]:
        return self._specifiers(clause, "export_specifier")

    def _specifiers(self, node: Any, kind: str) -> dict[str, str]:
        """``{ a, b as c }``: each name as it is called here (its alias) -> its own name."""
        mapping: dict[str, str] = {}
        for spec in node.named_children:
            if spec.type != kind:
                continue
            name = spec.child_by_field_name("name")
            alias = spec.child_by_field_name("alias")
            if name is not None:
                mapping[self.text(alias if alias is not None else name)] = self.text(name)
        return mapping

    # -- declarations ----------------------------------------------------------------------
    def _declare(self, node: Any, statement: Any, doc: str, exported: bool) -> list[str]:
        """Record the declaration(s) of ``node`` (inside ``statement``); their names."""
        names: list[str] = []
        if node.type in _VARIABLES:
            for declarator in node.named_children:
                if declarator.type != "variable_declarator":
                    continue
                target = declarator.child_by_field_name("name")
                if target is None or target.type != "identifier":
                    continue
                name = self.text(target)
                definition = self._variable(name, declarator, statement, doc)
                names.append(name)
                self._keep(name, definition, exported)
            return names
        if node.type in _FUNCTIONS or node.type in _CLASSES or node.type in _WHOLE:
            target = node.child_by_field_name("name")
            if target is None:
                return names
            name = self.text(target)
            self._keep(name, self._definition(name, node, statement, doc), exported)
            names.append(name)
        return names

    def _keep(self, name: str, definition: Definition, exported: bool) -> None:
        self.locals[name] = definition
        if exported:
            self.result.exports[name] = definition
        self.result.top_level.append(definition)

    def _definition(self, name: str, node: Any, statement: Any, doc: str) -> Definition:
        line = statement.start_point[0] - (doc.count("\n") if doc else 0)
        if node.type in _CLASSES:
            return self._class(name, node, statement, doc, line)
        if node.type in _FUNCTIONS or node.type in _FUNCTION_VALUES:
            body = node.child_by_field_name("body")
            header = self.text(statement, body).rstrip()
            if body is not None:
                header += ";"
            return Definition(name, line, doc + header + "\n", header + "\n")
        whole = _shorten(self.text(statement))
        first = whole.split("\n", 1)[0]
        short = whole if "\n" not in whole else first + " ... }"
        return Definition(name, line, doc + whole + "\n", short + "\n")

    def _variable(self, name: str, declarator: Any, statement: Any, doc: str) -> Definition:
        line = statement.start_point[0] - (doc.count("\n") if doc else 0)
        value = declarator.child_by_field_name("value")
        whole = self.text(statement)
        if value is not None and value.type in _FUNCTION_VALUES:
            body = value.child_by_field_name("body")
            if body is not None and body.type == "statement_block":
                header = self.text(statement, body).rstrip() + " { ... };"
                return Definition(name, line, doc + header + "\n", header + "\n")
        if len(whole) <= MAX_DECLARATION_CHARS // 4 and whole.count("\n") < 4:
            return Definition(name, line, doc + whole + "\n", whole.split("\n", 1)[0] + "\n")
        head = self.text(statement, value).rstrip() if value is not None else whole
        header = head + " ...;" if value is not None else _shorten(whole)
        return Definition(name, line, doc + header + "\n", header.split("\n", 1)[0] + "\n")

    def _class(self, name: str, node: Any, statement: Any, doc: str, line: int) -> Definition:
        body = node.child_by_field_name("body")
        header = self.text(statement, body).rstrip()
        pieces = [self._member(m) for m in (body.named_children if body is not None else [])]
        found = [(i, "  " + p) for i, p in enumerate(pieces) if p]
        # Methods first, then fields, within the bounds; shown in the class's order.
        ranked = sorted(found, key=lambda item: "(" not in item[1])
        kept: list[tuple[int, str]] = []
        used = len(header)
        for index, piece in ranked:
            if len(kept) < MAX_MEMBERS and used + len(piece) <= MAX_DEFINITION_CHARS:
                kept.append((index, piece))
                used += len(piece) + 1
        members = [piece for _, piece in sorted(kept)]
        if len(kept) < len(found):
            members.append("  // ...")
        text = header + " {\n" + "".join(m + "\n" for m in members) + "}"
        methods = [m for m in members if "(" in m][: MAX_MEMBERS // 2]
        short = header + " {\n" + "".join(m + "\n" for m in methods) + "}"
        return Definition(name, line, doc + text + "\n", short + "\n")

    def _member(self, member: Any) -> str:
        text = self.text(member)
        if member.type in ("comment", "class_static_block"):
            return ""
        if any(
            c.type == "accessibility_modifier" and self.text(c) == "private"
            for c in member.children
        ):
            return ""
        name = member.child_by_field_name("name")
        if name is not None and self.text(name).startswith("#"):
            return ""
        if member.type == "method_definition":
            body = member.child_by_field_name("body")
            return self.text(member, body).strip() + ";"
        if "\n" in text or len(text) > 200:
            return ""
        return text.rstrip(";") + ";"

    def _doc(self, previous: Any, node: Any) -> str:
        """The ``/** ... */`` comment just above ``node``, when there is one."""
        if previous.type != "comment" or previous.end_point[0] < node.start_point[0] - 1:
            return ""
        text = self.text(previous)
        if not text.startswith("/**"):
            return ""
        lines = text.split("\n")
        if len(lines) > MAX_DOC_LINES:
            lines = [*lines[: MAX_DOC_LINES - 1], " * ...", " */"]
        return "\n".join(lines) + "\n"


def _shorten(text: str) -> str:
    lines = text.split("\n")
    if len(lines) <= MAX_DECLARATION_LINES and len(text) <= MAX_DECLARATION_CHARS:
        return text
    kept: list[str] = []
    used = 0
    for line in lines[: MAX_DECLARATION_LINES - 1]:
        if used + len(line) > MAX_DECLARATION_CHARS:
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join([*kept, "  // ...", "}"])


def _string(literal: str) -> str:
    return literal.strip()[1:-1] if len(literal.strip()) >= 2 else literal
