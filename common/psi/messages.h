// What the parties and the relay (fedmf-server) exchange in the multi-party
// ECDH private set intersection (common/psi/party.h explains the protocol).
#ifndef FEDMF_COMMON_PSI_MESSAGES_H_
#define FEDMF_COMMON_PSI_MESSAGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/crypto/ristretto255.h"

namespace fedmf::psi {

using Point = crypto::RistrettoPoint;

// One party's blinded id list on its way around the ring. After `step`
// parties have applied their keys (step 0: only the origin's one-time blind),
// it goes to party (origin + step + 1) mod s; at step s - 1 that is the
// origin again, which finishes it. `signer` made it and signed
// SignedBytes(session, *this).
struct BlindedList {
  int32_t origin = 0;
  int32_t step = 0;
  int32_t signer = 0;
  std::vector<Point> points;
  std::vector<uint8_t> signature;
};

// A party's final tags H(x)^K, K the product of every party's key: sorted,
// so their order says nothing about the ids behind them.
struct FinalTags {
  int32_t party = 0;
  std::vector<Point> tags;
};

// The relay's answer: the tags present in every party's set, sorted. The
// sorted order is the canonical order of the shared ids for every party.
struct Intersection {
  std::vector<Point> tags;
};

// A party's signature over the intersection it accepted; every party checks
// all s of them before training, so the relay cannot hand different parties
// different intersections (which would silently misalign the rows).
struct Confirmation {
  int32_t party = 0;
  std::vector<uint8_t> signature;
};

// The one recipient of a list (see BlindedList).
inline int32_t NextHop(const BlindedList& list, int32_t num_parties) {
  return (list.origin + list.step + 1) % num_parties;
}

// Wire sizes (the points and signatures; framing excluded), for the cost
// tables in docs/benchmarks.md.
inline int64_t WireBytes(const BlindedList& l) {
  return static_cast<int64_t>(l.points.size() * sizeof(Point) + l.signature.size()) + 12;
}
inline int64_t WireBytes(const FinalTags& f) {
  return static_cast<int64_t>(f.tags.size() * sizeof(Point)) + 4;
}
inline int64_t WireBytes(const Intersection& i) {
  return static_cast<int64_t>(i.tags.size() * sizeof(Point));
}
inline int64_t WireBytes(const Confirmation& c) {
  return static_cast<int64_t>(c.signature.size()) + 4;
}

}  // namespace fedmf::psi

#endif  // FEDMF_COMMON_PSI_MESSAGES_H_
