"""A `quiz` directive for the static book: multiple choice that answers a click, no kernel needed.

Usage in a MyST page::

    ```{quiz} Which roof limits a kernel of 10 FLOP/byte on an H100?
    - [ ] the compute roof
    - [x] the memory roof
    ---
    Below the ridge point the memory roof is lower.
    ```

Options are a task list: `[x]` marks each correct option. Text after a `---` line is the
explanation, shown once the reader picks an answer. HTML gets buttons with `data-correct` and a
small script (static/hwquiz.js); other builders (LaTeX/PDF) get a plain list plus the answer.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

_OPTION = re.compile(r"^\s*[-*]\s*\[( |x|X)\]\s*(.+)$")


class quiz(nodes.General, nodes.Element):
    pass


class quiz_option(nodes.General, nodes.Element):
    pass


class quiz_explanation(nodes.General, nodes.Element):
    pass


class QuizDirective(SphinxDirective):
    has_content = True
    required_arguments = 1
    final_argument_whitespace = True

    def run(self):
        lines = list(self.content)
        if "---" in [ln.strip() for ln in lines]:
            cut = [ln.strip() for ln in lines].index("---")
            option_lines, explain_lines = lines[:cut], lines[cut + 1 :]
        else:
            option_lines, explain_lines = lines, []
        options = []
        for ln in option_lines:
            if not ln.strip():
                continue
            match = _OPTION.match(ln)
            if not match:
                raise self.error(f"quiz option must look like '- [ ] text' or '- [x] text'; got {ln!r}")
            options.append((match.group(1).lower() == "x", match.group(2)))
        if len(options) < 2 or not any(ok for ok, _ in options):
            raise self.error("a quiz needs at least two options and at least one marked [x]")

        node = quiz()
        self.set_source_info(node)
        question = nodes.paragraph(classes=["hw-quiz-question"])
        text_nodes, messages = self.state.inline_text(self.arguments[0], self.lineno)
        question.extend(text_nodes)
        node += question
        for index, (correct, text) in enumerate(options):
            opt = quiz_option(correct=correct, letter=chr(ord("a") + index))
            text_nodes, more = self.state.inline_text(text, self.lineno)
            opt.extend(text_nodes)
            messages.extend(more)
            node += opt
        explanation = quiz_explanation()
        if explain_lines:
            self.state.nested_parse(self.content[len(option_lines) + 1 :], self.content_offset, explanation)
        node += explanation
        return [node] + messages


# --- HTML ------------------------------------------------------------------------------------
def visit_quiz_html(self, node):
    self.body.append('<div class="hw-quiz" role="group">')


def depart_quiz_html(self, node):
    self.body.append("</div>")


def visit_option_html(self, node):
    correct = "true" if node["correct"] else "false"
    self.body.append(
        f'<button type="button" class="hw-quiz-option" data-correct="{correct}">'
        f'<span class="hw-quiz-letter">({node["letter"]})</span> '
    )


def depart_option_html(self, node):
    self.body.append("</button>")


def visit_explanation_html(self, node):
    self.body.append('<div class="hw-quiz-feedback" aria-live="polite"></div><div class="hw-quiz-explain" hidden>')


def depart_explanation_html(self, node):
    self.body.append("</div>")


# --- everything else (LaTeX/PDF, text): a list and the answer ---------------------------------
def visit_quiz_plain(self, node):
    pass


def depart_quiz_plain(self, node):
    pass


def visit_option_plain(self, node):
    raise nodes.SkipNode


def visit_explanation_plain(self, node):
    options = [c for c in node.parent.children if isinstance(c, quiz_option)]
    listing = nodes.enumerated_list(enumtype="loweralpha")
    for opt in options:
        listing += nodes.list_item("", nodes.paragraph("", "", *[c.deepcopy() for c in opt.children]))
    answer = ", ".join(f"({o['letter']})" for o in options if o["correct"])
    node.insert(0, listing)
    node.insert(1, nodes.paragraph("", f"Answer: {answer}. "))


def depart_noop(self, node):
    pass


def setup(app):
    app.add_node(
        quiz,
        html=(visit_quiz_html, depart_quiz_html),
        latex=(visit_quiz_plain, depart_quiz_plain),
        text=(visit_quiz_plain, depart_quiz_plain),
    )
    app.add_node(
        quiz_option,
        html=(visit_option_html, depart_option_html),
        latex=(visit_option_plain, None),
        text=(visit_option_plain, None),
    )
    app.add_node(
        quiz_explanation,
        html=(visit_explanation_html, depart_explanation_html),
        latex=(visit_explanation_plain, depart_noop),
        text=(visit_explanation_plain, depart_noop),
    )
    app.add_directive("quiz", QuizDirective)
    static = str(Path(__file__).parent / "static")

    def add_static(app_):
        if static not in app_.config.html_static_path:
            app_.config.html_static_path.append(static)

    app.connect("builder-inited", add_static)
    app.add_js_file("hwquiz.js")
    app.add_css_file("hwquiz.css")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
