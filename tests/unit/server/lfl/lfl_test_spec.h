// The small LFL job the server-side LFL tests share: two hosts "a" and "b"
// granted devices 0-2 and 3-5, 7 items, p = 3, seeded.
#ifndef FEDMF_TESTS_UNIT_SERVER_LFL_LFL_TEST_SPEC_H_
#define FEDMF_TESTS_UNIT_SERVER_LFL_LFL_TEST_SPEC_H_

#include <cstdint>
#include <string>

#include "common/lfl/wire/lfl_job_codec.h"

namespace fedmf::server::testing {

inline v1::JobSpec TwoHostLflSpec(const std::string& job_id, int32_t iterations, uint64_t seed,
                                  int join_deadline_seconds = 30) {
  net::LflJobConfig j;
  j.job_id = job_id;
  j.config.iterations = iterations;
  j.config.dim = 3;
  j.config.omega = 0.3;
  j.config.epsilon = 1;
  j.config.delta = 1e-5;
  j.config.seed = seed;
  j.config.device.dim = 3;
  j.config.device.rating_max = 5;
  j.config.test_fraction = 0.1;
  j.num_items = 7;
  j.phase_deadline_seconds = 10;
  j.join_deadline_seconds = join_deadline_seconds;
  for (int h = 0; h < 2; ++h) {
    v1::DeviceGrant g;
    g.set_host(h == 0 ? "a" : "b");
    g.set_first_device(static_cast<uint64_t>(h) * 3);
    g.set_count(3);
    j.grants.push_back(g);
  }
  return net::SpecFromLflJob(j);
}

}  // namespace fedmf::server::testing

#endif  // FEDMF_TESTS_UNIT_SERVER_LFL_LFL_TEST_SPEC_H_
