"""mkdocs hooks of the site (mkdocs.yml `hooks:`).

The docstrings are written for Sphinx-style readers (``:func:`infer```); mkdocstrings renders
them as Markdown, where a role would show as text. Each role is dropped and its name kept as code.
"""

import re

_ROLE = re.compile(r":(?:func|class|meth|data|attr|mod|exc|obj):(<code>)")


def on_page_content(html, **kwargs):
    return _ROLE.sub(r"\1", html)
