// converter/src/sinusoids.h: the sinusoidal position table of Marian / Hugging Face
// MarianSinusoidalPositionalEmbedding: for position p and j < d/2,
//   table[p][j] = sin(p / 10000^(2j/d)),  table[p][d/2 + j] = cos(p / 10000^(2j/d)),
// computed in double and rounded to float. The runtime computes the same table, so the
// converter does not store it; it only checks that a checkpoint's saved copy agrees.
#ifndef HEADWISE_CONVERTER_SINUSOIDS_H_
#define HEADWISE_CONVERTER_SINUSOIDS_H_

#include <cstdint>
#include <vector>

namespace headwise::convert {

// [positions, dim] row-major; dim must be even.
std::vector<float> SinusoidalPositions(uint32_t positions, uint32_t dim);

}  // namespace headwise::convert

#endif  // HEADWISE_CONVERTER_SINUSOIDS_H_
