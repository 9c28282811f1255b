"""mkdocs hooks: the repository's results/ folder is part of the site.

Every figure in the guide links to the results/ README that holds it and the command behind it.
Those READMEs live beside their raw outputs in results/ (not in docs/), so this hook adds the
folder's files to the site as they are, and turns the guide's ``../results/...`` links (which
also work when the Markdown is read in the repository) into links to those pages. A link from a
results page to a repository file outside results/ (the Makefile, the front page) has no page on
the site: it becomes its text and path.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
RESULTS = "results"
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")


def on_files(files, config):
    """Add every file under results/ with its repository path as its path on the site. Two files
    that would land at one URL (a guide page ``results.md`` and ``results/README.md``) stop the
    build rather than one silently replacing the other."""
    for path in sorted((ROOT / RESULTS).rglob("*")):
        if path.is_file():
            files.append(File(path.relative_to(ROOT).as_posix(), src_dir=str(ROOT), dest_dir=config.site_dir,
                              use_directory_urls=config.use_directory_urls))
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
            return f"{text} (`{resolved}`)"
        in_repo = posixpath.normpath(posixpath.join("docs", here, path))
        if in_repo.startswith(RESULTS + "/"):
            rel = posixpath.relpath(in_repo, here or ".")
            return f"[{text}]({rel}{'#' + anchor if anchor else ''})"
        return match.group(0)

    return LINK.sub(relink, markdown)
