"""Threads: the GIL is released while translating; Translators on several threads over one
Model give the same results as one thread; one Translator shared by threads serialises."""
import sys
import threading

import pytest

import headwise

LINES = [f"Open the file number {i} and save the changes." for i in range(24)] + \
        ["Close the window.", "Do you want to save the changes?", "Unable to connect."]


def as_tuples(results):
    return [[tuple(h) for h in r] for r in results]


def run_in_threads(jobs):
    barrier = threading.Barrier(len(jobs))
    out = [None] * len(jobs)
    errors = []

    def work(i, job):
        try:
            barrier.wait()
            out[i] = job()
        except BaseException as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i, j)) for i, j in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return out


@pytest.mark.parametrize("beam", [1, 4])
def test_two_translators_at_once_equal_one(shipped, beam):
    model = headwise.Model(shipped)
    alone = as_tuples(headwise.Translator(model).translate(LINES, beam_size=beam))
    a, b = headwise.Translator(model), headwise.Translator(model)
    got = run_in_threads([lambda: as_tuples(a.translate(LINES, beam_size=beam)),
                          lambda: as_tuples(b.translate(LINES[::-1], beam_size=beam))[::-1]])
    assert got[0] == alone and got[1] == alone


def test_token_path_on_four_threads(tiny):
    model = headwise.Model(tiny)
    sources = [model.encode(l) for l in LINES]
    alone = as_tuples(headwise.Translator(model).translate_ids(sources, beam_size=2))
    translators = [headwise.Translator(model) for _ in range(4)]
    got = run_in_threads([lambda t=t: as_tuples(t.translate_ids(sources, beam_size=2))
                          for t in translators])
    assert all(g == alone for g in got)


def test_one_translator_shared_by_threads_serialises(tiny):
    t = headwise.Translator(headwise.Model(tiny))
    alone = as_tuples(t.translate(LINES))
    got = run_in_threads([lambda: as_tuples(t.translate(LINES)) for _ in range(4)])
    assert all(g == alone for g in got)


def test_the_gil_is_released_while_translating(shipped):
    """With a switch interval far longer than the test, a thread holding the GIL keeps it until
    it blocks; the main thread therefore runs during the translation only if the call into the
    library released the GIL."""
    t = headwise.Translator(headwise.Model(shipped), max_beam=4)
    started, done = threading.Event(), threading.Event()

    def translate():
        started.set()
        t.translate(LINES * 2, beam_size=4)
        done.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        worker = threading.Thread(target=translate)
        worker.start()
        started.wait()
        ran_during_translation = not done.is_set()
        worker.join()
    finally:
        sys.setswitchinterval(old)
    assert ran_during_translation, "the main thread could not run while the worker translated"
