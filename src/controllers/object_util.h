// Reading the controllers' objects from their JSON documents (informer copies keep theirs:
// controllers read templates, status and conditions the scheduler's typed objects leave out).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "api/codec.h"
#include "berth/api/objects.h"
#include "berth/api/result.h"
#include "berth/api/selectors.h"
#include "client/client_error.h"

namespace berth::controllers {

using Json = nlohmann::json;

// The document of an informer's object (a null document when it kept none).
const Json& DocOf(const Object& obj);
// The member `key` of `obj` when `obj` is an object and has it; a null document otherwise.
const Json& Member(const Json& obj, std::string_view key);
std::string StringAt(const Json& obj, std::string_view key);
int64_t IntAt(const Json& obj, std::string_view key, int64_t fallback = 0);

std::string NameOf(const Json& obj);
std::string NamespaceOf(const Json& obj);
std::string UidOf(const Json& obj);
// "namespace/name", the work queues' keys.
std::string KeyOf(const Json& obj);
std::pair<std::string, std::string> SplitKey(const std::string& key);
Labels LabelsOf(const Json& obj);
bool HasDeletionTimestamp(const Json& obj);
// metadata.creationTimestamp as Unix seconds (0 when absent).
UnixTime CreatedAt(const Json& obj);

// The ownerReference with controller: true, if any.
const Json* ControllerRefOf(const Json& obj);
const OwnerReference* ControllerOf(const ObjectMeta& meta);
Json NewControllerRef(std::string_view api_version, std::string_view kind, const Json& owner);

// spec.selector of an apps/v1 object (a LabelSelector).
Result<CompiledSelector> LabelSelectorOf(const Json& selector);
// spec.selector of a ReplicationController (a map of labels; empty matches nothing here,
// as the API server defaults it from the template's labels).
CompiledSelector SetSelectorOf(const Json& selector);

std::string NowTimestamp(UnixTime now);

// The API server's refusal of a create in a namespace being deleted: a Status whose
// details.causes hold one of reason NamespaceTerminating (as upstream's
// apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause); Berth's server and
// kube-apiserver both send it). Every later create there fails too, so controllers neither
// retry nor log it, as upstream's do.
bool IsNamespaceTerminating(const client::ClientError& e);

}  // namespace berth::controllers
