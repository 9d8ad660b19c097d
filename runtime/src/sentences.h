// runtime/src/sentences.h: where a line of text splits into sentences, by the rule that cut the
// training text into sentence pairs (`headwise-train data`: split_sentences in
// trainer/headwise_trainer/data/ui_text.py), so that a paragraph reaches the model in the units
// it was trained on. headwise::SplitSentences (headwise.hpp) states the rule; both
// implementations read their abbreviations from schema/sentence_abbreviations.txt, and
// python/tests/test_sentences.py checks that they agree (character tables included).
//
// Pure functions of the text; thread-safe; allocate their results.
#ifndef HEADWISE_RUNTIME_SENTENCES_H_
#define HEADWISE_RUNTIME_SENTENCES_H_

#include <string_view>
#include <vector>

#include "headwise/headwise.hpp"

namespace headwise {

// The sentences of `text`, which must be valid UTF-8 (check FindInvalidUtf8 first): byte
// ranges without surrounding whitespace, in order; none for blank text.
std::vector<SentenceSpan> SplitValidUtf8Sentences(std::string_view text);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_SENTENCES_H_
