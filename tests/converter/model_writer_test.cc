#include "format/model_writer.h"

#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <iterator>
#include <random>
#include <string>

#include "common/checksum.h"
#include "format/file_layout.h"
#include "format/schema_map.h"
#include "common/mapped_file.h"
#include "headwise_generated.h"
#include "tests/converter/flatbuffer_access.h"
#include "tests/converter/spec_fixture.h"
#include "tests/converter/temp_dir.h"

namespace headwise::convert {
namespace {

using testing::Bytes;
using testing::Deref;
using testing::MakeSpec;
using testing::Str;
using testing::Tables;
using testing::Vec;
namespace sc = ::headwise::schema;

// The Verifier requires the size prefix to equal the buffer it is given minus 4, so it runs
// over the flatbuffer part [0, 4 + prefix) of the file, not over the data segment.
const sc::Model* VerifiedModel(const std::vector<uint8_t>& image) {
  uint32_t prefix = 0;
  if (image.size() < 4) return nullptr;
  std::memcpy(&prefix, image.data(), 4);
  if (prefix > image.size() - 4) return nullptr;
  flatbuffers::Verifier verifier(image.data(), 4 + static_cast<size_t>(prefix));
  if (!sc::VerifySizePrefixedModelBuffer(verifier)) return nullptr;
  return sc::GetSizePrefixedModel(image.data());
}

TEST(ModelWriter, RoundTripThroughVerifier) {
  const ModelSpec spec = MakeSpec({{0, 2}, {}, {1, 2, 3}, {3}});
  auto image = SerializeModel(spec);
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  EXPECT_TRUE(sc::SizePrefixedModelBufferHasIdentifier(image->data()));
  EXPECT_EQ(std::memcmp(image->data() + 8, kFileIdentifier, 4), 0);
  const sc::Model* m = VerifiedModel(*image);
  ASSERT_NE(m, nullptr);

  EXPECT_EQ(m->format_version(), kFormatVersion);
  const sc::ModelConfig* c = &Deref(m->config(), "config");
  EXPECT_EQ(c->d_model(), 8u);
  EXPECT_EQ(c->encoder_layers(), 2u);
  EXPECT_EQ(c->decoder_layers(), 1u);
  EXPECT_EQ(c->encoder_ffn_dim(), 16u);
  EXPECT_EQ(c->decoder_ffn_dim(), 12u);
  EXPECT_EQ(c->activation(), sc::Activation::Relu);
  EXPECT_EQ(c->vocab_size(), 10u);
  EXPECT_EQ(c->max_position_embeddings(), 32u);
  EXPECT_EQ(c->pad_token_id(), 9);
  EXPECT_EQ(c->eos_token_id(), 0);
  EXPECT_EQ(c->decoder_start_token_id(), 9);
  EXPECT_EQ(c->unk_token_id(), 1);
  EXPECT_TRUE(c->scale_embedding());
  EXPECT_TRUE(c->share_encoder_decoder_embeddings());
  EXPECT_TRUE(c->tie_word_embeddings());
  EXPECT_FLOAT_EQ(c->layer_norm_eps(), 1e-5f);

  const auto blocks = Tables(m->attention());
  ASSERT_EQ(blocks.size(), 4u);
  const sc::AttentionBlock* b0 = blocks[0];
  EXPECT_EQ(b0->kind(), sc::AttentionKind::EncoderSelf);
  EXPECT_EQ(b0->num_heads(), 2u);
  EXPECT_EQ(b0->head_dim(), 2u);
  EXPECT_EQ(b0->original_num_heads(), 4u);
  EXPECT_EQ(Vec(b0->kept_heads()), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(Vec(b0->gate_log_alpha()), spec.gate_log_alpha[0]);
  EXPECT_EQ(blocks[1]->num_heads(), 0u);
  EXPECT_TRUE(Vec(blocks[1]->kept_heads()).empty());
  EXPECT_EQ(blocks[2]->kind(), sc::AttentionKind::DecoderSelf);
  EXPECT_EQ(blocks[3]->kind(), sc::AttentionKind::DecoderCross);
  EXPECT_EQ(Vec(blocks[3]->kept_heads()), std::vector<uint32_t>{3});

  // Every tensor reads back equal from the data segment.
  const auto expected = ExpectedTensors(spec.config, spec.blocks);
  const auto tensors = Tables(m->tensors());
  ASSERT_EQ(tensors.size(), expected.size());
  const uint8_t* segment = image->data() + m->data_offset();
  for (size_t t = 0; t < expected.size(); ++t) {
    const sc::Tensor* tensor = tensors[t];
    EXPECT_EQ(Str(tensor->name()), expected[t].name);
    EXPECT_EQ(Vec(tensor->shape()), expected[t].shape);
    EXPECT_EQ(tensor->dtype(), sc::DType::F32);
    const auto& source = std::find_if(spec.tensors.begin(), spec.tensors.end(),
                                      [&](const TensorSpec& s) { return s.name == expected[t].name; })
                             ->data;
    ASSERT_EQ(tensor->size(), source.size() * sizeof(float));
    std::vector<float> back(source.size());
    std::memcpy(back.data(), segment + tensor->offset(), tensor->size());
    EXPECT_EQ(back, source) << expected[t].name;
  }

  const sc::Tokenizer& tok = Deref(m->tokenizer(), "tokenizer");
  EXPECT_EQ(Bytes(tok.source_spm()), spec.source_spm);
  EXPECT_EQ(Bytes(tok.target_spm()), spec.target_spm);
  std::vector<std::string> vocab;
  for (const flatbuffers::String* piece : Tables(tok.vocab())) vocab.push_back(Str(piece));
  EXPECT_EQ(vocab, spec.vocab);

  const sc::Provenance& p = Deref(m->provenance(), "provenance");
  EXPECT_EQ(Str(p.source_checkpoint_sha256()), spec.source_checkpoint_sha256);
  EXPECT_EQ(Str(p.source_checkpoint_name()), "tiny");
  EXPECT_EQ(Str(p.converter_version()), HEADWISE_VERSION);
  EXPECT_EQ(Str(p.keep_heads_spec()), "");
  EXPECT_EQ(Str(p.source_dtype()), "F32");
}

TEST(ModelWriter, DataSegmentAndTensorsAre64Aligned) {
  const ModelSpec spec = MakeSpec({{1}, {0, 3}, {}, {0, 1, 2}});
  auto image = SerializeModel(spec);
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  const sc::Model* m = VerifiedModel(*image);
  ASSERT_NE(m, nullptr);
  uint32_t prefix = 0;
  std::memcpy(&prefix, image->data(), 4);
  EXPECT_EQ(m->data_offset() % kTensorAlignment, 0u);
  EXPECT_EQ(m->data_offset(), AlignUp(4 + static_cast<size_t>(prefix), kTensorAlignment));
  EXPECT_EQ(image->size(), m->data_offset() + m->data_size());
  uint64_t previous_end = 0;
  for (const sc::Tensor* t : Tables(m->tensors())) {
    EXPECT_EQ(t->offset() % kTensorAlignment, 0u) << Str(t->name());
    EXPECT_GE(t->offset(), previous_end) << Str(t->name()) << " overlaps its predecessor";
    EXPECT_LE(t->offset() + t->size(), m->data_size()) << Str(t->name());
    previous_end = t->offset() + t->size();
  }
}

TEST(ModelWriter, ChecksumCoversTheDataSegment) {
  ModelSpec spec = MakeSpec();
  auto image = SerializeModel(spec);
  ASSERT_TRUE(image.ok());
  const sc::Model* m = VerifiedModel(*image);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->data_checksum(),
            Fnv1a64(image->data() + m->data_offset(), m->data_size()));

  spec.tensors.back().data[3] += 1.0f;
  auto changed = SerializeModel(spec);
  ASSERT_TRUE(changed.ok());
  const sc::Model* m2 = VerifiedModel(*changed);
  ASSERT_NE(m2, nullptr);
  EXPECT_NE(m2->data_checksum(), m->data_checksum());
  EXPECT_EQ(m2->data_checksum(),
            Fnv1a64(changed->data() + m2->data_offset(), m2->data_size()));
}

TEST(ModelWriter, OutputIsCanonicalWhateverTheTensorOrder) {
  ModelSpec spec = MakeSpec({{0}, {1, 2}});
  auto first = SerializeModel(spec);
  ASSERT_TRUE(first.ok());
  std::mt19937 rng(7);
  std::shuffle(spec.tensors.begin(), spec.tensors.end(), rng);
  auto second = SerializeModel(spec);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*first, *second);
}

TEST(ModelWriter, ModelWithoutTokenizerOrGates) {
  ModelSpec spec = MakeSpec();
  spec.source_spm.clear();
  spec.target_spm.clear();
  spec.vocab.clear();
  spec.gate_log_alpha.clear();
  spec.config.share_encoder_decoder_embeddings = false;
  spec.config.tie_word_embeddings = false;
  // Rebuild the tensor list for the untied, unshared layout.
  const ModelSpec shaped = [&] {
    ModelSpec s = spec;
    s.tensors.clear();
    for (const ExpectedTensor& e : ExpectedTensors(s.config, s.blocks)) {
      size_t n = 1;
      for (uint32_t d : e.shape) n *= d;
      s.tensors.push_back({e.name, e.shape, std::vector<float>(n, 0.5f)});
    }
    return s;
  }();
  auto image = SerializeModel(shaped);
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  const sc::Model* m = VerifiedModel(*image);
  ASSERT_NE(m, nullptr);
  const sc::ModelConfig& c = Deref(m->config(), "config");
  EXPECT_FALSE(c.share_encoder_decoder_embeddings());
  EXPECT_FALSE(c.tie_word_embeddings());
  EXPECT_TRUE(Tables(Deref(m->tokenizer(), "tokenizer").vocab()).empty());
  EXPECT_TRUE(Vec(Tables(m->attention()).at(0)->gate_log_alpha()).empty());
  EXPECT_EQ(Str(Tables(m->tensors()).at(0)->name()), "model.encoder.embed_tokens.weight");
}

// ---- Validation: every error path, each with the words a user needs. ----

struct BadSpecCase {
  const char* name;
  std::function<void(ModelSpec&)> mutate;
  const char* expected_message;  // a substring of the error message
};

class ModelWriterRejects : public ::testing::TestWithParam<BadSpecCase> {};

TensorSpec& Find(ModelSpec& spec, const std::string& name) {
  for (TensorSpec& t : spec.tensors) {
    if (t.name == name) return t;
  }
  throw std::runtime_error("fixture has no tensor " + name);
}

TEST_P(ModelWriterRejects, WithAClearMessageAndWritesNothing) {
  ModelSpec spec = MakeSpec();
  GetParam().mutate(spec);
  const Status status = ValidateModelSpec(spec);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), ErrorCode::kInvalidCheckpoint);
  EXPECT_NE(status.message().find(GetParam().expected_message), std::string::npos)
      << "message: " << status.message();
  EXPECT_FALSE(SerializeModel(spec).ok());

  testing::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const Status write = WriteModelFile(spec, dir / "out.hwm", {});
  EXPECT_EQ(write.code(), ErrorCode::kInvalidCheckpoint);
  EXPECT_TRUE(testing::ListDir(dir.path()).empty());
}

const std::string kQ = "model.encoder.layers.1.self_attn.q_proj.weight";

INSTANTIATE_TEST_SUITE_P(
    AllPaths, ModelWriterRejects,
    ::testing::Values(
        BadSpecCase{"LayoutZeroDModel", [](ModelSpec& s) { s.config.d_model = 0; },
                    "must all be > 0"},
        BadSpecCase{"LayoutHeadDim", [](ModelSpec& s) { s.blocks[1].head_dim = 4; },
                    "(encoder self-attention layer 1): expected head_dim 2, found 4"},
        BadSpecCase{"LayoutBlockCount", [](ModelSpec& s) { s.blocks.pop_back(); },
                    "expected 4 attention blocks"},
        BadSpecCase{"LayoutKeptUnsorted",
                    [](ModelSpec& s) { s.blocks[0].kept_heads = {2, 1, 0, 3}; },
                    "ascending, unique"},
        BadSpecCase{"MaxPositions", [](ModelSpec& s) { s.config.max_position_embeddings = 0; },
                    "max_position_embeddings: expected > 0"},
        BadSpecCase{"LayerNormEps", [](ModelSpec& s) { s.config.layer_norm_eps = 0.0f; },
                    "layer_norm_eps: expected a finite value > 0"},
        BadSpecCase{"Activation",
                    [](ModelSpec& s) { s.config.activation = static_cast<Activation>(7); },
                    "activation: unknown value 7"},
        BadSpecCase{"PadId", [](ModelSpec& s) { s.config.pad_token_id = 10; },
                    "pad_token_id: expected an id in [0, 10), found 10"},
        BadSpecCase{"EosNegative", [](ModelSpec& s) { s.config.eos_token_id = -1; },
                    "eos_token_id: expected an id in [0, 10), found -1"},
        BadSpecCase{"DecoderStartId", [](ModelSpec& s) { s.config.decoder_start_token_id = 99; },
                    "decoder_start_token_id"},
        BadSpecCase{"UnkId", [](ModelSpec& s) { s.config.unk_token_id = 10; }, "unk_token_id"},
        BadSpecCase{"GateCount", [](ModelSpec& s) { s.gate_log_alpha.pop_back(); },
                    "gate_log_alpha: expected one entry per attention block (4), found 3"},
        BadSpecCase{"GateLength", [](ModelSpec& s) { s.gate_log_alpha[2] = {1.0f, 2.0f}; },
                    "model.decoder.layers.0.self_attn.head_gate.log_alpha: expected [4], "
                    "found [2]"},
        BadSpecCase{"GateNan", [](ModelSpec& s) { s.gate_log_alpha[0][1] = std::nanf(""); },
                    "head 1: expected a finite value"},
        BadSpecCase{"UnknownTensor",
                    [](ModelSpec& s) { s.tensors.push_back({"model.extra", {1}, {0.0f}}); },
                    "model.extra: not a tensor of this model layout"},
        BadSpecCase{"DuplicateTensor",
                    [](ModelSpec& s) { s.tensors.push_back(s.tensors.front()); },
                    "model.shared.weight: given more than once"},
        BadSpecCase{"WrongShape",
                    [](ModelSpec& s) {
                      TensorSpec& q = Find(s, kQ);
                      q.shape = {8, 4};
                      q.data.resize(32);
                    },
                    "model.encoder.layers.1.self_attn.q_proj.weight: expected [8, 8], "
                    "found [8, 4]"},
        BadSpecCase{"WrongDataSize", [](ModelSpec& s) { Find(s, kQ).data.pop_back(); },
                    "expected 64 values for shape [8, 8], found 63"},
        BadSpecCase{"NonFinite",
                    [](ModelSpec& s) { Find(s, kQ).data[5] = INFINITY; },
                    "expected finite values, found inf at flat index 5"},
        BadSpecCase{"MissingTensor",
                    [](ModelSpec& s) {
                      s.tensors.erase(std::find_if(s.tensors.begin(), s.tensors.end(),
                                                   [](const TensorSpec& x) {
                                                     return x.name == "final_logits_bias";
                                                   }));
                    },
                    "final_logits_bias: missing (expected shape [1, 10])"},
        BadSpecCase{"StrippedBlockStillHasQ",
                    [](ModelSpec& s) {
                      s.blocks[1].kept_heads.clear();
                      s.blocks[1].num_heads = 0;
                    },
                    kQ.c_str()},
        BadSpecCase{"OneSpmMissing", [](ModelSpec& s) { s.target_spm.clear(); },
                    "expected both SentencePiece models or none, found a source model and no "
                    "target model"},
        BadSpecCase{"VocabLength", [](ModelSpec& s) { s.vocab.pop_back(); },
                    "vocab: expected 10 pieces (vocab_size), found 9"}),
    [](const ::testing::TestParamInfo<BadSpecCase>& param) { return param.param.name; });

// ---- WriteModelFile ----

TEST(ModelWriter, WritesTheSerializedImageAtomically) {
  const ModelSpec spec = MakeSpec({{3}});
  testing::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string path = dir / "model.hwm";
  ASSERT_TRUE(WriteModelFile(spec, path, {}).ok());
  auto written = ReadFileToString(path);
  ASSERT_TRUE(written.ok());
  auto image = SerializeModel(spec);
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(*written, std::string(image->begin(), image->end()));
  EXPECT_EQ(testing::ListDir(dir.path()), std::vector<std::string>{"model.hwm"});
}

TEST(ModelWriter, RefusesAnExistingOutputUnlessOverwriteIsSet) {
  testing::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string path = dir / "model.hwm";
  ASSERT_TRUE(WriteModelFile(MakeSpec(), path, {}).ok());
  const std::string before = *ReadFileToString(path);

  const ModelSpec other = MakeSpec({{0}});
  const Status refused = WriteModelFile(other, path, {});
  EXPECT_EQ(refused.code(), ErrorCode::kIoError);
  EXPECT_NE(refused.message().find("exists"), std::string::npos);
  EXPECT_EQ(*ReadFileToString(path), before);

  AtomicWriteOptions overwrite;
  overwrite.overwrite = true;
  ASSERT_TRUE(WriteModelFile(other, path, overwrite).ok());
  EXPECT_NE(*ReadFileToString(path), before);
  EXPECT_EQ(testing::ListDir(dir.path()), std::vector<std::string>{"model.hwm"});
}

// schema_map.cc maps DType and Activation to the schema's enums by name: every value of either
// enum has its counterpart under the same name, the round trip is the identity, and a value
// outside the schema's enum is an error.
TEST(SchemaMap, DTypeAndActivationMapByName) {
  for (sc::Activation s : sc::EnumValuesActivation()) {
    Result<Activation> a = FromSchema(s);
    ASSERT_TRUE(a.ok()) << sc::EnumNameActivation(s) << ": " << a.status().message();
    EXPECT_EQ(ToSchema(*a), s);
  }
  for (sc::DType s : sc::EnumValuesDType()) {
    Result<DType> t = FromSchema(s);
    ASSERT_TRUE(t.ok()) << sc::EnumNameDType(s) << ": " << t.status().message();
    EXPECT_EQ(ToSchema(*t), s);
    EXPECT_STREQ(DTypeName(*t), sc::EnumNameDType(s));
  }
  size_t activations = 0, dtypes = 0;
  for (int i = 0; i < 256; ++i) {
    const auto a = static_cast<Activation>(i);
    if (std::string(ActivationName(a)) != "unknown") {
      ++activations;
      Result<Activation> back = FromSchema(ToSchema(a));
      ASSERT_TRUE(back.ok()) << ActivationName(a);
      EXPECT_EQ(*back, a) << ActivationName(a);
    }
    const auto t = static_cast<DType>(i);
    if (std::string(DTypeName(t)) != "unknown") {
      ++dtypes;
      Result<DType> back = FromSchema(ToSchema(t));
      ASSERT_TRUE(back.ok()) << DTypeName(t);
      EXPECT_EQ(*back, t) << DTypeName(t);
    }
  }
  EXPECT_EQ(activations, std::size(sc::EnumValuesActivation()));
  EXPECT_EQ(dtypes, std::size(sc::EnumValuesDType()));
  EXPECT_EQ(ActivationNames(), "relu, swish, gelu");
  EXPECT_FALSE(FromSchema(static_cast<sc::Activation>(200)).ok());
  EXPECT_FALSE(FromSchema(static_cast<sc::DType>(200)).ok());
}

}  // namespace
}  // namespace headwise::convert
