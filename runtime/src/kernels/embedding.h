// runtime/src/kernels/embedding.h: token embeddings plus Marian's sinusoidal positions.
#ifndef HEADWISE_RUNTIME_KERNELS_EMBEDDING_H_
#define HEADWISE_RUNTIME_KERNELS_EMBEDDING_H_

#include <cstddef>
#include <cstdint>

namespace headwise::kernels {

// table[p * dim + j] for p < num_positions, as MarianSinusoidalPositionalEmbedding builds it:
// angle(p, i) = p / 10000^(2i / dim) in double; the first ceil(dim/2) columns are
// sin(angle(p, i)), the remaining floor(dim/2) are cos(angle(p, i)); rounded to float at the end.
void SinusoidalPositions(size_t num_positions, size_t dim, float* table);

// out[r] = embed[ids[r]] * scale + positions[r * position_stride], each row `dim` floats.
// position_stride = dim walks consecutive positions (a source sentence); 0 adds the same
// position to every row (one decoder step). ids must be valid rows of `embed`.
void EmbedTokens(const float* embed, const int32_t* ids, size_t rows, size_t dim, float scale,
                 const float* positions, size_t position_stride, float* out);

// The same over a F16 table, and over an I8 table with one scale per row (token):
// out[r] = (embed[ids[r]] * row_scale[ids[r]]) * scale + positions[...].
void EmbedTokensF16(const uint16_t* embed, const int32_t* ids, size_t rows, size_t dim,
                    float scale, const float* positions, size_t position_stride, float* out);
void EmbedTokensI8(const int8_t* embed, const float* row_scale, const int32_t* ids, size_t rows,
                   size_t dim, float scale, const float* positions, size_t position_stride,
                   float* out);
// The same from the packed copy of the table (kernels/int8_packed.h, k =
// dim): the same bytes, so the same floats.
void EmbedTokensI8Packed(const uint8_t* packed, const float* row_scale, const int32_t* ids,
                         size_t rows, size_t dim, float scale, const float* positions,
                         size_t position_stride, float* out);

}  // namespace headwise::kernels

#endif  // HEADWISE_RUNTIME_KERNELS_EMBEDDING_H_
