// A gRPC server for tests of the transport (credentials_test.cc,
// tls_diagnosis_test.cc): `service` on an ephemeral 127.0.0.1 port.
#ifndef FEDMF_TESTS_UNIT_NET_LOOPBACK_SERVER_H_
#define FEDMF_TESTS_UNIT_NET_LOOPBACK_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

namespace fedmf::net::testing {

struct LoopbackServer {
  std::unique_ptr<grpc::Server> server;  // null if it did not start
  std::string address;                   // 127.0.0.1:PORT
};

inline LoopbackServer StartLoopbackServer(const std::shared_ptr<grpc::ServerCredentials>& creds,
                                          grpc::Service* service) {
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", creds, &port);
  builder.RegisterService(service);
  LoopbackServer out;
  out.server = builder.BuildAndStart();
  if (out.server == nullptr || port <= 0) return LoopbackServer{};
  out.address = "127.0.0.1:" + std::to_string(port);
  return out;
}

}  // namespace fedmf::net::testing

#endif  // FEDMF_TESTS_UNIT_NET_LOOPBACK_SERVER_H_
