"""MkDocs hooks for the docs site (mkdocs.yml names this file).

The tutorial's Markdown links to files outside docs/: the examples it quotes, the compile-fail cases,
PyTorch's programs, the README. On GitHub those links open the file; on the site they would be broken.
So every file outside docs/ that a page links to (and, in turn, what the README links to) becomes a page of
the site, source/<path>.md, showing the file in a code block, and every directory so linked becomes a
page listing its files. The links are rewritten to those pages; the Markdown in docs/ is not touched, so
tests/check_docs.py keeps reading the same text.

The API reference is Doxygen's, run here from the Doxyfile at the top with warnings as errors: a public
entity without a doc comment fails the site's build. Its HTML goes under api/, behind a page api.md.
"""
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

LINK = re.compile(r"(\]\()([^)\s#]+)(#[^)\s]*)?(\))")
FENCE = re.compile(r"^(```+|~~~+)", re.M)
LANGUAGES = {".cpp": "cpp", ".hpp": "cpp", ".in": "cpp", ".py": "python", ".build": "meson", ".txt": "text",
             ".out": "text", ".json": "json", ".yml": "yaml", ".sh": "sh"}

_state = {}


def _root(config):
    return pathlib.Path(config["config_file_path"]).resolve().parent


def _site_path(repo_path, docs):
    """Where a repository path is on the site: docs/ pages stay where they are; outside files and
    directories get pages under source/."""
    if repo_path.is_relative_to(docs):
        return repo_path.relative_to(docs).as_posix()
    rel = repo_path.relative_to(docs.parent).as_posix()
    if repo_path.is_dir():
        return f"source/{rel}/index.md"
    return f"source/{rel}" if repo_path.suffix == ".md" else f"source/{rel}.md"


def _map_links(text, repo_dir, root, fn):
    """The text with each link outside code blocks that names an existing file or directory under the root
    replaced by fn(link match, resolved path); other links and code blocks are left as they are."""
    out, in_fence = [], None
    for line in text.splitlines(keepends=True):
        m = FENCE.match(line)
        if m:
            in_fence = None if in_fence and m.group(1).startswith(in_fence) else (in_fence or m.group(1))
        elif in_fence is None:
            def repl(link):
                target = link.group(2)
                if "://" in target or target.startswith("mailto:"):
                    return link.group(0)
                path = (repo_dir / target).resolve()
                if not (path.exists() and path.is_relative_to(root)):
                    return link.group(0)
                return fn(link, path)
            line = LINK.sub(repl, line)
        out.append(line)
    return "".join(out)


def _targets(text, repo_dir, root):
    """The existing files and directories under the root that the Markdown text links to, outside code."""
    found = []
    _map_links(text, repo_dir, root, lambda link, path: found.append(path) or link.group(0))
    return found


def _rewrite(text, repo_dir, site_dir, root, docs):
    """The links of a page at site path site_dir (a directory), written for repo_dir, made to point at the
    site's pages."""
    def to_site(link, path):
        new = pathlib.Path(os.path.relpath(_site_path(path, docs), site_dir)).as_posix()
        return f"{link.group(1)}{new}{link.group(3) or ''}{link.group(4)}"
    return _map_links(text, repo_dir, root, to_site)


def _text(path):
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None


def _listed(directory):
    return sorted(p for p in directory.iterdir() if not p.name.startswith(".") and p.name != "__pycache__")


def on_files(files, config):
    root, docs = _root(config), pathlib.Path(config["docs_dir"]).resolve()
    out = pathlib.Path(tempfile.mkdtemp(prefix="shaped-site-"))
    _state.update(root=root, docs=docs, out=out)
    todo = [pathlib.Path(f.abs_src_path) for f in files.documentation_pages()]
    seen, made = set(todo), []
    while todo:
        page = todo.pop()
        text = _text(page) or ""
        for target in _targets(text, page.parent, root):
            if target in seen or target.is_relative_to(docs):
                continue
            seen.add(target)
            made.append(target)
            if target.is_dir():
                for p in _listed(target):
                    if p.is_file() and p not in seen:
                        seen.add(p)
                        made.append(p)
            elif target.suffix == ".md":
                todo.append(target)
    for target in made:
        site = _site_path(target, docs)
        rel = target.relative_to(root).as_posix()
        if target.is_dir():
            lines = [f"# `{rel}/`", ""]
            for p in _listed(target):
                if p.is_file() and _text(p) is not None:
                    lines.append(f"- [`{p.name}`]({os.path.relpath(_site_path(p, docs), os.path.dirname(site))})")
                else:
                    lines.append(f"- `{p.name}{'/' if p.is_dir() else ''}`")
            body = "\n".join(lines) + "\n"
        elif target.suffix == ".md":
            body = _rewrite(_text(target) or "", target.parent, os.path.dirname(site), root, docs)
        else:
            content = _text(target)
            if content is None:
                continue
            fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", content)), default=0))
            language = LANGUAGES.get(target.suffix, "text")
            body = f"# `{rel}`\n\n{fence}{language}\n{content}{'' if content.endswith(chr(10)) else chr(10)}{fence}\n"
        dest = out / site
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(body, encoding="utf-8")
        files.append(File(site, str(out), config["site_dir"], config["use_directory_urls"]))
    _add_api(files, config, root, out)
    return files


API_PAGE = """# API reference

Generated by Doxygen from the `///` comments of the public headers (`include/shaped/`, but `detail/`): each
entity's shapes (axes and extents) and element type, what fails to compile and what throws, and the PyTorch
function or the book's listing it stands for. The tutorial explains; the reference lists.

- [Namespaces](api/namespaces.html): `shaped` (tensors, axes, ops), `shaped::nn` (the book's modules),
  `shaped::torch` (PyTorch's random streams and printing), `shaped::io` (weights), `shaped::diag` (the words
  of the compile errors)
- [Classes and structs](api/annotated.html)
- [Headers](api/files.html)
- [Everything, by name](api/globals.html)
"""


def _doxygen(root, out):
    """Runs Doxygen on the Doxyfile with its output in out; its warnings are errors."""
    if shutil.which("doxygen") is None:
        raise PluginError("the API reference needs doxygen (Debian: apt-get install doxygen)")
    conf = (root / "Doxyfile").read_text() + f"\nOUTPUT_DIRECTORY = {out}\n"
    run = subprocess.run(["doxygen", "-"], input=conf, text=True, cwd=root, capture_output=True)
    if run.returncode != 0 or run.stderr.strip():
        raise PluginError("doxygen (warnings are errors):\n" + (run.stderr or run.stdout))
    return out / "html"


def _add_api(files, config, root, out):
    html = _doxygen(root, out / "doxygen")
    for path in sorted(p for p in html.rglob("*") if p.is_file()):
        rel = "api/" + path.relative_to(html).as_posix()
        dest = out / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
        files.append(File(rel, str(out), config["site_dir"], config["use_directory_urls"]))
    (out / "api.md").write_text(API_PAGE, encoding="utf-8")
    files.append(File("api.md", str(out), config["site_dir"], config["use_directory_urls"]))


def on_page_markdown(markdown, page, config, files):
    root, docs = _state["root"], _state["docs"]
    src = pathlib.Path(page.file.abs_src_path)
    if not src.is_relative_to(docs):
        return markdown  # a generated page: its links were written for the site already
    return _rewrite(markdown, src.parent, os.path.dirname(page.file.src_path), root, docs)


def on_post_build(config):
    shutil.rmtree(_state.get("out", ""), ignore_errors=True)
