"""MkDocs hooks of the c8env site (``hooks:`` in mkdocs.yml) and the Griffe extension its API reference
loads (``extensions:`` of mkdocstrings' Python handler).

- ``environment.md`` is generated at build time from the env's docstring
  (:func:`docstrings.environment_markdown`): the page has no file of its own to drift (``docs/environment.md``
  is a stub that points the repository view to the docstring; the build replaces it);
- ``mkdocs serve`` rebuilds when a docstring of c8env or ``CHANGELOG.md`` changes (``docs/`` it watches itself);
- :class:`RstDocstrings` turns c8env's reStructuredText roles, literals, examples, literal blocks and simple
  tables into Markdown before mkdocstrings renders them (``docs/docstrings.py`` does the work).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import griffe
from mkdocs.structure.files import File, Files

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _docstrings() -> Any:
    """``docs/docstrings.py`` as a module (it is not on the import path)."""
    if "c8env_docstrings" not in sys.modules:
        spec = importlib.util.spec_from_file_location("c8env_docstrings", HERE / "docstrings.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["c8env_docstrings"] = module
        spec.loader.exec_module(module)
    return sys.modules["c8env_docstrings"]


#: Pages made at build time: path in the site -> function returning its Markdown.
GENERATED = {"environment.md": lambda: _docstrings().environment_markdown()}


def on_files(files: Files, config: Any) -> Files:
    if str(ROOT) not in sys.path:  # c8env from this checkout, as the API reference reads it
        sys.path.insert(0, str(ROOT))
    for path, make in GENERATED.items():
        stub = files.get_file_from_path(path)
        if stub is not None:  # the repository view's stand-in
            files.remove(stub)
        files.append(File.generated(config, path, content=make()))
    return files


def on_serve(server: Any, config: Any, builder: Any) -> Any:
    for path in ("c8env", "CHANGELOG.md"):  # the docstrings (environment page, API reference) and an included file
        server.watch(str(ROOT / path))
    return server


class RstDocstrings(griffe.Extension):
    """c8env's docstrings as Markdown for mkdocstrings (names in roles qualified by their module)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        self.on_object(obj=pkg)  # Griffe calls on_object for the package's members, not for the package

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.is_alias or not obj.docstring or getattr(obj.docstring, "converted", False):
            return
        module = obj.module if not obj.is_module else obj

        def resolve(name: str) -> str:
            if name.startswith("c8env"):
                return name
            head = name.split(".", 1)[0]
            for scope in (obj if obj.is_class else None, obj.parent, module):
                if scope is not None and head in scope.members:
                    return f"{scope.path}.{name}"
            return name

        obj.docstring.value = _docstrings().rst_to_markdown(obj.docstring.value, resolve)
        obj.docstring.converted = True  # once only: a converted docstring is no longer reStructuredText
