"""The README and docs/ point only at what a clone has: every relative link (and its anchor) and every repository path
cited in backticks exists, and no file of the repository names the folder beside it except the SONiC YANG lookup."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "infra" / "teton"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_CODE = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.M)
_SIBLING = re.compile(r"\.\./shared")
# The one documented place that may name it: the reference data lookup's docstring (the code builds the path from
# parts).
SIBLING_ALLOWED = {"infra/teton/targets/reference.py"}
_SKIP_DIRS = {".git", ".venv", "build", "__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache", ".hypothesis",
              "node_modules"}


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    text = re.sub(r"[^\w\- ]", "", text.replace("`", ""))
    return text.replace(" ", "-")


def _anchors(doc: Path) -> set[str]:
    return {_slug(h) for h in _HEADING.findall(_FENCE.sub("", doc.read_text(encoding="utf-8")))}


def _links(doc: Path) -> list[str]:
    return _LINK.findall(_FENCE.sub("", doc.read_text(encoding="utf-8")))


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_exists(doc: Path) -> None:
    broken = []
    for target in _links(doc):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):          # https:, mailto: ...: not the repository's
            continue
        path, _, anchor = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if not dest.exists():
            broken.append(f"{target}: no {dest}")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, f"{doc.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_readme_links_every_docs_page() -> None:
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in _links(ROOT / "README.md")}
    assert {p.resolve() for p in DOCS[1:]} <= linked


def _cited_paths(doc: Path) -> list[str]:
    """Backticked words that name a repository path: from a top-level entry (`infra/...`, `scripts/setup`) or a
    package of infra/teton (`design/qos.py`).  Placeholders, globs, home and absolute paths are not paths of the
    repository; build artifacts (`devices/<switch>/...`) start with neither."""
    top = {p.name for p in ROOT.iterdir()} - _SKIP_DIRS
    packages = {p.name for p in PACKAGE.iterdir()}
    cited = []
    for word in _CODE.findall(doc.read_text(encoding="utf-8")):
        word = re.split(r"::|:\d", word.strip())[0]
        if " " in word or re.search(r"[<>*$~{}|=]", word) or word.startswith("/") or "/" not in word:
            continue
        if word.split("/")[0] in top | packages:
            cited.append(word)
    return cited


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_repository_path_cited_exists(doc: Path) -> None:
    packages = {p.name for p in PACKAGE.iterdir()}
    missing = []
    for word in _cited_paths(doc):
        here = ROOT / word
        if not here.exists() and not (word.split("/")[0] in packages and (PACKAGE / word).exists()):
            missing.append(word)
    assert not missing, f"{doc.relative_to(ROOT)} cites paths that do not exist: {missing}"


def test_the_path_check_sees_the_paths_it_should() -> None:
    cited = {w for doc in DOCS for w in _cited_paths(doc)}
    assert {"scripts/setup", "infra/teton/catalogue/switches.yaml", "design/buffers.py",
            ".github/workflows/spec-review.yml"} <= cited
    assert not any(w.startswith(("devices/", "ansible/", "slurm/", "hosts/", "../")) for w in cited)


def _repository_files() -> list[Path]:
    files = []
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if any(part in _SKIP_DIRS or part.endswith(".egg-info") for part in rel.parts) or not path.is_file():
            continue
        files.append(path)
    return files


def test_only_the_yang_lookup_names_the_folder_beside_the_repository() -> None:
    files = _repository_files()
    assert any(p.name == "switches.yaml" for p in files) and len(files) > 100
    naming = {str(p.relative_to(ROOT)) for p in files
              if _SIBLING.search(p.read_bytes().decode("utf-8", errors="replace"))}
    assert naming == SIBLING_ALLOWED
    lookup = (ROOT / next(iter(SIBLING_ALLOWED))).read_text(encoding="utf-8")
    doc_lines = [line for line in lookup.splitlines() if _SIBLING.search(line)]
    assert len(doc_lines) == 1      # the docstring's list of places, after the caller's folder and the variable


def test_every_section_the_specs_and_the_catalogue_cite_is_in_the_sources() -> None:
    sections = set(re.findall(r"^## (\d+)\. ", (ROOT / "docs" / "sources.md").read_text(encoding="utf-8"), re.M))
    citing = [ROOT / "inventory" / "reference-roce-24k.yaml", ROOT / "inventory" / "reference-ib-24k.yaml",
              PACKAGE / "catalogue" / "switches.yaml"]
    cited = set()
    for path in citing:
        text = path.read_text(encoding="utf-8")
        assert "docs/sources.md" in text, path
        cited |= {n for group in re.findall(r"sections? ([\d, and]+)", text) for n in re.findall(r"\d+", group)}
    assert {"1", "3", "9"} <= cited and cited <= sections, sorted(cited - sections)
