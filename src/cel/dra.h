// CEL selectors of Dynamic Resource Allocation: the environment kube-scheduler's
// k8s.io/dynamic-resource-allocation/cel package defines, for DeviceClass and request selectors.
//
//   auto sel = dra::Selector::Compile(R"(device.driver == "gpu.example.com" &&
//       device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("16Gi")))");
//   if (!sel.ok()) ...                       // sel.error().message: "compilation failed: ..."
//   dra::PreparedDevice dev = dra::PreparedDevice::Prepare(device).value();   // once per device
//   Result<bool> m = sel->Matches(dev);      // many times; an error is a failed evaluation
//
// The expression sees one variable, `device`, with
//   driver                    string
//   attributes[domain][id]    bool, int, string or semver; an attribute named without a domain
//                             ("model") belongs to the driver's domain
//   capacity[domain][id]      quantity
//   allowMultipleAllocations  bool
// An unknown domain yields an empty map, so device.attributes["x.example.com"].model fails with
// "no such key: model" while `"x.example.com" in device.attributes` is false.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "berth/api/quantity.h"
#include "berth/api/result.h"
#include "cel/program.h"

namespace berth::cel::dra {

// resource.k8s.io's CELSelectorExpressionMaxCost: the runtime cost limit of one evaluation.
inline constexpr uint64_t kSelectorMaxCost = 1'000'000;
// resource.k8s.io's CELSelectorExpressionMaxLength.
inline constexpr size_t kSelectorMaxLength = 10 * 1024;

// A device attribute value: exactly one of bool, int, string or a version string.
struct VersionString {
  std::string text;
};
using AttributeValue = std::variant<bool, int64_t, std::string, VersionString>;

struct Device {
  std::string driver;
  // Qualified names ("model" or "other.example.com/model") to values.
  std::vector<std::pair<std::string, AttributeValue>> attributes;
  std::vector<std::pair<std::string, Quantity>> capacity;
  bool allow_multiple_allocations = false;
};

// A device in the form selectors read, built once and shared by every evaluation against it.
class PreparedDevice {
 public:
  // Fails when a version attribute is not a semantic version ("attribute NAME: parse semantic
  // version: ...").
  static Result<PreparedDevice> Prepare(const Device& device);
  const Value& value() const { return value_; }

 private:
  Value value_;
};

struct Options {
  // Runtime cost limit; upstream's default unless overridden.
  uint64_t cost_limit = kSelectorMaxCost;
  // Whether device.allowMultipleAllocations is declared (the DRAConsumableCapacity gate).
  bool consumable_capacity = true;
};

class Selector {
 public:
  static Result<Selector> Compile(std::string_view expression, const Options& options = {});

  // Whether the device satisfies the selector. Errors: runtime errors of the expression ("no
  // such key: model", "operation cancelled: actual cost limit exceeded", ...) and a result
  // that is not a bool.
  Result<bool> Matches(const PreparedDevice& device, uint64_t* cost = nullptr) const;

  // Worst-case cost estimate of one evaluation (see docs/dra.md).
  uint64_t max_cost() const { return program_.max_cost(); }
  const std::string& expression() const { return program_.source(); }

 private:
  explicit Selector(Program p) : program_(std::move(p)) {}
  Program program_;
};

// Compiled selectors by expression, least recently used evicted beyond `capacity` (upstream's
// dynamic-resource-allocation/cel Cache). Safe for concurrent use; a failed compilation is
// cached too, so the error is computed once.
class SelectorCache {
 public:
  explicit SelectorCache(size_t capacity, Options options = {})
      : capacity_(capacity), options_(options) {}
  std::shared_ptr<const Result<Selector>> GetOrCompile(std::string_view expression);
  size_t size() const;

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const Result<Selector>>>;
  const size_t capacity_;
  const Options options_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // most recent first
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_;
};

}  // namespace berth::cel::dra
