// libFuzzer target: what the API server checks in a write before it stores anything. The input
// is a JSON object checked as every served kind (the type walk of field_types.h, the unknown
// field walk, the name rules on create), and as text the integer and resourceVersion query
// parameters and a Content-Type. None may crash, whatever the shape or the types.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "apiserver/field_types.h"
#include "apiserver/field_validation.h"
#include "apiserver/name_validation.h"
#include "apiserver/query_params.h"
#include "apiserver/resources.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace api = berth::apiserver;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)api::ParseInt64Param(text);
  (void)api::CheckBodyMediaType(text);
  berth::net::HttpRequest req;
  req.method = "GET";
  req.query = {{"resourceVersion", std::string(text)}, {"limit", std::string(text)}};
  (void)api::ValidateResourceQuery(req);
  nlohmann::json obj;
  if (!api::ParseJsonNotingDuplicates(text, 512, &obj, nullptr)) return 0;
  for (const api::ResourceInfo& r : api::ServedResources()) {
    const api::FieldSchema* schema = api::FindFieldSchema(r.group, r.kind);
    if (!schema) continue;
    // Names are read only from objects that type-check, as admission reads them.
    if (api::FindFieldTypeError(*schema, obj)) continue;
    (void)api::FindUnknownFields(*schema, obj, api::FieldPathStyle::kDecoder);
    if (obj.is_object()) (void)api::ValidateNewName(r, obj);
  }
  return 0;
}
