"""Translating 10,000 lines in a loop does not grow the process: resident memory after the
loop is within 1 MiB of what it was after a warm-up of 1,000 lines (every hw_result freed, no
Python object kept). One line per call, so a leak per call shows 10,000 times. Also a loop of
creating and dropping Models and Translators."""
import gc
import os

import headwise

PAGE = os.sysconf("SC_PAGE_SIZE")
LIMIT = 1 << 20


def rss() -> int:
    gc.collect()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def lines(n):
    words = ["Open", "the", "file", "Close", "window", "save", "changes", "server", "now"]
    for i in range(n):
        k = i % 7
        if k == 5:
            yield b"bad \xff line"  # an error object per line, every seventh line
        else:
            yield " ".join(words[(i + j) % len(words)] for j in range(2 + i % 9)) + "."


def test_translating_10000_lines_does_not_grow_the_process(tiny):
    model = headwise.Model(tiny)
    t = headwise.Translator(model, max_beam=2, max_source_tokens=64, max_target_tokens=16)

    def run(n):
        for i, line in enumerate(lines(n)):
            beam = 1 + i % 2
            r = t.translate([line], beam_size=beam, num_hypotheses=beam)[0]
            assert r.ok or isinstance(r.error, headwise.InvalidUtf8Error)
            if i % 10 == 0 and r.ok:
                t.translate_ids([r.ids + [model.config.eos_token_id]])

    run(1000)
    before = rss()
    run(10000)
    after = rss()
    assert after - before < LIMIT, f"RSS grew by {(after - before) / 1024:.0f} KiB over 10,000 lines"


def test_models_and_translators_are_freed(tiny):
    def cycle(n):
        for _ in range(n):
            m = headwise.Model(tiny)
            t = headwise.Translator(m, max_batch=2)
            t.translate(["Open the file."])
            del t, m

    cycle(20)
    before = rss()
    cycle(200)
    after = rss()
    assert after - before < LIMIT, f"RSS grew by {(after - before) / 1024:.0f} KiB over 200 models"
