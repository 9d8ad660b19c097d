// converter/src/output_path.h: the converter's "never overwrite an input, never write into
// the checkpoint" rule, checked before any work.
#ifndef HEADWISE_CONVERTER_OUTPUT_PATH_H_
#define HEADWISE_CONVERTER_OUTPUT_PATH_H_

#include <string>
#include <vector>

#include "headwise/status.hpp"

namespace headwise::convert {

// Refuses (kIoError, naming both paths) an `output` that exists while !force, is a directory,
// lies inside `input_dir` (after resolving symlinks and "..") or is the same file as one of
// `input_files` (resolved the same way, so a symlink to an input counts as that input).
Status CheckOutputPath(const std::string& output, const std::string& input_dir,
                       const std::vector<std::string>& input_files, bool force);

}  // namespace headwise::convert

#endif  // HEADWISE_CONVERTER_OUTPUT_PATH_H_
