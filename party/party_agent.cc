#include "party/party_agent.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <openssl/sha.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <thread>
#include <tuple>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/base/status_macros.h"
#include "common/cli/command_line.h"
#include "common/data/loaders.h"
#include "common/data/party_files.h"
#include "common/fmf/coupling_job.h"
#include "common/fmf/saved_model.h"
#include "common/fmf/simulator.h"
#include "common/fmf/wire/job_codec.h"
#include "common/fmf/wire/matrix_codec.h"
#include "common/fmf/wire/model_codec.h"
#include "common/log/log.h"
#include "common/net/client_context.h"
#include "common/net/credentials.h"
#include "common/net/reconnect.h"
#include "common/net/stop_canceller.h"
#include "common/net/tls_diagnosis.h"
#include "common/random/csprng.h"
#include "party/busy_heartbeat.h"
#include "party/psi_client.h"
#include "party/state_id.h"

namespace fedmf::party {
namespace {

// Marks a refusal whose text may go to the server as it is: it says which
// rule of the party's policy or which job field refused the job, from the
// job and the policy alone (PublicRefusal). Every other failure reaches the
// server as RefusalText's fixed sentence, its detail only in the party's log
// (issue #54: texts built from the data carry ids, counts and paths).
constexpr char kPublicRefusal[] = "type.fedmf.dev/party.public_refusal";

absl::Status PublicRefusal(absl::Status s) {
  s.SetPayload(kPublicRefusal, absl::Cord("1"));
  return s;
}

bool IsPublicRefusal(const absl::Status& s) { return s.GetPayload(kPublicRefusal).has_value(); }

// What the server is told about a failed job: a public refusal's own text, or
// the rule and the fix for a failure on the party's data.
std::string RefusalText(const absl::Status& s) {
  if (IsPublicRefusal(s)) return std::string(s.message());
  return "the party cannot run this job on its data (its rows, ids or files do not fit the job); "
         "the party's operator finds the reason in the party's log";
}

std::string SpecDigest(const v1::JobSpec& spec) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream out(&bytes);
    google::protobuf::io::CodedOutputStream coded(&out);
    coded.SetSerializationDeterministic(true);
    spec.SerializeToCodedStream(&coded);
  }
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  return std::string(reinterpret_cast<const char*>(digest), sizeof(digest));
}

absl::Status JobIdReused(const v1::JobSpec& spec) {
  return absl::AlreadyExistsError(absl::StrCat(
      "job id '", spec.job_id(),
      "' was already used for another job this party took part in (another spec): every job "
      "needs a new job id"));
}

}  // namespace

PartyAgent::PartyAgent(PartyConfig config, PartyStore* store,
                       std::shared_ptr<grpc::Channel> channel)
    : config_(std::move(config)),
      store_(store),
      channel_(channel),
      stub_(v1::Coordinator::NewStub(channel)),
      ledger_(config_.policy.max_epsilon, config_.policy.delta) {}

absl::Status PartyAgent::Init() {
  // The data is validated at start (file, rows, declared range), not first
  // at a job: a misconfigured party refuses to start with the file, line and
  // key to fix, instead of registering and failing every offer.
  // Stamped before the load: a write during it moves the stamp, and the
  // first job then reads the file again instead of taking this copy.
  absl::StatusOr<data::DataSourceStamp> stamp = data::StampDataSpec(config_.data.spec);
  auto d = LoadOwnData();
  if (!d.ok()) {
    return cli::DataError(absl::Status(
        d.status().code(), absl::StrCat(d.status().message(),
                                        " (the party validates its data before it starts: fix "
                                        "the file or data.spec, or mount the file first)")));
  }
  if (!config_.data.catalogue.empty()) {
    auto catalogue = data::Catalogue::Load(config_.data.catalogue);
    if (!catalogue.ok())
      return cli::WithPrefix(cli::DataError(catalogue.status()), "data.catalogue: ");
    spdlog::info("item catalogue {}: {} items, {}", config_.data.catalogue, catalogue->size(),
                 catalogue->digest());
    catalogue_ = std::move(*catalogue);
    // The file against the catalogue, now rather than at the first job: a
    // file of another item-id scheme refuses to start; a file some of whose
    // items the catalogue lacks starts with a warning naming the first.
    auto mapped = data::FederateByItemCatalogue(
        {*d}, *catalogue_, data::SplitOptions{config_.data.test_fraction, config_.data.seed});
    if (!mapped.ok()) {
      return cli::DataError(absl::Status(
          mapped.status().code(),
          absl::StrCat(mapped.status().message(), " (data.catalogue: ", config_.data.catalogue,
                       "; the party checks its data against the catalogue before it starts)")));
    }
    const std::string warning = data::DroppedRatingsMessage(
        *d, *mapped, 0, absl::StrCat("items outside the catalogue ", config_.data.catalogue));
    if (!warning.empty()) spdlog::warn("{}", warning);
  }
  if (stamp.ok()) {
    absl::MutexLock lock(&mu_);
    validated_data_ = ValidatedData{std::move(*stamp), std::move(*d)};
  }
  {
    ASSIGN_OR_RETURN(auto id, LoadOrCreateStateId(config_.state_dir));
    state_id_ = std::move(id);
  }
  if (!config_.tls.insecure) {
    ASSIGN_OR_RETURN(auto files, pki::LoadTlsFiles(config_.tls.cert_dir, config_.name));
    tls_files_ = std::move(files);
  }
  if (config_.noise_seed.has_value()) {
    spdlog::warn(
        "noise_seed is set: this party's noise and sampling are reproducible by anyone "
        "who knows it (tests and demos only)");
  }
  ASSIGN_OR_RETURN(auto entries, store_->LoadLedger());
  ASSIGN_OR_RETURN(auto alignments, store_->Alignments());
  absl::MutexLock lock(&mu_);
  alignment_log_ = std::move(alignments);
  for (const dp::LedgerEntry& e : entries) {
    // Replaying history must not be refused by today's (maybe lower) budget:
    // the spend happened. Budget checks apply to new charges only.
    RETURN_IF_ERROR(ledger_.Restore(e));
  }
  spdlog::info("ledger: {} entries, epsilon spent per rating {:.4f}, per user {:.4f}, of {} each",
               entries.size(), SpentEpsilonLocked(dp::LedgerUnit::kRating),
               SpentEpsilonLocked(dp::LedgerUnit::kUser), config_.policy.max_epsilon);
  return absl::OkStatus();
}

double PartyAgent::SpentEpsilonLocked(dp::LedgerUnit unit) const {
  auto e = ledger_.SpentEpsilon(unit);
  return e.ok() ? *e : std::numeric_limits<double>::infinity();
}

void PartyAgent::SendHeartbeat(const std::string& job_id) {
  v1::HeartbeatRequest req;
  req.set_party(config_.name);
  req.set_job_id(job_id);
  v1::Ack ack;
  auto ctx = net::DeadlineContext(absl::Seconds(5));
  grpc::Status s = stub_->Heartbeat(ctx.get(), req, &ack);
  // Not fatal: the task's own RPCs report a lost server; a missed beat only
  // risks the server not waiting for this party.
  if (!s.ok()) spdlog::debug("heartbeat for job '{}': {}", job_id, s.error_message());
}

absl::Status PartyAgent::Register() {
  v1::RegisterRequest req;
  req.set_party(config_.name);
  req.set_version("fedmf-party 0.1");
  req.set_state_id(state_id_);
  v1::RegisterResponse resp;
  auto ctx = net::DeadlineContext(absl::Seconds(10));
  grpc::Status s = stub_->Register(ctx.get(), req, &resp);
  if (!s.ok()) return net::FromGrpc(s);
  if (resp.max_chunk_values() > 0) max_chunk_values_ = resp.max_chunk_values();
  if (resp.liveness_seconds() > 0) {
    heartbeat_ms_ = std::max<int64_t>(100, std::llround(resp.liveness_seconds() * 1000 / 3));
  }
  spdlog::info("registered with {} as '{}'", config_.server, config_.name);
  return absl::OkStatus();
}

void PartyAgent::Run(const std::atomic<bool>* stop, int stop_fd) {
  bool registered = false;
  // A retry loop logs each TLS cause once.
  net::TlsCauseOnce tls_cause(
      config_.server, net::TlsConfig{config_.tls.insecure, config_.tls.cert_dir, config_.name},
      net::ExpectedPeer{config_.server_name, pki::Role::kServer, "server_name (party config)"});
  // A stop ends the long poll at once instead of after the server's period.
  net::StopCanceller canceller(stop, stop_fd);
  canceller_ = &canceller;
  absl::Cleanup forget_canceller = [this] { canceller_ = nullptr; };
  auto backoff = std::chrono::milliseconds(200);
  const auto max_backoff = std::chrono::milliseconds(5000);
  // Retry delay: exponential with jitter, bounded. After a lost call it is
  // cut short once the server is reachable again (common/net/reconnect.h);
  // after a refusal (`answered`) it is waited out.
  auto wait_backoff = [&](bool answered = false) {
    random::Csprng jitter = random::Csprng::FromOsEntropy();
    const auto d = backoff + std::chrono::milliseconds(jitter.UniformInt(backoff.count() / 2 + 1));
    if (answered) {
      net::WaitOut(absl::FromChrono(d), *stop);
    } else {
      net::WaitBeforeRetry(*channel_, absl::FromChrono(d), *stop);
    }
    backoff = std::min(backoff * 2, max_backoff);
  };
  // The last task that failed (kind, job, round), to tell a retry of the same
  // refusal from a new task.
  std::optional<std::tuple<int, std::string, int32_t>> failed_task;
  // The next task when the last upload's response brought it (no GetTask).
  std::optional<v1::Task> next;
  while (!*stop) {
    if (!registered) {
      if (auto s = Register(); !s.ok()) {
        spdlog::warn("cannot register with {}: {} (retrying)", config_.server, s.message());
        // gRPC says only "failed to connect": name the TLS cause (wrong server
        // name, another CA, an expired or refused certificate) here, in this
        // party's own log, not only in the server's.
        if (const std::string cause = tls_cause.NewCause(s); !cause.empty()) {
          spdlog::error("cannot register with {}: cause: {}", config_.server, cause);
        }
        if (s.code() == absl::StatusCode::kPermissionDenied) {
          spdlog::error("the server refuses this party's identity; check the certificate name");
        }
        if (s.code() == absl::StatusCode::kAlreadyExists) {
          spdlog::error(
              "another fedmf-party process with another state_dir is connected as '{}': "
              "stop one of them (this one retries until the other is gone)",
              config_.name);
        }
        wait_backoff();
        continue;
      }
      registered = true;
      backoff = std::chrono::milliseconds(200);
    }
    v1::Task task;
    if (next.has_value()) {
      task = *std::move(next);
      next.reset();
    } else {
      v1::GetTaskRequest req;
      req.set_party(config_.name);
      auto ctx = net::DeadlineContext(absl::Seconds(30));
      grpc::Status gs;
      {
        net::StopCanceller::Scope cancel_on_stop(&canceller, ctx.get());
        gs = stub_->GetTask(ctx.get(), req, &task);
      }
      if (*stop) break;  // a stop cancelled the poll: nothing was lost
      if (!gs.ok()) {
        spdlog::warn("lost the server ({}): {}", config_.server, gs.error_message());
        registered = false;
        wait_backoff();
        continue;
      }
    }
    absl::Status s;
    // The work below can outlast the liveness window (Stage 1/3 epochs):
    // keep telling the server this party is alive while it runs.
    std::optional<BusyHeartbeat> busy;
    if (task.kind() == v1::TASK_KIND_OFFER || task.kind() == v1::TASK_KIND_ALIGN ||
        task.kind() == v1::TASK_KIND_PRETRAIN || task.kind() == v1::TASK_KIND_ROUND ||
        task.kind() == v1::TASK_KIND_FINISH) {
      busy.emplace(std::chrono::milliseconds(heartbeat_ms_.load()),
                   [this, job_id = task.job_id()] { SendHeartbeat(job_id); });
    }
    switch (task.kind()) {
      case v1::TASK_KIND_OFFER: s = HandleOffer(task); break;
      case v1::TASK_KIND_ALIGN: s = HandleAlign(task); break;
      case v1::TASK_KIND_ROUND: s = HandleRound(task, &next); break;
      case v1::TASK_KIND_FINISH: s = HandleFinish(task); break;
      case v1::TASK_KIND_ABORT: {
        absl::MutexLock lock(&mu_);
        spdlog::warn("job '{}' aborted: {}", task.job_id(), task.reason());
        runs_.erase(task.job_id());
        break;
      }
      default: break;
    }
    if (!s.ok()) {
      next.reset();  // ask again after a failure
      if (*stop) break;
      spdlog::warn("task {} for job '{}' round {}: {}", v1::TaskKind_Name(task.kind()),
                   task.job_id(), task.round(), s.message());
      const std::tuple<int, std::string, int32_t> this_task{task.kind(), task.job_id(),
                                                            task.round()};
      if (s.code() == absl::StatusCode::kUnavailable ||
          s.code() == absl::StatusCode::kDeadlineExceeded) {
        registered = false;
        wait_backoff();
      } else if (failed_task == this_task) {
        // The server hands out the task that just failed again (a refusal
        // that will not change by asking at once): back off instead of
        // spinning on it until the round's deadline.
        wait_backoff(/*answered=*/true);
      }
      failed_task = this_task;
    } else {
      backoff = std::chrono::milliseconds(200);
      failed_task.reset();
    }
  }
}

absl::Status PartyAgent::HandleOffer(const v1::Task& task) {
  v1::OfferReply reply;
  reply.set_party(config_.name);
  reply.set_job_id(task.job_id());
  std::string refusal;
  if (task.spec().align_users()) {
    // Admission only: the sizes depend on the intersection (HandleAlign).
    auto admitted = Admit(task.spec());
    if (!admitted.ok()) {
      refusal = RefusalText(admitted.status());
      spdlog::warn("refusing job '{}': {}", task.job_id(), admitted.status().message());
    } else {
      {
        absl::MutexLock lock(&mu_);
        alignments_.erase(task.job_id());  // a re-offer starts a new alignment
      }
      reply.set_accept(true);
      reply.set_alignment_pending(true);
    }
  } else {
    // Admission (range, policy, budget) runs before any data is read.
    auto run = CreateRun(task.spec());
    if (!run.ok()) {
      refusal = RefusalText(run.status());
      spdlog::warn("refusing job '{}': {}", task.job_id(), run.status().message());
    } else {
      return ReplyWithSizes(task.job_id(), **run);
    }
  }
  if (!refusal.empty()) {
    reply.set_accept(false);
    reply.set_refusal(refusal);
  } else {
    spdlog::info("accepted job '{}' (users to be aligned)", task.job_id());
  }
  v1::Ack ack;
  auto ctx = net::DeadlineContext(absl::Seconds(10));
  return net::FromGrpc(stub_->ReplyOffer(ctx.get(), reply, &ack));
}

absl::Status PartyAgent::ReplyWithSizes(const std::string& job_id, const JobRun& run) {
  v1::OfferReply reply;
  reply.set_party(config_.name);
  reply.set_job_id(job_id);
  const OfferSizes sizes = SizesToDeclare(run);
  reply.set_accept(true);
  reply.set_users(sizes.users);
  reply.set_items(sizes.items);
  reply.set_global_users(sizes.global_users);
  reply.set_global_items(sizes.global_items);
  spdlog::info("accepted job '{}'", job_id);
  v1::Ack ack;
  auto ctx = net::DeadlineContext(absl::Seconds(10));
  return net::FromGrpc(stub_->ReplyOffer(ctx.get(), reply, &ack));
}

PartyAgent::OfferSizes PartyAgent::SizesToDeclare(const JobRun& run) const {
  // Only sizes the server may know leave (docs/privacy.md, party-bytes):
  // the shared matrix's rows from a public source, and a weight that is a
  // DP release or a count the party declared public. Never a count of the
  // party's own file.
  const bool vertical = run.config.split == fmf::SplitKind::kVertical;
  const int32_t shared_rows = run.SharedShape().first;
  OfferSizes out;
  if (run.coupling != nullptr) {
    // A coupling owner's sum is added, never weighted: its weight is 1. Its
    // model's shape is the common file's (no catalogue or alignment), and
    // the split's shared dimension is declared whole, as for FMF.
    out.global_users = static_cast<int32_t>(run.user_ids.size());
    out.global_items = static_cast<int32_t>(run.item_ids.size());
    out.users = vertical ? out.global_users : 1;
    out.items = vertical ? 1 : out.global_items;
    return out;
  }
  const bool own_file = catalogue_.has_value() || run.config.align_users;
  if (vertical) {
    // U's rows: the aligned users (the intersection every party and the
    // server know from the PSI) or the common file's users.
    out.users = out.global_users = shared_rows;
    // The weight m_k: the party's share of the common file's items under the
    // job's public split, or with a file of its own only what it declared
    // public (data.public_item_count), else 1.
    if (own_file) {
      out.items = out.global_items = std::max(1, config_.data.public_item_count);
    } else {
      out.items = static_cast<int32_t>(run.session->weight());
      out.global_items = static_cast<int32_t>(run.item_ids.size());
    }
    return out;
  }
  // HFL: V's rows are the catalogue's items (public) or the common file's.
  out.items = out.global_items = shared_rows;
  // The weight n_k: the DP size release's estimate (non-private jobs, which
  // the party's policy must allow, release n_k itself).
  out.users = static_cast<int32_t>(run.session->weight());
  // The federation's user count is the common file's; a party with a file
  // of its own has no shared user index, and its user count is private.
  out.global_users = own_file ? 0 : static_cast<int32_t>(run.user_ids.size());
  return out;
}

absl::StatusOr<std::vector<std::string>> PartyAgent::AlignUsers(const v1::Task& task) {
  // The trust boundary again: the ALIGN task's spec is admitted like an offer.
  ASSIGN_OR_RETURN(fmf::AdmittedJob admitted, Admit(task.spec()));
  if (!admitted.config().align_users) {
    return absl::InvalidArgumentError("an ALIGN task for a job that does not align users");
  }
  // The party's PSI policy, before its key touches any list: how often it
  // aligns with the same partners (each run shows them which of the ids they
  // bring are this party's users), counted in its own database.
  const std::vector<std::string> roster(task.spec().roster().begin(), task.spec().roster().end());
  const std::string partners = PartnerSetKey(config_.name, roster);
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  ASSIGN_OR_RETURN(const int64_t recent, store_->AlignmentsSince(partners, now - 24 * 3600));
  if (recent >= config_.policy.max_alignments_per_day) {
    return PublicRefusal(absl::ResourceExhaustedError(absl::StrCat(
        "this party's policy allows ", config_.policy.max_alignments_per_day,
        " private set intersections per 24 hours with the same partners and that many were "
        "started (policy.max_alignments_per_day): retry later, or its operator raises the "
        "limit")));
  }
  ASSIGN_OR_RETURN(data::Dataset dataset, TakeOwnData());
  std::vector<std::string> own_ids = data::DistinctUserIds(dataset);
  const int64_t own_size = static_cast<int64_t>(own_ids.size());
  // Recorded before the first list leaves, so a crash mid-run still counts.
  ASSIGN_OR_RETURN(const int64_t seq,
                   store_->BeginAlignment(task.job_id(), now, partners, own_size));
  PartyStore::AlignmentRecord record{seq, task.job_id(), now, partners, own_size, "",
                                     -1,  "started"};
  {
    absl::MutexLock lock(&mu_);
    alignment_log_.push_back(record);
  }
  PsiClientOptions o;
  o.party = config_.name;
  o.job_id = task.job_id();
  o.session = task.psi_session();
  o.index = task.psi_index();
  o.ring.assign(task.psi_ring().begin(), task.psi_ring().end());
  o.roster = roster;
  o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  o.tls = tls_files_;
  o.max_list_ratio = config_.policy.max_partner_list_ratio;
  std::map<std::string, int64_t> sizes;
  absl::StatusOr<std::vector<std::string>> shared =
      RunPsiClient(stub_.get(), o, std::move(own_ids), &sizes);
  std::vector<std::string> shown;
  for (const auto& [name, size] : sizes) shown.push_back(absl::StrCat(name, "=", size));
  std::string outcome = "aligned";
  if (!shared.ok()) {
    outcome = shared.status().code() == absl::StatusCode::kResourceExhausted
                  ? "refused: policy.max_partner_list_ratio"
                  : absl::StrCat("failed: ", shared.status().message());
  }
  record.partner_sizes = absl::StrJoin(shown, ",");
  record.shared = shared.ok() ? static_cast<int64_t>(shared->size()) : -1;
  record.outcome = outcome;
  if (absl::Status s =
          store_->EndAlignment(seq, record.partner_sizes, record.shared, record.outcome);
      !s.ok()) {
    spdlog::error("job '{}': cannot record the alignment's end: {}", task.job_id(), s.message());
  }
  {
    absl::MutexLock lock(&mu_);
    for (PartyStore::AlignmentRecord& r : alignment_log_) {
      if (r.seq == seq) r = record;
    }
  }
  if (shared.ok()) return shared;
  spdlog::warn("job '{}': private set intersection: {} (own list {} ids; partners' lists {})",
               task.job_id(), shared.status().message(), own_size, absl::StrJoin(shown, ", "));
  if (shared.status().code() == absl::StatusCode::kResourceExhausted) {
    return PublicRefusal(absl::ResourceExhaustedError(absl::StrCat(
        "a partner's list holds more than ", config_.policy.max_partner_list_ratio,
        " times as many ids as this party's (policy.max_partner_list_ratio): the partners "
        "align lists of comparable size, or this party's operator raises the ratio")));
  }
  return PublicRefusal(absl::AbortedError(
      "the private set intersection did not complete (the party's log has the reason)"));
}

absl::Status PartyAgent::HandleAlign(const v1::Task& task) {
  absl::StatusOr<std::vector<std::string>> shared = AlignUsers(task);
  absl::Status result;
  if (shared.ok()) {
    // Kept on disk too, so a restart rejoins the job (PartyStore::Alignment).
    if (auto saved = store_->SaveAlignment(task.job_id(), *shared); !saved.ok()) {
      shared = saved;
    }
  }
  if (shared.ok()) {
    {
      absl::MutexLock lock(&mu_);
      alignments_[task.job_id()] = *shared;
    }
    auto run = CreateRun(task.spec());
    if (run.ok()) return ReplyWithSizes(task.job_id(), **run);
    result = run.status();
  } else {
    result = shared.status();
  }
  // The alignment failed here: say so (a refusal), so the job ends with the
  // reason instead of waiting for its deadline.
  spdlog::warn("job '{}': cannot align users: {}", task.job_id(), result.message());
  v1::OfferReply reply;
  reply.set_party(config_.name);
  reply.set_job_id(task.job_id());
  reply.set_accept(false);
  reply.set_refusal(absl::StrCat("user alignment failed: ", RefusalText(result)));
  v1::Ack ack;
  auto ctx = net::DeadlineContext(absl::Seconds(10));
  return net::FromGrpc(stub_->ReplyOffer(ctx.get(), reply, &ack));
}

absl::StatusOr<fmf::AdmittedJob> PartyAgent::Admit(const v1::JobSpec& spec) {
  ASSIGN_OR_RETURN(fmf::AdmittedJob admitted, AdmitBySpec(spec));
  // A job id names one job for good: recorded at its first admission, before
  // any data is read or any byte derived from it leaves (docs/privacy.md,
  // party-admission: the seeded stream is the job's).
  if (absl::Status s =
          store_->RecordJob(spec.job_id(), SpecDigest(spec), absl::ToUnixSeconds(absl::Now()));
      !s.ok()) {
    if (s.code() == absl::StatusCode::kAlreadyExists) return PublicRefusal(JobIdReused(spec));
    return s;
  }
  return admitted;
}

absl::StatusOr<fmf::AdmittedJob> PartyAgent::AdmitBySpec(const v1::JobSpec& spec) {
  auto job = net::JobConfigFromSpec(spec);
  if (!job.ok()) {
    return PublicRefusal(
        absl::InvalidArgumentError(absl::StrCat("malformed job: ", job.status().message())));
  }
  // The party chooses its partners: a roster naming anyone it does not train
  // with is refused before anything else (the names are the server's own).
  const std::vector<std::string> roster(spec.roster().begin(), spec.roster().end());
  if (std::string refusal = PartnerRefusal(config_.policy, config_.name, roster);
      !refusal.empty()) {
    return PublicRefusal(absl::PermissionDeniedError(refusal));
  }
  {
    ASSIGN_OR_RETURN(std::optional<std::string> known, store_->JobSpecDigest(spec.job_id()));
    if (known.has_value() && *known != SpecDigest(spec)) return PublicRefusal(JobIdReused(spec));
  }
  // The policy sees the job as the party would run it (its own R) and the
  // budget the rest of this job would take: the steps its plan charges minus
  // what the ledger already holds for it (a rejoin after a restart).
  auto policy = [this, &spec](const fmf::JobConfig& config, const fmf::NoisePlan& plan) {
    double would_be = 0;
    if (plan.private_training) {
      absl::MutexLock lock(&mu_);
      int64_t charged = 0;
      // The size release (one step at the count's z) and the gradient steps
      // are separate entries; count each only if not yet charged.
      const int64_t count_round = fmf::CountReleaseRound(config);
      bool count_charged = false;
      int64_t grad_charged = 0;
      for (const dp::LedgerEntry& e : ledger_.entries()) {
        if (e.job_id != config.job_id) continue;
        if (e.round == count_round) {
          count_charged = true;
        } else {
          grad_charged += e.steps;
        }
      }
      charged = grad_charged;
      const int64_t remaining = std::max<int64_t>(0, plan.steps - charged);
      const dp::LedgerUnit unit = fmf::ChargeUnit(config);
      std::vector<dp::LedgerEntry> rest{
          {config.job_id, 0, plan.sample_rate, plan.noise_multiplier, remaining, unit}};
      // A coupling job makes no size release (count_noise_multiplier 0).
      if (plan.count_noise_multiplier > 0) {
        rest.push_back({config.job_id, count_round, 1.0, plan.count_noise_multiplier,
                        count_charged ? 0 : 1, unit});
      }
      auto e = ledger_.EpsilonWith(rest);
      would_be = e.ok() ? *e : std::numeric_limits<double>::infinity();
    }
    std::string refusal = PolicyRefusal(config_.policy, config_.data, config, would_be);
    if (refusal.empty()) {
      refusal = AlignmentRefusal(config_.data, catalogue_ ? catalogue_->digest() : std::string(),
                                 config, spec.roster_size());
    }
    return refusal;
  };
  // Admission's refusals are functions of the job and the party's policy and
  // ledger, never of its data: they go to the server as they are.
  absl::StatusOr<fmf::AdmittedJob> admitted = fmf::AdmittedJob::Admit(
      *job,
      {DeclaredRange(config_.data), config_.noise_seed, absl::StrCat("party-", config_.data.index),
       config_.local_threads, /*pad_stage3=*/true},
      policy);
  if (!admitted.ok()) return PublicRefusal(admitted.status());
  return admitted;
}

absl::StatusOr<data::Dataset> PartyAgent::LoadOwnData() const {
  data::LoadOptions options;
  options.range = DeclaredRange(config_.data);
  ASSIGN_OR_RETURN(auto dataset, data::LoadDataSpec(config_.data.spec, options));
  // File loaders reject ratings outside options.range; a generated data set
  // declares its own range, which must be the configured one.
  if (dataset.range.min != config_.data.rating_min ||
      dataset.range.max != config_.data.rating_max) {
    return absl::InvalidArgumentError(
        absl::StrCat("data.spec '", config_.data.spec, "' has rating range [", dataset.range.min,
                     ", ", dataset.range.max, "] but data.rating_min/rating_max declare [",
                     config_.data.rating_min, ", ", config_.data.rating_max, "]: make them agree"));
  }
  return dataset;
}

absl::StatusOr<data::Dataset> PartyAgent::TakeOwnData() {
  std::optional<ValidatedData> validated;
  {
    absl::MutexLock lock(&mu_);
    validated.swap(validated_data_);
  }
  if (validated.has_value()) {
    absl::StatusOr<data::DataSourceStamp> now = data::StampDataSpec(config_.data.spec);
    if (now.ok() && *now == validated->stamp) return std::move(validated->dataset);
    spdlog::info("data.spec '{}' changed since the party started: reading it again",
                 config_.data.spec);
  }
  return LoadOwnData();
}

absl::StatusOr<PartyAgent::JobRun*> PartyAgent::CreateRun(const v1::JobSpec& spec) {
  // Every path to a session (OFFER, or ROUND/FINISH without one) goes
  // through the same admission: the server's spec never reaches the session.
  ASSIGN_OR_RETURN(auto admitted, Admit(spec));
  if (admitted.seeded()) {
    spdlog::warn("job '{}': noise from the local noise_seed (reproducible; not for production)",
                 spec.job_id());
  }
  const fmf::JobConfig config = admitted.config();
  const fmf::NoisePlan plan = admitted.plan();
  std::optional<std::vector<std::string>> shared_users;
  if (config.align_users) {
    absl::MutexLock lock(&mu_);
    auto it = alignments_.find(spec.job_id());
    if (it == alignments_.end()) {
      // A restart during the job: the alignment this party made before.
      ASSIGN_OR_RETURN(std::optional<std::vector<std::string>> stored,
                       store_->Alignment(spec.job_id()));
      if (!stored.has_value()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "job '", spec.job_id(), "' aligns users and this party holds no alignment for it"));
      }
      spdlog::info("job '{}': users aligned before a restart: {} shared", spec.job_id(),
                   stored->size());
      it = alignments_.emplace(spec.job_id(), std::move(*stored)).first;
    }
    shared_users = it->second;
  }
  ASSIGN_OR_RETURN(auto dataset, TakeOwnData());
  // Which rows and columns of the federation this party's data is, and their
  // external ids: by the catalogue (HFL), by the aligned users (VFL), or by
  // position in a shared file split with data.parties / data.index.
  absl::StatusOr<data::Federation> federation;
  int32_t index = config_.data.index;
  std::vector<std::string> user_ids = dataset.user_ids, item_ids = dataset.item_ids;
  const data::SplitOptions split{config_.data.test_fraction, config_.data.seed};
  if (catalogue_.has_value() || shared_users.has_value()) {
    auto joined = catalogue_.has_value()
                      ? data::FederateByItemCatalogue({dataset}, *catalogue_, split)
                      : data::FederateBySharedUsers({dataset}, {*shared_users}, split);
    if (!joined.ok()) return joined.status();
    if (const std::string warning = data::DroppedRatingsMessage(
            dataset, *joined, 0,
            catalogue_.has_value()
                ? absl::StrCat("items outside the catalogue ", config_.data.catalogue)
                : std::string("users the other parties do not hold"));
        !warning.empty()) {
      // spdlog's level says "warning" already.
      spdlog::warn("job '{}': {}", spec.job_id(), warning);
    }
    user_ids = std::move(joined->user_ids);
    item_ids = std::move(joined->item_ids);
    federation = std::move(joined->federation);
    index = 0;
  } else {
    fmf::FederationOptions fed;
    fed.parties = config_.data.parties;
    fed.vfl_split = config_.data.vfl_split;
    fed.split_seed = config_.data.seed;
    fed.test_fraction = config_.data.test_fraction;
    federation = fmf::BuildFederationFromSpec(config, std::move(dataset), config_.data.spec, fed);
  }
  if (!federation.ok()) return federation.status();
  if (index >= static_cast<int32_t>(federation->parties.size())) {
    return absl::InvalidArgumentError(absl::StrCat("data.index ", index, " but the split has ",
                                                   federation->parties.size(), " parties"));
  }
  if (config.setting == fmf::Setting::kCoupling) {
    absl::MutexLock lock(&mu_);
    JobRun run;
    run.config = config;
    run.plan = plan;
    run.user_ids = std::move(user_ids);
    run.item_ids = std::move(item_ids);
    run.spec_digest = SpecDigest(spec);
    RETURN_IF_ERROR(CreateCouplingOwner(std::move(admitted), *federation, index, &run));
    JobRun& stored = runs_[spec.job_id()] = std::move(run);
    return &stored;
  }
  // The size release is made once per job: a run rebuilt after a restart
  // reuses the persisted one (PartySession::Create).
  const int32_t count_round = static_cast<int32_t>(fmf::CountReleaseRound(config));
  std::optional<double> released_count;
  if (plan.private_training) {
    ASSIGN_OR_RETURN(auto stored, store_->Released(spec.job_id(), count_round));
    if (stored.has_value() && (stored)->size() == 1) released_count = (*stored)(0, 0);
  }
  absl::MutexLock lock(&mu_);
  const size_t before = ledger_.entries().size();
  auto session = fmf::PartySession::Create(std::move(admitted), federation->parties[index],
                                           federation->num_users, federation->num_items, &ledger_,
                                           released_count);
  if (!session.ok()) return session.status();
  if (ledger_.entries().size() > before) {
    // Durable with its value before a byte derived from it leaves.
    mf::Matrix count(1, 1);
    count(0, 0) = *(*session)->released_count();
    if (auto s = store_->CommitRelease(ledger_.entries().back(), count); !s.ok()) {
      spdlog::critical("cannot persist the ledger: {}; stopping", s.message());
      std::abort();
    }
  }
  JobRun& run = runs_[spec.job_id()];
  run.spec_digest = SpecDigest(spec);
  run.config = config;
  run.plan = plan;
  run.user_ids = std::move(user_ids);
  run.item_ids = std::move(item_ids);
  run.session = std::move(*session);
  run.finished = false;
  return &run;
}

absl::Status PartyAgent::CreateCouplingOwner(fmf::AdmittedJob admitted,
                                             const data::Federation& federation, int32_t index,
                                             JobRun* run) {
  const data::PartyData& own = federation.parties[index];
  const std::string job_id = admitted.config().job_id;
  ASSIGN_OR_RETURN(coupling::OwnerSession::Terms terms,
                   fmf::CouplingOwnerTerms(admitted.config(), admitted.plan(), admitted.range()));
  ASSIGN_OR_RETURN(coupling::FlatLayout layout,
                   coupling::FlatLayout::Create(federation.num_users, federation.num_items,
                                                admitted.config().dim));
  ASSIGN_OR_RETURN(
      std::vector<data::Rating> train,
      data::ToGlobalIndices(own, own.train, federation.num_users, federation.num_items));
  ASSIGN_OR_RETURN(
      std::vector<data::Rating> test,
      data::ToGlobalIndices(own, own.test, federation.num_users, federation.num_items));
  ASSIGN_OR_RETURN(run->coupling, coupling::OwnerSession::Create(
                                      std::move(terms), layout, std::move(train), std::move(test),
                                      &ledger_, std::move(admitted).TakeRng()));
  spdlog::info("job '{}': coupling model of {} values (z = {:.4f})", job_id, layout.size(),
               run->coupling->noise_multiplier());
  return absl::OkStatus();
}

std::pair<int32_t, int32_t> PartyAgent::JobRun::SharedShape() const {
  if (coupling != nullptr) return {1, static_cast<int32_t>(coupling->layout().size())};
  return {session->shared_rows(), session->dim()};
}

int64_t PartyAgent::JobRun::StepsCharged() const {
  return coupling != nullptr ? coupling->steps_charged() : session->steps_charged();
}

mf::ErrorMetrics PartyAgent::JobRun::EvaluateTest() const {
  return coupling != nullptr ? coupling->EvaluateTest() : session->EvaluateTest();
}

absl::StatusOr<mf::Matrix> PartyAgent::SharedOf(const v1::Task& task, const JobRun& run) {
  const auto [rows, cols] = run.SharedShape();
  if (task.shared().empty()) return Download(task.job_id(), task.round(), rows, cols);
  // Inlined on the task: the same chunks, the same checks as a download.
  net::MatrixAssembler assembler(task.job_id(), task.round(), rows, cols, max_chunk_values_);
  for (const v1::MatrixChunk& chunk : task.shared()) RETURN_IF_ERROR(assembler.Add(chunk));
  return assembler.Finish();
}

absl::StatusOr<mf::Matrix> PartyAgent::Download(const std::string& job_id, int32_t round,
                                                int32_t rows, int32_t cols) {
  v1::DownloadRequest req;
  req.set_party(config_.name);
  req.set_job_id(job_id);
  req.set_round(round);
  auto ctx = net::DeadlineContext(absl::Seconds(120));
  auto reader = stub_->DownloadShared(ctx.get(), req);
  net::MatrixAssembler assembler(job_id, round, rows, cols, max_chunk_values_);
  v1::MatrixChunk chunk;
  absl::Status first_error;
  while (reader->Read(&chunk)) {
    if (auto s = assembler.Add(chunk); !s.ok() && first_error.ok()) first_error = s;
  }
  grpc::Status gs = reader->Finish();
  if (!gs.ok()) return net::FromGrpc(gs);
  if (!first_error.ok()) return first_error;
  return assembler.Finish();
}

absl::StatusOr<bool> PartyAgent::Upload(const std::string& job_id, int32_t round,
                                        const mf::Matrix& m, const v1::PrivacyReport* report,
                                        std::optional<v1::Task>* next) {
  v1::UploadResponse resp;
  // Waiting for the next task adds GetTask's poll (its own deadline, 30 s).
  auto ctx = net::DeadlineContext(next != nullptr ? absl::Seconds(150) : absl::Seconds(120));
  std::optional<net::StopCanceller::Scope> cancel_on_stop;
  if (next != nullptr && canceller_ != nullptr) cancel_on_stop.emplace(canceller_, ctx.get());
  auto writer = stub_->UploadUpdate(ctx.get(), &resp);
  std::vector<v1::MatrixChunk> chunks = net::EncodeMatrix(m, job_id, round, max_chunk_values_);
  if (!chunks.empty()) {
    // Without TLS the header's name is the only one the server has.
    chunks.front().mutable_header()->set_party(config_.name);
    if (report != nullptr) *chunks.front().mutable_report() = *report;
    chunks.front().set_await_next_task(next != nullptr);
  }
  for (const v1::MatrixChunk& chunk : chunks) {
    if (!writer->Write(chunk)) break;
  }
  writer->WritesDone();
  RETURN_IF_ERROR(net::FromGrpc(writer->Finish()));
  if (next != nullptr && resp.has_next_task()) *next = std::move(*resp.mutable_next_task());
  return report != nullptr && resp.report_taken();
}

v1::PrivacyReport PartyAgent::MakeReport(const std::string& job_id, int32_t round,
                                         const JobRun& run) {
  v1::PrivacyReport report;
  report.set_party(config_.name);
  report.set_job_id(job_id);
  report.set_round(round);
  {
    absl::MutexLock lock(&mu_);
    // The ledger's epsilon in this job's unit (per rating or per user): the
    // two units are never added into one number (dp::LedgerUnit).
    report.set_epsilon_spent(
        run.plan.private_training ? SpentEpsilonLocked(fmf::ChargeUnit(run.config)) : 0.0);
    if (run.plan.private_training) {
      auto job = ledger_.JobEpsilon(job_id);
      report.set_job_epsilon(job.ok() ? *job : std::numeric_limits<double>::infinity());
    }
  }
  report.set_delta(config_.policy.delta);
  report.set_steps(run.StepsCharged());
  report.set_finished(run.finished);
  // Noise-free metrics leave only with the party's consent (policy): after
  // every round (the history operators plot) and at the end.
  if (config_.policy.report_metrics) {
    const mf::ErrorMetrics m = run.EvaluateTest();
    report.set_test_mse(m.mse);
    report.set_test_count(m.count);
  }
  return report;
}

absl::Status PartyAgent::SendReport(const v1::PrivacyReport& report) {
  v1::Ack ack;
  auto ctx = net::DeadlineContext(absl::Seconds(10));
  return net::FromGrpc(stub_->ReportPrivacy(ctx.get(), report, &ack));
}

absl::StatusOr<PartyAgent::JobRun*> PartyAgent::FindOrCreateRun(const v1::Task& task) {
  {
    absl::MutexLock lock(&mu_);
    auto it = runs_.find(task.job_id());
    if (it != runs_.end()) {
      // The run is the job it was admitted as: a task under its id with
      // another spec is a second job, refused like its offer.
      if (it->second.spec_digest != SpecDigest(task.spec())) return JobIdReused(task.spec());
      return &it->second;
    }
  }
  // Restarted (or never offered in this process): rebuild and rejoin.
  auto created = CreateRun(task.spec());
  if (created.ok()) {
    spdlog::info("rejoining job '{}' at round {}", task.job_id(), task.round());
  }
  return created;
}

absl::Status PartyAgent::HandleRound(const v1::Task& task, std::optional<v1::Task>* next) {
  const std::string& job_id = task.job_id();
  const int32_t round = task.round();
  ASSIGN_OR_RETURN(JobRun * run, FindOrCreateRun(task));
  ASSIGN_OR_RETURN(auto shared, SharedOf(task, *run));
  ASSIGN_OR_RETURN(mf::Matrix update, RoundRelease(*run, round, shared));
  // The report is what it would be right after the upload (the round's
  // charge is already in the ledger); it rides on the upload's header.
  const v1::PrivacyReport report = MakeReport(job_id, round, *run);
  ASSIGN_OR_RETURN(const bool taken, Upload(job_id, round, update, &report, next));
  if (taken) return absl::OkStatus();
  return SendReport(report);
}

absl::StatusOr<mf::Matrix> PartyAgent::RoundRelease(JobRun& run, int32_t round,
                                                    const mf::Matrix& shared) {
  const std::string& job_id = run.config.job_id;
  fmf::PartySession* session = run.session.get();  // null in a coupling job
  ASSIGN_OR_RETURN(auto released, store_->Released(job_id, round));
  if (released.has_value()) {
    // Charged and released before a crash or a lost response: resend the
    // same bytes; recomputing would be a second, unaccounted release.
    if (session != nullptr && session->phase() == fmf::PartySession::Phase::kCreated) {
      RETURN_IF_ERROR(session->Pretrain(shared, round + 1));
    }
    spdlog::info("resending the persisted update of job '{}' round {}", job_id, round);
    return *std::move(released);
  }
  if (session != nullptr && session->phase() == fmf::PartySession::Phase::kCreated) {
    RETURN_IF_ERROR(session->Pretrain(shared, round));
  }
  absl::MutexLock lock(&mu_);
  absl::StatusOr<mf::Matrix> computed =
      session != nullptr ? session->RunRound(round, shared) : run.coupling->RunStep(round, shared);
  if (computed.ok() && run.plan.private_training) {
    // The in-memory ledger took the charge; make it durable together with
    // the release before a single byte leaves.
    const dp::LedgerEntry& entry = ledger_.entries().back();
    if (auto s = store_->CommitRelease(entry, *computed); !s.ok()) {
      spdlog::critical("cannot persist the ledger: {}; stopping", s.message());
      std::abort();
    }
  }
  return computed;
}

absl::Status PartyAgent::HandleFinish(const v1::Task& task) {
  const std::string& job_id = task.job_id();
  ASSIGN_OR_RETURN(JobRun * run, FindOrCreateRun(task));
  if (!run->finished) {
    ASSIGN_OR_RETURN(auto final_shared, SharedOf(task, *run));
    fmf::PartySession* session = run->session.get();  // null in a coupling job
    if (session != nullptr && session->phase() == fmf::PartySession::Phase::kCreated) {
      RETURN_IF_ERROR(session->Pretrain(final_shared, task.round()));
    }
    absl::MutexLock lock(&mu_);
    if (session == nullptr) {
      RETURN_IF_ERROR(run->coupling->Finish(final_shared));
    } else {
      const size_t before = ledger_.entries().size();
      RETURN_IF_ERROR(session->Finish(final_shared));
      if (ledger_.entries().size() > before) {
        if (auto s = store_->CommitCharge(ledger_.entries().back()); !s.ok()) {
          spdlog::critical("cannot persist the ledger: {}; stopping", s.message());
          std::abort();
        }
      }
    }
    run->finished = true;
    last_finished_job_ = job_id;
  }
  const mf::ErrorMetrics m = run->EvaluateTest();
  spdlog::info("job '{}' finished: test MSE {:.4f} over {} ratings", job_id, m.mse, m.count);
  return SendReport(MakeReport(job_id, task.round(), *run));
}

absl::StatusOr<const PartyAgent::JobRun*> PartyAgent::FinishedRunLocked(
    const std::string& job_id) const {
  const std::string id = job_id.empty() ? last_finished_job_ : job_id;
  auto it = runs_.find(id);
  if (id.empty() || it == runs_.end() || !it->second.finished) {
    return absl::FailedPreconditionError(
        absl::StrCat("no finished job '", id, "' on this party (train first)"));
  }
  return &it->second;
}

absl::StatusOr<std::vector<std::pair<std::string, double>>> PartyAgent::Recommend(
    const std::string& job_id, const std::string& user, int32_t top, bool include_rated) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(const JobRun* found, FinishedRunLocked(job_id));
  const JobRun& run = *found;
  auto u = std::find(run.user_ids.begin(), run.user_ids.end(), user);
  if (u == run.user_ids.end())
    return absl::NotFoundError(absl::StrCat("unknown user '", user, "'"));
  const auto global_user = static_cast<int32_t>(u - run.user_ids.begin());
  auto recs = run.coupling != nullptr ? run.coupling->Recommend(global_user, top, include_rated)
                                      : run.session->Recommend(global_user, top, include_rated);
  if (!recs.ok()) return recs.status();
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [item, score] : *recs) out.emplace_back(run.item_ids[item], score);
  return out;
}

absl::StatusOr<v1::ExportModelResponse> PartyAgent::ExportModel(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(const JobRun* found, FinishedRunLocked(job_id));
  const JobRun& run = *found;
  if (run.coupling != nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job '", run.config.job_id,
        "' is a coupling job: its model (U, V and the couplings S, W) has no export format; "
        "ask this party for recommendations instead (fedmf recommend)"));
  }
  const fmf::PartySession& session = *run.session;
  // Every rating the party holds counts as rated, the held-out ones too, so
  // the exported model leaves out what the live party leaves out.
  data::PartyData all = session.data();
  all.train = session.TrainingRatingsWithHeldOut();
  ASSIGN_OR_RETURN(fmf::SavedPartyModel model,
                   fmf::PartyModelFrom(config_.name, all, session.user_embeddings(),
                                       session.item_embeddings(), session.rating_offset(),
                                       run.user_ids, run.item_ids, session.ranking_rule()));
  return net::ModelToProto(model, job_id.empty() ? last_finished_job_ : job_id,
                           fmf::SettingName(run.config.setting));
}

v1::LedgerResponse PartyAgent::LedgerSnapshot() {
  absl::MutexLock lock(&mu_);
  v1::LedgerResponse out;
  out.set_max_epsilon(ledger_.max_epsilon());
  out.set_delta(ledger_.delta());
  const bool empty = ledger_.entries().empty();
  out.set_epsilon_spent(empty ? 0.0 : SpentEpsilonLocked(dp::LedgerUnit::kUnrecorded));
  out.set_epsilon_per_rating(empty ? 0.0 : SpentEpsilonLocked(dp::LedgerUnit::kRating));
  out.set_epsilon_per_user(empty ? 0.0 : SpentEpsilonLocked(dp::LedgerUnit::kUser));
  for (const dp::LedgerEntry& e : ledger_.entries()) {
    v1::LedgerEntry* p = out.add_entries();
    p->set_job_id(e.job_id);
    p->set_round(static_cast<int32_t>(e.round));
    p->set_sample_rate(e.sample_rate);
    p->set_noise_multiplier(e.noise_multiplier);
    p->set_steps(e.steps);
    p->set_granularity(dp::LedgerUnitName(e.unit));
  }
  for (const PartyStore::AlignmentRecord& r : alignment_log_) {
    v1::AlignmentRecord* a = out.add_alignments();
    a->set_job_id(r.job_id);
    a->set_started_unix(r.started_unix);
    a->set_partners(r.partners);
    a->set_own_size(r.own_size);
    a->set_partner_sizes(r.partner_sizes);
    a->set_shared(r.shared);
    a->set_outcome(r.outcome);
  }
  return out;
}

}  // namespace fedmf::party
