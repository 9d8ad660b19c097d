// runtime/src/hypotheses.h: the results of a search, kept in the arena: up to H hypothesis
// records per sentence (H = 3 * max_beam, see beam.cc for the bound) with their ids, and their
// order, best first. Written by the searches, read by Translator::hypothesis.
//
// Ownership: every pointer points into the Translator's arena (translator_plan.cc carves them).
// No allocation.
#ifndef HEADWISE_RUNTIME_HYPOTHESES_H_
#define HEADWISE_RUNTIME_HYPOTHESES_H_

#include <cstddef>
#include <cstdint>

#include "headwise/headwise.hpp"

namespace headwise {

// One stored hypothesis slot.
struct HypothesisRecord {
  int32_t length;  // generated ids stored (EOS excluded)
  float score;     // normalised
  bool finished;
};

struct HypothesisStore {
  HypothesisRecord* records = nullptr;  // [B, H]
  int32_t* ids = nullptr;               // [B, H, T]
  int32_t* stored = nullptr;            // [B] records written
  int32_t* order = nullptr;             // [B, H] record indices, best first
  size_t per_sentence = 0;              // H
  size_t max_ids = 0;                   // T

  // Forgets sentence s's records.
  void Clear(size_t s) const { stored[s] = 0; }
  size_t count(size_t s) const { return static_cast<size_t>(stored[s]); }

  // Appends a record for sentence s: `num_ids` ids (EOS excluded) and its normalised score.
  // The caller guarantees fewer than H records exist.
  void Store(size_t s, const int32_t* hyp_ids, size_t num_ids, float score, bool finished) const;

  // Orders sentence s's records by score, best first; ties keep insertion order.
  void Order(size_t s) const;

  // The n-th best score (n >= 1) among sentence s's records; n <= count(s). Orders them
  // (Order), so Get reads the current order after it.
  float NthBestScore(size_t s, size_t n) const;

  // The k-th best record of sentence s (k < count(s), after Order).
  HypothesisView Get(size_t s, size_t k) const;
};

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_HYPOTHESES_H_
