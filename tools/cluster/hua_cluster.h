// The Hua S3 part of LocalCluster (fedmf-aggregator and fedmf-device --setting hua-s3
// hosts on loopback); the LocalCluster methods it defines are declared in
// local_cluster.h.
#ifndef FEDMF_TOOLS_CLUSTER_HUA_CLUSTER_H_
#define FEDMF_TOOLS_CLUSTER_HUA_CLUSTER_H_

#include <string>

#include "absl/status/status.h"

namespace fedmf::cluster {

// "aggregator" (role aggregator) and LocalCluster::HuaHostName(k) (role
// device) for k < hosts; nothing when hosts == 0.
absl::Status IssueHuaCertificates(const std::string& cert_dir, int hosts);

}  // namespace fedmf::cluster

#endif  // FEDMF_TOOLS_CLUSTER_HUA_CLUSTER_H_
