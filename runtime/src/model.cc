// The Model object itself: construction from a bound Impl, accessors (the shortlist's pieces
// for a batch too) and the library version. Loading lives in model_load.cc; text <-> ids in
// translate_text.cc.
#include <string>
#include <vector>

#include "format/shortlist.h"
#include "headwise/headwise.hpp"
#include "model_impl.h"

#ifndef HEADWISE_VERSION
#error "HEADWISE_VERSION must be defined by the build (runtime/CMakeLists.txt)"
#endif

namespace headwise {

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

const ModelInfo& Model::info() const { return impl_->info; }

Result<std::vector<int32_t>> Model::ShortlistPieces(
    const std::vector<std::vector<int32_t>>& sources) const {
  const Impl& m = *impl_;
  std::vector<int32_t> ids;
  if (!m.has_shortlist) return ids;
  const int32_t vocab = m.config.vocab_size;
  for (size_t s = 0; s < sources.size(); ++s) {
    for (size_t i = 0; i < sources[s].size(); ++i) {
      if (sources[s][i] < 0 || sources[s][i] >= vocab) {
        return InvalidArgument("ShortlistPieces: sentence " + std::to_string(s) + " position " +
                               std::to_string(i) + ": id " + std::to_string(sources[s][i]) +
                               " is outside the vocabulary of " + std::to_string(vocab));
      }
    }
  }
  std::vector<uint8_t> marks(static_cast<size_t>(vocab));
  const int32_t always[] = {m.config.eos_token_id, m.config.unk_token_id};
  ShortlistBegin(m.shortlist, always, 2, marks.data());
  for (const std::vector<int32_t>& source : sources) {
    ShortlistAddSource(m.shortlist, source.data(), source.size(), marks.data());
  }
  ids.resize(ShortlistCollect(m.shortlist, marks.data(), nullptr));
  ShortlistCollect(m.shortlist, marks.data(), ids.data());
  return ids;
}

const char* Version() { return HEADWISE_VERSION; }

}  // namespace headwise
