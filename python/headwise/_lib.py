"""Loads libheadwise through cffi (ABI mode) and turns C statuses into exceptions.

The declarations in ``_ffi.py`` are generated from include/headwise/headwise.h when the module
is built (gen_module.py); ``_build_config.py`` says which library to load. cffi releases the
GIL during every call into the library, so translations on different Python threads run in
parallel.
"""
from __future__ import annotations

import os
from typing import List, Tuple

from . import _build_config
from ._errors import Status, error_for

try:
    from ._ffi import ffi
except ImportError as e:  # _ffi.py imports cffi's compiled backend
    raise ImportError(f"headwise needs cffi's backend (Debian: python3-cffi-backend): {e}") from e

BUILD_HINT = ("build it with `cmake --preset default && cmake --build --preset default` "
              "(the module is then in build/default/python), install the headwise .deb, or "
              "`pip install ./python` against an installed libheadwise")


def _candidates() -> List[str]:
    env = os.environ.get("HEADWISE_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    out = []
    for c in _build_config.LIBRARY_CANDIDATES:
        # A bare file name goes to the dynamic loader's search path; a relative path is
        # relative to this package (the installed layout).
        out.append(c if os.path.isabs(c) or os.sep not in c else os.path.normpath(os.path.join(here, c)))
    return out


def _load() -> Tuple[object, str]:
    tried = []
    for path in _candidates():
        try:
            lib = ffi.dlopen(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
            continue
        version = ffi.string(lib.hw_version()).decode()
        # ABI mode: the struct layouts in _ffi.py must be this library's. Versions that agree
        # in major.minor share the header (the CMake package's SameMinorVersion rule).
        if version.split(".")[:2] != _build_config.VERSION.split(".")[:2]:
            raise ImportError(f"headwise: {path} is libheadwise {version}, but this module was "
                              f"built for {_build_config.VERSION}; rebuild the module or point "
                              "HEADWISE_LIBRARY at the matching library")
        return lib, path
    raise ImportError("headwise: cannot load libheadwise; tried " + "; ".join(tried) +
                      ". Set HEADWISE_LIBRARY to its path, or " + BUILD_HINT)


lib, library_path = _load()


def last_error() -> str:
    return ffi.string(lib.hw_last_error_message()).decode("utf-8", "replace")


def check(status: int) -> None:
    """Raises the Error subclass of a failed call's status, with this thread's message."""
    if status != Status.OK:
        raise error_for(status, last_error())


def to_str(p) -> str:
    """A library-owned C string (never NULL by contract; "" when it is)."""
    return ffi.string(p).decode("utf-8", "replace") if p != ffi.NULL else ""
