// Model loading: the structural verifier (format/model_file) and the semantic checks
// (runtime/src/model_verify) reject broken files with a message naming the problem.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "headwise_generated.h"
#include "tests/runtime/test_model.h"

namespace headwise {
namespace {

using testing::AlignedBytes;
using testing::ModelOptions;

// An editable copy of a valid model image, with in-place patches of flatbuffer fields.
class Image {
 public:
  explicit Image(const ModelOptions& o = ModelOptions()) : bytes_(testing::Serialize(testing::MakeSpec(o))) {}

  std::vector<uint8_t>& bytes() { return bytes_; }
  schema::Model* model() {
    return const_cast<schema::Model*>(schema::GetSizePrefixedModel(bytes_.data()));
  }
  // Generated tables derive privately from flatbuffers::Table and share its address.
  template <typename T>
  void Patch(const void* table, flatbuffers::voffset_t field, T value) {
    ASSERT_NE(table, nullptr);
    const uint8_t* at = reinterpret_cast<const flatbuffers::Table*>(table)->GetAddressOf(field);
    ASSERT_NE(at, nullptr) << "field not present";
    std::memcpy(const_cast<uint8_t*>(at), &value, sizeof value);
  }
  const schema::Tensor* Tensor(const std::string& name) {
    if (const auto* tensors = model()->tensors(); tensors != nullptr) {
      for (flatbuffers::uoffset_t i = 0; i < tensors->size(); ++i) {
        const schema::Tensor* t = tensors->Get(i);
        const flatbuffers::String* n = t != nullptr ? t->name() : nullptr;
        if (n != nullptr && n->str() == name) return t;
      }
    }
    ADD_FAILURE() << "no tensor " << name;
    return nullptr;
  }
  const schema::ModelConfig* Config() {
    const schema::ModelConfig* c = model()->config();
    if (c == nullptr) ADD_FAILURE() << "no config";
    return c;
  }
  size_t data_offset() { return static_cast<size_t>(model()->data_offset()); }

  Result<std::shared_ptr<const Model>> LoadPrefix(size_t size, bool checksum = true) {
    aligned_ = std::make_unique<AlignedBytes>(bytes_);
    LoadOptions options;
    options.verify_checksum = checksum;
    return Model::LoadFromMemory(aligned_->data(), size, options);
  }
  Result<std::shared_ptr<const Model>> Load(bool checksum = true) { return LoadPrefix(bytes_.size(), checksum); }

 private:
  std::vector<uint8_t> bytes_;
  std::unique_ptr<AlignedBytes> aligned_;
};

void ExpectError(const Result<std::shared_ptr<const Model>>& r, ErrorCode code,
                 const std::string& fragment) {
  ASSERT_FALSE(r.ok()) << "expected " << ErrorCodeName(code) << " containing '" << fragment << "'";
  EXPECT_EQ(r.status().code(), code) << r.status().ToString();
  EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().ToString();
}

TEST(ModelLoadTest, LoadsAValidModelAndDescribesIt) {
  ModelOptions o;
  o.kept = {{0, 2}, {}, {1}, {3}, {}, {0, 1, 2}};  // {} keeps no head
  Image image(o);
  auto model = image.Load();
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const ModelInfo& info = (*model)->info();
  EXPECT_EQ(info.d_model, 16);
  EXPECT_EQ(info.encoder_layers, 2);
  EXPECT_EQ(info.decoder_layers, 2);
  EXPECT_EQ(info.vocab_size, 23);
  EXPECT_EQ(info.activation, "swish");
  EXPECT_EQ(info.pad_token_id, 22);
  EXPECT_EQ(info.file_bytes, image.bytes().size());
  ASSERT_EQ(info.attention.size(), 6u);
  const int heads[] = {2, 0, 1, 1, 0, 3};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(info.attention[i].num_heads, heads[i]) << i;
    EXPECT_EQ(info.attention[i].original_num_heads, 4);
    EXPECT_EQ(info.attention[i].head_dim, 4);
  }
  EXPECT_EQ(info.attention[2].kind, AttentionKind::kDecoderSelf);
  EXPECT_EQ(info.attention[5].kind, AttentionKind::kDecoderCross);
  EXPECT_EQ(info.attention[5].layer, 1);
  EXPECT_STREQ(Version(), "0.1.0");
}

TEST(ModelLoadTest, LoadsFromAPath) {
  Image image;
  char path[] = "/tmp/headwise_model_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::FILE* f = fdopen(fd, "wb");
  ASSERT_EQ(std::fwrite(image.bytes().data(), 1, image.bytes().size(), f), image.bytes().size());
  std::fclose(f);
  auto model = Model::Load(path);
  std::remove(path);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ((*model)->info().file_bytes, image.bytes().size());
  auto missing = Model::Load("/nonexistent/headwise.hwm");
  ExpectError(missing, ErrorCode::kIoError, "/nonexistent/headwise.hwm");
}

TEST(ModelLoadTest, RejectsATruncatedFile) {
  Image image;
  ExpectError(image.LoadPrefix(image.bytes().size() - 100), ErrorCode::kInvalidModel, "truncated file");
  ExpectError(image.LoadPrefix(image.data_offset() - 1), ErrorCode::kInvalidModel, "truncated file");
  ExpectError(image.LoadPrefix(64), ErrorCode::kInvalidModel, "truncated file");
  ExpectError(image.LoadPrefix(10), ErrorCode::kInvalidModel, "at least 12");
}

TEST(ModelLoadTest, RejectsAWrongIdentifier) {
  Image image;
  std::memcpy(image.bytes().data() + 8, "GGUF", 4);
  ExpectError(image.Load(), ErrorCode::kInvalidModel, "identifier 'GGUF', expected 'HWM1'");
}

TEST(ModelLoadTest, RejectsAFlippedByteInTheFlatbuffer) {
  Image image;
  image.bytes()[7] ^= 0x40;  // the high byte of the root table offset
  ExpectError(image.Load(), ErrorCode::kInvalidModel, "flatbuffers Verifier");
}

TEST(ModelLoadTest, RejectsAFlippedByteInTheDataUnlessTheChecksumIsSkipped) {
  Image image;
  image.bytes()[image.data_offset() + 100] ^= 0x01;
  ExpectError(image.Load(), ErrorCode::kChecksumMismatch, "checksum");
  auto unchecked = image.Load(/*checksum=*/false);
  EXPECT_TRUE(unchecked.ok()) << unchecked.status().ToString();
}

TEST(ModelLoadTest, RejectsANewerFormatVersionNamingBoth) {
  Image image;
  image.Patch<uint32_t>(image.model(), schema::Model::VT_FORMAT_VERSION, 7);
  ExpectError(image.Load(), ErrorCode::kUnsupportedVersion, "version 7 is newer than this runtime reads (1)");
}

TEST(ModelLoadTest, RejectsAWrongShapeNamingTheTensor) {
  ModelOptions o;
  o.kept = {{0, 1}};  // q_proj.weight [8, 16]: swapping the dims keeps the byte size
  Image image(o);
  const schema::Tensor* t = image.Tensor("model.encoder.layers.0.self_attn.q_proj.weight");
  ASSERT_NE(t, nullptr);
  const flatbuffers::Vector<uint32_t>* shape = t->shape();
  ASSERT_NE(shape, nullptr);
  uint32_t* dims = const_cast<uint32_t*>(shape->data());
  std::swap(dims[0], dims[1]);
  ExpectError(image.Load(), ErrorCode::kInvalidModel,
              "model.encoder.layers.0.self_attn.q_proj.weight: expected [8, 16], found [16, 8]");
}

TEST(ModelLoadTest, RejectsAMissingTensor) {
  Image image;
  const schema::Tensor* t = image.Tensor("model.decoder.layers.1.fc2.bias");
  ASSERT_NE(t, nullptr);
  const flatbuffers::String* name = t->name();
  ASSERT_NE(name, nullptr);
  const_cast<char*>(name->c_str())[6] = 'X';  // "model.Xecoder..." is not expected
  ExpectError(image.Load(), ErrorCode::kInvalidModel, "model.decoder.layers.1.fc2.bias: missing");
}

TEST(ModelLoadTest, RejectsSpecialIdsOutsideTheVocabulary) {
  Image image;
  image.Patch<int32_t>(image.Config(), schema::ModelConfig::VT_EOS_TOKEN_ID, 23);
  ExpectError(image.Load(), ErrorCode::kInvalidModel, "eos_token_id 23 is outside the vocabulary of 23");
}

TEST(ModelLoadTest, RejectsZeroMaxPositionEmbeddings) {
  Image image;
  image.Patch<uint32_t>(image.Config(), schema::ModelConfig::VT_MAX_POSITION_EMBEDDINGS, 0);
  ExpectError(image.Load(), ErrorCode::kInvalidModel, "max_position_embeddings");
}

TEST(ModelLoadTest, RejectsATensorOutsideTheDataSegment) {
  Image image;
  const schema::Tensor* t = image.Tensor("final_logits_bias");
  ASSERT_NE(t, nullptr);
  image.Patch<uint64_t>(t, schema::Tensor::VT_OFFSET, image.model()->data_size());
  ExpectError(image.Load(), ErrorCode::kInvalidModel, "'final_logits_bias': bytes [");
}

TEST(ModelLoadTest, RejectsAnUnalignedBuffer) {
  Image image;
  std::vector<uint8_t> copy(image.bytes().size() + 64);
  uint8_t* p = copy.data();
  while (reinterpret_cast<uintptr_t>(p) % 64 != 1) ++p;
  std::memcpy(p, image.bytes().data(), image.bytes().size());
  auto r = Model::LoadFromMemory(p, image.bytes().size());
  ExpectError(r, ErrorCode::kInvalidArgument, "64-byte aligned");
}

}  // namespace
}  // namespace headwise
