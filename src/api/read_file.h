// Reading a whole input file: a regular file, a pipe, /dev/stdin or "-" (standard input), with a
// size bound so that `/dev/zero` or a runaway pipe is an error, not an out-of-memory kill.
// Errors are one line naming the path ("x.yaml: is a directory", "x: larger than 64 MiB").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "berth/api/result.h"

namespace berth {

inline constexpr size_t kMaxManifestBytes = size_t{2} << 30;  // 2 GiB
inline constexpr size_t kMaxConfigBytes = size_t{64} << 20;   // 64 MiB

Result<std::string> ReadFileText(const std::string& path, size_t max_bytes);

}  // namespace berth

namespace berth {

// The manifest files `-f PATH` names, as kubectl reads them: a file (or "-") as is; a
// directory's .yaml, .yml and .json files in name order, descending into subdirectories when
// `recursive`. A directory without manifests is an error naming it.
Result<std::vector<std::string>> ExpandManifestPaths(const std::string& path, bool recursive);

}  // namespace berth
