// The Model object itself: construction from a bound Impl, accessors and the library version.
// Loading lives in model_load.cc; text <-> ids in translate_text.cc.
#include "headwise/headwise.hpp"
#include "model_impl.h"

#ifndef HEADWISE_VERSION
#error "HEADWISE_VERSION must be defined by the build (runtime/CMakeLists.txt)"
#endif

namespace headwise {

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

const ModelInfo& Model::info() const { return impl_->info; }

const char* Version() { return HEADWISE_VERSION; }

}  // namespace headwise
