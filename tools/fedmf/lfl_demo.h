// `fedmf demo --setting lfl`: LFL-SGDMF with real processes on loopback — a
// throw-away CA, fedmf-server and `hosts` fedmf-device hosts that split the
// users (one virtual device each) — with per-iteration progress, then a
// table of the test MSE after Stage 1 alone and after Stage 3, and epsilon.
// Everything it started is stopped at the end. The same job can be run in one
// process with `fedmf train --setting lfl`.
#ifndef FEDMF_TOOLS_FEDMF_LFL_DEMO_H_
#define FEDMF_TOOLS_FEDMF_LFL_DEMO_H_

#include "absl/status/statusor.h"
#include "common/data/ratings.h"
#include "common/lfl/lfl_simulator.h"
#include "common/lfl/wire/lfl_job_codec.h"
#include "tools/fedmf/job_flags.h"

namespace fedmf::cli {

struct LflDemoArgs {
  int hosts = 3;  // device hosts; users are split evenly among them
  bool keep = false;
  bool insecure = false;
  double timeout_seconds = 1800;
  double phase_deadline_seconds = 60;
  bool rounds_given = false;  // --T given (else the demo's T, kLflDemoRounds)
  int threads_per_host = 1;
  // --devices: the first N users of the data are the devices (0: all).
  int64_t devices = 0;
  // Else: every user of --data, or kLflDemoDevices of the embedded data.
  bool devices_given = false;
};

// The demo's T unless --T is given (the paper's). Without --data and
// --devices, the first kLflDemoDevices users of the embedded data are the
// devices: a job that shows every phase of the protocol in about a minute on
// 2 cores (all 600: 15-30 min); the paper-size command is printed beside.
inline constexpr int kLflDemoRounds = 10;
inline constexpr int64_t kLflDemoDevices = 100;

// The LFL job the flags describe, over `dataset`, with devices split evenly
// over LocalCluster::LflHostName(0..hosts-1). dropout_* stay with the hosts.
// `devices` > 0: only the first `devices` users of the data are devices.
absl::StatusOr<net::LflJobConfig> LflJobFromFlags(const JobFlags& flags,
                                                  const data::Dataset& dataset, int hosts,
                                                  double phase_deadline_seconds,
                                                  int64_t devices = 0);

int RunLflDemo(const JobFlags& job, const LflDemoArgs& args);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_LFL_DEMO_H_
