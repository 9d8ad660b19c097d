// headwise/headwise.hpp: the C++ API of the headwise runtime.
//
//   auto model = headwise::Model::Load("models/en-de/model.hwm");
//   if (!model.ok()) { std::cerr << model.status().ToString() << "\n"; return 1; }
//   headwise::TranslatorLimits limits;          // batch 8, 256 tokens, beam 4, 1 thread
//   auto translator = headwise::Translator::Create(*model, limits);
//   headwise::SearchOptions search;             // greedy
//   auto out = (*translator)->Translate({"Open the file."}, search);
//   std::cout << (*out)[0][0].text << "\n";
//
// Ownership and lifetime
//   - Model is immutable after Load and shared through std::shared_ptr<const Model>; every
//     Translator created from it keeps it alive. A Model may be used by any number of
//     Translators on any number of threads at once.
//   - The memory of a Model loaded from a path is the read-only mapping of the file, and the
//     weights are held once: the kernels read them in place from it (int8 everywhere; fp32 and
//     fp16 on x86 with AVX2, FMA and F16C), so every Translator on the Model shares them. Where
//     XNNPACK packs a copy per Translator instead (fp32 / fp16 on ARM), the mapped pages of the
//     packed matrices are released from the resident set after packing, and Load releases what
//     the checksum read; a page something still reads comes back from the page cache.
//   - A Translator owns its XNNPACK operators, its thread pool and one activation arena planned
//     at Create from TranslatorLimits. A Translator is NOT thread-safe: one call at a time.
//     Use one Translator per thread.
//
// Threads (tests/concurrency: 8 Translators on 8 threads sharing one Model, under TSan)
//   - Safe to call from any number of threads at once: Model::Load / LoadFromMemory, every const
//     member of Model (info, EncodeSource, DecodeTarget), Translator::Create on a shared Model,
//     and destroying Translators (the last reference releases the Model).
//   - One thread at a time per Translator: TranslateIds, TranslateIdsEach, Translate,
//     TranslateEach, ForcedLogits and the result accessors (num_hypotheses, hypothesis,
//     line_status) share its arena, and a HypothesisView is valid only
//     until the next call on that Translator. Calls on different Translators never interact.
//   - With num_threads > 1 a Translator runs parts of each call on its own pool; to the caller
//     it is still one blocking call.
//
// The token-id path (TranslateIds, TranslateIdsEach) performs no heap allocation: all memory
// it touches was planned at Create. The text path (Translate, TranslateEach) allocates for
// tokenization and result strings.
//
// Decoding semantics (the PyTorch reference in trainer/ implements the same rules):
//   - The encoder input is the source ids followed by EOS (TranslateIds takes it as given).
//   - The decoder starts from decoder_start_token_id; PAD is never produced (its logit is -inf).
//   - A hypothesis' score is sum(log_softmax) over its generated tokens (EOS included)
//     divided by length^length_penalty, length = generated tokens including EOS.
//   - Greedy (beam_size 1): argmax each step (lowest id on ties) until EOS or max length.
//   - Beam: each step ranks, over all live beams b and tokens v, score_b + logp(b, v)
//     (descending; ties by lower b * vocab + v) and walks the best 2 * beam candidates in that
//     order: an EOS candidate becomes a finished hypothesis, any other token continues a beam,
//     until beam_size beams continue. After the walk, a sentence's search ends, its live beams
//     dropped, when beam_size hypotheses have finished, or when SearchOptions::beam_stop's rule
//     says so (below); else, at the maximum length, the live beams become unfinished
//     hypotheses and it ends. Hypotheses are ordered by normalised score, the best first;
//     num_hypotheses of them are returned.
//   - beam_stop, checked after each step's walk, once at least num_hypotheses hypotheses have
//     finished (those of this step included); `step` counts from 0, so every live beam holds
//     step + 1 generated tokens:
//       kExhaustive: never (the search runs until beam_size hypotheses have finished);
//       kTopEos:     the walk's first candidate (the step's best-ranked one) was EOS;
//       kOutscored:  the num_hypotheses-th best normalised score among the finished
//                    hypotheses is >= the best live beam's (the walk's first continuing one)
//                    sum of log-probabilities / (step + 1)^length_penalty, in float32.
//     kTopEos is CTranslate2's "early exit"; kOutscored is Hugging Face's early_stopping=False
//     with num_hypotheses in place of num_beams. Both are heuristics: a live beam might still
//     have ended with a better normalised score.
//   - Returned ids exclude decoder_start_token_id and the final EOS.
//   - With a vocabulary shortlist (ModelInfo::has_shortlist, TranslatorLimits::use_shortlist)
//     every piece outside the sentence's own list (Model::ShortlistPieces of that sentence
//     alone) has logit -inf: the rules above then run over that list (log_softmax normalised
//     over it), and only its pieces are produced. A target prefix's ids (below) join its
//     sentence's list. The other sentences of the call change nothing.
//   - Target prefix (optional, per sentence; CTranslate2's target_prefix, Marian's
//     force-decode): the ids the translation must begin with. Its first prefix-length steps
//     are forced: each appends the next prefix id to the sentence's one live beam and adds that
//     id's log-probability to the beam's sum (a forced step finishes nothing, whatever EOS
//     scores); the search then goes on by the rules above from that beam, with `step` still
//     counting every generated token. Every hypothesis' ids begin with the prefix, and the
//     prefix counts in its length and score: a hypothesis scores the same whether its start was
//     forced or found. A prefix id must be in the vocabulary and be neither PAD nor EOS; a
//     prefix as long as the maximum length is returned as it is, unfinished.
//   - Minimum length (SearchOptions::min_length; CTranslate2's min_decoding_length): at steps
//     < min_length EOS is not a choice: greedy takes the best other id (lowest id on ties),
//     beam search ranks and walks the other candidates only, sampling draws from the others.
//     EOS keeps its share of the normalisation (log_softmax is over every id as above), so a
//     hypothesis' score is still the model's log-probability of its ids. Every hypothesis then
//     has at least min_length ids (a target prefix's count), unless no other id has a finite
//     logit (non-finite weights), where EOS ends it.
//   - Sampling (SearchOptions::sample; beam_size 1 only): each step after the target prefix
//     draws its id at random instead of taking the argmax; the score is the drawn ids' sum of
//     log-probabilities as above (temperature, top_k and top_p shape the draw, not the score).
//     The draw at `step` over the row of logits x (PAD and, with a shortlist, every id outside
//     the sentence's list at -inf; EOS left out below min_length):
//       1. candidates: the ids with a finite logit; none: EOS (it ends the hypothesis);
//       2. weights w_v = exp((x_v - m) / temperature) in float64, m = the candidates' largest
//          logit;
//       3. order: ascending id when top_k is 0 and top_p is 1; otherwise by logit, highest
//          first (ties: lower id first), cut to the first top_k (0 = all), then, when top_p < 1,
//          to the shortest head whose weights (summed in order, float64) reach top_p times T,
//          T the float64 sum of the cut list's weights in ascending id order when top_k is 0
//          (so that no draw sorts the whole vocabulary), in the cut list's order otherwise;
//       4. the id drawn is the first in that order whose running weight sum (float64) exceeds
//          u * W, W the kept list's weight sum, u the step's uniform number; the last if none
//          does (rounding).
//     u is counter-based, so that a sentence's draws depend on nothing but the seed, its source
//     ids and the step (never on the batch, the lanes, the threads or earlier calls), and the
//     same seed and source give the same translation: with Mix(z) SplitMix64's output for
//     state z (z += 0x9E3779B97F4A7C15; z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9;
//     z = (z ^ z >> 27) * 0x94D049BB133111EB; z ^ z >> 31, all mod 2^64),
//       key = Mix(seed), then key = Mix(key ^ uint32(id)) for each id of the source (EOS
//       included, as the encoder reads it), u = (Mix(key + step) >> 11) * 2^-53.
//     Two lines with the same source and seed get the same translation; give each a seed of its
//     own for different ones.
#ifndef HEADWISE_HEADWISE_HPP_
#define HEADWISE_HEADWISE_HPP_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "headwise/model_types.hpp"  // AttentionKind
#include "headwise/status.hpp"

namespace headwise {

struct LoadOptions {
  // Check the FNV-1a checksum of the data segment at load (reads every weight byte once).
  bool verify_checksum = true;
};

// What `headwise-train analyze` found about one source head (schema HeadAnalysis); a statistic
// that was not computed is NaN.
struct HeadAnalysisInfo {
  int source_head = 0;     // index into the block's source heads
  float relevance = 0.0f;  // LRP share of the block's relevance (rule: ModelInfo::analysis_rule)
  float confidence = 0.0f;
  float michel = 0.0f;     // Michel et al. importance, l2-normalised per block
  std::vector<std::string> roles;  // "positional", "rare-word", "syntactic:<relation>", ...
};

struct AttentionBlockInfo {
  AttentionKind kind;
  int layer;
  int num_heads;           // heads kept in the file (0 allowed)
  int original_num_heads;  // heads of the source checkpoint
  int head_dim;
  std::string name;                   // "model.encoder.layers.3.self_attn", ...
  std::vector<int32_t> kept_heads;    // num_heads indices into the source heads, ascending
  std::vector<float> gate_log_alpha;  // one per source head; empty when the source had no gates
  std::vector<HeadAnalysisInfo> analysis;  // one per source head in order, or empty
};

struct ModelInfo {
  int d_model = 0;
  int encoder_layers = 0;
  int decoder_layers = 0;
  int encoder_ffn_dim = 0;
  int decoder_ffn_dim = 0;
  int vocab_size = 0;
  int max_position_embeddings = 0;
  int pad_token_id = 0;
  int eos_token_id = 0;
  int unk_token_id = 0;
  int decoder_start_token_id = 0;
  std::string activation;  // "relu", "swish" or "gelu"
  std::vector<AttentionBlockInfo> attention;  // encoder self, decoder self, decoder cross
  uint64_t file_bytes = 0;
  uint64_t weight_bytes = 0;
  int format_version = 0;
  // How the weight matrices (attention, fc1/fc2, embeddings, lm_head) are stored: "fp32",
  // "fp16" or "int8" (headwise-convert --weights), "mixed" when they differ.
  std::string weight_format;
  bool has_tokenizer = false;  // false: only the token-id path (TranslateIds) works
  // Provenance recorded by the converter; empty when the file does not say.
  std::string source_checkpoint_sha256;
  std::string source_checkpoint_name;
  std::string converter_version;
  std::string keep_heads_spec;
  std::string source_dtype;
  // Where the per-head analysis came from; all empty when the blocks carry none.
  std::string analysis_rule;    // "attnlrp" or "z"
  std::string analysis_data;    // e.g. "dev, 500 sentences"
  std::string analysis_sha256;  // of the analysis.json the converter read
  // The vocabulary shortlist (headwise-train shortlist, headwise-convert --shortlist): with it,
  // Translators compute the output layer only over the pieces it allows each batch
  // (TranslatorLimits::use_shortlist). All zero / empty when the file has none.
  bool has_shortlist = false;
  int shortlist_frequent = 0;      // pieces every batch may produce
  int shortlist_sources = 0;       // source pieces with a list of target pieces
  int shortlist_longest = 0;       // entries of the longest list
  uint64_t shortlist_entries = 0;  // list entries in all
  std::string shortlist_description;  // how it was made (the converter's input says)
};

class Model {
 public:
  // Maps and verifies `path`: identifier, size, alignment, format version, flatbuffers
  // Verifier, semantic checks (every tensor's shape agrees with the config and the per-block
  // head counts, offsets inside the file), the tokenizers, and the checksum unless disabled.
  // Errors: kIoError, kInvalidModel, kUnsupportedVersion, kChecksumMismatch, kTokenizer; the
  // message names the part that was wrong.
  static Result<std::shared_ptr<const Model>> Load(const std::string& path,
                                                   const LoadOptions& options = {});
  // Same checks on a caller-owned buffer, which must outlive the Model and every Translator
  // made from it. `data` must be 64-byte aligned (kInvalidArgument otherwise).
  static Result<std::shared_ptr<const Model>> LoadFromMemory(const void* data, size_t size,
                                                             const LoadOptions& options = {});
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelInfo& info() const;

  // Text <-> ids with the embedded tokenizers. Thread-safe.
  // EncodeSource: SentencePiece pieces of `text` mapped through the vocabulary (unknown pieces
  // -> unk), followed by EOS. Text is text: "</s>" typed in it is not the EOS token. Blank text
  // encodes to [EOS]. Errors: kInvalidUtf8 (with the byte offset), kTokenizer (also when the
  // model file carries no tokenizer).
  Result<std::vector<int32_t>> EncodeSource(const std::string& text) const;
  // EncodeTarget: the target SentencePiece pieces of `text` mapped through the vocabulary, no
  // EOS: the ids of a target prefix (Translator::TranslateIds). The text is encoded on its own,
  // so a prefix that ends inside a word gives that partial word's pieces. Blank text encodes
  // to no ids. Errors: kInvalidUtf8 (with the byte offset), kTokenizer (also when the model
  // file carries no tokenizer, and for a piece the vocabulary lacks, named: its id would be
  // UNK, which DecodeTarget drops).
  Result<std::vector<int32_t>> EncodeTarget(const std::string& text) const;
  // DecodeTarget: ids -> pieces -> text; special ids (pad, eos, unk) are skipped.
  Result<std::string> DecodeTarget(const int32_t* ids, size_t size) const;

  // The target ids a Translator with the shortlist on may produce for one batch of encoder
  // inputs (each as TranslateIds takes it): the shortlist's frequent pieces, the list of every
  // source id of every input, EOS and UNK, ascending (see TranslatorLimits::use_shortlist).
  // Empty when the model has no shortlist. Thread-safe.
  // Errors: kInvalidArgument (an id outside the vocabulary).
  Result<std::vector<int32_t>> ShortlistPieces(
      const std::vector<std::vector<int32_t>>& sources) const;

  struct Impl;  // runtime-private
  const Impl& impl() const { return *impl_; }

 private:
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Whether a Translator runs the matrix products of an fp16 model (headwise-convert --weights
// fp16) in fp16 arithmetic. Only matrices stored F16 are affected; F32 and I8 matrices run as
// always.
//   - fp16 arithmetic is used only on aarch64 CPUs with ARMv8.2 FP16 arithmetic (FEAT_FP16:
//     Cortex-A55/A75/A76 and later, e.g. Raspberry Pi 5; not the Pi 3's A53 or the Pi 4's
//     A72), detected at Create (cpuinfo's cpuinfo_has_arm_neon_fp16_arith() and a small
//     XNNPACK f16 operator that must create). Never on x86 (XNNPACK would emulate it, slower
//     than F32) or 32-bit ARM (Debian's 2022 XNNPACK has no aarch32 fp16 arithmetic kernels).
//   - The fp16 path: each linear layer runs on XNNPACK's f16 fully-connected operator (weights
//     packed from the file's F16 values, half the memory of the widened F32 copy; fp16
//     products and sums), its F32 input narrowed to F16 and its output widened back, so the
//     residual stream, LayerNorm, attention, softmax and the search stay F32. Logits then
//     differ from the F32 path by about 1% of their range (tests/runtime/fp16_compute_test.cc
//     and tests/e2e state the measured bounds); greedy and beam outputs may differ where the
//     top candidates are that close. Its products also round differently with the number of
//     rows they compute, so a sentence's scores can differ in the fourth decimal between
//     batch sizes (and beam sizes); int8 and F32 products that read the weights in place do
//     not depend on the row count at all, XNNPACK's F32 products only by float rounding.
//   - The fallback path computes in F32: on x86 with AVX2, FMA and F16C it reads the F16
//     weights in place and widens them in registers (memory: the F16 file); elsewhere it widens
//     the F16 matrices to F32 at Create for XNNPACK (twice the file's bytes per Translator).
enum class Fp16Compute {
  kAuto = 0,     // fp16 arithmetic where the CPU has it, else the F32 fallback (default)
  kOff = 1,      // always the F32 fallback
  kRequire = 2,  // fp16 arithmetic, or Create fails: kBackend when the CPU (or the build's
                 // architecture) lacks it, kInvalidArgument when the model has no F16 matrix
};

// What a Translator's matrix products compute in (Translator::matmul_precision).
enum class MatmulPrecision {
  kF32 = 0,   // F32 weights, or F16 weights widened to F32 (in registers or at Create)
  kF16 = 1,   // the fp16 path above is on for the model's F16 matrices
  kInt8 = 2,  // the model's I8 matrices run the int8 kernel (activations quantized per row)
};
// "f32", "f16" or "int8".
const char* MatmulPrecisionName(MatmulPrecision precision);

// Declared limits; all activation memory of a Translator is planned from them at Create.
// How the pool's worker threads wait between the parallel loops of a translation
// (TranslatorLimits::worker_wait; with num_threads == 1 there are no workers).
// Where every operator reads the weights in place (int8; fp32 and fp16 weights on x86 with
// AVX2 + FMA), a call that does not run on batch lanes holds the workers for its length (a
// team, runtime/src/team.h): they are woken once per call and take tiles of each product and
// attention loop as the calling thread posts them, so products of a few microseconds are split
// too. A call that finds the cores busy (the calling thread got less than 85% of its wall time)
// makes the next calls run on the calling thread alone for 100 ms, doubling while the cores stay
// busy (at most 1.6 s). Measured on 2 idle x86 cores, 2 threads over 1 at batch 1: about 1.5x on
// the shipped models, 1.3x on a 512-wide int8 model whose decode steps are bound by memory
// bandwidth; with a training job on both cores, 0.90-0.95x
// (bench/results/2026-12-06-team-x86-2core.md).
//   kYield (default): between loops a worker spins for at most 200 us, then sleeps until the
//     next. Where XNNPACK holds the weights (fp32 on Arm): a worker sleeps after each product,
//     and only large products are split (runtime/src/parallel.h).
//   kSpin: a worker spins until the call ends (XNNPACK's paths: pthreadpool's bounded spin
//     between products). For cores the process has to itself; on busy cores it takes time from
//     the thread that feeds it (bench/results/2026-12-04-threads-x86-2core.md).
// Results are the same bits either way.
enum class WorkerWait : int { kYield = 0, kSpin = 1 };

struct TranslatorLimits {
  int max_batch = 8;            // sentences per call
  int max_source_tokens = 256;  // encoder input length, EOS included
  int max_target_tokens = 256;  // generated tokens, EOS included
  int max_beam = 4;             // largest beam_size a call may ask for
  int num_threads = 1;          // threads of the Translator's pool (1 = the calling thread)
  // Upper bound on the arena plus scratch; 0 = no cap. Create fails with kLimitExceeded, naming
  // the bytes needed, when the plan is larger.
  size_t max_memory_bytes = 0;
  // fp16 arithmetic for models with F16 weights (see Fp16Compute). With kF16 the arena also
  // holds the F16 copies of one operator's input and output rows.
  Fp16Compute fp16_compute = Fp16Compute::kAuto;
  // Lines sorted and batched together (the sort window): TranslateIdsEach takes at most this
  // many sources, and Translate / TranslateEach sort and batch their lines in consecutive
  // windows of this many (sentences with BatchOptions::split_sentences; the whole input when it
  // has no more). The results of one window
  // (sort_window x max_beam hypotheses of up to max_target_tokens ids) are part of the planned
  // arena. 0 = 16 x max_batch; Translator::limits() reports the value in use.
  int sort_window = 0;
  // The model's vocabulary shortlist (ModelInfo::has_shortlist), when it has one. On: each
  // TranslateIds call computes the union of its inputs' allowed pieces once (every line of the
  // batch) and each decoder step computes the output layer (lm_head) over those rows only, for
  // all rows and beams at once; each row then keeps the pieces of its own sentence's list
  // (Model::ShortlistPieces of that sentence alone) and every other piece gets logit -inf, so
  // the search never produces it and its log-softmax is normalised over the sentence's list
  // (scores are log-probabilities of the distribution restricted to it, as Marian's
  // shortlists compute them). Greedy, beam ranking, ties (lower id first), n-best and length
  // penalty are otherwise the same rules; with a list that holds every piece the outputs are
  // those of the full vocabulary. Unlike Marian's and CTranslate2's batch-wide vocabularies,
  // an output never depends on the other lines of its batch: the same bits as the sentence
  // alone (int8 on every CPU; fp32 where its products read the weights in place). The arena
  // also holds the union's rows of the output layer (int8: d_model bytes per piece, fp16:
  // 4 d_model; fp32 reads them in place), the product's output (4 bytes per piece and row) and
  // each line's list (4 bytes per piece). ForcedLogits always computes every logit. Off
  // (false): the full vocabulary, as for a model without shortlist.
  bool use_shortlist = true;
  WorkerWait worker_wait = WorkerWait::kYield;  // see WorkerWait
  // Batch lanes: a call of several sentences is dealt out to this many lanes (sentence i to
  // lane i % lanes), and each lane runs its sentences whole (encoder, every decode step and the
  // search) on one thread of the pool, all lanes at once: one wake of the workers per call
  // instead of one per product, and the search, attention and layer norms run in parallel too.
  // Each lane has its own activation memory planned for ceil(max_batch / lanes) sentences
  // (added to arena_bytes) and its own operators, which read the weights in place; the weights
  // are never copied for a lane. A call with fewer sentences than lanes (batch-1 decoding)
  // splits each product over the pool instead. Results are the same bits with or without
  // lanes (every sentence is computed on its own rows; with a vocabulary shortlist each row
  // keeps its own sentence's list either way).
  //   0 (default): num_threads lanes when num_threads > 1 and every operator reads the weights
  //     in place (int8 everywhere; fp32 on x86 with AVX2), else 1. Translator::limits()
  //     reports the value in use.
  //   1: off (every call splits its products over the pool).
  //   2..num_threads: that many lanes; Create fails (kInvalidArgument) when an operator holds
  //     a packed copy of its weights (XNNPACK's fp32 and fp16 paths: Arm fp32 / fp16, x86 without
  //     AVX2), since every lane would need its own copy.
  int batch_lanes = 0;
};

// When a beam search ends besides beam_size finished hypotheses (the rules are under "Decoding
// semantics" at the top of this file). Greedy ignores it.
enum class BeamStop : int { kExhaustive = 0, kTopEos = 1, kOutscored = 2 };

struct SearchOptions {
  int beam_size = 1;             // 1 = greedy; <= TranslatorLimits::max_beam
  int num_hypotheses = 1;        // n-best; <= beam_size
  float length_penalty = 1.0f;   // score = sum logprob / length^length_penalty
  int max_length = 0;            // generated tokens incl. EOS; 0 = max_target_tokens
  BeamStop beam_stop = BeamStop::kExhaustive;  // README.md: what the others cost in BLEU
  // EOS is not chosen before this many generated tokens ("Minimum length" above); 0 = off;
  // less than the resolved max_length.
  int min_length = 0;
  // Random sampling ("Sampling" above): beam_size 1 only. top_k, top_p, temperature and seed
  // shape the draw and must stay at their defaults without sample (kInvalidArgument otherwise,
  // so that a setting is never silently ignored).
  bool sample = false;
  int top_k = 0;              // the k most likely ids only; 0 = all
  float top_p = 1.0f;         // nucleus: in (0, 1]; 1 = off
  float temperature = 1.0f;   // > 0 and finite; < 1 sharpens, > 1 flattens
  uint64_t seed = 0;          // with the source ids, fixes every draw
};

struct TokenSpan {
  const int32_t* ids = nullptr;
  size_t size = 0;
};

// One batch of a call over many lines (TranslateIdsEach, Translate, TranslateEach), as the
// call's BatchObserver sees it.
struct BatchReport {
  const size_t* lines = nullptr;  // the batch's lines: indices into the call's input, shortest
                                  // source first when sorted
  size_t num_lines = 0;
  size_t longest_source = 0;      // tokens, EOS included
  double milliseconds = 0.0;      // wall time of the batch's TranslateIds (encoder and search)
  const Status* status = nullptr; // OK, or why the batch failed (each of its lines fails with it)
};

// Told about each batch right after it ran, on the calling thread. The report's pointers are
// valid during the call only; the observer must not call into the Translator.
class BatchObserver {
 public:
  virtual ~BatchObserver() = default;
  virtual void OnBatch(const BatchReport& batch) = 0;
};

// How a call over many lines forms its batches. Within each sort window
// (TranslatorLimits::sort_window) the lines are ordered by source length in tokens (EOS
// included; equal lengths keep input order), then cut into consecutive batches of at most
// max_lines lines whose lines x longest source stays within max_tokens. Results always come
// back in input order. Batching changes only which lines share a batch: a line's result does
// not depend on the other lines of its batch, except that products of one row and of several
// rows may round differently in the last bits (another kernel), which can change a choice
// between candidates that are that close.
struct BatchOptions {
  int max_lines = 0;   // lines per batch; 0 = TranslatorLimits::max_batch (also the upper bound)
  // Token budget per batch: lines x the longest source, EOS included; 0 = none. A line longer
  // than the budget forms a batch of its own.
  int max_tokens = 0;
  bool sort_by_length = true;  // false: batches follow input order
  BatchObserver* observer = nullptr;  // may be null
  // Text calls (Translate, TranslateEach) only; TranslateIdsEach rejects it (kInvalidArgument).
  // true: each line is cut into sentences (SplitSentences) and each sentence is translated as a
  // line of its own (batched with the others, sort windows counted in sentences), so that a
  // paragraph reaches the model in the units it was trained on. A line's hypothesis is then its
  // sentences' best translations in order, joined by the whitespace that separated the
  // sentences in the line (a sentence translated to nothing is left out with its separator);
  // `ids` are the sentences' ids one after the other; `finished` holds when every sentence
  // finished; `score` is the line's sum of log-probabilities over the sentences' generated
  // tokens divided by their total length^length_penalty (recovered from each sentence's score
  // and length in float32). Requires num_hypotheses 1 (kInvalidArgument otherwise). A sentence
  // longer than max_source_tokens fails its line with kInputTooLong naming the sentence; a
  // batch observer sees a line once for each of its sentences in the batch.
  bool split_sentences = false;
};

// A sentence of a text: bytes [begin, end), without surrounding whitespace.
struct SentenceSpan {
  size_t begin = 0;
  size_t end = 0;
};

// The sentences of `text`, in order (none for blank text), by the rule that cut the training
// text into sentence pairs (`headwise-train data`, trainer/headwise_trainer/data/ui_text.py):
// a sentence ends after '.', '!', '?' or U+2026, then any closing quotes and brackets
// (" ' » « “ ” ’ ) ]), where whitespace follows and then, after any opening quotes and
// brackets (" ' „ “ « » ‚ ( [), a capital A-Z, U+00C0-U+00DE (not U+00D7) or a digit 0-9;
// but not after a period that ends a word (its last whitespace-separated token, opening quotes
// and parentheses ( " ' „ “ « stripped, lower-cased) of at most one character, ending with a digit, with a '.' among its
// last two characters, or in schema/sentence_abbreviations.txt ("e.g", "z.b", "etc", ...).
// Whitespace is Python's str.isspace(). Scripts without capitals (CJK, Arabic, ...) and
// sentences starting in lower case are not split. Thread-safe. Errors: kInvalidUtf8 (naming
// the byte offset).
Result<std::vector<SentenceSpan>> SplitSentences(const std::string& text);

// A hypothesis of the last TranslateIds call; `ids` points into Translator memory and is valid
// until the next call on the same Translator.
struct HypothesisView {
  const int32_t* ids = nullptr;
  size_t size = 0;
  float score = 0.0f;
  bool finished = false;  // ended with EOS (false: cut at max length)
};

struct TextHypothesis {
  std::string text;
  std::vector<int32_t> ids;
  float score = 0.0f;
  bool finished = false;
};

class Translator {
 public:
  // Creates the operators (XNNPACK's pack their weights; the in-place ones keep pointers into
  // the Model) and the thread pool, and plans the arena. Errors: kInvalidArgument (a limit < 1,
  // sort_window < 0, or max_source_tokens/max_target_tokens over max_position_embeddings, an
  // fp16_compute value outside the enum, kRequire for a model
  // without F16 matrices), kLimitExceeded (max_memory_bytes), kOutOfMemory, kBackend (also
  // fp16_compute = kRequire on a CPU without fp16 arithmetic, naming what was missing).
  static Result<std::unique_ptr<Translator>> Create(std::shared_ptr<const Model> model,
                                                    const TranslatorLimits& limits);
  ~Translator();
  Translator(const Translator&) = delete;
  Translator& operator=(const Translator&) = delete;

  // Translates `batch` encoder inputs (each ending with EOS, as Model::EncodeSource returns).
  // `target_prefixes` (null: none) holds one span per input, the ids its translation must begin
  // with (no decoder start, no EOS; size 0: no prefix for that input; see "Target prefix"
  // above). No heap allocation. Errors: kBatchTooLarge, kInputTooLong (also a prefix longer than
  // the maximum length), kInvalidArgument (empty input, an id outside the vocabulary, a prefix
  // id that is PAD or EOS, options outside the limits), kBackend.
  Status TranslateIds(const TokenSpan* sources, size_t batch, const SearchOptions& options,
                      const TokenSpan* target_prefixes = nullptr);
  // Results of the last successful TranslateIds, or of input `sentence` of the last
  // TranslateIdsEach (0 hypotheses for a line that failed).
  size_t num_hypotheses(size_t sentence) const;
  HypothesisView hypothesis(size_t sentence, size_t k) const;

  // Translates `n` encoder inputs (n <= limits().sort_window), each succeeding or failing on its
  // own, in batches formed by `batching` (sorted by length within the call, cut by lines and
  // tokens) and run with TranslateIds. Afterwards line_status(i), num_hypotheses(i) and
  // hypothesis(i, k) answer for input i, in input order, until the next call. A source that is
  // empty, longer than max_source_tokens (kInputTooLong) or holds an id outside the vocabulary
  // (kInvalidArgument) fails alone; a batch whose TranslateIds fails (kBackend, ...) gives its
  // status to each of its lines. `target_prefixes` as in TranslateIds (one span per input, null:
  // none); a line whose prefix is longer than the maximum length (kInputTooLong) or holds an
  // id outside the vocabulary, PAD or EOS (kInvalidArgument) fails alone. No heap allocation: a
  // failing line's message is built when line_status is first asked for it.
  // Errors of the whole call: kBatchTooLarge (n over sort_window), kInvalidArgument (sources
  // null, options outside the limits, batching.max_lines outside [0, max_batch],
  // batching.max_tokens < 0); such a call is rejected before anything changes.
  Status TranslateIdsEach(const TokenSpan* sources, size_t n, const SearchOptions& options,
                          const BatchOptions& batching = {},
                          const TokenSpan* target_prefixes = nullptr);
  // Why input `sentence` of the last TranslateIdsEach failed, or OK (also when out of range or
  // after any other call). The message does not name the line (the caller knows which it asked
  // about), e.g. "301 tokens exceed TranslatorLimits.max_source_tokens 256".
  const Status& line_status(size_t sentence) const;
  // line_status(sentence).code() without building the message (no allocation).
  ErrorCode line_code(size_t sentence) const;

  // Teacher-forced decoding for tests and analysis: runs the encoder on `source` and the
  // decoder on decoder_start followed by `target`, writing (target.size + 1) * vocab_size
  // logits (PAD not masked) to `logits`. No heap allocation.
  Status ForcedLogits(TokenSpan source, TokenSpan target, float* logits);

  // Text in, text out. Per line: an empty or blank line (Unicode White_Space and control
  // characters only) gives one empty hypothesis (score 0, finished) without running the model;
  // control characters (U+0000-001F, U+007F-009F) count as spaces; invalid UTF-8 is
  // kInvalidUtf8 naming "texts[i]" and the byte offset; a line longer than max_source_tokens is
  // kInputTooLong naming the line and its token count, never silently truncated. Any failing
  // line fails the whole call. Options are checked even when every line is blank. Lines that
  // are not blank are batched as TranslateIdsEach batches them (`batching`, within windows of
  // sort_window input lines, or with batching.split_sentences of sort_window sentences);
  // results keep input order. `target_prefixes`: none (empty), or one text per line, the start
  // its translation must have (Model::EncodeTarget; a blank one: none; see "Target prefix"
  // above): every hypothesis' text then begins with the prefix as the tokenizer decodes it.
  // Errors for the prefixes: kInvalidArgument when their number is not texts.size(), when
  // batching.split_sentences is on (a line's sentences have no one start), or for a blank line
  // with a prefix that is not blank; kInvalidUtf8 and kTokenizer (EncodeTarget) naming
  // "target_prefixes[i]"; kInputTooLong (a prefix longer than the maximum length) and
  // kInvalidArgument (its ids hold EOS or PAD) naming "texts[i]".
  Result<std::vector<std::vector<TextHypothesis>>> Translate(
      const std::vector<std::string>& texts, const SearchOptions& options,
      const BatchOptions& batching = {}, const std::vector<std::string>& target_prefixes = {});
  // Translate with each line succeeding or failing on its own, as headwise-translate treats its
  // input lines: a line that is invalid UTF-8 or longer than max_source_tokens gets its own
  // error (same codes and messages as Translate) while the other lines are translated, and a
  // batch whose TranslateIds fails (kBackend, ...) gives that status to each of its lines.
  // The outer Result fails only for what no line can change: options or batching outside the
  // limits (kInvalidArgument) and a model without tokenizer (kTokenizer). Batching and target
  // prefixes as Translate (a line's prefix errors are that line's; a prefix count other than
  // texts.size(), or prefixes with split_sentences, fail the call); the observer's line indices
  // are indices into `texts`.
  Result<std::vector<Result<std::vector<TextHypothesis>>>> TranslateEach(
      const std::vector<std::string>& texts, const SearchOptions& options,
      const BatchOptions& batching = {}, const std::vector<std::string>& target_prefixes = {});

  const TranslatorLimits& limits() const;
  const std::shared_ptr<const Model>& model() const;
  // Bytes of the planned activation arena (and scratch) of this Translator, its batch lanes'
  // included.
  size_t arena_bytes() const;
  // What the matrix products compute in, decided at Create from the model's weight types,
  // limits().fp16_compute and the CPU. precision_note() says why in one line, e.g. "f32: the
  // CPU has no fp16 arithmetic (cpuinfo: no ARMv8.2 FP16 arithmetic); F16 weights widened".
  MatmulPrecision matmul_precision() const;
  const std::string& precision_note() const;
  // The kernels the matrix products run, per weight format, chosen at Create from the model and
  // this CPU (cpuinfo), so a user on a device can see what runs: "<format>: <kernel>" for each
  // distinct path, joined with ", ", e.g. "int8: neon-dotprod" (aarch64 with the dot-product
  // extension), "int8: neon", "int8: neon-armv7", "int8: amx" (x86 with AMX-INT8: tiles for
  // 8+ rows), "int8: avx512-vnni-packed" (x86 with AVX-512 VNNI, a model loaded from a file:
  // its int8 matrices packed once per Model for vpdpbusd, the file's pages released),
  // "int8: avx512-vnni" (the same CPU, a model loaded from memory: rows read in place),
  // "int8: avx-vnni", "int8: avx2", "int8: portable",
  // "fp16: xnnpack", "fp32: xnnpack", "fp32: f32-gemm-avx2" (F32 / F16 weights in place); a
  // path taken only by one-row products (batch-1 decode steps) or only by products of several
  // rows is marked "(1 row)" / "(2+ rows)", e.g.
  // "fp32: f32-gemm-avx2 (2+ rows), fp32: f32-gemv-avx2 (1 row)".
  const std::string& kernel_paths() const;
  // Whether TranslateIds runs the output layer over the model's shortlist (the model has one
  // and limits().use_shortlist).
  bool uses_shortlist() const;

  struct Impl;  // runtime-private

 private:
  friend struct TranslatorAccess;  // runtime-private (translator_impl.h): bench's profiling
  explicit Translator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Version of the library ("0.1.0").
const char* Version();

}  // namespace headwise

#endif  // HEADWISE_HEADWISE_HPP_
