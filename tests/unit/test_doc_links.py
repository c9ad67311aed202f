"""What the docs and the code's comments point at exists: every relative link of a Markdown page
(and the heading its `#anchor` names), every `docs/...md` or `tests/...` path named in a
tracked text file, and every code path (`mpg/...`, `pipelines/...`, `sql/...`) a page names.
Pages, tests and modules move; a reference left behind is found here, not by a reader."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.support.files import ROOT

LINK = re.compile(r"\]\(([^)\s]+)\)")
# A path as prose names it: a page under docs/, or a file or folder under tests/, globs allowed.
NAMED = re.compile(r"(?<![\w/.-])((?:docs/\w[\w/.-]*\.md)|(?:tests/\w(?:[\w/.*-]*[\w*])?))")
TEXT = (".py", ".md", ".sql", ".sh", ".toml", ".txt", ".cfg")
# A file or folder of the code as a page names it; a page may name it as installed
# (`mpg/pipelines/...`), which pyproject.toml's package-dir maps to the checkout's folder.
CODE = re.compile(
    r"(?<![\w/.-])((?:mpg|pipelines|transforms|schemas|sql|bench|examples)/(?:[\w/.*-]*[\w*])?)"
)
INSTALLED = {
    f"mpg/{folder}/": f"{folder}/" for folder in ("pipelines", "transforms", "schemas", "sql")
}


def _tracked(*suffixes: str) -> list[Path]:
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [ROOT / f for f in files if f.endswith(suffixes) and not f.startswith("tests/fixtures/")]


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {
        _slug(line.lstrip("#")) for line in page.read_text().splitlines() if line.startswith("#")
    }


def _exists(named: str) -> bool:
    return any(ROOT.glob(named)) if "*" in named else (ROOT / named).exists()


@pytest.mark.parametrize("page", _tracked(".md"), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_of_a_page_leads_somewhere(page: Path) -> None:
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        found = (page.parent / path).resolve() if path else page
        if not found.exists() or (found.suffix == ".md" and anchor not in {"", *_anchors(found)}):
            broken.append(target)
    assert broken == []


def test_every_page_and_test_path_named_in_the_tree_exists() -> None:
    missing = {
        f"{path.relative_to(ROOT)}: {named}"
        for path in _tracked(*TEXT)
        for named in NAMED.findall(path.read_text(errors="replace"))
        if not _exists(named.rstrip("."))
    }
    assert sorted(missing) == []


def test_every_code_path_named_in_a_page_exists() -> None:
    """Modules move between folders (mpg/cli/, mpg/storage/...): a page still naming the old path
    is found here."""
    missing = set()
    for page in _tracked(".md"):
        for named in CODE.findall(page.read_text()):
            here = next(
                (
                    here + named.removeprefix(mpg)
                    for mpg, here in INSTALLED.items()
                    if named.startswith(mpg)
                ),
                named,
            )
            if not _exists(here.rstrip(".")):
                missing.add(f"{page.relative_to(ROOT)}: {named}")
    assert sorted(missing) == []
