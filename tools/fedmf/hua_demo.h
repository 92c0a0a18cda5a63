// `fedmf demo --setting hua-s3`: Hua et al. S3 with real processes on
// loopback — fedmf-server (the untrusted recommender), fedmf-aggregator (the
// semi-honest third party) and fedmf-device --setting hua-s3 hosts running the users —
// progress per iteration, then the mean |prediction error| increase over
// non-private MF and epsilon. Everything is stopped at the end.
#ifndef FEDMF_TOOLS_FEDMF_HUA_DEMO_H_
#define FEDMF_TOOLS_FEDMF_HUA_DEMO_H_

#include "tools/fedmf/job_flags.h"

namespace fedmf::cli {

struct HuaDemoArgs {
  int hosts = 3;  // device hosts; users are split evenly among them
  bool keep = false;
  bool insecure = false;
  double timeout_seconds = 1800;
  double round_deadline_seconds = 30;
};

int RunHuaDemo(const JobFlags& job, const HuaDemoArgs& args);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_HUA_DEMO_H_
