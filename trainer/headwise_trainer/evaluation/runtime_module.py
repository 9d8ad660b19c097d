"""The headwise runtime's Python module (python/, `import headwise`), imported only by the
commands that run a converted .hwm model (`evaluate --hwm`, bench/bleu.py,
bench/compare_pytorch.py), so the trainer imports and runs without it built."""
from __future__ import annotations

import importlib
import os
import sys
from typing import Optional

from ..paths import REPO_DIR

DEFAULT_BUILD = os.path.join(REPO_DIR, "build", "default")
HOW_TO_BUILD = ("build it with `cmake --preset default && cmake --build --preset default` "
                "(the module lands in build/default/python), or put a build's python/ "
                "directory on PYTHONPATH, or `pip install ./python` against an installed "
                "libheadwise")


class ModuleNotBuiltError(ImportError, ValueError):
    """The headwise module cannot be imported (a ValueError too, so the CLI reports it as a
    usage error with this message)."""


def import_headwise(build_dir: Optional[str] = None):
    """Returns the `headwise` module: with `build_dir`, the one in BUILD_DIR/python; otherwise
    whatever `import headwise` finds, falling back to this checkout's build/default/python."""
    if build_dir is None:
        try:
            return importlib.import_module("headwise")
        except ImportError:
            pass
    where = os.path.join(os.path.abspath(build_dir or DEFAULT_BUILD), "python")
    if not os.path.isfile(os.path.join(where, "headwise", "__init__.py")):
        raise ModuleNotBuiltError(f"the headwise Python module is not built (no {where}/headwise); "
                                  + HOW_TO_BUILD)
    if where not in sys.path:
        sys.path.insert(0, where)
    try:
        module = importlib.import_module("headwise")
    except ImportError as e:
        raise ModuleNotBuiltError(f"cannot import the headwise Python module from {where}: {e}; "
                                  + HOW_TO_BUILD) from e
    if build_dir is not None and not os.path.abspath(module.__file__).startswith(where + os.sep):
        raise ModuleNotBuiltError(f"the headwise module was already imported from "
                                  f"{os.path.dirname(module.__file__)}, not {where}")
    return module


def build_dir_of(path: str) -> str:
    """The build directory of a headwise-translate binary (or a build directory itself):
    the nearest directory at or above `path` holding python/headwise/__init__.py."""
    d = os.path.abspath(path)
    if os.path.isfile(d):
        d = os.path.dirname(d)
    while True:
        if os.path.isfile(os.path.join(d, "python", "headwise", "__init__.py")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            raise ModuleNotBuiltError(f"{path}: no headwise build (with python/headwise) at or "
                                      "above it; " + HOW_TO_BUILD)
        d = parent
