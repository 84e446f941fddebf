#include "cel/dra.h"

#include <memory>

namespace berth::cel::dra {
namespace {

// Splits a qualified name into domain and id; a name without a domain is the driver's.
std::pair<std::string_view, std::string_view> SplitName(std::string_view name,
                                                        std::string_view driver) {
  size_t slash = name.find('/');
  if (slash == std::string_view::npos) return {driver, name};
  return {name.substr(0, slash), name.substr(slash + 1)};
}

// The entry map of `domain` in outer, created on first use.
Map& DomainMap(Map& outer, std::vector<std::shared_ptr<Map>>& inner, std::string_view domain) {
  for (size_t i = 0; i < outer.entries.size(); ++i) {
    if (outer.entries[i].first.str() == domain) return *inner[i];
  }
  inner.push_back(std::make_shared<Map>());
  outer.entries.emplace_back(Value::String(std::string(domain)), Value());
  return *inner.back();
}

// Builds the outer map from the inner ones (values are set once the inner maps are complete).
Value Finish(std::shared_ptr<Map> outer, std::vector<std::shared_ptr<Map>>& inner,
             const std::shared_ptr<const Value>& empty) {
  for (size_t i = 0; i < inner.size(); ++i) outer->entries[i].second = Value::MakeMap(inner[i]);
  outer->missing = empty;
  return Value::MakeMap(std::move(outer));
}

const std::vector<VariableDecl>& Declarations() {
  static const std::vector<VariableDecl> decls = {
      {"device", StaticType{Type::kMap, Shape::kDevice}}};
  return decls;
}

}  // namespace

Result<PreparedDevice> PreparedDevice::Prepare(const Device& device) {
  static const auto empty = std::make_shared<const Value>(Value::MakeMap(std::make_shared<Map>()));
  auto attrs = std::make_shared<Map>();
  std::vector<std::shared_ptr<Map>> attr_inner;
  for (const auto& [name, value] : device.attributes) {
    auto [domain, id] = SplitName(name, device.driver);
    Value v;
    if (const bool* b = std::get_if<bool>(&value)) {
      v = Value::Bool(*b);
    } else if (const int64_t* i = std::get_if<int64_t>(&value)) {
      v = Value::Int(*i);
    } else if (const std::string* s = std::get_if<std::string>(&value)) {
      v = Value::String(*s);
    } else {
      const std::string& text = std::get<VersionString>(value).text;
      Semver sv;
      if (!ParseSemver(text, false, sv)) {
        return Error{"attribute " + name + ": parse semantic version: invalid version " + text,
                     ErrorCode::kInvalid};
      }
      v = Value::FromSemver(std::move(sv));
    }
    Map& m = DomainMap(*attrs, attr_inner, domain);
    m.entries.emplace_back(Value::String(std::string(id)), std::move(v));
  }
  auto caps = std::make_shared<Map>();
  std::vector<std::shared_ptr<Map>> cap_inner;
  for (const auto& [name, q] : device.capacity) {
    auto [domain, id] = SplitName(name, device.driver);
    DomainMap(*caps, cap_inner, domain)
        .entries.emplace_back(Value::String(std::string(id)), Value::FromQuantity(q));
  }
  auto dev = std::make_shared<Map>();
  dev->entries.emplace_back(Value::String("driver"), Value::String(device.driver));
  dev->entries.emplace_back(Value::String("attributes"), Finish(attrs, attr_inner, empty));
  dev->entries.emplace_back(Value::String("capacity"), Finish(caps, cap_inner, empty));
  dev->entries.emplace_back(Value::String("allowMultipleAllocations"),
                            Value::Bool(device.allow_multiple_allocations));
  PreparedDevice out;
  out.value_ = Value::MakeMap(std::move(dev));
  return out;
}

Result<Selector> Selector::Compile(std::string_view expression, const Options& options) {
  CompileOptions co;
  co.cost_limit = options.cost_limit;
  co.allow_multiple_allocations_field = options.consumable_capacity;
  auto program = cel::Compile(expression, Declarations(), co);
  if (!program.ok()) {
    return Error{"compilation failed: " + program.error().message, ErrorCode::kInvalid};
  }
  const StaticType& t = program->result_type();
  if (t.type != Type::kBool && t.type != Type::kDyn) {
    return Error{"must evaluate to bool or the unknown type, not " + StaticTypeName(t),
                 ErrorCode::kInvalid};
  }
  return Selector(std::move(program).value());
}

Result<bool> Selector::Matches(const PreparedDevice& device, uint64_t* cost) const {
  Value result = program_.Evaluate(&device.value(), cost);
  if (result.kind() == Kind::kBool) return result.bool_value();
  if (result.IsError()) return Error{result.error(), ErrorCode::kInvalid};
  return Error{"CEL result of type " + std::string(KindName(result.kind())) +
                   " could not be converted to bool",
               ErrorCode::kInvalid};
}

std::shared_ptr<const Result<Selector>> SelectorCache::GetOrCompile(std::string_view expression) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(expression);
    if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->second;
    }
  }
  // Compile outside the lock; two threads racing on one new expression both compile it.
  auto compiled = std::make_shared<const Result<Selector>>(Selector::Compile(expression, options_));
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(expression);
  if (it != index_.end()) return it->second->second;
  lru_.emplace_front(std::string(expression), compiled);
  index_.emplace(lru_.front().first, lru_.begin());
  while (lru_.size() > capacity_ && capacity_ > 0) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return compiled;
}

size_t SelectorCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

}  // namespace berth::cel::dra
