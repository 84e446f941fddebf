#include "api/device_taint_rule.h"

#include "api/codec_internal.h"

namespace berth {

using nlohmann::json;

Result<DeviceTaintRule> DecodeDeviceTaintRule(const json& doc, std::string_view where) {
  return codec::DecodeWith<DeviceTaintRule>(
      doc, where, [&](codec::Reader& r, DeviceTaintRule& rule) {
        r.Field(doc, "spec", [&](const json& spec) {
          r.Field(spec, "deviceSelector", [&](const json& s) {
            DeviceTaintRule::Selector& sel = rule.selector.emplace();
            r.Field(s, "driver", [&](const json& x) { sel.driver = r.Str(x); });
            r.Field(s, "pool", [&](const json& x) { sel.pool = r.Str(x); });
            r.Field(s, "device", [&](const json& x) { sel.device = r.Str(x); });
          });
          r.Field(spec, "taint", [&](const json& t) {
            r.Field(t, "key", [&](const json& x) { rule.taint.key = r.Str(x); });
            r.Field(t, "value", [&](const json& x) { rule.taint.value = r.Str(x); });
            r.Field(t, "effect", [&](const json& x) { rule.taint.effect = r.Str(x); });
            r.Field(t, "timeAdded", [&](const json& x) { rule.taint.time_added = r.Time(x); });
          });
        });
      });
}

bool RuleSelects(const DeviceTaintRule& rule, std::string_view driver, std::string_view pool,
                 std::string_view device_name) {
  if (!rule.selector) return false;
  const DeviceTaintRule::Selector& s = *rule.selector;
  return (!s.driver || *s.driver == driver) && (!s.pool || *s.pool == pool) &&
         (!s.device || *s.device == device_name);
}

}  // namespace berth
