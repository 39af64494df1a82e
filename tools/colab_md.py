"""MyST Markdown -> the CommonMark (+ HTML) that Colab and Jupyter render: the text half of the Colab edition.

`Renderer(book).markdown(text, doc)` turns one Markdown cell of page `doc` into a finished page:
{glue:text} values substituted (live ones point to the learner's own output), {cite} as short author-year
links to the published references page, {eq}/{ref} as numbers/titles linking to the published page,
labels and comments removed, admonitions as block quotes, dropdown answers and quiz answers folded into
<details>, quiz questions and options visible. markdown-it-py (with the MyST plugins myst-parser uses)
finds the blocks; roles are replaced in the text outside code. Anything it does not know raises
ValueError naming the page, so a new construct cannot slip through raw.
"""

from __future__ import annotations

import ast
import html
import posixpath
import re
from pathlib import Path

from markdown_it import MarkdownIt
from mdit_py_plugins.amsmath import amsmath_plugin
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.deflist import deflist_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.myst_blocks import myst_block_plugin
from mdit_py_plugins.myst_role import myst_role_plugin

ROLE = re.compile(r"\{(?P<name>[A-Za-z][\w:.-]*)\}`(?P<content>[^`]+)`")
OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$")
QUIZ_OPTION = re.compile(r"^\s*[-*]\s*\[( |x|X)\]\s*(.+)$")
ADMONITIONS = {
    "note",
    "tip",
    "hint",
    "important",
    "warning",
    "caution",
    "attention",
    "danger",
    "error",
    "seealso",
    "admonition",
}
# Prose about "the machine that built this page" is about the learner's machine in the Colab edition.
PLACE = [
    (
        re.compile(r"\b(machine|device|chip|CPU|GPU|computer) that (?:built|builds|ran|runs) this page\b"),
        r"\1 running this notebook",
    ),
    (re.compile(r"\bthe device that built it\b"), "the device running it"),
    (
        re.compile(r"\b(?:this|the) build machine(?:'s)?\b"),
        lambda m: "this machine's" if m.group(0).endswith("'s") else "this machine",
    ),
    (re.compile(r"\bwhen this page was built\b"), "when you ran this notebook"),
    (re.compile(r"\b([Tt])his page was built on\b"), r"\1his notebook is running on"),
    (re.compile(r"\b([Oo])n this build\b"), r"\1n this run"),
    (re.compile(r"\bthis build\b"), "this run"),
]
# What must not be left in the Colab edition's prose (the book's build machine is not the learner's).
BUILD_PHRASES = re.compile(r"(?:built|builds|ran) this page|[Oo]n this build\b|page was built|the build machine\b")


def python_object(root: Path, path: str, options: dict, doc: str) -> str:
    """The source a `{literalinclude}` with `:pyobject:` shows (what Sphinx's directive shows): a
    function or class of `path`, relative to the page, found with `ast`."""
    name = options.get("pyobject")
    if not name:
        raise ValueError(f"{doc}: the Colab edition renders {{literalinclude}} only with :pyobject:")
    file = (root / posixpath.dirname(doc) / path).resolve()
    source = file.read_text()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            return "\n".join(source.splitlines()[first - 1 : node.end_lineno])
    raise ValueError(f"{doc}: {{literalinclude}} {path}: no function or class {name!r}")


def parser() -> MarkdownIt:
    """CommonMark plus the MyST syntax the book enables (_config.yml parse.myst_enable_extensions)."""
    return (
        MarkdownIt("commonmark")
        .use(myst_role_plugin)
        .use(myst_block_plugin)
        .use(colon_fence_plugin)
        .use(dollarmath_plugin, allow_labels=True, allow_space=True, allow_digits=True, double_inline=False)
        .use(amsmath_plugin)
        .use(deflist_plugin)
    )


def md_escape(text: str) -> str:
    """A plain value as literal Markdown text ($ would start math, * and _ emphasis)."""
    # "$" as an HTML entity, not "\\$": Jupyter's and nbconvert's MathJax pair escaped dollars as math
    return re.sub(r"([\\`*_\[\]<>|])", r"\\\1", text).replace("$", "&#36;")


def split_options(body: str) -> tuple[dict, str]:
    """Directive options (`:key: value` lines or a `---` YAML block) at the top of a body."""
    import yaml

    lines = body.split("\n")
    if lines and lines[0].strip() == "---":
        end = lines.index("---", 1)
        return yaml.safe_load("\n".join(lines[1:end])) or {}, "\n".join(lines[end + 1 :])
    options = {}
    while lines and (m := OPTION.match(lines[0])):
        options[m.group("key")] = m.group("value").strip()
        lines.pop(0)
    return options, "\n".join(lines)


class Renderer:
    """Renders the Markdown of one book; `book` is a tools/make_colab.Book (labels, glue, citations)."""

    def __init__(self, book):
        self.book = book
        self.md = parser()

    # --- inline roles ---------------------------------------------------------------------------
    def role(self, name: str, content: str, doc: str) -> str:
        book = self.book
        if name in ("glue:text", "glue", "glue:"):
            key = content.strip()
            if key in book.live.get(doc, set()):
                return f"`{key}` (your value, printed above)"
            return md_escape(book.glue_value(doc, key))
        if name in ("cite", "cite:p", "cite:t", "cite:ps", "cite:ts"):
            return "(" + "; ".join(book.citation(key.strip(), doc) for key in content.split(",")) + ")"
        if name == "eq":
            number, url = book.equation(content.strip(), doc)
            return f"[({number})]({url})"
        if name in ("ref", "numref"):
            m = re.match(r"^(?P<text>.*?)\s*<(?P<label>[^<>]+)>$", content, re.S)
            text, label = (m.group("text"), m.group("label")) if m else (None, content.strip())
            title, url = book.reference(label, doc, numbered=name == "numref")
            return f"[{text or title}]({url})"
        if name == "term":
            m = re.match(r"^(?P<text>.*?)\s*<(?P<term>[^<>]+)>$", content, re.S)
            text, term = (m.group("text"), m.group("term")) if m else (content, content)
            return f"[{text}]({book.glossary_url(term.strip(), doc)})"
        if name == "doc":
            m = re.match(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", content, re.S)
            text, target = (m.group("text"), m.group("target")) if m else (None, content.strip())
            target = re.sub(r"\.(md|ipynb)$", "", target.strip())
            page = (
                target.lstrip("/")
                if target.startswith("/")
                else posixpath.normpath(posixpath.join(posixpath.dirname(doc), target))
            )
            return f"[{text or book.title(page)}]({book.url(page)})"
        if name == "math":
            return f"${content}$"
        raise ValueError(f"{doc}: the Colab edition cannot render the role {{{name}}}`{content}`")

    def inline(self, text: str, doc: str) -> str:
        """Replace the roles of a run of Markdown text, leaving code spans alone."""
        out, pos = [], 0
        while pos < len(text):
            m_role = ROLE.search(text, pos)
            m_code = re.compile(r"(?<!\})(`+)").search(text, pos)
            if m_code and (not m_role or m_code.start() < m_role.start()):
                tick = m_code.group(1)
                end = text.find(tick, m_code.end())
                end = len(text) if end < 0 else end + len(tick)
                out.append(text[pos:end])
                pos = end
                continue
            if not m_role:
                out.append(text[pos:])
                break
            out.append(text[pos : m_role.start()])
            out.append(self.role(m_role.group("name"), m_role.group("content"), doc))
            pos = m_role.end()
        result = "".join(out)
        for pattern, repl in PLACE:
            result = pattern.sub(repl, result)
        return result

    # --- blocks -----------------------------------------------------------------------------------
    def markdown(self, text: str, doc: str) -> str:
        lines = text.split("\n")
        pieces, cursor = [], 0
        for token in self.md.parse(text):
            if token.level != 0 or not token.map or token.nesting == -1:
                continue
            start, end = token.map
            if start < cursor:
                continue
            special = self.block(token, doc)
            if special is None and token.type in ("fence", "code_block"):
                special = "\n".join(lines[start:end])  # code: verbatim, no role replacement
            if special is not None:
                pieces.append(self.inline("\n".join(lines[cursor:start]), doc))
                pieces.append(special)
                cursor = end
        pieces.append(self.inline("\n".join(lines[cursor:]), doc))
        rendered = "\n".join(p for p in pieces)
        if "{{" in re.sub(r"```.*?```|`[^`]*`", "", rendered, flags=re.S):
            raise ValueError(f"{doc}: a MyST substitution {{{{ ... }}}} is not supported by the Colab edition")
        return re.sub(r"\n{3,}", "\n\n", rendered).strip("\n")

    def block(self, token, doc: str) -> str | None:
        """The CommonMark for a MyST block token; None for an ordinary block (kept, roles replaced)."""
        kind = token.type
        if kind in ("myst_target", "myst_line_comment"):
            return ""
        if kind == "myst_block_break":
            raise ValueError(f"{doc}: a '+++' block break inside a Markdown cell")
        if kind == "math_block_label":
            number, _ = self.book.equation(token.info, doc)
            return f"$$\n{token.content.strip()}\n\\tag{{{number}}}\n$$"
        if kind in ("fence", "colon_fence") and token.info.startswith("{"):
            m = re.match(r"^\{(?P<name>[\w:-]+)\}\s*(?P<arg>.*)$", token.info.strip())
            if not m:
                raise ValueError(f"{doc}: cannot read the directive {token.info!r}")
            return self.directive(m.group("name"), m.group("arg"), token.content, doc)
        return None

    def directive(self, name: str, arg: str, body: str, doc: str) -> str:
        options, body = split_options(body)
        if name == "quiz":
            return self.quiz(arg, body, doc)
        inner = self.markdown(body, doc)
        classes = str(options.get("class", "")).split()
        if name in ADMONITIONS or name in ("dropdown", "toggle"):
            title = arg.strip() or (name.capitalize() if name not in ("dropdown", "toggle", "admonition") else "Show")
            if name in ("dropdown", "toggle") or "dropdown" in classes or "toggle" in classes:
                return (
                    f"<details><summary><b>{html.escape(self.plain(title, doc))}</b></summary>\n\n{inner}\n\n</details>"
                )
            quoted = "\n".join(">" + (" " + ln if ln else "") for ln in inner.split("\n"))
            return f"> **{self.inline(title, doc)}**\n>\n{quoted}"
        if name in ("code-block", "code", "sourcecode"):
            return f"```{arg.strip()}\n{body.rstrip()}\n```"
        if name == "literalinclude":
            return f"```python\n{python_object(self.book.root, arg.strip(), options, doc)}\n```"
        if name == "math":
            label = options.get("label") or options.get("name")
            tag = f"\n\\tag{{{self.book.equation(label, doc)[0]}}}" if label else ""
            return f"$$\n{body.strip()}{tag}\n$$"
        raise ValueError(f"{doc}: the Colab edition cannot render the directive {{{name}}}")

    def quiz(self, question: str, body: str, doc: str) -> str:
        lines = body.split("\n")
        cut = next((i for i, ln in enumerate(lines) if ln.strip() == "---"), len(lines))
        options = [QUIZ_OPTION.match(ln) for ln in lines[:cut] if ln.strip()]
        if not options or not all(options):
            raise ValueError(f"{doc}: quiz {question[:40]!r}: options must look like '- [ ] text'")
        letters = [chr(ord("a") + i) for i in range(len(options))]
        listing = "\n".join(f"- ({k}) {self.inline(o.group(2), doc)}" for k, o in zip(letters, options))
        right = [f"({k}) {self.inline(o.group(2), doc)}" for k, o in zip(letters, options) if o.group(1) != " "]
        explain = self.markdown("\n".join(lines[cut + 1 :]), doc)
        return (
            f"**Quiz.** {self.inline(question, doc)}\n\n{listing}\n\n"
            f"<details><summary><b>Answer</b></summary>\n\n**{'; '.join(right)}**\n\n{explain}\n\n</details>"
        )

    def plain(self, text: str, doc: str) -> str:
        """Inline text for an HTML context (a <summary>): roles replaced, Markdown markers dropped."""
        return re.sub(r"[*_`]", "", self.inline(text, doc))
