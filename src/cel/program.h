// Compiling a CEL expression against declared variables into a Program that is then evaluated
// many times. Most callers want the DRA selector API in cel/dra.h instead.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "berth/api/result.h"
#include "cel/ast.h"
#include "cel/parser.h"
#include "cel/value.h"

namespace berth::cel {

// What the checker knows about a value beyond its CEL type: the DRA device and the nested maps
// under device.attributes and device.capacity, so that unknown fields of `device` are compile
// errors and capacity entries are known to be quantities.
enum class Shape : uint8_t {
  kNone,
  kDevice,        // device: driver, attributes, capacity, allowMultipleAllocations
  kAttributeMap,  // device.attributes: domain -> kAttributeIds
  kAttributeIds,  // device.attributes[domain]: id -> attribute value (dyn)
  kCapacityMap,   // device.capacity: domain -> kCapacityIds
  kCapacityIds,   // device.capacity[domain]: id -> quantity
};

struct StaticType {
  Type type = Type::kDyn;
  Shape shape = Shape::kNone;
};

struct VariableDecl {
  std::string name;
  StaticType type;
};

struct CompileOptions {
  ParseLimits parse;
  // Runtime cost limit per evaluation; 0 means none.
  uint64_t cost_limit = 0;
  // Fields the device type declares beyond driver, attributes and capacity.
  bool allow_multiple_allocations_field = true;
};

// The type name as cel-go prints it in checker errors ("int", "map(string, dyn)", ...).
std::string StaticTypeName(const StaticType& t);

class Program {
 public:
  // Evaluates with vars[i] bound to the i-th declared variable. cost, when given, receives the
  // cost spent. Errors are values of kind kError.
  Value Evaluate(const Value* vars, uint64_t* cost = nullptr) const;

  const StaticType& result_type() const { return result_type_; }
  // An upper bound on the cost of one evaluation for inputs within the DRA API's size limits
  // (UINT64_MAX when unbounded).
  uint64_t max_cost() const { return max_cost_; }
  uint64_t cost_limit() const { return cost_limit_; }
  const std::string& source() const { return *source_; }

 private:
  friend Result<Program> Compile(std::string_view, std::span<const VariableDecl>,
                                 const CompileOptions&);
  std::shared_ptr<const Expr> root_;
  std::shared_ptr<const std::string> source_;
  StaticType result_type_;
  int slots_ = 0;
  uint64_t max_cost_ = 0;
  uint64_t cost_limit_ = 0;
};

// Parses and checks `source`. Errors carry cel-go's text: "ERROR: <input>:1:5: ...".
Result<Program> Compile(std::string_view source, std::span<const VariableDecl> vars,
                        const CompileOptions& options = {});

// Internal: resolves identifiers and functions, assigns macro slots and infers static types.
struct CheckResult {
  StaticType type;
  int slots = 0;
  uint64_t max_cost = 0;
};
Result<CheckResult> Check(Expr& root, std::string_view source, std::span<const VariableDecl> vars,
                          const CompileOptions& options);

}  // namespace berth::cel
