// DeleteOptions.propagationPolicy (and the older orphanDependents) and the garbage
// collector's finalizers a deletion sets from it, as kube-apiserver's
// deletionFinalizersForGarbageCollection.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "apiserver/api_error.h"
#include "berth/api/result.h"

namespace berth::apiserver {

// Both propagationPolicy and orphanDependents given (and disagreeing): kube-apiserver's 422.
ApiError BothPropagationsError();

// Reads propagationPolicy and orphanDependents of `opts` into `out` (Orphan, Background or
// Foreground); an unknown policy, or both fields, is Invalid.
VoidResult ReadPropagation(const nlohmann::json& opts, std::optional<std::string>& out);

// `finalizers` as a deletion with propagation `policy` leaves them: Orphan holds the object
// with `orphan`, Foreground with `foregroundDeletion`, Background with neither. An object
// already marked for deletion gets no new finalizer (only the Background removal applies).
nlohmann::json WithGcFinalizers(const nlohmann::json& finalizers, const std::string& policy,
                                bool marked);

}  // namespace berth::apiserver
