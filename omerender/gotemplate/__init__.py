"""Go's ``html/template`` as OME runs it over a container: parse, escape, execute.

A pure reimplementation of the subset placeholders need (``omerender.render.placeholders``): Go's
``text/template`` lexer and parser in full (so every parse error reads as Go's), and execution of field
actions, maps, variables, ``if``/``with``/``range`` and the common built-ins with ``html/template``'s
escaping in HTML text context. tests/differential compares it with Go's own ``html/template``.
"""

from omerender.gotemplate.execute import GoTemplateUnsupported, execute
from omerender.gotemplate.parse import GoTemplateError, Tree, parse
from omerender.gotemplate.values import GoValue, object_meta

__all__ = ["GoTemplateError", "GoTemplateUnsupported", "GoValue", "Tree", "execute", "object_meta", "parse"]
