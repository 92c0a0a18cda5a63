#include "common/psi/in_process.h"

#include <chrono>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/crypto/ed25519.h"
#include "common/psi/party.h"
#include "common/psi/relay.h"
#include "common/psi/signing.h"

namespace fedmf::psi {
namespace {

class Stopwatch {
 public:
  explicit Stopwatch(double* total) : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~Stopwatch() {
    *total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  double* total_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

absl::StatusOr<PsiRun> RunPsiInProcess(const std::vector<std::vector<std::string>>& ids,
                                       const std::string& session, random::Csprng& rng,
                                       int threads) {
  const int32_t s = static_cast<int32_t>(ids.size());
  ASSIGN_OR_RETURN(PsiRelay relay, PsiRelay::Create(s, 50'000'000));
  std::vector<crypto::Ed25519PrivateKey> keys;
  std::vector<crypto::Ed25519PublicKey> public_keys;
  for (int32_t p = 0; p < s; ++p) {
    random::Csprng key_rng = rng.Fork(absl::StrCat("psi-signing/", p));
    ASSIGN_OR_RETURN(crypto::Ed25519PrivateKey key, crypto::Ed25519PrivateKey::Generate(key_rng));
    public_keys.push_back(key.public_key());
    keys.push_back(std::move(key));
  }
  const Ed25519Verifier verifier(public_keys);
  std::vector<std::unique_ptr<Ed25519Signer>> signers;
  std::vector<std::unique_ptr<PsiParty>> parties;
  PsiRun run;
  run.parties.resize(s);
  for (int32_t p = 0; p < s; ++p) {
    signers.push_back(std::make_unique<Ed25519Signer>(&keys[p]));
    PartyOptions options;
    options.session = session;
    options.index = p;
    options.num_parties = s;
    options.threads = threads;
    ASSIGN_OR_RETURN(auto party,
                     PsiParty::Create(ids[p], options, rng, signers.back().get(), &verifier));
    parties.push_back(std::move(party));
  }
  auto send_list = [&](int32_t p, BlindedList list) -> absl::Status {
    run.parties[p].bytes_sent += WireBytes(list);
    Stopwatch w(&run.relay_seconds);
    return relay.SubmitList(p, std::move(list));
  };
  for (int32_t p = 0; p < s; ++p) {
    absl::StatusOr<BlindedList> start;
    {
      Stopwatch w(&run.parties[p].seconds);
      start = parties[p]->Start();
    }
    RETURN_IF_ERROR(start.status());
    RETURN_IF_ERROR(send_list(p, std::move(*start)));
  }
  // Every list makes s - 1 hops and comes home: s rounds of deliveries.
  for (int32_t round = 0; round < s; ++round) {
    for (int32_t p = 0; p < s; ++p) {
      for (BlindedList& in : relay.TakeLists(p)) {
        run.parties[p].bytes_received += WireBytes(in);
        absl::StatusOr<std::optional<BlindedList>> out;
        {
          Stopwatch w(&run.parties[p].seconds);
          out = parties[p]->Receive(in);
        }
        RETURN_IF_ERROR(out.status());
        if (out->has_value()) RETURN_IF_ERROR(send_list(p, std::move(**out)));
      }
    }
  }
  for (int32_t p = 0; p < s; ++p) {
    ASSIGN_OR_RETURN(FinalTags tags, parties[p]->Final());
    run.parties[p].bytes_sent += WireBytes(tags);
    Stopwatch w(&run.relay_seconds);
    RETURN_IF_ERROR(relay.SubmitTags(p, std::move(tags)));
  }
  if (!relay.intersection().has_value()) return absl::InternalError("PSI: no intersection");
  const Intersection intersection = *relay.intersection();
  run.intersection_size = static_cast<int64_t>(intersection.tags.size());
  for (int32_t p = 0; p < s; ++p) {
    run.parties[p].bytes_received += WireBytes(intersection);
    absl::StatusOr<Confirmation> c;
    {
      Stopwatch w(&run.parties[p].seconds);
      c = parties[p]->Accept(intersection);
    }
    RETURN_IF_ERROR(c.status());
    run.parties[p].bytes_sent += WireBytes(*c);
    RETURN_IF_ERROR(relay.SubmitConfirmation(p, std::move(*c)));
  }
  const std::vector<Confirmation> all = *relay.confirmations();
  for (int32_t p = 0; p < s; ++p) {
    for (const Confirmation& c : all) run.parties[p].bytes_received += WireBytes(c);
    Stopwatch w(&run.parties[p].seconds);
    RETURN_IF_ERROR(parties[p]->Confirm(all));
    ASSIGN_OR_RETURN(std::vector<std::string> shared, parties[p]->SharedIds());
    run.shared_ids.push_back(std::move(shared));
  }
  for (const PsiTraffic& t : run.parties) {
    run.relay_bytes_in += t.bytes_sent;
    run.relay_bytes_out += t.bytes_received;
  }
  return run;
}

}  // namespace fedmf::psi
