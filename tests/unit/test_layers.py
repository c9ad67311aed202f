"""The parts import one another in one direction: the readers and the output folder's package
(`mpg.output`) never load Beam or the pipeline, so nothing hides a cycle behind an import inside a
function (docs/decisions.md, "The parts of the tree").

Each check imports every module of some packages in a fresh interpreter and reports what got
loaded: what a process that reads the published tables (`mpg sql`, `mpg report`, a notebook)
pays, whatever order the modules are imported in.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import mpg

_PROBE = """
import importlib, json, pkgutil, sys
for name in sys.argv[1:]:
    module = importlib.import_module(name)
    for info in pkgutil.walk_packages(getattr(module, "__path__", []), name + "."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
print(json.dumps(sorted(sys.modules)))
"""

READERS = ("mpg.report", "mpg.explain", "mpg.compare", "mpg.cli.sql_command")


def _loaded(*packages: str) -> set[str]:
    """The modules loaded by importing every module of `packages` in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *packages], capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stdout))


def _under(modules: set[str], package: str) -> list[str]:
    return sorted(m for m in modules if m == package or m.startswith(f"{package}."))


def test_the_readers_and_the_output_package_import_neither_beam_nor_the_pipeline() -> None:
    """One interpreter for all of them (each costs seconds): whichever loaded Beam, none may."""
    loaded = _loaded(*READERS, "mpg.output")
    assert (_under(loaded, "apache_beam"), _under(loaded, "mpg.pipelines")) == ([], [])


def test_the_core_imports_the_standard_library_alone() -> None:
    """`mpg.core` is what every part imports at module level, `mpg --help` included."""
    added = {m.split(".")[0] for m in _loaded("mpg.core") - _loaded()}
    assert sorted(added - set(sys.stdlib_module_names) - {"mpg"}) == []


def _pipeline_imports(tree: ast.AST) -> list[int]:
    """Lines that import `mpg.pipelines` when the module runs (type-checking imports aside)."""
    if isinstance(tree, ast.If) and ast.unparse(tree.test) == "TYPE_CHECKING":
        return []  # what the type checker alone reads
    if isinstance(tree, ast.ImportFrom | ast.Import):
        names = [tree.module or ""] if isinstance(tree, ast.ImportFrom) else []
        names += [a.name for a in tree.names] if isinstance(tree, ast.Import) else []
        hit = any(n == "mpg.pipelines" or n.startswith("mpg.pipelines.") for n in names)
        return [tree.lineno] if hit else []
    return [line for child in ast.iter_child_nodes(tree) for line in _pipeline_imports(child)]


def test_only_the_run_commands_import_the_pipeline() -> None:
    """No module of `mpg/` imports the pipeline, even inside a function, but the command line's
    `mpg run` and `mpg backfill` (mpg/cli/command.py), which start it."""
    root = Path(mpg.__file__).parent
    found = {
        path.relative_to(root).as_posix(): lines
        for path in sorted(root.rglob("*.py"))
        if (lines := _pipeline_imports(ast.parse(path.read_text())))
    }
    assert set(found) == {"cli/command.py"}
