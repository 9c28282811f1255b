"""mkdocs hooks: the package's source where mkdocstrings looks for it, and the repository's
results/ folder as part of the site.

mkdocstrings reads the source (griffe, without importing it) and finds a package as a folder of
its name on the search path. tablegym's folder holds only its ``__init__.py``: setuptools'
``package-dir`` maps envs/, search/, ... to tablegym.envs, tablegym.search, ..., which an editable
install serves through an import hook that griffe does not follow. So as the build starts (``on_config``, before any page is
read) this hook lays out a ``tablegym/`` folder of links to those folders in a temporary folder at
the front of ``sys.path``, and removes it when the build ends.

Every figure in the guide links to the results/ README that holds it and the command behind it.
Those READMEs live beside their raw outputs in results/ (not in docs/), so this hook adds the
folder's files to the site as they are, and turns the guide's ``../results/...`` links (which
also work when the Markdown is read in the repository) into links to those pages. A link from a
results page to a repository file outside results/ (the Makefile, the front page) has no page on
the site: it becomes its text and path.
"""

from __future__ import annotations

import atexit
import posixpath
import re
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
RESULTS = "results"
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")


def _package_layout() -> Path:
    """A temporary ``tablegym/`` of links to the folders pyproject.toml's ``package-dir`` maps: its
    folder (removed at exit)."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    folder = Path(tempfile.mkdtemp(prefix="tablegym-docs-"))
    atexit.register(shutil.rmtree, folder, True)
    for package, source in sorted(mapping.items()):  # the top-level package before its subpackages
        link = folder.joinpath(*package.split("."))
        link.parent.mkdir(parents=True, exist_ok=True)
        if "." not in package:  # a folder of its own holding copies of its files: the subpackages'
            link.mkdir()  # links go beside them, never into the repository's tablegym/
            for item in (ROOT / source).iterdir():
                if item.is_file():
                    shutil.copy2(item, link / item.name)
        else:
            link.symlink_to(ROOT / source, target_is_directory=True)
    return folder


@event_priority(100)
def on_config(config):
    """Put the package layout at the front of ``sys.path``: before mkdocstrings reads its search
    path in its own ``on_config`` (hence the priority; mkdocs restores ``sys.path`` after it imports
    a hook, so not at import), and before the scripts folder, whose ``tablegym`` command griffe would
    otherwise take for the package."""
    layout = str(_package_layout())
    sys.path.insert(0, layout)
    # and as the python handler's search path, ahead of its default (the folder of mkdocs.yml,
    # whose tablegym/ holds the top-level __init__.py alone)
    handler = config.plugins["mkdocstrings"].config["handlers"].setdefault("python", {})
    handler["paths"] = [layout]
    return config


def on_files(files, config):
    """Add every file under results/ with its repository path as its path on the site. Two files
    that would land at one URL (a guide page ``results.md`` and ``results/README.md``) stop the
    build rather than one silently replacing the other."""
    for path in sorted((ROOT / RESULTS).rglob("*")):
        if path.is_file():
            files.append(
                File(
                    path.relative_to(ROOT).as_posix(),
                    src_dir=str(ROOT),
                    dest_dir=config.site_dir,
                    use_directory_urls=config.use_directory_urls,
                )
            )
    seen: dict[str, str] = {}
    for file in files:
        if file.dest_uri in seen:
            raise PluginError(f"{file.src_uri} and {seen[file.dest_uri]} would both be {file.dest_uri}")
        seen[file.dest_uri] = file.src_uri
    return files


def _local(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target) and not target.startswith(("#", "/"))


def on_page_markdown(markdown, page, config, files):
    """Point the guide's links into results/ at the pages added above; on a results page, show a
    link that leaves results/ as text."""
    here = posixpath.dirname(page.file.src_uri)

    def relink(match: re.Match) -> str:
        text, target = match.groups()
        if not _local(target):
            return match.group(0)
        path, _, anchor = target.partition("#")
        if page.file.src_uri.startswith(RESULTS + "/"):
            resolved = posixpath.normpath(posixpath.join(here, path))
            if resolved == RESULTS or resolved.startswith(RESULTS + "/"):
                return match.group(0)
            return text if text == posixpath.basename(resolved) else f"{text} (`{resolved}`)"
        in_repo = posixpath.normpath(posixpath.join("docs", here, path))
        if in_repo.startswith(RESULTS + "/"):
            rel = posixpath.relpath(in_repo, here or ".")
            return f"[{text}]({rel}{'#' + anchor if anchor else ''})"
        return match.group(0)

    return LINK.sub(relink, markdown)
