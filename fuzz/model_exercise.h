// fuzz/model_exercise.h: what a consumer of an untrusted model does once it has loaded, for the
// fuzz targets and the hostile-file tests: a Model that passed every load-time check must also
// survive being used, and every id it produces must lie in its vocabulary (and, when it carries
// a vocabulary shortlist, in the union the shortlist allows for the call).
#ifndef HEADWISE_FUZZ_MODEL_EXERCISE_H_
#define HEADWISE_FUZZ_MODEL_EXERCISE_H_

#include <memory>

#include "headwise/headwise.hpp"

namespace headwise::fuzz {

// Creates a Translator with small limits that fit the model (max_position_embeddings), runs
// greedy and beam-2 searches on a short source and, when the model has a tokenizer, translates
// a line of text. Returns the first error: a clean error is an acceptable answer for a damaged
// model. kInternal means a broken invariant (an id outside the vocabulary or the shortlist's
// union, a hypothesis count over the beam, invalid UTF-8 out): a bug.
Status ExerciseModel(const std::shared_ptr<const Model>& model);

}  // namespace headwise::fuzz

#endif  // HEADWISE_FUZZ_MODEL_EXERCISE_H_
