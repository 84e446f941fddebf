// ControllerRevisions of DaemonSets and StatefulSets, as upstream's pkg/controller/history: one
// immutable snapshot of each pod template a set has had, named "<set>-<hash>", labelled with
// controller-revision-hash and owned by the set. `kubectl rollout history` lists them; the
// StatefulSet controller recreates pods below its partition from the current one.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "client/rest_client.h"
#include "controllers/object_util.h"
#include "controllers/shared_informer.h"

namespace berth::controllers {

inline constexpr std::string_view kControllerRevisionHashLabel = "controller-revision-hash";

// The data of a revision: a strategic-merge patch that replaces the template (as upstream's
// getPatch), so `kubectl rollout undo` can apply it.
Json RevisionData(const Json& pod_template);
// The template a revision's data holds (null when it holds none).
Json TemplateOfRevision(const Json& revision);

struct RevisionState {
  std::string update_hash;  // the current template's revision
  Json update_revision;
  std::vector<Json> owned;  // every revision of the set, by revision number
  // The namespace is being deleted and refused the current template's revision: it would refuse
  // the set's pods too, so the caller has nothing to make (update_revision is null).
  bool namespace_terminating = false;
};

// Finds the revision of `owner`'s current template or creates it (numbered one above the
// highest), then deletes the oldest revisions beyond spec.revisionHistoryLimit (default 10)
// whose hash is not in `live_hashes`.
Result<RevisionState> SyncRevisions(client::RestClient* rest, SharedInformer* revisions,
                                    const Json& owner, std::string_view owner_kind,
                                    const std::set<std::string>& live_hashes);

}  // namespace berth::controllers
