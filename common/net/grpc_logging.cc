#include "common/net/grpc_logging.h"

#include <grpc/support/log.h>

#include <atomic>
#include <cstring>

#include "common/log/log.h"

namespace fedmf::net {
namespace {

std::atomic<bool> quiet_errors{false};

void ToSpdlog(gpr_log_func_args* args) {
  // The file's name without its directories, as gRPC's own format has it.
  const char* file = args->file != nullptr ? args->file : "?";
  if (const char* slash = std::strrchr(file, '/')) file = slash + 1;
  const spdlog::level::level_enum level =
      args->severity == GPR_LOG_SEVERITY_ERROR && !quiet_errors.load(std::memory_order_relaxed)
          ? spdlog::level::warn
          : spdlog::level::debug;
  spdlog::log(level, "grpc: {}:{}: {}", file, args->line,
              args->message != nullptr ? args->message : "");
}

}  // namespace

void RouteGrpcLogsToSpdlog(bool quiet) {
  quiet_errors.store(quiet, std::memory_order_relaxed);
  gpr_set_log_function(ToSpdlog);
}

}  // namespace fedmf::net
