// runtime/src/network.h: what every stage of a translation reads and never writes during a
// call: the loaded model (dimensions and weights), the operators made from its weight matrices
// and the thread pool that runs them.
//
// Ownership: a Network belongs to one Translator (translator_impl.h) and lives as long as it.
// `model` points into the Model the Translator holds; the operators read its weights in place
// where they can and keep pointers to the int8 / f16 scratch given to CreateNetwork, which
// must outlive the Network. Threads: Run on the operators is const; one call at a time per
// Translator (the scratch is shared).
#ifndef HEADWISE_RUNTIME_NETWORK_H_
#define HEADWISE_RUNTIME_NETWORK_H_

#include <string>
#include <vector>

#include "fc/fully_connected.h"
#include "headwise/status.hpp"
#include "model_impl.h"
#include "op_profile.h"
#include "thread_pool.h"

namespace headwise {

struct EncoderLayerOps {
  FullyConnected qkv;  // d -> 3I, [q | k | v]; not created when the block has no heads
  FullyConnected out;  // I -> d
  FullyConnected fc1;  // d -> ffn (relu fused as an output clamp)
  FullyConnected fc2;  // ffn -> d
};

struct DecoderLayerOps {
  FullyConnected self_qkv;  // d -> 3I
  FullyConnected self_out;
  FullyConnected cross_q;   // d -> I
  FullyConnected cross_kv;  // d -> 2I, [k | v], run once per call on the encoder output
  FullyConnected cross_out;
  FullyConnected fc1;
  FullyConnected fc2;
};

struct Network {
  const Model::Impl* model = nullptr;
  std::vector<EncoderLayerOps> encoder;
  std::vector<DecoderLayerOps> decoder;
  FullyConnected lm_head;  // d -> V with final_logits_bias
  // The packed copies of the embedding tables where lm_head's operator packed the table
  // they share (int8_packed_store.h), else null: the lookups then read those rows.
  const uint8_t* encoder_embed_packed = nullptr;
  const uint8_t* decoder_embed_packed = nullptr;
  ThreadPool pool;
  bool spin_workers = false;  // TranslatorLimits::worker_wait == WorkerWait::kSpin
  // Non-null while a call runs as a team (team.h, Translator::Impl::team): the parallel loops go
  // to it instead of the pool. Set and cleared by the call (translate_ids.cc).
  Team* team = nullptr;
  // Non-null: the stages add their time per kind of operation here (bench/ only).
  OpProfile* profile = nullptr;

  const ModelConfig& config() const { return model->config; }
  Workers threads() const {
    return team != nullptr ? Workers::OfTeam(team) : Workers(pool.get(), spin_workers);
  }
};

// The kernel paths the operators run (FullyConnected::KernelName), distinct, in operator order
// (encoder, decoder, lm_head), joined with ", ". A path that only one-row products take (a
// batch-1 decode step) is marked "(1 row)", one that only products of several rows take
// "(2+ rows)": e.g. "int8: neon-dotprod", "fp32: xnnpack (2+ rows), fp32: f32-gemv-avx2 (1 row)".
std::string KernelPaths(const Network& net);

// True when any operator computes from a packed copy of its weights (XNNPACK's paths), false
// when every one reads the model's weights in place.
bool HoldsWeightCopies(const Network& net);

// Starts the pool and creates every operator of `model`. `int8` is the int8 operators'
// scratch (used when the model has I8 matrices); `f16` non-null runs F16 matrices in fp16
// arithmetic (the caller checked DetectFp16Arithmetic). Errors: those of ThreadPool::Create
// and FullyConnected::Create, naming the layer and operator.
Status CreateNetwork(const Model::Impl& model, int num_threads, const Int8Scratch* int8,
                     const F16Scratch* f16, Network* net);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_NETWORK_H_
