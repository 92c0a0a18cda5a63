#include "server/call_governor.h"

#include <atomic>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/net/credentials.h"
#include "grpcpp/server.h"

namespace fedmf::server {
namespace {

std::atomic<CallGovernor*> g_installed{nullptr};

// Forwards gRPC's process-wide hooks to the installed governor.
class Hooks final : public grpc::Server::GlobalCallbacks {
 public:
  void PreSynchronousRequest(grpc::ServerContext* ctx) override {
    if (CallGovernor* g = g_installed.load()) g->Enter(ctx);
  }
  void PostSynchronousRequest(grpc::ServerContext* ctx) override {
    if (CallGovernor* g = g_installed.load()) g->Leave(ctx);
  }
};

// The config keys of a pool's two quotas, for the refusal text.
std::pair<const char*, const char*> KeysOf(CallerClass c) {
  switch (c) {
    case CallerClass::kOperators: return {"calls.operators", "calls.operators_per_peer"};
    case CallerClass::kParties: return {"calls.parties", "calls.parties_per_peer"};
    case CallerClass::kDeviceHosts: return {"calls.device_hosts", "calls.device_hosts_per_peer"};
    case CallerClass::kOthers: return {"calls.others", "calls.others_per_peer"};
    case CallerClass::kInsecure: return {"calls.*", "calls.*_per_peer"};
  }
  return {"calls", "calls"};
}

// How often the reaper looks for calls past their deadlines.
constexpr absl::Duration kReapEvery = absl::Milliseconds(250);
// At most one "cut off" log line per this long (the rest are counted).
constexpr absl::Duration kCutLogEvery = absl::Seconds(10);

}  // namespace

const char* CallerClassName(CallerClass c) {
  switch (c) {
    case CallerClass::kOperators: return "operators";
    case CallerClass::kParties: return "parties";
    case CallerClass::kDeviceHosts: return "device_hosts";
    case CallerClass::kOthers: return "others";
    case CallerClass::kInsecure: return "insecure";
  }
  return "?";
}

CallGovernor::CallGovernor(CallLimits limits, bool insecure)
    : limits_(limits), insecure_(insecure) {
  reaper_ = std::thread([this] { Reap(); });
}

CallGovernor::~CallGovernor() {
  if (g_installed.load() == this) g_installed.store(nullptr);
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  wake_.Signal();
  if (reaper_.joinable()) reaper_.join();
}

void CallGovernor::Install(CallGovernor* governor) {
  static std::once_flag once;
  std::call_once(once, [] {
    // gRPC keeps the pointer for the process's life; so do we.
    static Hooks* const hooks = new Hooks();
    grpc::Server::SetGlobalCallbacks(hooks);
  });
  g_installed.store(governor);
}

const CallPool& CallGovernor::PoolOf(CallerClass c) const {
  switch (c) {
    case CallerClass::kOperators: return limits_.operators;
    case CallerClass::kParties: return limits_.parties;
    case CallerClass::kDeviceHosts: return limits_.device_hosts;
    default: return limits_.others;
  }
}

void CallGovernor::Enter(grpc::ServerContext* ctx) {
  Call call;
  call.ctx = ctx;
  call.started = call.last_progress = absl::Now();
  int32_t pool_cap = 0, peer_cap = 0;
  if (insecure_) {
    call.pool = CallerClass::kInsecure;
    call.who = ctx->peer();
    pool_cap = limits_.total_calls();
  } else {
    auto id = net::PeerIdentityOf(*ctx);
    if (id.ok()) {
      switch (id->role) {
        case pki::Role::kOperator: call.pool = CallerClass::kOperators; break;
        case pki::Role::kParty: call.pool = CallerClass::kParties; break;
        case pki::Role::kDevice: call.pool = CallerClass::kDeviceHosts; break;
        default: call.pool = CallerClass::kOthers; break;
      }
      call.peer = absl::StrCat(pki::RoleToString(id->role), ":", id->name);
      call.who = absl::StrCat("'", id->name, "'");
    } else {
      call.pool = CallerClass::kOthers;
      call.peer = "unauthenticated";
      call.who = "an unauthenticated peer";
    }
    pool_cap = PoolOf(call.pool).calls;
    peer_cap = PoolOf(call.pool).calls_per_peer;
  }
  absl::MutexLock lock(&mu_);
  int32_t& pool_used = pool_in_use_[call.pool];
  const auto [pool_key, peer_key] = KeysOf(call.pool);
  if (pool_used >= pool_cap) {
    call.verdict = absl::ResourceExhaustedError(
        absl::StrCat("the server is serving ", pool_used, " calls of ", CallerClassName(call.pool),
                     " (", pool_key, " = ", pool_cap, "); retry later"));
  } else if (!call.peer.empty() && peer_in_use_[call.peer] >= peer_cap) {
    call.verdict = absl::ResourceExhaustedError(
        absl::StrCat("certificate ", call.who, " already has ", peer_in_use_[call.peer],
                     " calls open (", peer_key, " = ", peer_cap, "); retry later"));
  }
  if (call.verdict.ok()) {
    ++pool_used;
    if (!call.peer.empty()) ++peer_in_use_[call.peer];
    ++counters_.admitted;
  } else {
    ++counters_.refused;
  }
  calls_[ctx] = std::move(call);
}

void CallGovernor::Leave(grpc::ServerContext* ctx) {
  absl::MutexLock lock(&mu_);
  auto it = calls_.find(ctx);
  if (it == calls_.end()) return;
  const Call& call = it->second;
  if (call.verdict.ok()) {
    --pool_in_use_[call.pool];
    if (!call.peer.empty()) {
      auto p = peer_in_use_.find(call.peer);
      if (p != peer_in_use_.end() && --p->second <= 0) peer_in_use_.erase(p);
    }
  }
  calls_.erase(it);
}

absl::Status CallGovernor::Verdict(const grpc::ServerContextBase& ctx) const {
  absl::MutexLock lock(&mu_);
  auto it = calls_.find(&ctx);
  return it == calls_.end() ? absl::OkStatus() : it->second.verdict;
}

void CallGovernor::Progress(const grpc::ServerContextBase& ctx) {
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&mu_);
  if (auto it = calls_.find(&ctx); it != calls_.end()) it->second.last_progress = now;
}

void CallGovernor::Working(const grpc::ServerContextBase& ctx, bool working) {
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&mu_);
  if (auto it = calls_.find(&ctx); it != calls_.end()) {
    it->second.working += working ? 1 : -1;
    it->second.last_progress = now;
  }
}

CallGovernor::Counters CallGovernor::counters() const {
  absl::MutexLock lock(&mu_);
  Counters out = counters_;
  for (const auto& [pool, used] : pool_in_use_) out.in_use[CallerClassName(pool)] = used;
  return out;
}

void CallGovernor::Reap() {
  absl::MutexLock lock(&mu_);
  while (!stop_) {
    wake_.WaitWithTimeout(&mu_, kReapEvery);
    if (stop_) break;
    const absl::Time now = absl::Now();
    for (auto& [key, call] : calls_) {
      if (call.cancelled) continue;
      const bool idle = call.working == 0 && now - call.last_progress > limits_.idle;
      const bool too_long = now - call.started > limits_.max;
      if (!idle && !too_long) continue;
      // Logged before the cancel, so that the line exists once the peer
      // sees it.
      if (now - last_cut_log_ >= kCutLogEvery) {
        spdlog::warn("cut off a call from {} ({}{})", call.who,
                     idle ? absl::StrCat("no progress for ", absl::FormatDuration(limits_.idle))
                          : absl::StrCat("open longer than ", absl::FormatDuration(limits_.max)),
                     cuts_unlogged_ > 0
                         ? absl::StrCat("; ", cuts_unlogged_, " more cut off since the last line")
                         : "");
        last_cut_log_ = now;
        cuts_unlogged_ = 0;
      } else {
        ++cuts_unlogged_;
      }
      // The context is alive: Leave, which erases it, waits for this lock.
      call.ctx->TryCancel();
      call.cancelled = true;
      ++counters_.cut_off;
    }
  }
}

absl::Status CallAdmitted(const grpc::ServerContextBase& ctx) {
  CallGovernor* g = g_installed.load();
  return g == nullptr ? absl::OkStatus() : g->Verdict(ctx);
}

void CallProgressed(const grpc::ServerContextBase& ctx) {
  if (CallGovernor* g = g_installed.load()) g->Progress(ctx);
}

ServerWorkForCall::ServerWorkForCall(const grpc::ServerContextBase& ctx) : ctx_(ctx) {
  if (CallGovernor* g = g_installed.load()) g->Working(ctx_, true);
}

ServerWorkForCall::~ServerWorkForCall() {
  if (CallGovernor* g = g_installed.load()) g->Working(ctx_, false);
}

}  // namespace fedmf::server
