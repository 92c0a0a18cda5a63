// transport_benchmark's party in a process of its own:
//   transport_party ADDRESS CERT_DIR ROWS ROUNDS RESULT_FILE
// makes ROUNDS exchanges (the first a warm-up: connection and TLS handshake)
// as party "party-a" with the certificate in CERT_DIR ("insecure" for no
// TLS), then writes to RESULT_FILE the CPU seconds the process spent after
// the warm-up.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "common/base/allocator.h"
#include "common/base/mutex_checks.h"
#include "common/net/credentials.h"
#include "tests/benchmarks/transport_exchange.h"

int main(int argc, char** argv) {
  fedmf::base::ConfigureAllocator("transport_party");  // before any thread exists
  fedmf::base::ConfigureMutexChecks();
  if (argc != 6) {
    std::fprintf(stderr,
                 "usage: transport_party ADDRESS CERT_DIR|insecure ROWS ROUNDS RESULT_FILE\n");
    return 2;
  }
  const std::string cert_dir = argv[2];
  const fedmf::net::TlsConfig tls{
      .insecure = cert_dir == "insecure", .cert_dir = cert_dir, .name = "party-a"};
  auto channel = fedmf::net::MakeChannel(argv[1], tls);
  if (!channel.ok()) {
    std::fprintf(stderr, "transport_party: %s\n", std::string(channel.status().message()).c_str());
    return 1;
  }
  auto stub = fedmf::v1::Coordinator::NewStub(*channel);
  const fedmf::mf::Matrix release =
      fedmf::mf::Matrix::Constant(std::atoi(argv[3]), fedmf::bench::kCols, 0.25);
  const long rounds = std::atol(argv[4]);
  fedmf::bench::Exchange(*stub, release);
  const double before = fedmf::bench::ProcessCpuSeconds();
  for (long r = 1; r < rounds; ++r) fedmf::bench::Exchange(*stub, release);
  std::ofstream(argv[5]) << fedmf::bench::ProcessCpuSeconds() - before << "\n";
  return 0;
}
