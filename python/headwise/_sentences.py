"""headwise.split_sentences: the runtime's sentence rule (hw_split_sentences), which
Translator.translate(split_sentences=True) applies to each line."""
from __future__ import annotations

from typing import List, Union

from ._lib import check, ffi, lib
from ._model import encode_text


def split_sentences(text: Union[str, bytes]) -> List[str]:
    """The sentences of one line of text, in order, without surrounding whitespace (none for a
    blank line), by the rule that cut the model's training text into sentence pairs
    (`headwise-train data`): a sentence ends after . ! ? or an ellipsis, then closing quotes
    and brackets, where whitespace and then a capital or digit follow; not after an
    abbreviation (schema/sentence_abbreviations.txt), a one-letter word or a number.
    headwise.hpp (SplitSentences) states the rule exactly.

    Raises InvalidUtf8Error (naming the byte offset) for bytes that are not UTF-8 and for a str
    with lone surrogates; TypeError for anything but str or bytes.
    """
    data = encode_text(text)
    count = ffi.new("size_t*")
    check(lib.hw_split_sentences(data, len(data), ffi.NULL, 0, count))
    n = count[0]
    if n == 0:
        return []
    spans = ffi.new("size_t[]", 2 * n)
    check(lib.hw_split_sentences(data, len(data), spans, n, count))
    return [data[spans[2 * i]:spans[2 * i + 1]].decode("utf-8") for i in range(n)]
