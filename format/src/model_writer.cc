// SerializeModel / WriteModelFile (format/model_writer.h).
//
// The root table holds data_offset, which depends on the flatbuffer's own size. Scalars do not
// change a flatbuffer's layout when every field is forced present (ForceDefaults), so the
// flatbuffer is built once with data_offset = 0 to learn its size, then rebuilt with the real
// offset; the second build must have the same size, which is checked.
#include <flatbuffers/flatbuffers.h>

#include <cstring>
#include <unordered_map>

#include "common/checksum.h"
#include "common/half.h"
#include "format/file_layout.h"
#include "format/model_writer.h"
#include "format/schema_map.h"
#include "format/weight_format.h"

namespace headwise {
namespace {

static_assert(FLATBUFFERS_LITTLEENDIAN, "the .hwm data segment is written little-endian");

namespace fb = ::flatbuffers;
namespace sc = ::headwise::schema;

struct PlacedTensor {
  const TensorSpec* spec;
  uint64_t offset;  // relative to the data segment
  uint64_t size;    // bytes
  std::vector<uint8_t> encoded;  // the bytes of a F16 / I8 tensor (F32 is copied from data)
  std::vector<float> scales;     // I8: one per row
};

// The tensor's bytes in its dtype (format/model_types.h DType); F32 needs no copy.
void Encode(PlacedTensor* p) {
  const TensorSpec& t = *p->spec;
  switch (t.dtype) {
    case DType::kF32:
      p->size = static_cast<uint64_t>(t.data.size()) * sizeof(float);
      return;
    case DType::kF16: {
      p->encoded.resize(t.data.size() * sizeof(uint16_t));
      for (size_t i = 0; i < t.data.size(); ++i) {
        const uint16_t h = FloatToF16(t.data[i]);
        std::memcpy(p->encoded.data() + i * sizeof h, &h, sizeof h);
      }
      break;
    }
    case DType::kI8: {
      std::vector<int8_t> q;
      p->scales = QuantizeRowsI8(t.data.data(), t.shape[0], t.shape[1], &q);
      p->encoded.assign(reinterpret_cast<const uint8_t*>(q.data()),
                        reinterpret_cast<const uint8_t*>(q.data()) + q.size());
      break;
    }
  }
  p->size = p->encoded.size();
}

// Canonical order (ExpectedTensors), each tensor at a 64-aligned offset in the segment.
std::vector<PlacedTensor> PlaceTensors(const ModelSpec& spec, uint64_t* segment_size) {
  std::unordered_map<std::string, const TensorSpec*> by_name;
  for (const TensorSpec& t : spec.tensors) by_name.emplace(t.name, &t);
  std::vector<PlacedTensor> placed;
  uint64_t cursor = 0;
  for (const ExpectedTensor& e : ExpectedTensors(spec.config, spec.blocks)) {
    PlacedTensor p;
    p.spec = by_name.at(e.name);  // ValidateModelSpec guarantees presence
    Encode(&p);
    cursor = AlignUp(cursor, kTensorAlignment);
    p.offset = cursor;
    cursor += p.size;
    placed.push_back(std::move(p));
  }
  *segment_size = AlignUp(cursor, kTensorAlignment);
  return placed;
}

fb::Offset<sc::ModelConfig> BuildConfig(fb::FlatBufferBuilder& b, const ModelSpec& s) {
  const ModelConfig& c = s.config;
  return sc::CreateModelConfig(
      b, c.d_model, c.encoder_layers, c.decoder_layers, c.encoder_attention_heads,
      c.decoder_attention_heads, c.encoder_ffn_dim, c.decoder_ffn_dim, ToSchema(c.activation),
      c.vocab_size, c.max_position_embeddings, c.pad_token_id, c.eos_token_id,
      c.decoder_start_token_id, c.unk_token_id, c.scale_embedding,
      c.share_encoder_decoder_embeddings, c.tie_word_embeddings, c.layer_norm_eps);
}

fb::Offset<fb::Vector<fb::Offset<sc::AttentionBlock>>> BuildBlocks(fb::FlatBufferBuilder& b,
                                                                   const ModelSpec& s) {
  std::vector<fb::Offset<sc::AttentionBlock>> blocks;
  for (size_t i = 0; i < s.blocks.size(); ++i) {
    const BlockLayout& bl = s.blocks[i];
    const std::vector<float> no_gate;
    const std::vector<float>& gate = s.gate_log_alpha.empty() ? no_gate : s.gate_log_alpha[i];
    std::vector<fb::Offset<sc::HeadAnalysis>> analysis;
    if (!s.head_analysis.empty()) {
      for (const HeadAnalysisSpec& h : s.head_analysis[i]) {
        const auto roles = b.CreateVectorOfStrings(h.roles);
        analysis.push_back(sc::CreateHeadAnalysis(b, h.source_head, h.relevance, h.confidence,
                                                  h.michel, roles));
      }
    }
    blocks.push_back(sc::CreateAttentionBlockDirect(
        b, ToSchema(bl.kind), bl.layer, bl.num_heads, bl.head_dim, bl.original_num_heads,
        &bl.kept_heads, &gate, s.head_analysis.empty() ? nullptr : &analysis));
  }
  return b.CreateVector(blocks);
}

fb::Offset<fb::Vector<fb::Offset<sc::Tensor>>> BuildTensors(
    fb::FlatBufferBuilder& b, const std::vector<PlacedTensor>& placed) {
  std::vector<fb::Offset<sc::Tensor>> tensors;
  for (const PlacedTensor& p : placed) {
    fb::Offset<sc::Quantization> quantization = 0;
    if (p.spec->dtype == DType::kI8) {
      quantization = sc::CreateQuantizationDirect(b, /*axis=*/0, &p.scales, nullptr);
    }
    tensors.push_back(sc::CreateTensorDirect(b, p.spec->name.c_str(), &p.spec->shape,
                                             ToSchema(p.spec->dtype), p.offset, p.size,
                                             quantization));
  }
  return b.CreateVector(tensors);
}

fb::Offset<sc::Tokenizer> BuildTokenizer(fb::FlatBufferBuilder& b, const ModelSpec& s) {
  const auto bytes = [&b](const std::string& blob) {
    return b.CreateVector(reinterpret_cast<const uint8_t*>(blob.data()), blob.size());
  };
  const auto source = bytes(s.source_spm);
  const auto target = bytes(s.target_spm);
  const auto vocab = b.CreateVectorOfStrings(s.vocab);
  return sc::CreateTokenizer(b, source, target, vocab);
}

fb::Offset<sc::Provenance> BuildProvenance(fb::FlatBufferBuilder& b, const ModelSpec& s) {
  return sc::CreateProvenanceDirect(b, s.source_checkpoint_sha256.c_str(),
                                    s.source_checkpoint_name.c_str(), HEADWISE_VERSION,
                                    s.keep_heads_spec.c_str(), s.source_dtype.c_str(),
                                    s.gate_rule == GateRule::kHard ? nullptr
                                                                   : GateRuleName(s.gate_rule));
}

// Nothing (offset 0) for a spec without shortlist.
fb::Offset<sc::Shortlist> BuildShortlist(fb::FlatBufferBuilder& b, const ModelSpec& s) {
  if (s.shortlist.empty()) return 0;
  const ShortlistSpec& l = s.shortlist;
  return sc::CreateShortlistDirect(b, &l.frequent, &l.offsets, &l.targets,
                                   l.description.c_str());
}

void BuildFlatbuffer(fb::FlatBufferBuilder& b, const ModelSpec& s,
                     const std::vector<PlacedTensor>& placed, uint64_t data_offset,
                     uint64_t data_size, uint64_t checksum) {
  b.ForceDefaults(true);  // every scalar present: the layout cannot depend on their values
  const auto config = BuildConfig(b, s);
  const auto blocks = BuildBlocks(b, s);
  const auto tensors = BuildTensors(b, placed);
  const auto tokenizer = BuildTokenizer(b, s);
  const auto provenance = BuildProvenance(b, s);
  fb::Offset<sc::AnalysisInfo> analysis = 0;
  if (!s.head_analysis.empty()) {
    const AnalysisInfoSpec& a = s.analysis_info;
    analysis = sc::CreateAnalysisInfoDirect(b, a.relevance_rule.c_str(), a.data.c_str(),
                                            a.analysis_sha256.c_str());
  }
  const auto shortlist = BuildShortlist(b, s);
  const auto root = sc::CreateModel(b, kFormatVersion, config, blocks, tensors, tokenizer,
                                    provenance, data_offset, data_size, checksum, analysis,
                                    shortlist);
  sc::FinishSizePrefixedModelBuffer(b, root);
}

}  // namespace

Result<std::vector<uint8_t>> SerializeModel(const ModelSpec& spec) {
  HW_RETURN_IF_ERROR(ValidateModelSpec(spec));

  uint64_t segment_size = 0;
  const std::vector<PlacedTensor> placed = PlaceTensors(spec, &segment_size);

  fb::FlatBufferBuilder sizing;
  BuildFlatbuffer(sizing, spec, placed, 0, segment_size, 0);
  const uint64_t data_offset = AlignUp(sizing.GetSize(), kTensorAlignment);

  std::vector<uint8_t> image(data_offset + segment_size, 0);
  uint8_t* segment = image.data() + data_offset;
  for (const PlacedTensor& p : placed) {
    const void* bytes = p.spec->dtype == DType::kF32
                            ? static_cast<const void*>(p.spec->data.data())
                            : static_cast<const void*>(p.encoded.data());
    if (p.size > 0) std::memcpy(segment + p.offset, bytes, p.size);
  }
  const uint64_t checksum = Fnv1a64(segment, segment_size);

  fb::FlatBufferBuilder final_fb;
  BuildFlatbuffer(final_fb, spec, placed, data_offset, segment_size, checksum);
  if (final_fb.GetSize() != sizing.GetSize()) {
    return InternalError("model writer: flatbuffer size changed between builds (" +
                         std::to_string(sizing.GetSize()) + " -> " +
                         std::to_string(final_fb.GetSize()) + ")");
  }
  std::memcpy(image.data(), final_fb.GetBufferPointer(), final_fb.GetSize());
  return image;
}

Status WriteModelFile(const ModelSpec& spec, const std::string& path,
                      const AtomicWriteOptions& options) {
  HW_ASSIGN_OR_RETURN(std::vector<uint8_t> image, SerializeModel(spec));
  return WriteFileAtomically(path, {{image.data(), image.size()}}, options);
}

}  // namespace headwise
