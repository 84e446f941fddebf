// The plugin SDK's surface as one shared library, for the ABI check (scripts/check-sdk-abi.sh):
// every public header of include/berth/ (the check fails when one is missing) and one exported
// function per SDK class, so that the class is reachable from the library's interface and
// abidw records its layout (members, sizes, bases, virtual functions) and the layout of the
// types it holds. A new SDK class gets a line here.
#include "berth/api/boxed.h"
#include "berth/api/compact_vector.h"
#include "berth/api/flat_map.h"
#include "berth/api/objects.h"
#include "berth/api/quantity.h"
#include "berth/api/resource_claims.h"
#include "berth/api/resources.h"
#include "berth/api/result.h"
#include "berth/api/selectors.h"
#include "berth/config/plugin_args.h"
#include "berth/export.h"
#include "berth/extender/server.h"
#include "berth/extender/v1.h"
#include "berth/framework/clock.h"
#include "berth/framework/cluster.h"
#include "berth/framework/cluster_event.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/diagnosis.h"
#include "berth/framework/dra.h"
#include "berth/framework/extender.h"
#include "berth/framework/handle.h"
#include "berth/framework/node_info.h"
#include "berth/framework/plugin.h"
#include "berth/framework/plugin_library.h"
#include "berth/framework/pod_signer.h"
#include "berth/framework/pre_bind_preflight.h"
#include "berth/framework/registry.h"
#include "berth/framework/remedy.h"
#include "berth/framework/status.h"
#include "berth/framework/typed_args.h"
#include "berth/main.h"
#include "berth/testing/builders.h"
#include "berth/testing/fake_handle.h"

extern "C" {
BERTH_EXPORT void berth_abi_berth_OwnerReference(const ::berth::OwnerReference*) {}
BERTH_EXPORT void berth_abi_berth_ObjectMeta(const ::berth::ObjectMeta*) {}
BERTH_EXPORT void berth_abi_berth_LabelSelectorRequirement(
    const ::berth::LabelSelectorRequirement*) {}
BERTH_EXPORT void berth_abi_berth_LabelSelector(const ::berth::LabelSelector*) {}
BERTH_EXPORT void berth_abi_berth_NodeSelectorRequirement(const ::berth::NodeSelectorRequirement*) {
}
BERTH_EXPORT void berth_abi_berth_NodeSelectorTerm(const ::berth::NodeSelectorTerm*) {}
BERTH_EXPORT void berth_abi_berth_NodeSelector(const ::berth::NodeSelector*) {}
BERTH_EXPORT void berth_abi_berth_PreferredSchedulingTerm(const ::berth::PreferredSchedulingTerm*) {
}
BERTH_EXPORT void berth_abi_berth_NodeAffinity(const ::berth::NodeAffinity*) {}
BERTH_EXPORT void berth_abi_berth_PodAffinityTerm(const ::berth::PodAffinityTerm*) {}
BERTH_EXPORT void berth_abi_berth_WeightedPodAffinityTerm(const ::berth::WeightedPodAffinityTerm*) {
}
BERTH_EXPORT void berth_abi_berth_PodAffinity(const ::berth::PodAffinity*) {}
BERTH_EXPORT void berth_abi_berth_Affinity(const ::berth::Affinity*) {}
BERTH_EXPORT void berth_abi_berth_Taint(const ::berth::Taint*) {}
BERTH_EXPORT void berth_abi_berth_Toleration(const ::berth::Toleration*) {}
BERTH_EXPORT void berth_abi_berth_ContainerPort(const ::berth::ContainerPort*) {}
BERTH_EXPORT void berth_abi_berth_ResourceRequirements(const ::berth::ResourceRequirements*) {}
BERTH_EXPORT void berth_abi_berth_Container(const ::berth::Container*) {}
BERTH_EXPORT void berth_abi_berth_TopologySpreadConstraint(
    const ::berth::TopologySpreadConstraint*) {}
BERTH_EXPORT void berth_abi_berth_Volume(const ::berth::Volume*) {}
BERTH_EXPORT void berth_abi_berth_PodCondition(const ::berth::PodCondition*) {}
BERTH_EXPORT void berth_abi_berth_PodSpec(const ::berth::PodSpec*) {}
BERTH_EXPORT void berth_abi_berth_PodStatus(const ::berth::PodStatus*) {}
BERTH_EXPORT void berth_abi_berth_Pod(const ::berth::Pod*) {}
BERTH_EXPORT void berth_abi_berth_ContainerImage(const ::berth::ContainerImage*) {}
BERTH_EXPORT void berth_abi_berth_Node(const ::berth::Node*) {}
BERTH_EXPORT void berth_abi_berth_Namespace(const ::berth::Namespace*) {}
BERTH_EXPORT void berth_abi_berth_Service(const ::berth::Service*) {}
BERTH_EXPORT void berth_abi_berth_ReplicationController(const ::berth::ReplicationController*) {}
BERTH_EXPORT void berth_abi_berth_ReplicaSet(const ::berth::ReplicaSet*) {}
BERTH_EXPORT void berth_abi_berth_StatefulSet(const ::berth::StatefulSet*) {}
BERTH_EXPORT void berth_abi_berth_PersistentVolume(const ::berth::PersistentVolume*) {}
BERTH_EXPORT void berth_abi_berth_PersistentVolumeClaim(const ::berth::PersistentVolumeClaim*) {}
BERTH_EXPORT void berth_abi_berth_TopologySelectorRequirement(
    const ::berth::TopologySelectorRequirement*) {}
BERTH_EXPORT void berth_abi_berth_StorageClass(const ::berth::StorageClass*) {}
BERTH_EXPORT void berth_abi_berth_CSINode(const ::berth::CSINode*) {}
BERTH_EXPORT void berth_abi_berth_PodDisruptionBudget(const ::berth::PodDisruptionBudget*) {}
BERTH_EXPORT void berth_abi_berth_PriorityClass(const ::berth::PriorityClass*) {}
BERTH_EXPORT void berth_abi_berth_PodGroup(const ::berth::PodGroup*) {}
BERTH_EXPORT void berth_abi_berth_SchedulingPodGroup(const ::berth::SchedulingPodGroup*) {}
BERTH_EXPORT void berth_abi_berth_DeviceClass(const ::berth::DeviceClass*) {}
BERTH_EXPORT void berth_abi_berth_ResourceClaim(const ::berth::ResourceClaim*) {}
BERTH_EXPORT void berth_abi_berth_ResourceClaimTemplate(const ::berth::ResourceClaimTemplate*) {}
BERTH_EXPORT void berth_abi_berth_ResourceSlice(const ::berth::ResourceSlice*) {}
BERTH_EXPORT void berth_abi_berth_PodResourceClaim(const ::berth::PodResourceClaim*) {}
BERTH_EXPORT void berth_abi_berth_Quantity(const ::berth::Quantity*) {}
BERTH_EXPORT void berth_abi_berth_Resource(const ::berth::Resource*) {}
BERTH_EXPORT void berth_abi_berth_PodRequests(const ::berth::PodRequests*) {}
BERTH_EXPORT void berth_abi_berth_Error(const ::berth::Error*) {}
BERTH_EXPORT void berth_abi_berth_CompiledSelector(const ::berth::CompiledSelector*) {}
BERTH_EXPORT void berth_abi_berth_config_ResourceSpec(const ::berth::config::ResourceSpec*) {}
BERTH_EXPORT void berth_abi_berth_config_UtilizationShapePoint(
    const ::berth::config::UtilizationShapePoint*) {}
BERTH_EXPORT void berth_abi_berth_config_NodeResourcesFitArgs(
    const ::berth::config::NodeResourcesFitArgs*) {}
BERTH_EXPORT void berth_abi_berth_config_NodeResourcesBalancedAllocationArgs(
    const ::berth::config::NodeResourcesBalancedAllocationArgs*) {}
BERTH_EXPORT void berth_abi_berth_config_NodeAffinityArgs(
    const ::berth::config::NodeAffinityArgs*) {}
BERTH_EXPORT void berth_abi_berth_config_PodTopologySpreadArgs(
    const ::berth::config::PodTopologySpreadArgs*) {}
BERTH_EXPORT void berth_abi_berth_config_InterPodAffinityArgs(
    const ::berth::config::InterPodAffinityArgs*) {}
BERTH_EXPORT void berth_abi_berth_config_VolumeBindingArgs(
    const ::berth::config::VolumeBindingArgs*) {}
BERTH_EXPORT void berth_abi_berth_config_DefaultPreemptionArgs(
    const ::berth::config::DefaultPreemptionArgs*) {}
BERTH_EXPORT void berth_abi_berth_config_DynamicResourcesArgs(
    const ::berth::config::DynamicResourcesArgs*) {}
BERTH_EXPORT void berth_abi_berth_extender_ServerOptions(const ::berth::extender::ServerOptions*) {}
BERTH_EXPORT void berth_abi_berth_extender_ExtenderServer(
    const ::berth::extender::ExtenderServer*) {}
BERTH_EXPORT void berth_abi_berth_extender_v1_ExtenderArgs(
    const ::berth::extender::v1::ExtenderArgs*) {}
BERTH_EXPORT void berth_abi_berth_extender_v1_ExtenderFilterResult(
    const ::berth::extender::v1::ExtenderFilterResult*) {}
BERTH_EXPORT void berth_abi_berth_extender_v1_HostPriority(
    const ::berth::extender::v1::HostPriority*) {}
BERTH_EXPORT void berth_abi_berth_extender_v1_ExtenderBindingArgs(
    const ::berth::extender::v1::ExtenderBindingArgs*) {}
BERTH_EXPORT void berth_abi_berth_extender_v1_ExtenderBindingResult(
    const ::berth::extender::v1::ExtenderBindingResult*) {}
BERTH_EXPORT void berth_abi_berth_extender_v1_MetaPod(const ::berth::extender::v1::MetaPod*) {}
BERTH_EXPORT void berth_abi_berth_extender_v1_MetaVictims(
    const ::berth::extender::v1::MetaVictims*) {}
BERTH_EXPORT void berth_abi_berth_extender_v1_Victims(const ::berth::extender::v1::Victims*) {}
BERTH_EXPORT void berth_abi_berth_extender_v1_ExtenderPreemptionArgs(
    const ::berth::extender::v1::ExtenderPreemptionArgs*) {}
BERTH_EXPORT void berth_abi_berth_extender_v1_ExtenderPreemptionResult(
    const ::berth::extender::v1::ExtenderPreemptionResult*) {}
BERTH_EXPORT void berth_abi_berth_Clock(const ::berth::Clock*) {}
BERTH_EXPORT void berth_abi_berth_RealClock(const ::berth::RealClock*) {}
BERTH_EXPORT void berth_abi_berth_FakeClock(const ::berth::FakeClock*) {}
BERTH_EXPORT void berth_abi_berth_Random(const ::berth::Random*) {}
BERTH_EXPORT void berth_abi_berth_ClusterListers(const ::berth::ClusterListers*) {}
BERTH_EXPORT void berth_abi_berth_ClusterWriter(const ::berth::ClusterWriter*) {}
BERTH_EXPORT void berth_abi_berth_ClusterEventHandler(const ::berth::ClusterEventHandler*) {}
BERTH_EXPORT void berth_abi_berth_ClusterEvent(const ::berth::ClusterEvent*) {}
BERTH_EXPORT void berth_abi_berth_ClusterEventWithHint(const ::berth::ClusterEventWithHint*) {}
BERTH_EXPORT void berth_abi_berth_EnqueueExtensions(const ::berth::EnqueueExtensions*) {}
BERTH_EXPORT void berth_abi_berth_StateData(const ::berth::StateData*) {}
BERTH_EXPORT void berth_abi_berth_CycleState(const ::berth::CycleState*) {}
BERTH_EXPORT void berth_abi_berth_Victims(const ::berth::Victims*) {}
BERTH_EXPORT void berth_abi_berth_ExtenderFilterResult(const ::berth::ExtenderFilterResult*) {}
BERTH_EXPORT void berth_abi_berth_HostPriority(const ::berth::HostPriority*) {}
BERTH_EXPORT void berth_abi_berth_Extender(const ::berth::Extender*) {}
BERTH_EXPORT void berth_abi_berth_WaitingPod(const ::berth::WaitingPod*) {}
BERTH_EXPORT void berth_abi_berth_PodNominator(const ::berth::PodNominator*) {}
BERTH_EXPORT void berth_abi_berth_Parallelizer(const ::berth::Parallelizer*) {}
BERTH_EXPORT void berth_abi_berth_Handle(const ::berth::Handle*) {}
BERTH_EXPORT void berth_abi_berth_AffinityTerm(const ::berth::AffinityTerm*) {}
BERTH_EXPORT void berth_abi_berth_WeightedAffinityTerm(const ::berth::WeightedAffinityTerm*) {}
BERTH_EXPORT void berth_abi_berth_PodAffinityTerms(const ::berth::PodAffinityTerms*) {}
BERTH_EXPORT void berth_abi_berth_PodInfo(const ::berth::PodInfo*) {}
BERTH_EXPORT void berth_abi_berth_HostPortInfo(const ::berth::HostPortInfo*) {}
BERTH_EXPORT void berth_abi_berth_ImageStateSummary(const ::berth::ImageStateSummary*) {}
BERTH_EXPORT void berth_abi_berth_NodeInfo(const ::berth::NodeInfo*) {}
BERTH_EXPORT void berth_abi_berth_Snapshot(const ::berth::Snapshot*) {}
BERTH_EXPORT void berth_abi_berth_Plugin(const ::berth::Plugin*) {}
BERTH_EXPORT void berth_abi_berth_QueuedPodInfo(const ::berth::QueuedPodInfo*) {}
BERTH_EXPORT void berth_abi_berth_PreEnqueuePlugin(const ::berth::PreEnqueuePlugin*) {}
BERTH_EXPORT void berth_abi_berth_QueueSortPlugin(const ::berth::QueueSortPlugin*) {}
BERTH_EXPORT void berth_abi_berth_PreFilterResult(const ::berth::PreFilterResult*) {}
BERTH_EXPORT void berth_abi_berth_PreFilterExtensions(const ::berth::PreFilterExtensions*) {}
BERTH_EXPORT void berth_abi_berth_PreFilterPlugin(const ::berth::PreFilterPlugin*) {}
BERTH_EXPORT void berth_abi_berth_FilterPlugin(const ::berth::FilterPlugin*) {}
BERTH_EXPORT void berth_abi_berth_NominatingInfo(const ::berth::NominatingInfo*) {}
BERTH_EXPORT void berth_abi_berth_PostFilterResult(const ::berth::PostFilterResult*) {}
BERTH_EXPORT void berth_abi_berth_PostFilterPlugin(const ::berth::PostFilterPlugin*) {}
BERTH_EXPORT void berth_abi_berth_PreScorePlugin(const ::berth::PreScorePlugin*) {}
BERTH_EXPORT void berth_abi_berth_NodeScore(const ::berth::NodeScore*) {}
BERTH_EXPORT void berth_abi_berth_ScorePlugin(const ::berth::ScorePlugin*) {}
BERTH_EXPORT void berth_abi_berth_ScoresWithoutPreScore(const ::berth::ScoresWithoutPreScore*) {}
BERTH_EXPORT void berth_abi_berth_ReservePlugin(const ::berth::ReservePlugin*) {}
BERTH_EXPORT void berth_abi_berth_PermitDecision(const ::berth::PermitDecision*) {}
BERTH_EXPORT void berth_abi_berth_PermitPlugin(const ::berth::PermitPlugin*) {}
BERTH_EXPORT void berth_abi_berth_PreBindPlugin(const ::berth::PreBindPlugin*) {}
BERTH_EXPORT void berth_abi_berth_BindPlugin(const ::berth::BindPlugin*) {}
BERTH_EXPORT void berth_abi_berth_PostBindPlugin(const ::berth::PostBindPlugin*) {}
BERTH_EXPORT void berth_abi_berth_PluginArgs(const ::berth::PluginArgs*) {}
BERTH_EXPORT void berth_abi_berth_PluginRegistration(const ::berth::PluginRegistration*) {}
BERTH_EXPORT void berth_abi_berth_Registry(const ::berth::Registry*) {}
BERTH_EXPORT void berth_abi_berth_FilterRemedy(const ::berth::FilterRemedy*) {}
BERTH_EXPORT void berth_abi_berth_FilterRemedies(const ::berth::FilterRemedies*) {}
BERTH_EXPORT void berth_abi_berth_ClusterRemedy(const ::berth::ClusterRemedy*) {}
BERTH_EXPORT void berth_abi_berth_RejectedNode(const ::berth::RejectedNode*) {}
BERTH_EXPORT void berth_abi_berth_RemedyProposal(const ::berth::RemedyProposal*) {}
BERTH_EXPORT void berth_abi_berth_FilterRemedySearch(const ::berth::FilterRemedySearch*) {}
BERTH_EXPORT void berth_abi_berth_PodSigner(const ::berth::PodSigner*) {}
BERTH_EXPORT void berth_abi_berth_DraListers(const ::berth::DraListers*) {}
BERTH_EXPORT void berth_abi_berth_DraWriter(const ::berth::DraWriter*) {}
BERTH_EXPORT void berth_abi_berth_DraClusterEvent(const ::berth::DraClusterEvent*) {}
BERTH_EXPORT void berth_abi_berth_DraClusterEventWithHint(const ::berth::DraClusterEventWithHint*) {
}
BERTH_EXPORT void berth_abi_berth_DraEnqueueExtensions(const ::berth::DraEnqueueExtensions*) {}
BERTH_EXPORT void berth_abi_berth_DraEventHandler(const ::berth::DraEventHandler*) {}
BERTH_EXPORT void berth_abi_berth_testing_PodBuilder(const ::berth::testing::PodBuilder*) {}
BERTH_EXPORT void berth_abi_berth_testing_NodeBuilder(const ::berth::testing::NodeBuilder*) {}
BERTH_EXPORT void berth_abi_berth_testing_InlineParallelizer(
    const ::berth::testing::InlineParallelizer*) {}
BERTH_EXPORT void berth_abi_berth_testing_FakeNominator(const ::berth::testing::FakeNominator*) {}
BERTH_EXPORT void berth_abi_berth_testing_FakeCluster(const ::berth::testing::FakeCluster*) {}
BERTH_EXPORT void berth_abi_berth_testing_FakeHandle(const ::berth::testing::FakeHandle*) {}
BERTH_EXPORT void berth_abi_BerthPluginBuildInfo(const ::BerthPluginBuildInfo*) {}
}  // extern "C"
