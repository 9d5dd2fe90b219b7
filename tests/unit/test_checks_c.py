"""C without its headers: the macros the grammar trips on are not errors, and the slips the
grammar reads as declarations are (``daemon/checks/c_macros.py``, ``daemon/checks/c_gaps.py``),
down to the repair that the author meant."""

from __future__ import annotations

import pytest

from daemon.checks.c_gaps import c_gaps
from daemon.checks.syntax import check_syntax, parses
from daemon.checks.toolchain import syntax_problems
from tests.unit.test_repair_rules import assert_repaired_as_meant, repaired

# Real shapes of compiling C that the grammar alone rejects (zlib's examples, mypyc's runtime,
# expat's examples, CPython extension modules).
MACRO_SHAPES = [
    "#define local static\n\nlocal void quit(char *why)\n{\n    (void)why;\n}\n",
    "CPy_NOINLINE\nCPy_COLD\nPyObject *get(PyObject *v) {\n    return v;\n}\n",
    "static void XMLCALL\nstart(void *data, const char *name) {\n    (void)data;\n}\n",
    "static void NORETURN PRINTF_STYLE(1,2)\ndie(const char *format, ...)\n{\n    exit(1);\n}\n",
    "void f(int n) {\n    CPY_UNROLL_LOOP(4)\n    for (int i = 0; i < n; i++) {\n        g(i);\n"
    "    }\n}\n",
    "static PyModuleDef_Slot slots[] = {\n#ifdef Py_GIL_DISABLED\n    {Py_mod_gil, 0},\n"
    "#endif\n    {0, NULL}\n};\n",
    "void f(int len, ...) {\n    va_list args;\n    va_start(args, len);\n"
    "    PyObject *item = va_arg(args, PyObject *);\n    (void)item;\n}\n",
]


@pytest.mark.parametrize("text", MACRO_SHAPES)
def test_what_only_the_preprocessor_understands_is_not_a_syntax_error(text: str):
    assert check_syntax("c", text) == []
    assert parses("c", text)


@pytest.mark.parametrize(
    "broken",
    [
        # an error inside a macro's arguments is the author's
        'void f(void) {\n    INTERN_STRING(register_, "register";)\n}\n',
        # an unbalanced condition is not a directive to blank
        "#if defined(A) && definedB)\nint x;\n#endif\n",
        # a typo beside a macro is still found
        "CPy_NOINLINE\nvoid f(int a int b) {\n}\n",
    ],
)
def test_a_macro_never_hides_the_authors_error(broken: str):
    assert check_syntax("c", broken)


GAPS = [
    ("int f(int a) {\n    retrun (int)g(a);\n}\n", 1, "misspelt 'return'"),
    ("int f(int a) {\n    rteurn h(a);\n}\n", 1, "misspelt 'return'"),
    (
        "void f(void) {\n    z_stream strm;\n    strm avail_out = CHUNK;\n}\n",
        2,
        "'strm' is a variable",
    ),
    ("void f(struct s *strm) {\n    strm avail_out = 0;\n}\n", 1, "'strm' is a variable"),
    ("#include <Python h>\nint x;\n", 0, "header name with a space"),
    ("#define ESCAPE(c) \\\n    *out++ = 'a; \\\n    n++;\nint x;\n", 1, "does not close"),
]


@pytest.mark.parametrize(("text", "line", "message"), GAPS)
def test_a_slip_the_grammar_reads_as_a_declaration_is_a_problem(text: str, line: int, message: str):
    assert check_syntax("c", text) == []  # the grammar alone calls the file clean
    (found,) = syntax_problems("c", text)
    assert found.line == line
    assert message in found.message


@pytest.mark.parametrize(
    "text",
    [
        # a typedef'd name used as a type, and a name that is a variable in another function
        "typedef int count;\ncount c;\nvoid f(void) {\n    count n = 0;\n    (void)n;\n}\n",
        "void f(void) {\n    int node = 0;\n    (void)node;\n}\n"
        "void g(void) {\n    node *n = 0;\n    (void)n;\n}\n",
        # a word one slip from a keyword that the file uses as its own name
        "typedef int retrun;\nretrun f(void);\nretrun g(void);\n",
        '#include <stdio.h>\n#define S(x) "it\'s" x\nint x;\n',
    ],
)
def test_real_code_is_not_flagged(text: str):
    assert c_gaps(text) == []


REPAIRS = [
    (
        "int f(float a) {\n    retrun (int)a;\n}\n",
        "int f(float a) {\n    return (int)a;\n}\n",
    ),
    (
        "#include <Python h>\nint x;\n",
        "#include <Python.h>\nint x;\n",
    ),
    (
        "void f(z_stream strm) {\n    strm.next_in = 0;\n    strm avail_out = 4;\n}\n",
        "void f(z_stream strm) {\n    strm.next_in = 0;\n    strm.avail_out = 4;\n}\n",
    ),
    (
        "#define ESCAPE(c) \\\n    *out++ = 'a; \\\n    n++;\nint x;\n",
        "#define ESCAPE(c) \\\n    *out++ = 'a'; \\\n    n++;\nint x;\n",
    ),
]


@pytest.mark.parametrize(("broken", "intended"), REPAIRS)
def test_the_rules_repair_a_slip_of_c_as_meant(broken: str, intended: str):
    assert syntax_problems("c", broken)
    assert not syntax_problems("c", intended)
    assert repaired("c", broken) == intended


def test_a_cast_whose_operand_lost_its_opening_parenthesis():
    assert_repaired_as_meant(
        "c",
        "void f(char **argv) {\n    store((void*)argv[1]), 0);\n}\n",
        "void f(char **argv) {\n    store((void*)(argv[1]), 0);\n}\n",
    )
    assert_repaired_as_meant(
        "c",
        "void f(int m) {\n    m = g((short)m, short)m);\n}\n",
        "void f(int m) {\n    m = g((short)m, (short)m);\n}\n",
    )


def test_a_doubled_closer_after_an_argument_list_is_removed_not_matched():
    assert_repaired_as_meant(
        "python",
        "def f(ns, opt):\n    setattr(ns, opt.dest, not opt.name.startswith('--no-')))\n",
        "def f(ns, opt):\n    setattr(ns, opt.dest, not opt.name.startswith('--no-'))\n",
    )
