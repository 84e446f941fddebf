#include "api/json_parse.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <nlohmann/json.hpp>

namespace berth {
namespace {

using Json = nlohmann::json;

// Where the builder is, linked through the builder's own stack frames: a path is only put
// together when a repeated key needs naming.
struct PathStep {
  const PathStep* parent;
  std::string_view key;  // in an object
  size_t index;          // in an array
  bool in_array;
};

std::string PathOf(const PathStep* step) {
  std::vector<const PathStep*> steps;
  for (; step != nullptr; step = step->parent) steps.push_back(step);
  std::string out;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    if ((*it)->in_array) {
      fmt::format_to(std::back_inserter(out), "[{}]", (*it)->index);
    } else {
      if (!out.empty()) out += '.';
      out += (*it)->key;
    }
  }
  return out;
}

class Builder {
 public:
  Builder(size_t max_depth, std::vector<std::string>* duplicates, bool skip_managed_fields)
      : max_depth_(max_depth), duplicates_(duplicates), skip_managed_fields_(skip_managed_fields) {}

  bool Build(simdjson::dom::element e, Json* out, const PathStep* at, size_t depth) {
    using Type = simdjson::dom::element_type;
    switch (e.type()) {
      case Type::OBJECT: {
        if (depth >= max_depth_) return false;
        *out = Json::object();
        auto& members = out->get_ref<Json::object_t&>();
        const bool in_metadata =
            skip_managed_fields_ && at != nullptr && !at->in_array && at->key == "metadata";
        for (auto [key, value] : simdjson::dom::object(e)) {
          if (in_metadata && key == "managedFields") continue;
          const size_t before = members.size();
          // nlohmann writes keys in order, so the hint is right for what Berth itself encoded.
          auto it = members.try_emplace(members.end(), std::string(key));
          PathStep step{at, it->first, 0, false};
          if (members.size() == before) {
            it->second = nullptr;  // the later value replaces the earlier one
            if (duplicates_) duplicates_->push_back(PathOf(&step));
          }
          if (!Build(value, &it->second, &step, depth + 1)) return false;
        }
        return true;
      }
      case Type::ARRAY: {
        if (depth >= max_depth_) return false;
        simdjson::dom::array items(e);
        *out = Json::array();
        auto& elements = out->get_ref<Json::array_t&>();
        elements.reserve(items.size());
        size_t index = 0;
        for (simdjson::dom::element item : items) {
          PathStep step{at, {}, index++, true};
          if (!Build(item, &elements.emplace_back(), &step, depth + 1)) return false;
        }
        return true;
      }
      case Type::STRING:
        *out = std::string(std::string_view(e));
        return true;
      case Type::INT64: {
        // nlohmann reads a number without a sign as unsigned.
        const int64_t v = int64_t(e);
        if (v >= 0) {
          *out = static_cast<Json::number_unsigned_t>(v);
        } else {
          *out = static_cast<Json::number_integer_t>(v);
        }
        return true;
      }
      case Type::UINT64:
        *out = static_cast<Json::number_unsigned_t>(uint64_t(e));
        return true;
      case Type::DOUBLE:
        *out = static_cast<Json::number_float_t>(double(e));
        return true;
      case Type::BOOL:
        *out = bool(e);
        return true;
      case Type::NULL_VALUE:
        *out = nullptr;
        return true;
    }
    return false;
  }

 private:
  const size_t max_depth_;
  std::vector<std::string>* duplicates_;
  const bool skip_managed_fields_;
};

bool Parse(std::string_view text, Json* out, size_t max_depth, std::vector<std::string>* duplicates,
           bool skip_managed_fields) {
  if (text.size() > kFastJsonMaxBytes) return false;
  // A parser per call: its buffers cost less than a tenth of the parse, and no state is
  // shared between threads.
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text.data(), text.size(), /*realloc_if_needed=*/true).get(root) !=
      simdjson::SUCCESS) {
    return false;
  }
  std::vector<std::string> found;
  Builder builder(max_depth, duplicates ? &found : nullptr, skip_managed_fields);
  if (!builder.Build(root, out, nullptr, 0)) return false;
  if (duplicates) {
    for (auto& d : found) duplicates->push_back(std::move(d));
  }
  return true;
}

}  // namespace

bool ParseJsonFast(std::string_view text, Json* out, size_t max_depth,
                   std::vector<std::string>* duplicates) {
  return Parse(text, out, max_depth, duplicates, /*skip_managed_fields=*/false);
}

bool ParseJsonFastWithoutManagedFields(std::string_view text, Json* out) {
  return Parse(text, out, 512, nullptr, /*skip_managed_fields=*/true);
}

}  // namespace berth
