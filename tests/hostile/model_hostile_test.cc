// Hostile model files: every truncation of the metadata and many of the data, every byte of the
// flatbuffer flipped, and targeted damage (identifier, size prefix, version, data segment and
// tensor offsets, alignment, shapes against the per-block head counts, overflowing shape
// products, tokenizer blobs, checksum). Each one is a clean error naming what was wrong, or a
// model that then translates without breaking an invariant; never a crash (the asan-ubsan preset
// runs this under AddressSanitizer and UBSan, on exactly-sized copies).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "format/file_layout.h"
#include "fuzz/model_exercise.h"
#include "headwise/headwise.h"
#include "tests/api/test_model.h"
#include "tests/hostile/model_image.h"

namespace headwise {
namespace {

using testing::ModelImage;

// A small model: one encoder and one decoder layer, two of four heads kept in the encoder,
// none in the decoder cross-attention.
testing::ModelOptions SmallOptions() {
  testing::ModelOptions o;
  o.d_model = 8;
  o.encoder_layers = 1;
  o.decoder_layers = 1;
  o.heads = 4;
  o.encoder_ffn = 8;
  o.decoder_ffn = 8;
  o.vocab = 11;
  o.pad = 10;
  o.start = 10;
  o.max_positions = 16;
  o.kept = {{1, 3}, {0, 1, 2, 3}, {}};
  return o;
}

std::vector<uint8_t> SmallModel() { return testing::Serialize(testing::MakeSpec(SmallOptions())); }

void ExpectError(const Result<std::shared_ptr<const Model>>& r, ErrorCode code,
                 const std::string& fragment) {
  ASSERT_FALSE(r.ok()) << "expected " << ErrorCodeName(code) << " containing '" << fragment << "'";
  EXPECT_EQ(r.status().code(), code) << r.status().ToString();
  EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().ToString();
}

TEST(HostileModel, TruncatedAtEveryMetadataOffsetAndAcrossTheData) {
  ModelImage image(SmallModel());
  const size_t size = image.bytes().size(), data = image.data_offset();
  ASSERT_TRUE(image.Load().ok());
  std::vector<size_t> cuts;
  for (size_t cut = 0; cut <= data; ++cut) cuts.push_back(cut);
  for (size_t cut = data + 1; cut < size; cut += 61) cuts.push_back(cut);
  cuts.push_back(size - 1);
  for (size_t cut : cuts) {
    auto r = image.LoadPrefix(cut);
    ASSERT_FALSE(r.ok()) << "a model cut at " << cut << " of " << size << " bytes loaded";
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidModel) << cut << ": " << r.status().ToString();
    const std::string expected = cut < 12 ? "a headwise model has at least 12" : "truncated file";
    EXPECT_NE(r.status().message().find(expected), std::string::npos)
        << cut << ": " << r.status().ToString();
  }
}

// Flips every byte of the flatbuffer with three masks. A flip the checks cannot see (a gate
// value, a provenance string, an offset moved to another aligned tensor) must give a model that
// translates; every other flip a clean load error.
void FlipEveryMetadataByte(ModelImage& image, size_t begin, size_t end, size_t stride,
                           const std::vector<uint8_t>& masks, size_t* loaded, size_t* rejected) {
  const std::set<ErrorCode> load_errors = {ErrorCode::kInvalidModel, ErrorCode::kUnsupportedVersion,
                                           ErrorCode::kChecksumMismatch, ErrorCode::kTokenizer};
  for (size_t i = begin; i < end; i += stride) {
    for (uint8_t mask : masks) {
      image.bytes()[i] ^= mask;
      auto r = image.Load();
      if (r.ok()) {
        ++*loaded;
        const Status used = fuzz::ExerciseModel(*r);
        EXPECT_NE(used.code(), ErrorCode::kInternal)
            << "byte " << i << " ^ " << int{mask} << ": " << used.ToString();
      } else {
        ++*rejected;
        EXPECT_EQ(load_errors.count(r.status().code()), 1u)
            << "byte " << i << " ^ " << int{mask} << ": " << r.status().ToString();
        EXPECT_FALSE(r.status().message().empty()) << "byte " << i;
      }
      image.bytes()[i] ^= mask;
    }
  }
}

TEST(HostileModel, EveryFlatbufferByteFlippedIsACleanErrorOrAWorkingModel) {
  ModelImage image(SmallModel());
  size_t loaded = 0, rejected = 0;
  FlipEveryMetadataByte(image, 0, image.metadata_end(), 1, {0x01, 0x80, 0xFF}, &loaded, &rejected);
  const size_t total = 3 * image.metadata_end();
  EXPECT_EQ(loaded + rejected, total);
  // Most of the metadata is names, shapes, offsets and sizes, which the checks cover.
  EXPECT_GT(rejected, total / 2) << loaded << " of " << total << " damaged images loaded";
  std::printf("[ flips ] %zu metadata bytes x 3 masks: %zu rejected, %zu loaded and translated\n",
              image.metadata_end(), rejected, loaded);
}

TEST(HostileModel, TokenizerModelWithFlippedBytesIsACleanErrorOrAWorkingModel) {
  testing::ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  auto en = testing::TrainSpm(dir.path(), "en", 60);
  auto de = testing::TrainSpm(dir.path(), "de", 60);
  ASSERT_TRUE(en.ok() && de.ok()) << en.status().ToString() << de.status().ToString();
  auto bytes = SerializeModel(testing::RandomModelSpec(&*en, &*de));
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  ModelImage image(std::move(bytes).value());
  ASSERT_TRUE(image.Load().ok());
  const schema::Tokenizer* tok = image.root()->tokenizer();
  ASSERT_NE(tok, nullptr);
  const flatbuffers::Vector<uint8_t>* source_spm = tok->source_spm();
  const flatbuffers::Vector<uint8_t>* target_spm = tok->target_spm();
  if (source_spm == nullptr || target_spm == nullptr) FAIL() << "no SentencePiece protos";
  // The SentencePiece protos are most of this flatbuffer: every byte around them, a sample of
  // bytes inside them (each load parses both protos).
  size_t a = static_cast<size_t>(source_spm->data() - image.bytes().data());
  size_t b = static_cast<size_t>(target_spm->data() - image.bytes().data());
  size_t a_end = a + source_spm->size(), b_end = b + target_spm->size();
  if (b < a) {
    std::swap(a, b);
    std::swap(a_end, b_end);
  }
  ASSERT_LE(a_end, b);
  size_t loaded = 0, rejected = 0;
  FlipEveryMetadataByte(image, 0, a, 1, {0xFF}, &loaded, &rejected);
  FlipEveryMetadataByte(image, a, a_end, 997, {0x01, 0xFF}, &loaded, &rejected);
  FlipEveryMetadataByte(image, a_end, b, 1, {0xFF}, &loaded, &rejected);
  FlipEveryMetadataByte(image, b, b_end, 997, {0x01, 0xFF}, &loaded, &rejected);
  FlipEveryMetadataByte(image, b_end, image.metadata_end(), 1, {0xFF}, &loaded, &rejected);
  EXPECT_GT(rejected, 0u);
  std::printf("[ flips ] tokenizer model: %zu rejected, %zu loaded and translated\n", rejected,
              loaded);
}

TEST(HostileModel, WrongIdentifierAndSizePrefix) {
  ModelImage image(SmallModel());
  std::memcpy(image.bytes().data() + 8, "HWM2", 4);
  ExpectError(image.Load(), ErrorCode::kInvalidModel, "file identifier 'HWM2', expected 'HWM1'");
  std::memcpy(image.bytes().data() + 8, "\x7f" "ELF", 4);
  ExpectError(image.Load(), ErrorCode::kInvalidModel, "file identifier '\\x7fELF'");
  std::memcpy(image.bytes().data() + 8, "HWM1", 4);
  const uint32_t huge = 0xFFFFFFF0u;
  std::memcpy(image.bytes().data(), &huge, 4);
  ExpectError(image.Load(), ErrorCode::kInvalidModel,
              "the model header says 4294967284 bytes of metadata, the file has " +
                  std::to_string(image.bytes().size()));
}

TEST(HostileModel, FormatVersionZeroOrNewer) {
  ModelImage image(SmallModel());
  ASSERT_TRUE(image.Patch<uint32_t>(image.root(), schema::Model::VT_FORMAT_VERSION, kFormatVersion + 1));
  ExpectError(image.Load(), ErrorCode::kUnsupportedVersion,
              "model format version " + std::to_string(kFormatVersion + 1) +
                  " is newer than this runtime reads (" + std::to_string(kFormatVersion) + ")");
  ASSERT_TRUE(image.Patch<uint32_t>(image.root(), schema::Model::VT_FORMAT_VERSION, 0));
  ExpectError(image.Load(), ErrorCode::kInvalidModel, "format_version is 0");
}

TEST(HostileModel, DataSegmentMisplaced) {
  ModelImage image(SmallModel());
  const uint64_t offset = image.data_offset();
  ASSERT_TRUE(image.Patch<uint64_t>(image.root(), schema::Model::VT_DATA_OFFSET, offset + 4));
  ExpectError(image.Load(), ErrorCode::kInvalidModel,
              "data segment offset " + std::to_string(offset + 4) + " is not a multiple of 64");
  ASSERT_TRUE(image.Patch<uint64_t>(image.root(), schema::Model::VT_DATA_OFFSET, 0));
  ExpectError(image.Load(), ErrorCode::kInvalidModel, "overlaps the metadata");
  ASSERT_TRUE(image.Patch<uint64_t>(image.root(), schema::Model::VT_DATA_OFFSET, offset));
  ASSERT_TRUE(image.Patch<uint64_t>(image.root(), schema::Model::VT_DATA_SIZE,
                                    std::numeric_limits<uint64_t>::max() - 63));
  ExpectError(image.Load(), ErrorCode::kInvalidModel, "truncated file: data segment [");
}

TEST(HostileModel, TensorOutsideTheFileOrMisaligned) {
  ModelImage image(SmallModel());
  const schema::Tensor* t = image.Tensor("model.decoder.layers.0.fc1.weight");
  ASSERT_NE(t, nullptr);
  const uint64_t offset = t->offset(), data_size = image.root()->data_size();
  ASSERT_TRUE(image.Patch<uint64_t>(t, schema::Tensor::VT_OFFSET, offset + 4));
  ExpectError(image.Load(), ErrorCode::kInvalidModel,
              "'model.decoder.layers.0.fc1.weight': offset " + std::to_string(offset + 4) +
                  " is not a multiple of 64");
  ASSERT_TRUE(image.Patch<uint64_t>(t, schema::Tensor::VT_OFFSET, data_size));
  ExpectError(image.Load(), ErrorCode::kInvalidModel,
              "'model.decoder.layers.0.fc1.weight': bytes [" + std::to_string(data_size) +
                  ", +256) outside the data segment of " + std::to_string(data_size) + " bytes");
  // offset + size would wrap around 64 bits.
  const uint64_t wrap = std::numeric_limits<uint64_t>::max() - 63;
  ASSERT_TRUE(image.Patch<uint64_t>(t, schema::Tensor::VT_OFFSET, wrap));
  ExpectError(image.Load(), ErrorCode::kInvalidModel, "outside the data segment");
}

TEST(HostileModel, ShapeProductsThatOverflowOrDisagreeWithTheSize) {
  ModelImage image(SmallModel());
  const schema::Tensor* t = image.Tensor("model.encoder.layers.0.fc2.weight");
  const flatbuffers::Vector<uint32_t>* shape = t != nullptr ? t->shape() : nullptr;
  if (shape == nullptr || shape->size() != 2) FAIL() << "fc2.weight has no 2-D shape";
  const uint32_t* dims = shape->data();
  image.Write<uint32_t>(dims, 0xFFFFFFFFu);  // 4 * (2^32 - 1)^2 does not fit in 64 bits
  image.Write<uint32_t>(dims + 1, 0xFFFFFFFFu);
  ExpectError(image.Load(), ErrorCode::kInvalidModel,
              "'model.encoder.layers.0.fc2.weight': shape size overflows 64 bits");
  image.Write<uint32_t>(dims, 8);
  image.Write<uint32_t>(dims + 1, 16);  // 512 bytes, the tensor holds 256
  ExpectError(image.Load(), ErrorCode::kInvalidModel,
              "'model.encoder.layers.0.fc2.weight': size 256 bytes, shape and dtype need 512");
}

TEST(HostileModel, TensorShapesDisagreeingWithTheBlockHeadCounts) {
  // Encoder block 0 keeps heads {1, 3}: q/k/v_proj.weight are [2 * 2, 8]. Saying it keeps one
  // head (num_heads 1, kept_heads {1}) leaves the file's tensors a head too large.
  ModelImage image(SmallModel());
  const schema::AttentionBlock* b = image.Block(0);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(b->kept_heads(), nullptr);
  ASSERT_TRUE(image.Patch<uint32_t>(b, schema::AttentionBlock::VT_NUM_HEADS, 1));
  image.SetLength(b->kept_heads(), 1);
  ExpectError(image.Load(), ErrorCode::kInvalidModel,
              "model.encoder.layers.0.self_attn.q_proj.weight: expected [2, 8], found [4, 8]");

  // A count that disagrees with the kept indices, and one over the source heads.
  ModelImage other(SmallModel());
  const schema::AttentionBlock* d = other.Block(1);
  ASSERT_TRUE(other.Patch<uint32_t>(d, schema::AttentionBlock::VT_NUM_HEADS, 3));
  ExpectError(other.Load(), ErrorCode::kInvalidModel,
              "attention block 1 (decoder self-attention layer 0): 3 kept heads with 4 indices");
  ASSERT_TRUE(other.Patch<uint32_t>(d, schema::AttentionBlock::VT_NUM_HEADS, 5));
  ExpectError(other.Load(), ErrorCode::kInvalidModel, "5 kept heads with 4 indices, source has 4");
  ASSERT_TRUE(other.Patch<uint32_t>(d, schema::AttentionBlock::VT_NUM_HEADS, 4));
  ASSERT_TRUE(other.Patch<uint32_t>(d, schema::AttentionBlock::VT_ORIGINAL_NUM_HEADS, 8));
  ExpectError(other.Load(), ErrorCode::kInvalidModel, "expected 4 source heads, found 8");
  ASSERT_TRUE(other.Patch<uint32_t>(d, schema::AttentionBlock::VT_ORIGINAL_NUM_HEADS, 4));
  ASSERT_TRUE(other.Patch<uint32_t>(d, schema::AttentionBlock::VT_HEAD_DIM, 4));
  ExpectError(other.Load(), ErrorCode::kInvalidModel, "expected head_dim 2, found 4");
  ASSERT_TRUE(other.Patch<uint32_t>(d, schema::AttentionBlock::VT_HEAD_DIM, 2));
  other.Write<uint32_t>(d->kept_heads()->data() + 1, 0);  // kept heads {0, 0, 2, 3}
  ExpectError(other.Load(), ErrorCode::kInvalidModel, "kept head indices must be ascending, unique");

  // A config whose head count does not divide d_model.
  ModelImage config(SmallModel());
  ASSERT_TRUE(config.Patch<uint32_t>(config.root()->config(),
                                     schema::ModelConfig::VT_DECODER_ATTENTION_HEADS, 3));
  ExpectError(config.Load(), ErrorCode::kInvalidModel, "d_model 8 is not divisible by 3 heads");
}

TEST(HostileModel, MissingBlocksAndUnknownEnums) {
  ModelImage image(SmallModel());
  image.SetLength(image.root()->attention(), 2);
  ExpectError(image.Load(), ErrorCode::kInvalidModel, "expected 3 attention blocks");
  ModelImage kind(SmallModel());
  ASSERT_TRUE(kind.Patch<uint8_t>(kind.Block(2), schema::AttentionBlock::VT_KIND, 7));
  ExpectError(kind.Load(), ErrorCode::kInvalidModel, "attention block 2: unknown kind 7");
  ModelImage act(SmallModel());
  ASSERT_TRUE(act.Patch<uint8_t>(act.root()->config(), schema::ModelConfig::VT_ACTIVATION, 9));
  ExpectError(act.Load(), ErrorCode::kInvalidModel, "unknown activation 9");
  ModelImage dtype(SmallModel());
  ASSERT_TRUE(dtype.Patch<uint8_t>(dtype.Tensor("final_logits_bias"), schema::Tensor::VT_DTYPE, 200));
  ExpectError(dtype.Load(), ErrorCode::kInvalidModel, "'final_logits_bias': unknown dtype 200");
  ModelImage eps(SmallModel());
  ASSERT_TRUE(eps.Patch<float>(eps.root()->config(), schema::ModelConfig::VT_LAYER_NORM_EPS,
                               std::numeric_limits<float>::quiet_NaN()));
  ExpectError(eps.Load(), ErrorCode::kInvalidModel, "layer_norm_eps must be finite and > 0");
}

TEST(HostileModel, BadTokenizerBlobsNameTheBlob) {
  ModelSpec spec = testing::MakeSpec(SmallOptions());
  spec.vocab = {"</s>", "<unk>", "a", "b", "c", "d", "e", "f", "g", "h", "<pad>"};
  spec.source_spm = "this is not a SentencePiece model";
  spec.target_spm = std::string("\x0a\xff\xff\xff\xff\x0f", 6);  // a field longer than the blob
  ModelImage image(testing::Serialize(spec));
  ExpectError(image.Load(), ErrorCode::kTokenizer, "source tokenizer model does not parse: SentencePiece");

  testing::ScratchDir dir;
  auto en = testing::TrainSpm(dir.path(), "en", 60);
  ASSERT_TRUE(en.ok()) << en.status().ToString();
  spec.source_spm = en->proto;
  ModelImage target(testing::Serialize(spec));
  ExpectError(target.Load(), ErrorCode::kTokenizer, "target tokenizer model does not parse: SentencePiece");

  spec.target_spm = en->proto;
  spec.vocab[3] = "a";
  ModelImage duplicate(testing::Serialize(spec));
  ExpectError(duplicate.Load(), ErrorCode::kTokenizer, "vocabulary: piece \"a\" has ids 2 and 3");

  spec.vocab[3] = "b";
  ModelImage shorter(testing::Serialize(spec));
  ASSERT_TRUE(shorter.Load().ok());
  const schema::Tokenizer* tokenizer = shorter.root()->tokenizer();
  const auto* vocab = tokenizer != nullptr ? tokenizer->vocab() : nullptr;
  if (vocab == nullptr) FAIL() << "no vocab";
  shorter.SetLength(vocab, 10);
  ExpectError(shorter.Load(), ErrorCode::kInvalidModel,
              "tokenizer: vocab has 10 pieces, config vocab_size is 11");
}

// A serialized sentencepiece.ModelProto: <unk>, <s>, </s>, then `pieces` as normal pieces.
std::string SpmProto(const std::vector<std::string>& pieces) {
  const auto varint = [](uint64_t v) {
    std::string out;
    for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7f) | 0x80);
    return out + static_cast<char>(v);
  };
  const auto bytes_field = [&](int number, const std::string& bytes) {
    return varint(static_cast<uint64_t>(number) << 3 | 2) + varint(bytes.size()) + bytes;
  };
  const auto piece = [&](const std::string& text, float score, int type) {
    char raw[4];
    std::memcpy(raw, &score, 4);
    return bytes_field(1, text) + varint(2 << 3 | 5) + std::string(raw, 4) + varint(3 << 3) +
           varint(static_cast<uint64_t>(type));
  };
  std::string proto = bytes_field(1, piece("<unk>", 0, 2)) + bytes_field(1, piece("<s>", 0, 3)) +
                      bytes_field(1, piece("</s>", 0, 3));
  for (const std::string& p : pieces) proto += bytes_field(1, piece(p, -1.0f, 1));
  return proto;
}

// Found by the model_loader fuzzer (fuzz/regressions/model_loader/crash-c90eb6b9...): a piece
// starting with NUL makes SentencePiece's trie builder throw instead of returning a Status.
TEST(HostileModel, SentencePieceThatThrowsIsATokenizerError) {
  ModelSpec spec = testing::MakeSpec(SmallOptions());
  spec.vocab = {"</s>", "<unk>", "a", "b", "c", "d", "e", "f", "g", "h", "<pad>"};
  spec.source_spm = SpmProto({"a", std::string("\0b", 2)});
  spec.target_spm = SpmProto({"a", "b"});
  ModelImage image(testing::Serialize(spec));
  ExpectError(image.Load(), ErrorCode::kTokenizer,
              "source tokenizer model does not parse: SentencePiece threw: ");
  ExpectError(image.Load(), ErrorCode::kTokenizer, "zero-length key");
  std::swap(spec.source_spm, spec.target_spm);  // the well-formed proto loads
  ModelImage swapped(testing::Serialize(spec));
  ExpectError(swapped.Load(), ErrorCode::kTokenizer, "target tokenizer model does not parse");
}

TEST(HostileModel, ChecksumMismatchIsCaughtUnlessSkipped) {
  ModelImage image(SmallModel());
  image.bytes()[image.data_offset() + 7] ^= 0x10;
  ExpectError(image.Load(), ErrorCode::kChecksumMismatch, "does not match the");
  ExpectError(image.Load(), ErrorCode::kChecksumMismatch, "recorded in the file (corrupted weights)");
  auto skipped = image.Load(/*checksum=*/false);
  ASSERT_TRUE(skipped.ok()) << skipped.status().ToString();
  EXPECT_TRUE(fuzz::ExerciseModel(*skipped).ok());
  // A damaged checksum field reads the same as damaged weights.
  image.bytes()[image.data_offset() + 7] ^= 0x10;
  ASSERT_TRUE(image.Load().ok());
  const uint64_t recorded = image.root()->data_checksum();
  ASSERT_TRUE(image.Patch<uint64_t>(image.root(), schema::Model::VT_DATA_CHECKSUM, recorded ^ 1));
  ExpectError(image.Load(), ErrorCode::kChecksumMismatch, "checksum");
  EXPECT_TRUE(image.Load(/*checksum=*/false).ok());
}

// The option reaches Model::Load and the C API too; both name the file.
TEST(HostileModel, ChecksumOptionThroughLoadFromAPathAndTheCApi) {
  ModelImage image(SmallModel());
  image.bytes()[image.data_offset() + 70] ^= 0x04;
  testing::ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string path = dir / "damaged.hwm";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(image.bytes().data()),
              static_cast<std::streamsize>(image.bytes().size()));
  }
  auto checked = Model::Load(path);
  ExpectError(checked, ErrorCode::kChecksumMismatch, path + ": data segment checksum");
  LoadOptions skip;
  skip.verify_checksum = false;
  EXPECT_TRUE(Model::Load(path, skip).ok());

  hw_model* model = nullptr;
  EXPECT_EQ(hw_model_load(path.c_str(), nullptr, &model), HW_ERR_CHECKSUM_MISMATCH);
  EXPECT_EQ(model, nullptr);
  EXPECT_NE(std::string(hw_last_error_message()).find("checksum"), std::string::npos)
      << hw_last_error_message();
  hw_load_params params = hw_load_default_params();
  params.verify_checksum = 0;
  ASSERT_EQ(hw_model_load(path.c_str(), &params, &model), HW_OK) << hw_last_error_message();
  EXPECT_EQ(hw_model_vocab_size(model), 11);
  hw_model_free(model);
}

// Weights are not checked for finiteness at load (that would read every byte, as the checksum
// does), and a crafted file can carry a matching checksum: NaN and infinite weights must give
// some translation or a clean error, with every id inside the vocabulary.
TEST(HostileModel, NonFiniteWeightsDoNotBreakTheSearch) {
  for (const float poison : {std::numeric_limits<float>::quiet_NaN(),
                             std::numeric_limits<float>::infinity(),
                             -std::numeric_limits<float>::infinity()}) {
    ModelImage image(SmallModel());
    const size_t begin = image.data_offset(), end = image.bytes().size();
    for (size_t i = begin; i + 4 <= end; i += 4 * 7) std::memcpy(&image.bytes()[i], &poison, 4);
    auto r = image.Load(/*checksum=*/false);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const Status used = fuzz::ExerciseModel(*r);
    EXPECT_NE(used.code(), ErrorCode::kInternal) << used.ToString();
  }
}

// Gates and per-head analysis must have one entry per source head in source order (the rules
// of `headwise-convert inspect`); a file whose vectors were cut short or reordered is refused
// at load, naming the block, instead of describing heads that are not there.
TEST(HostileModel, GatesAndAnalysisOfTheWrongLengthOrOrder) {
  auto described = [] {
    ModelSpec spec = testing::MakeSpec(SmallOptions());
    for (const BlockLayout& b : spec.blocks) {
      spec.gate_log_alpha.emplace_back(b.original_num_heads, 1.0f);
      std::vector<HeadAnalysisSpec> heads(b.original_num_heads);
      for (uint32_t h = 0; h < b.original_num_heads; ++h) heads[h].source_head = h;
      spec.head_analysis.push_back(heads);
    }
    spec.analysis_info = {"attnlrp", "dev", std::string(64, '0')};
    return testing::Serialize(spec);
  };
  ModelImage ok(described());
  auto loaded = ok.Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->info().attention[1].gate_log_alpha.size(), 4u);
  EXPECT_EQ((*loaded)->info().attention[1].analysis.size(), 4u);

  ModelImage gates(described());
  const schema::AttentionBlock* dec_self = gates.Block(1);
  ASSERT_NE(dec_self, nullptr);
  ASSERT_NE(dec_self->gate_log_alpha(), nullptr);
  gates.SetLength(dec_self->gate_log_alpha(), 3);
  ExpectError(gates.Load(), ErrorCode::kInvalidModel,
              "decoder self-attention layer 0: 3 gate values for 4 source heads");
  ModelImage analysis(described());
  const schema::AttentionBlock* cross = analysis.Block(2);
  ASSERT_NE(cross, nullptr);
  ASSERT_NE(cross->analysis(), nullptr);
  analysis.SetLength(cross->analysis(), 2);
  ExpectError(analysis.Load(), ErrorCode::kInvalidModel,
              "decoder cross-attention layer 0: analysis of 2 heads for 4 source heads");
  ModelImage order(described());
  const schema::AttentionBlock* enc = order.Block(0);
  ASSERT_NE(enc, nullptr);
  const auto* heads = enc->analysis();
  ASSERT_NE(heads, nullptr);
  ASSERT_GE(heads->size(), 2u);
  const schema::HeadAnalysis* second = heads->Get(1);
  ASSERT_TRUE(order.Patch<uint32_t>(second, schema::HeadAnalysis::VT_SOURCE_HEAD, 0));
  ExpectError(order.Load(), ErrorCode::kInvalidModel,
              "encoder self-attention layer 0: analysis entry 1 is not for source head 1");
}

// The vocabulary shortlist (format/shortlist.h): vocab 11, 2 frequent ids, 3 ids per source id.
std::vector<uint8_t> ShortlistModel() {
  ModelSpec spec = testing::MakeSpec(SmallOptions());
  spec.shortlist = testing::MakeSyntheticShortlist(11, 2, 3, 4);
  return testing::Serialize(spec);
}

// The shortlist's arrays in an image; false when one is missing (the test then fails).
struct ShortlistArrays {
  const flatbuffers::Vector<uint32_t>* frequent = nullptr;
  const flatbuffers::Vector<uint32_t>* offsets = nullptr;
  const flatbuffers::Vector<uint32_t>* targets = nullptr;
};
bool Arrays(ModelImage& image, ShortlistArrays* a) {
  const schema::Model* root = image.root();
  const schema::Shortlist* l = root != nullptr ? root->shortlist() : nullptr;
  if (l == nullptr) return false;
  a->frequent = l->frequent();
  a->offsets = l->offsets();
  a->targets = l->targets();
  return a->frequent != nullptr && a->offsets != nullptr && a->targets != nullptr;
}

// Each rule broken in a file is refused at load, naming the array and position; nothing outside
// the arrays is read (exactly-sized copies under ASan).
TEST(HostileModel, ShortlistArraysThatBreakTheRules) {
  {
    ModelImage ok(ShortlistModel());
    auto loaded = ok.Load();
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    EXPECT_TRUE((*loaded)->info().has_shortlist);
    EXPECT_TRUE(fuzz::ExerciseModel(*loaded).ok());
  }
  ShortlistArrays a;
  ModelImage offsets(ShortlistModel());
  ASSERT_TRUE(Arrays(offsets, &a));
  offsets.SetLength(a.offsets, 11);
  ExpectError(offsets.Load(), ErrorCode::kInvalidModel,
              "shortlist: offsets: expected 12 entries (vocab_size + 1), found 11");

  ModelImage targets(ShortlistModel());
  ASSERT_TRUE(Arrays(targets, &a));
  targets.SetLength(a.targets, 32);
  ExpectError(targets.Load(), ErrorCode::kInvalidModel,
              "shortlist: offsets[11] is 33, expected the 32 targets");

  ModelImage range(ShortlistModel());
  ASSERT_TRUE(Arrays(range, &a));
  range.Write<uint32_t>(a.targets->data() + 4, 11);  // source id 1's second id
  ExpectError(range.Load(), ErrorCode::kInvalidModel,
              "shortlist: list of source id 1: id 11 at position 1 is outside the vocabulary of 11");

  ModelImage order(ShortlistModel());
  ASSERT_TRUE(Arrays(order, &a));
  const uint32_t first = a.targets->Get(6), second = a.targets->Get(7);  // source id 2's first two
  order.Write<uint32_t>(a.targets->data() + 6, second);
  order.Write<uint32_t>(a.targets->data() + 7, first);
  ExpectError(order.Load(), ErrorCode::kInvalidModel,
              "shortlist: list of source id 2: ids must be ascending and unique, found " +
                  std::to_string(second) + " then " + std::to_string(first) + " at position 1");

  ModelImage decreasing(ShortlistModel());
  ASSERT_TRUE(Arrays(decreasing, &a));
  decreasing.Write<uint32_t>(a.offsets->data() + 5, 2);
  ExpectError(decreasing.Load(), ErrorCode::kInvalidModel,
              "shortlist: offsets must not decrease, found 12 then 2 at source id 4");

  ModelImage huge(ShortlistModel());  // an offset far past the targets
  ASSERT_TRUE(Arrays(huge, &a));
  huge.Write<uint32_t>(a.offsets->data() + 5, 0xFFFFFFF0u);
  ExpectError(huge.Load(), ErrorCode::kInvalidModel,
              "shortlist: offsets[5] is 4294967280, past the 33 targets");
  ModelImage last(ShortlistModel());
  ASSERT_TRUE(Arrays(last, &a));
  last.Write<uint32_t>(a.offsets->data() + 11, 0xFFFFFFF0u);
  ExpectError(last.Load(), ErrorCode::kInvalidModel, "shortlist: offsets[11] is 4294967280");

  ModelImage frequent(ShortlistModel());
  ASSERT_TRUE(Arrays(frequent, &a));
  frequent.Write<uint32_t>(a.frequent->data(), 200);
  ExpectError(frequent.Load(), ErrorCode::kInvalidModel,
              "shortlist: frequent: id 200 at position 0 is outside the vocabulary of 11");
}

// Every byte of the shortlist's arrays (length prefixes included) flipped: a clean error or a
// model whose outputs stay inside the union its (damaged but valid) shortlist allows.
TEST(HostileModel, EveryShortlistByteFlippedIsACleanErrorOrAWorkingModel) {
  ModelImage image(ShortlistModel());
  ShortlistArrays a;
  ASSERT_TRUE(Arrays(image, &a));
  size_t loaded = 0, rejected = 0;
  for (const flatbuffers::Vector<uint32_t>* v : {a.frequent, a.offsets, a.targets}) {
    const size_t begin = image.OffsetOf(v), end = begin + 4 + 4 * size_t{v->size()};
    FlipEveryMetadataByte(image, begin, end, 1, {0x01, 0x80, 0xFF}, &loaded, &rejected);
  }
  EXPECT_GT(rejected, 0u);
  EXPECT_GT(loaded, 0u);  // a list id moved to another valid id still loads, and is used
  std::printf("[ flips ] shortlist arrays: %zu rejected, %zu loaded and translated\n", rejected,
              loaded);
}

}  // namespace
}  // namespace headwise
