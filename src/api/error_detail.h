// Facts about an Error that berth::Error has no room for (its layout is part of the frozen SDK):
// typed details attached where the error is made and read where it is handled, so no caller
// has to recognise an error by its text.
//
// An Error travels by value through Result<T>, so the details live in a small process-wide table
// keyed by the error itself (its code and its whole message) and holding the most recent
// errors. An error rebuilt with another message carries none unless the rebuilder copies them
// (CopyDetails); a reader treats a missing detail as the fact being unknown.
//
// Threads: any thread.
#pragma once

#include <memory>
#include <typeindex>

#include "berth/api/result.h"

namespace berth::error_detail {

namespace internal {
void Put(const Error& e, std::type_index type, std::shared_ptr<const void> detail);
std::shared_ptr<const void> Get(const Error& e, std::type_index type);
}  // namespace internal

// Returns `e` with `detail` attached (one detail per type; a later one replaces it).
template <class T>
Error Attach(Error e, T detail) {
  internal::Put(e, typeid(T), std::make_shared<const T>(std::move(detail)));
  return e;
}

// The detail of type T attached to an error equal to `e`, or null.
template <class T>
std::shared_ptr<const T> Find(const Error& e) {
  return std::static_pointer_cast<const T>(internal::Get(e, typeid(T)));
}

// Gives `to` (a rewording of `from`) the details of `from`.
void CopyDetails(const Error& from, const Error& to);

}  // namespace berth::error_detail
