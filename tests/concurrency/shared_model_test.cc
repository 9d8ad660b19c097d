// Thread safety as headwise.hpp states it: a Model is shared read-only by any number of
// Translators on any number of threads (its tokenizers included); each Translator serves one
// thread. 8 threads each create their own Translator from one Model (concurrently) and translate
// the same 1000 sentences, in their own order, through the text path (greedy and beam 2
// alternating); every result must equal, bit for bit, what one thread computed alone.
// The tsan preset runs this under ThreadSanitizer.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "headwise/headwise.hpp"
#include "tests/api/test_model.h"

namespace headwise {
namespace {

constexpr int kThreads = 8;
constexpr size_t kSentences = 1000;
constexpr size_t kChunk = 4;  // lines per Translate call (= max_batch)

// Deterministic sentences of 1 to 10 corpus words; most differ from each other.
std::vector<std::string> Sentences() {
  std::vector<std::string> words;
  for (const std::string& line : testing::Corpus("en")) {
    size_t start = 0;
    while (start < line.size()) {
      const size_t space = line.find(' ', start);
      words.push_back(line.substr(start, space == std::string::npos ? space : space - start));
      if (space == std::string::npos) break;
      start = space + 1;
    }
  }
  std::mt19937 rng(2024);
  std::vector<std::string> out;
  for (size_t i = 0; i < kSentences; ++i) {
    const size_t n = 1 + rng() % 10;
    std::string s;
    for (size_t w = 0; w < n; ++w) s += (w ? " " : "") + words[rng() % words.size()];
    out.push_back(s);
  }
  return out;
}

SearchOptions OptionsFor(size_t chunk) {
  SearchOptions o;
  if (chunk % 2 == 1) {
    o.beam_size = 2;
    o.num_hypotheses = 2;
  }
  return o;
}

TranslatorLimits Limits() {
  TranslatorLimits l;
  l.max_batch = static_cast<int>(kChunk);
  l.max_source_tokens = 48;
  l.max_target_tokens = 12;
  l.max_beam = 2;
  l.num_threads = 1;  // threads come from the callers here; TSan cannot see into pthreadpool
  return l;
}

using Results = std::vector<std::vector<TextHypothesis>>;  // per sentence

// Translates every chunk, starting at chunk `first` and wrapping around; results by sentence.
Status TranslateAll(Translator& t, const std::vector<std::string>& sentences, size_t first,
                    Results* out) {
  const size_t chunks = (sentences.size() + kChunk - 1) / kChunk;
  out->assign(sentences.size(), {});
  for (size_t k = 0; k < chunks; ++k) {
    const size_t c = (first + k) % chunks;
    const size_t begin = c * kChunk, end = std::min(begin + kChunk, sentences.size());
    const std::vector<std::string> lines(sentences.begin() + static_cast<std::ptrdiff_t>(begin),
                                         sentences.begin() + static_cast<std::ptrdiff_t>(end));
    auto r = t.Translate(lines, OptionsFor(c));
    if (!r.ok()) return r.status().WithContext("chunk " + std::to_string(c));
    for (size_t i = begin; i < end; ++i) (*out)[i] = std::move((*r)[i - begin]);
  }
  return Status::Ok();
}

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(SharedModel, EightThreadsOfAThousandSentencesMatchOneThread) {
  testing::ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  auto en = testing::TrainSpm(dir.path(), "en", 120);
  auto de = testing::TrainSpm(dir.path(), "de", 120);
  ASSERT_TRUE(en.ok() && de.ok()) << en.status().ToString() << de.status().ToString();
  const ModelSpec spec = testing::RandomModelSpec(&*en, &*de);
  AtomicWriteOptions overwrite;
  overwrite.overwrite = true;
  ASSERT_TRUE(WriteModelFile(spec, dir / "model.hwm", overwrite).ok());
  auto loaded = Model::Load(dir / "model.hwm");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const std::shared_ptr<const Model> model = std::move(loaded).value();
  const std::vector<std::string> sentences = Sentences();

  Results reference;
  {
    auto t = Translator::Create(model, Limits());
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    const Status s = TranslateAll(**t, sentences, 0, &reference);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // The outputs vary, so a result handed to the wrong sentence or thread would show.
  size_t distinct = 0;
  for (size_t i = 1; i < kSentences; ++i) distinct += reference[i][0].ids != reference[0][0].ids;
  ASSERT_GT(distinct, kSentences / 2);

  std::vector<Results> results(kThreads);
  std::vector<Status> status(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto t = Translator::Create(model, Limits());  // created concurrently as well
      if (!t.ok()) {
        status[i] = t.status();
        return;
      }
      status[i] = TranslateAll(**t, sentences, static_cast<size_t>(i) * 37, &results[i]);
    });
  }
  for (auto& t : threads) t.join();

  for (int i = 0; i < kThreads; ++i) {
    ASSERT_TRUE(status[i].ok()) << "thread " << i << ": " << status[i].ToString();
    size_t mismatches = 0;
    for (size_t s = 0; s < kSentences; ++s) {
      const auto& got = results[i][s];
      const auto& want = reference[s];
      bool same = got.size() == want.size();
      for (size_t k = 0; same && k < got.size(); ++k) {
        same = got[k].text == want[k].text && got[k].ids == want[k].ids &&
               SameBits(got[k].score, want[k].score) && got[k].finished == want[k].finished;
      }
      if (!same && mismatches++ < 3) {
        ADD_FAILURE() << "thread " << i << " sentence " << s << " '" << sentences[s]
                      << "': got '" << (got.empty() ? "" : got[0].text) << "', one thread gave '"
                      << want[0].text << "'";
      }
    }
    EXPECT_EQ(mismatches, 0u) << "thread " << i;
  }
  // The model is still shared by nobody but this test: the Translators released it.
  EXPECT_EQ(model.use_count(), 1);
}

}  // namespace
}  // namespace headwise
