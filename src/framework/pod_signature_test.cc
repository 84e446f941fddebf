#include "framework/pod_signature.h"

#include <gtest/gtest.h>

#include <memory>

#include "berth/testing/builders.h"

namespace berth::signature {
namespace {

using testing::MakePod;

TEST(PodSignatureTest, TolerationsInAnyOrder) {
  Toleration a{"a", "Exists", "", "NoSchedule", std::nullopt};
  Toleration b{"b", "Equal", "x", "NoExecute", 30};
  EXPECT_TRUE(SameTolerations(*MakePod().Toleration(a).Toleration(b).Obj(),
                              *MakePod().Toleration(b).Toleration(a).Obj()));
  Toleration b2 = b;
  b2.toleration_seconds = 60;
  EXPECT_FALSE(SameTolerations(*MakePod().Toleration(a).Toleration(b).Obj(),
                               *MakePod().Toleration(a).Toleration(b2).Obj()));
  EXPECT_FALSE(SameTolerations(*MakePod().Toleration(a).Obj(), *MakePod().Obj()));
}

TEST(PodSignatureTest, HostPortsAsASet) {
  EXPECT_TRUE(SameHostPorts(*MakePod().HostPort(80).HostPort(443).Obj(),
                            *MakePod().HostPort(443).HostPort(80).HostPort(80).Obj()));
  EXPECT_FALSE(SameHostPorts(*MakePod().HostPort(80).Obj(), *MakePod().HostPort(8080).Obj()));
  // Container ports without a host port do not count.
  Container c;
  c.name = "c";
  c.ports.push_back(ContainerPort{"http", 80, 0, "TCP", ""});
  EXPECT_TRUE(SameHostPorts(*MakePod().Container(c).Obj(), *MakePod().Obj()));
}

TEST(PodSignatureTest, VolumeSourcesWhateverTheirNames) {
  Volume named_a, named_b;
  named_a.name = "a";
  named_b.name = "b";
  named_a.persistent_volume_claim = named_b.persistent_volume_claim = Volume::Pvc{"data", false};
  Volume other = named_a;
  other.persistent_volume_claim->claim_name = "data-1";
  Volume unmodeled;  // a configMap, secret, emptyDir...: no source the scheduler models
  unmodeled.name = "config";
  EXPECT_TRUE(SameVolumeSources(*MakePod().Volume(named_a).Obj(),
                                *MakePod().Volume(named_b).Volume(unmodeled).Obj()));
  EXPECT_FALSE(SameVolumeSources(*MakePod().Volume(named_a).Obj(), *MakePod().Volume(other).Obj()));
  EXPECT_FALSE(SameVolumeSources(*MakePod().Volume(named_a).Volume(named_a).Obj(),
                                 *MakePod().Volume(named_a).Volume(other).Obj()));
}

}  // namespace
}  // namespace berth::signature
