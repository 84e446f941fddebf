// Field ownership (metadata.managedFields) as kube-apiserver records it for server-side apply
// and updates.
//
// Each entry names a manager, an operation (Apply or Update), the apiVersion, the time of its
// last change, an optional subresource and its fields in the FieldsV1 form
// (`{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":
// {".":{},"f:image":{}}}}}`). Lists with a patch merge key are owned per item (`k:`), sets of
// primitives per value (`v:`), other lists whole.
//
//   * An apply owns exactly the fields of its configuration. A field it sets to a value other
//     than the live one while another manager owns it is a conflict (409 naming each field and
//     manager) unless forced, which takes the field over; setting the live value shares it.
//     Fields the same manager applied before and no longer applies are removed from the object
//     when nobody else owns them.
//   * An update takes every field it adds or changes from the other managers and gives up the
//     fields it removes.
//   * apiVersion, kind and the server-set metadata (name, namespace, uid, resourceVersion,
//     generation, creationTimestamp, managedFields) are never owned.
//
// Differences from kube-apiserver: lists are keyed by the one patch merge key of patch.h
// (ports by containerPort alone); updates are recorded only when the request names a
// fieldManager or the object already has managed fields (an object nobody applied or created
// with a named manager carries none, so plain writes such as the scheduler's pay nothing).
//
// Pure functions; called on HTTP I/O threads inside the store's read-modify-write.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apiserver/api_error.h"
#include "berth/api/result.h"

namespace berth::apiserver {

struct FieldManagerContext {
  std::string manager;         // the fieldManager, or the user agent's product when none is named
  bool manager_named = false;  // the request named its fieldManager
  std::string subresource;     // "" or "status"
  std::string api_version;     // of the resource ("v1", "apps/v1")
  std::string now;             // RFC 3339, the time written into the acting manager's entry
  // The resource has a status subresource: the main resource's apply does not own status, and
  // the status subresource's owns only status.
  bool has_status_subresource = false;
};

// One conflicting field of an apply.
struct FieldConflict {
  std::string manager;  // as kube-apiserver prints it: "\"m\"" or "\"m\" using v1"
  std::string field;    // ".spec.containers[name=\"c\"].image"
};

// Server-side apply's ownership step: `current` is the live object (null: created by this
// apply), `applied` the configuration sent, `next` the merged result, which this prunes and
// gives its managedFields. On conflicts without `force` returns a Conflict error (message as
// kube-apiserver's) and fills `conflicts`.
VoidResult ApplyManagedFields(const nlohmann::json* current, const nlohmann::json& applied,
                              nlohmann::json& next, const FieldManagerContext& ctx, bool force,
                              std::vector<FieldConflict>* conflicts);

// An update's ownership step (create when `current` is null): records in `next` what
// `ctx.manager` changed. Does nothing when the request named no manager and nobody owns fields
// of the object yet.
void RecordUpdateManagedFields(const nlohmann::json* current, nlohmann::json& next,
                               const FieldManagerContext& ctx);

}  // namespace berth::apiserver
