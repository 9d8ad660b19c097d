// format/file_layout.h: constants of the .hwm layout shared by the converter (writer) and the
// runtime (reader). The layout itself is documented in schema/headwise.fbs.
#ifndef HEADWISE_FORMAT_FILE_LAYOUT_H_
#define HEADWISE_FORMAT_FILE_LAYOUT_H_

#include <cstddef>
#include <cstdint>

namespace headwise {

// The format version this build writes and the newest it reads.
inline constexpr uint32_t kFormatVersion = 1;
// FlatBuffers file identifier (bytes [8, 12) of a size-prefixed buffer).
inline constexpr char kFileIdentifier[] = "HWM1";
// Alignment of the data segment and of every tensor inside it.
inline constexpr size_t kTensorAlignment = 64;

inline constexpr size_t AlignUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

}  // namespace headwise

#endif  // HEADWISE_FORMAT_FILE_LAYOUT_H_
