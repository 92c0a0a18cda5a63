#include "common/pki/identity_cache.h"

#include <algorithm>
#include <utility>

namespace fedmf::pki {

IdentityCache::IdentityCache(size_t max_entries) : max_entries_(std::max<size_t>(max_entries, 1)) {}

absl::StatusOr<PeerIdentity> IdentityCache::Lookup(absl::string_view pem) {
  {
    absl::MutexLock lock(&mu_);
    if (auto it = memo_.find(pem); it != memo_.end()) return it->second;
    ++parses_;
  }
  // Parsed outside the lock: other RPCs keep hitting the memo meanwhile. Two
  // threads that miss on the same certificate both parse it, to the same
  // answer.
  std::string key(pem);
  absl::StatusOr<PeerIdentity> id = IdentityFromCertificatePem(key);
  if (!id.ok()) return id;
  absl::MutexLock lock(&mu_);
  if (memo_.size() >= max_entries_ && !memo_.contains(key)) memo_.clear();
  memo_.insert_or_assign(std::move(key), *id);
  return id;
}

size_t IdentityCache::size() const {
  absl::MutexLock lock(&mu_);
  return memo_.size();
}

int64_t IdentityCache::parses() const {
  absl::MutexLock lock(&mu_);
  return parses_;
}

}  // namespace fedmf::pki
