#!/usr/bin/env python3
"""Builds the docs site and looks at it in a real browser.

1. `mkdocs build --strict` from the top of the source tree into a temporary folder: a broken link or a
   missing page fails, and so does a Doxygen warning (the hooks in tests/site/hooks.py run Doxygen for the
   API reference, warnings as errors).
2. The site is served on localhost, and headless Chromium opens the quick start, the reading-errors chapter
   and API pages. For each: the title, the code blocks and the navigation must be in the DOM Chromium built
   (after its scripts ran), no request the page made may have failed, and a screenshot is saved (SCREENS,
   a folder) and must not be blank.

Usage: check_site.py SOURCE_ROOT SCREENS
Exit 77 (a skipped test, for meson) when mkdocs, mkdocs-material, doxygen or chromium is not installed,
unless SHAPED_REQUIRE_SITE=1 (as CI sets), which makes that a failure.
"""
import concurrent.futures
import functools
import http.server
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import threading

# page, what its <title> must contain, at least this many code blocks, a mark of its navigation, text it shows
PAGES = [
    ("source/index.html", "shaped", 2, 'class="md-nav', "Try it (Debian 12)"),
    ("01-quick-start.html", "Quick start", 5, 'class="md-nav', "manual_seed"),
    ("reading-errors.html", "Reading compile errors", 60, 'class="md-nav', "static assertion failed"),
    ("13-own-module.html", "Writing your own module", 5, 'class="md-nav', "shaped::TensorOf"),
    ("04-text-to-batches.html", "from text to batches", 10, 'class="md-nav', "create_dataloader_v1"),
    ("09-loss-and-sampling.html", "loss, perplexity, sampling", 10, 'class="md-nav', "48725.8203"),
    ("05-two-mha-forms.html", "two forms of multi-head attention", 10, 'class="md-nav', 'aria-labelledby="mha-forms"'),
    ("11-kv-cache.html", "The KV cache", 2, 'class="md-nav', "generate_text_simple_cached"),
    ("12-faster-attention.html", "Faster attention", 2, 'class="md-nav', "FlashAttention"),
    ("book-map.html", "Reading alongside the book", 1, 'class="md-nav', "MultiHeadAttentionWrapper"),
    ("15-porting-from-pytorch.html", "Porting from PyTorch", 1, 'class="md-nav', "What has no equivalent yet"),
    ("16-llama-qwen-gemma.html", "Llama, Qwen and Gemma", 4, 'class="md-nav', "load_llama_weights"),
    ("17-patterns.html", "Patterns: rearrange, reduce and einsum", 4, 'class="md-nav', "shaped::einsum"),
    ("faq.html", "Questions a learner asks", 0, 'class="md-nav', "openai-community/gpt2"),
    ("api.html", "API reference", 0, 'class="md-nav', "Doxygen"),
    ("api/namespaceshaped.html", "shaped", 0, 'id="nav-tree"', "scaled_dot_product_attention"),
    ("api/classshaped_1_1nn_1_1multi__head__attention.html", "multi_head_attention", 0, 'id="nav-tree"',
     "out_proj"),
]
BLANK_PNG_BYTES = 20_000  # a one-colour 1280 × 1600 screenshot compresses to a few KB; a rendered page does not


def skip(why):
    if os.environ.get("SHAPED_REQUIRE_SITE") == "1":
        print(f"FAIL: {why} (SHAPED_REQUIRE_SITE=1)")
        return 1
    print(f"SKIP: {why}")
    return 77


class Log(http.server.SimpleHTTPRequestHandler):
    failures = []

    def log_message(self, *args):
        pass

    def send_response(self, code, message=None):
        if code >= 400 and not self.path.endswith("favicon.ico"):
            Log.failures.append(f"{code} {self.path}")
        super().send_response(code, message)


def chromium(*args):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    return subprocess.run([exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-extensions", "--disable-background-networking", "--hide-scrollbars",
                           "--virtual-time-budget=5000", *args], capture_output=True, text=True, timeout=120)


def main():
    root, screens = pathlib.Path(sys.argv[1]).resolve(), pathlib.Path(sys.argv[2]).resolve()
    for tool, package in [("mkdocs", "mkdocs and mkdocs-material"), ("doxygen", "doxygen")]:
        if shutil.which(tool) is None:
            return skip(f"{tool} is not installed (Debian: {package})")
    if not pathlib.Path("/usr/share/mkdocs/themes/material").exists():
        probe = subprocess.run(["mkdocs", "build", "--help"], capture_output=True, text=True).stdout
        if "material" not in probe:
            return skip("the mkdocs theme material is not installed (Debian: mkdocs-material)")
    with tempfile.TemporaryDirectory() as tmp:
        site = pathlib.Path(tmp) / "site"
        build = subprocess.run(["mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=root,
                               capture_output=True, text=True)
        if build.returncode != 0:
            print("mkdocs build --strict failed:\n" + build.stdout + build.stderr)
            return 1
        missing = [p for p, *_ in PAGES if not (site / p).exists()]
        if missing:
            print(f"the built site has no {missing}")
            return 1
        print(f"mkdocs build --strict: {sum(1 for _ in site.rglob('*.html'))} HTML pages, API reference included")
        if not (shutil.which("chromium") or shutil.which("chromium-browser")):
            return skip("chromium is not installed (Debian: chromium); the site built, unseen")

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Log, directory=str(site)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        screens.mkdir(parents=True, exist_ok=True)
        problems = []

        def check(page, title, blocks, nav, text):  # one page: its DOM, then its screenshot
            found_problems = []
            dom = chromium("--dump-dom", base + page)
            html = dom.stdout
            if dom.returncode != 0 or "<html" not in html:
                return [f"{page}: chromium gave no DOM ({dom.returncode}): {dom.stderr[-500:]}"], None
            found = re.search(r"<title>(.*?)</title>", html, re.S)
            if not found or title not in found.group(1):
                found_problems.append(f"{page}: title {found.group(1) if found else None!r} lacks {title!r}")
            code = len(re.findall(r"<pre[^>]*>\s*(?:<span[^>]*>\s*</span>)?\s*<code", html))
            if code < blocks:
                found_problems.append(f"{page}: {code} code blocks, expected at least {blocks}")
            if nav not in html:
                found_problems.append(f"{page}: no navigation ({nav})")
            if text not in html:
                found_problems.append(f"{page}: does not show {text!r}")
            png = screens / (page.replace("/", "_").replace(".html", ".png"))
            shot = chromium("--window-size=1280,1600", f"--screenshot={png}", base + page)
            if shot.returncode != 0 or not png.exists():
                found_problems.append(f"{page}: no screenshot ({shot.returncode}): {shot.stderr[-500:]}")
            elif png.stat().st_size < BLANK_PNG_BYTES:
                found_problems.append(f"{page}: the screenshot is blank ({png.stat().st_size} bytes)")
            return found_problems, (f"{page}: title {found.group(1).strip() if found else '?'!r}, {code} code blocks, "
                                    f"screenshot {png.name} ({png.stat().st_size if png.exists() else 0} bytes)")

        # Chromium spends most of a page's time starting and waiting out its virtual time, so pages are checked
        # four at a time; a request that failed is reported with its path (the page it came from is not known).
        try:
            with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
                for found_problems, line in pool.map(lambda row: check(*row), PAGES):
                    problems += found_problems
                    if line:
                        print(line)
            problems += [f"request failed: {f}" for f in Log.failures]
        finally:
            server.shutdown()
        if problems:
            print("\n".join(problems))
            return 1
    print(f"the site renders in Chromium; screenshots in {screens}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
