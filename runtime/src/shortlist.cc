#include "shortlist.h"

#include <pthreadpool.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "common/half.h"
#include "kernels/f32_gemv.h"
#include "kernels/int8_gemm.h"
#include "kernels/int8_packed.h"
#include "kernels/softmax.h"
#include "parallel.h"

namespace headwise {

bool ShortlistEnabled(const Model::Impl& model, const TranslatorLimits& limits) {
  return model.has_shortlist && limits.use_shortlist;
}

void LayoutShortlist(const Model::Impl& model, const TranslatorLimits& limits, ArenaCarver& c,
                     ShortlistBuffers* buf) {
  const ModelConfig& dims = model.config;
  const uint64_t V = dims.vocab_size;
  const uint64_t d = dims.d_model;
  const uint64_t B = static_cast<uint64_t>(limits.max_batch);
  const uint64_t S = static_cast<uint64_t>(limits.max_source_tokens);
  const uint64_t R = B * static_cast<uint64_t>(limits.max_beam);
  // 64-bit arithmetic: B * S * longest stays below 2^31 * 2^24.
  const uint64_t T = static_cast<uint64_t>(limits.max_target_tokens);
  // The union of `lines` lines is at most: the frequent ids, EOS and UNK, one list per distinct
  // source id, and the target prefixes' ids.
  const auto bound = [&](uint64_t lines) {
    return model.shortlist.num_frequent + 2 +
           std::min<uint64_t>(V, lines * S) * model.shortlist_stats.longest +
           std::min<uint64_t>(V, lines * T);
  };
  const size_t C = static_cast<size_t>(std::min<uint64_t>(V, bound(B)));
  const size_t L = static_cast<size_t>(std::min<uint64_t>(C, bound(1)));  // one line's list
  buf->capacity = C;
  buf->max_rows = static_cast<size_t>(R);
  buf->marks = c.Take<uint8_t>({static_cast<size_t>(V)});
  buf->ids = c.Take<int32_t>({C});
  buf->run_first = c.Take<int32_t>({C});
  buf->run_length = c.Take<int32_t>({C});
  buf->run_offset = c.Take<int32_t>({C});
  buf->row = c.Take<float>({C});
  buf->max_lines = static_cast<size_t>(B);
  buf->line_capacity = L;
  buf->line_pos = c.Take<int32_t>({static_cast<size_t>(B), L});
  buf->line_size = c.Take<int32_t>({static_cast<size_t>(B)});
  buf->out = c.Take<float>({static_cast<size_t>(R), C});
  buf->row_line = c.Take<int32_t>({static_cast<size_t>(R)});
  switch (model.lm_head.dtype) {
    case DType::kI8:
      // The gathered rows, row-major or packed (Prepare): room for the larger, the packed.
      buf->w8 = c.Take<int8_t>({kernels::Int8VnniPackedBytes(C, static_cast<size_t>(d))});
      buf->w8_scale = c.Take<float>({C});
      buf->bias = c.Take<float>({C});
      break;
    case DType::kF16:
      buf->w32 = c.Take<float>({C, static_cast<size_t>(d)});
      break;
    case DType::kF32:
      break;
  }
}

void ShortlistOutput::Prepare(const TokenSpan* sources, const TokenSpan* prefixes, size_t batch,
                              float* logits, size_t rows) {
  const Model::Impl& m = *model_;
  const ShortlistBuffers& b = *buf_;
  const ShortlistView& list = m.shortlist;
  const size_t V = m.config.vocab_size;
  const size_t d = m.config.d_model;
  const int32_t always[] = {m.config.eos_token_id, m.config.unk_token_id};
  ShortlistBegin(list, always, 2, b.marks);
  for (size_t s = 0; s < batch; ++s) {
    ShortlistAddSource(list, sources[s].ids, sources[s].size, b.marks);
    if (prefixes != nullptr) ShortlistAddTargets(prefixes[s].ids, prefixes[s].size, b.marks);
  }
  // The capacity bounds every union (LayoutShortlist), so ids has room.
  size_ = ShortlistCollect(list, b.marks, b.ids);

  runs_ = 0;
  for (size_t j = 0; j < size_; ++j) {
    if (runs_ > 0 && b.ids[j] == b.run_first[runs_ - 1] + b.run_length[runs_ - 1]) {
      ++b.run_length[runs_ - 1];
      continue;
    }
    b.run_first[runs_] = b.ids[j];
    b.run_length[runs_] = 1;
    b.run_offset[runs_] = static_cast<int32_t>(j);
    ++runs_;
  }

  const WeightView& w = m.lm_head;
  switch (w.dtype) {
    case DType::kI8: {
      // Where lm_head's operator packed it (its pages are released), the union's rows of the
      // packed copy, kept packed for the packed kernel; else the rows in place, row-major.
      const uint8_t* packed = m.int8_packed.Find(w.i8());
      packed_ = packed != nullptr;
      if (packed_) {
        kernels::GatherInt8VnniPacked(packed, d, b.ids, size_, reinterpret_cast<uint8_t*>(b.w8));
      }
      for (size_t j = 0; j < size_; ++j) {
        const size_t id = static_cast<size_t>(b.ids[j]);
        if (!packed_) std::memcpy(b.w8 + j * d, w.i8() + id * d, d);
        b.w8_scale[j] = w.scale[id];
        b.bias[j] = m.final_logits_bias.f32()[id];
      }
      break;
    }
    case DType::kF16:
      for (size_t j = 0; j < size_; ++j) {
        const uint16_t* row = w.f16() + static_cast<size_t>(b.ids[j]) * d;
        float* out = b.w32 + j * d;
        for (size_t k = 0; k < d; ++k) out[k] = F16ToFloat(row[k]);
      }
      break;
    case DType::kF32:
      break;
  }
  CollectLines(sources, prefixes, batch);
  std::fill(logits, logits + rows * V, -std::numeric_limits<float>::infinity());
  std::fill(b.row_line, b.row_line + rows, -1);
}

void ShortlistOutput::AdoptUnion(const ShortlistOutput& from, const TokenSpan* sources,
                                 const TokenSpan* prefixes, size_t batch, float* logits,
                                 size_t rows) {
  size_ = from.size_;
  runs_ = from.runs_;
  packed_ = from.packed_;
  CollectLines(sources, prefixes, batch);
  const size_t V = model_->config.vocab_size;
  std::fill(logits, logits + rows * V, -std::numeric_limits<float>::infinity());
  std::fill(buf_->row_line, buf_->row_line + rows, -1);
}

// Line s's list as positions in the union: format/shortlist.h's marks for that line alone,
// read off along the union (every marked id is in it: the union marked a superset).
void ShortlistOutput::CollectLines(const TokenSpan* sources, const TokenSpan* prefixes,
                                   size_t batch) {
  const Model::Impl& m = *model_;
  const ShortlistBuffers& b = *buf_;
  const int32_t always[] = {m.config.eos_token_id, m.config.unk_token_id};
  for (size_t s = 0; s < batch; ++s) {
    ShortlistBegin(m.shortlist, always, 2, b.marks);
    ShortlistAddSource(m.shortlist, sources[s].ids, sources[s].size, b.marks);
    if (prefixes != nullptr) ShortlistAddTargets(prefixes[s].ids, prefixes[s].size, b.marks);
    int32_t* pos = b.line_pos + s * b.line_capacity;
    size_t k = 0;
    // The line bound (LayoutShortlist) holds every list, so pos has room.
    for (size_t j = 0; j < size_; ++j) {
      if (b.marks[b.ids[j]] != 0) pos[k++] = static_cast<int32_t>(j);
    }
    b.line_size[s] = static_cast<int32_t>(k);
  }
}

bool ShortlistOutput::Allows(size_t line, size_t id) const {
  const ShortlistBuffers& b = *buf_;
  const int32_t* pos = b.line_pos + line * b.line_capacity;
  const int32_t* end = pos + b.line_size[line];
  const int32_t* at = std::lower_bound(
      pos, end, static_cast<int64_t>(id),
      [&](int32_t p, int64_t want) { return static_cast<int64_t>(b.ids[p]) < want; });
  return at != end && static_cast<size_t>(b.ids[*at]) == id;
}

float ShortlistOutput::LogSumExp(const float* logits, size_t line, float* max_out) const {
  const ShortlistBuffers& b = *buf_;
  const int32_t* pos = b.line_pos + line * b.line_capacity;
  const size_t n = static_cast<size_t>(b.line_size[line]);
  for (size_t k = 0; k < n; ++k) b.row[k] = logits[b.ids[pos[k]]];
  const kernels::LogSoftmaxNorm norm = kernels::LogSoftmaxNormalizer(b.row, n);
  *max_out = norm.max;
  return norm.log_sum;
}

Status ShortlistOutput::Run(size_t rows, const float* x, const int32_t* line_of_row, float* logits,
                            Workers workers) const {
  if (rows > buf_->max_rows) {
    return InternalError("shortlist: " + std::to_string(rows) + " rows exceed the planned " +
                         std::to_string(buf_->max_rows));
  }
  if (model_->lm_head.dtype == DType::kI8) {
    RunInt8(rows, x, workers);
  } else {
    RunFloat(rows, x, workers);
  }
  ScatterLines(rows, line_of_row, logits);
  return Status::Ok();
}

void ShortlistOutput::RunFloat(size_t rows, const float* x, Workers workers) const {
  const Model::Impl& m = *model_;
  const ShortlistBuffers& b = *buf_;
  const size_t d = m.config.d_model;
  const bool widened = m.lm_head.dtype == DType::kF16;
  const float* bias = m.final_logits_bias.f32();
  // One run of consecutive ids, every row: the run's weights stay in cache across the rows.
  const auto run = [&](size_t i) {
    const size_t first = static_cast<size_t>(b.run_first[i]);
    const size_t length = static_cast<size_t>(b.run_length[i]);
    kernels::F32GemvArgs a;
    a.k = d;
    a.w = widened ? b.w32 + static_cast<size_t>(b.run_offset[i]) * d : m.lm_head.f32() + first * d;
    a.bias = bias + first;
    a.out_min = -std::numeric_limits<float>::infinity();
    a.out_max = std::numeric_limits<float>::infinity();
    for (size_t r = 0; r < rows; ++r) {
      a.x = x + r * d;
      a.y = b.out + r * size_ + static_cast<size_t>(b.run_offset[i]);
      kernels::F32Gemv(a, 0, length);
    }
  };
  ParallelFor(workers, runs_, rows * d * size_, run);
}

void ShortlistOutput::RunInt8(size_t rows, const float* x, Workers workers) const {
  const Model::Impl& m = *model_;
  const ShortlistBuffers& b = *buf_;
  const size_t d = m.config.d_model;
  const size_t n = size_;
  // The same quantized rows the full lm_head's int8 path computes (fc/fc_int8.cc).
  kernels::QuantizeRowsDynamic(x, rows, d, d, int8_->q, int8_->scale);
  kernels::Int8GemmArgs a;
  a.xq = int8_->q;
  a.x_scale = int8_->scale;
  a.rows = rows;
  a.k = d;
  a.w = b.w8;
  a.w_scale = b.w8_scale;
  a.bias = b.bias;
  a.y = b.out;
  a.y_stride = n;
  a.out_min = -std::numeric_limits<float>::infinity();
  a.out_max = std::numeric_limits<float>::infinity();
  constexpr size_t kTile = 64;  // as fc_int8.cc: a multiple of the kernels' 4 channels
  ParallelTiles(workers, n, kTile, rows * d * n, WorkKind::kInt8, [&](size_t begin, size_t count) {
    if (packed_) {
      return kernels::Int8PackedKernelHere().gemm(a, reinterpret_cast<const uint8_t*>(b.w8), begin,
                                                  begin + count);
    }
    kernels::Int8Gemm(a, begin, begin + count);
  });
}

void ShortlistOutput::ScatterLines(size_t rows, const int32_t* line_of_row, float* logits) const {
  const ShortlistBuffers& b = *buf_;
  const size_t V = model_->config.vocab_size;
  // Each row: its own line's ids from the product; the ids of the line it held before, if
  // another, back to -inf (every other id of the row is -inf since Prepare).
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  for (size_t r = 0; r < rows; ++r) {
    const float* from = b.out + r * size_;
    float* to = logits + r * V;
    const int32_t line = line_of_row[r];
    if (b.row_line[r] != line) {
      if (b.row_line[r] >= 0) {
        const size_t old = static_cast<size_t>(b.row_line[r]);
        const int32_t* pos = b.line_pos + old * b.line_capacity;
        for (int32_t k = 0; k < b.line_size[old]; ++k) to[b.ids[pos[k]]] = kMinusInf;
      }
      b.row_line[r] = line;
    }
    const int32_t* pos = b.line_pos + static_cast<size_t>(line) * b.line_capacity;
    const int32_t in_line = b.line_size[line];
    for (int32_t k = 0; k < in_line; ++k) to[b.ids[pos[k]]] = from[pos[k]];
  }
}

}  // namespace headwise
