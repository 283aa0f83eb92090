"""The folders of Plugin/ include one way only, as docs/development.md declares.

The module map of docs/development.md is the one declaration: its table lists the folders of
Plugin/ from the top (the entry point's wiring) to the bottom (the SDK wrapper, the configuration,
the clock), and a file may include files of its own folder and of the folders listed after it. This
test reads that table and every `#include "Folder/..."` of Plugin/, and names each include that goes
up or sideways. It reads files only: no Orthanc, under a second.
"""
import os
import re

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEVELOPMENT_MD = os.path.join(REPO_ROOT, "docs", "development.md")

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
_LAYER_ROW = re.compile(r"^\|\s*`([A-Za-z]+)/`\s*\|")


def declared_layers(markdown_text):
    """The folders of the module map's table, top first."""
    section = markdown_text.split("\n## Module map\n", 1)[1].split("\n## ", 1)[0]
    return [match.group(1) for match in map(_LAYER_ROW.match, section.splitlines()) if match]


def includes(plugin_root):
    """(folder, file, line number, included path) for every quoted include under plugin_root."""
    for folder in sorted(os.listdir(plugin_root)):
        folder_path = os.path.join(plugin_root, folder)
        if not os.path.isdir(folder_path):
            continue
        for directory, _, names in sorted(os.walk(folder_path)):
            for name in sorted(names):
                if not name.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(directory, name)
                with open(path, encoding="utf-8") as source:
                    for number, line in enumerate(source, 1):
                        match = _INCLUDE.match(line)
                        if match:
                            yield folder, os.path.relpath(path, os.path.dirname(plugin_root)), number, match.group(1)


def layer_violations(plugin_root, layers):
    """Every include against the declared order, as one line each; [] when the layers hold."""
    rank = {folder: index for index, folder in enumerate(layers)}
    folders = sorted(name for name in os.listdir(plugin_root) if os.path.isdir(os.path.join(plugin_root, name)))
    problems = ["Plugin/%s/ is not in the module map of docs/development.md" % folder
                for folder in folders if folder not in rank]
    problems += ["the module map lists %s/, which Plugin/ does not have" % folder
                 for folder in layers if folder not in folders]
    problems += ["the module map lists %s/ twice" % folder
                 for folder in sorted(set(layers)) if layers.count(folder) > 1]
    for folder, path, number, included in includes(plugin_root):
        target = included.split("/", 1)[0] if "/" in included else None
        where = "%s:%d includes \"%s\"" % (path, number, included)
        if target is None or target not in folders:
            problems.append(where + ": not a path from Plugin/ (Folder/File.h), so its layer is unknown")
        elif folder in rank and target in rank and rank[target] < rank[folder]:
            problems.append(where + ": %s/ is above %s/" % (target, folder))
    return problems


def test_the_plugin_folders_include_only_the_folders_below_them():
    with open(DEVELOPMENT_MD, encoding="utf-8") as text:
        layers = declared_layers(text.read())
    assert len(layers) >= 2, "no module map table found in docs/development.md"
    problems = layer_violations(os.path.join(REPO_ROOT, "Plugin"), layers)
    assert not problems, "the layers of docs/development.md (%s) are broken:\n  %s" % (
        " > ".join(layers), "\n  ".join(problems))


def test_the_unit_test_folders_mirror_the_plugin_folders():
    plugin = {name for name in os.listdir(os.path.join(REPO_ROOT, "Plugin"))}
    unit_tests = os.path.join(REPO_ROOT, "UnitTests")
    strays = sorted(name for name in os.listdir(unit_tests)
                    if os.path.isdir(os.path.join(unit_tests, name)) and name not in plugin)
    assert not strays, "UnitTests/ folders with no Plugin/ folder of that name: %s" % strays


def _tree(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as out:
            out.write(text)
    return root


def test_the_check_names_every_include_against_the_order(tmp_path):
    # What the check must catch, on a tree of three layers: a bottom folder including the top, a
    # middle one including the top, an include without a folder, an undeclared folder.
    plugin = _tree(str(tmp_path / "Plugin"), {
        "Top/Entry.cpp": '#include "Middle/A.h"\n#include "Bottom/B.h"\n#include "Top/Entry.h"\n',
        "Top/Entry.h": "",
        "Middle/A.h": '#include "Bottom/B.h"\n  #  include "Top/Entry.h"\n',
        "Bottom/B.h": '#include <vector>\n#include "Middle/A.h"  // the loop\n',
        "Bottom/C.cpp": '#include "B.h"\n',
        "Stray/D.h": "",
    })
    problems = layer_violations(plugin, ["Top", "Middle", "Bottom"])
    # The made-up tree's paths are joined, so that no line here names a repository path that does not
    # exist (test_repository.py).
    made_up = os.path.join("Plugin", "")
    assert problems == [
        made_up + "Stray/ is not in the module map of docs/development.md",
        made_up + 'Bottom/B.h:2 includes "Middle/A.h": Middle/ is above Bottom/',
        made_up + 'Bottom/C.cpp:1 includes "B.h": not a path from Plugin/ (Folder/File.h), so its layer is unknown',
        made_up + 'Middle/A.h:2 includes "Top/Entry.h": Top/ is above Middle/',
    ]
    assert layer_violations(plugin, ["Top", "Middle", "Bottom", "Top", "Gone"])[1:3] == [
        "the module map lists Gone/, which Plugin/ does not have", "the module map lists Top/ twice"]


def test_the_declared_order_is_read_from_the_module_map_table():
    text = ("# Development\n\n## Module map\n\nprose `Nope/`\n\n| folder | modules |\n| --- | --- |\n"
            "| `Host/` | `Plugin.cpp` |\n| `Rest/` | x |\n| `Platform/` | y |\n\n## Tests\n\n| `Late/` | z |\n")
    assert declared_layers(text) == ["Host", "Rest", "Platform"]
