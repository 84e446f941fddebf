// The web view's files (src/ui/assets), embedded at build time by cmake/embed_assets.cmake.
// Immutable; any thread.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace berth::ui {

// (file name, contents) of every file under src/ui/assets.
const std::vector<std::pair<std::string_view, std::string_view>>& EmbeddedAssets();

}  // namespace berth::ui
