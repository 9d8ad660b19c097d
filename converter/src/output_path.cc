#include "converter/src/output_path.h"

#include <filesystem>
#include <system_error>

namespace headwise::convert {
namespace {

namespace fs = std::filesystem;

// The absolute path with symlinks and ".." resolved as far as the path exists.
fs::path Resolve(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? fs::absolute(path).lexically_normal() : p;
}

bool IsInside(const fs::path& child, const fs::path& dir) {
  auto c = child.begin();
  for (auto d = dir.begin(); d != dir.end(); ++d, ++c) {
    if (d->empty()) continue;  // trailing separator
    if (c == child.end() || *c != *d) return false;
  }
  return true;
}

}  // namespace

Status CheckOutputPath(const std::string& output, const std::string& input_dir,
                       const std::vector<std::string>& input_files, bool force) {
  std::error_code ec;
  const fs::path out = Resolve(output);
  const fs::file_status st = fs::symlink_status(output, ec);
  if (fs::exists(st)) {
    if (fs::is_directory(fs::status(output, ec))) {
      return IoError("output '" + output + "' is a directory; expected a file path");
    }
  }
  for (const std::string& input : input_files) {
    if (fs::exists(input, ec) && Resolve(input) == out) {
      return IoError("output '" + output + "' is the input file '" + input +
                     "'; headwise-convert never overwrites its inputs");
    }
  }
  if (IsInside(out, Resolve(input_dir))) {
    return IoError("output '" + output + "' is inside the checkpoint directory '" + input_dir +
                   "'; headwise-convert never writes into its input, choose another path");
  }
  if (fs::exists(st) && !force) {
    return IoError("output '" + output + "' exists; pass --force to overwrite it");
  }
  return Status::Ok();
}

}  // namespace headwise::convert
