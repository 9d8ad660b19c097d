"""Paths for the Python module's tests. ctest sets them (python/tests/CMakeLists.txt); by hand:

    PYTHONPATH=build/default/python /usr/bin/python3 -m pytest python/tests

after `cmake --build --preset default` and `ctest --preset default -R api.make_test_model`
(which writes the tiny test models), with build/default as the default build directory.
"""
import os
import pathlib

import pytest

SOURCE = os.environ.get("HEADWISE_TEST_SOURCE") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("HEADWISE_TEST_BUILD") or os.path.join(SOURCE, "build", "default")
MODELS = os.environ.get("HEADWISE_TEST_MODELS") or os.path.join(BUILD, "tests", "api", "models")
TRANSLATE = os.environ.get("HEADWISE_TEST_TRANSLATE") or os.path.join(
    BUILD, "examples", "translate", "headwise-translate")
CONVERT = os.environ.get("HEADWISE_TEST_CONVERT") or os.path.join(
    BUILD, "converter", "headwise-convert")
C_NBEST = os.environ.get("HEADWISE_TEST_C_NBEST") or os.path.join(
    BUILD, "python", "tests", "hw_c_nbest")
SHIPPED = os.path.join(SOURCE, "models", "en-de", "model.hwm")
PYTHON = "/usr/bin/python3"


def model_path(name: str) -> str:
    path = os.path.join(MODELS, name)
    if not os.path.isfile(path):
        pytest.fail(f"{path} missing: run `ctest -R api.make_test_model` (the api_models fixture)")
    return path


@pytest.fixture(scope="session")
def tiny():
    return model_path("tiny.hwm")


@pytest.fixture(scope="session")
def no_tokenizer():
    return model_path("no_tokenizer.hwm")


@pytest.fixture(scope="session")
def shipped():
    assert os.path.isfile(SHIPPED), SHIPPED
    return SHIPPED


@pytest.fixture(scope="session")
def corpus():
    """A corpus directory (manifest.json, test.en, test.de) with the first 200 pairs of the
    en-de test split (data/en-de-test/manifest.json says where they come from)."""
    return pathlib.Path(__file__).parent / "data" / "en-de-test"


@pytest.fixture(scope="session")
def test_sentences(corpus):
    """The 200 test-split sentences."""
    with open(corpus / "test.en", encoding="utf-8") as f:
        lines = f.read().split("\n")[:-1]
    assert len(lines) == 200, f"{corpus}/test.en has {len(lines)} lines"
    return lines
