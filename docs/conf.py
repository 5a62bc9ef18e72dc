# Sphinx configuration of kembed's documentation (built by scripts/docs into
# build/docs/html; the man page kembed(1) is built from man/kembed.md by CMake).
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ext"))

project = "kembed"
author = "the kembed project"
copyright = "the kembed project, BSD 3-Clause license"
release = "0.1.0"

extensions = ["myst_parser", "kembed_cli"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "data", "images/README*"]
myst_heading_anchors = 3
# Console and text blocks are shown as written; no lexer guesses.
highlight_language = "none"
html_theme = "furo"
html_title = "kembed"
# Every cross-reference must resolve (sphinx-build -n -W in the tests).
nitpicky = True

man_pages = [
    ("man/kembed", "kembed",
     "distributed spectral dimensionality reduction on MPI clusters",
     ["the kembed project"], 1),
]
