// The LFL part of LocalCluster (fedmf-device hosts on loopback); the
// LocalCluster methods it defines are declared in local_cluster.h.
#ifndef FEDMF_TOOLS_CLUSTER_LFL_CLUSTER_H_
#define FEDMF_TOOLS_CLUSTER_LFL_CLUSTER_H_

#include <string>

#include "absl/status/status.h"

namespace fedmf::cluster {

// LocalCluster::LflHostName(k) (role device) for k < hosts.
absl::Status IssueLflCertificates(const std::string& cert_dir, int hosts);

}  // namespace fedmf::cluster

#endif  // FEDMF_TOOLS_CLUSTER_LFL_CLUSTER_H_
