#include "common/cdr/target_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "common/random/csprng.h"

namespace fedmf::cdr {
namespace {

double Uniform(random::Csprng& rng, double scale) { return (2 * rng.NextDouble() - 1) * scale; }

Eigen::MatrixXd RandomMatrix(random::Csprng& rng, Eigen::Index rows, Eigen::Index cols,
                             double scale) {
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = Uniform(rng, scale);
  return m;
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Applies lr * lambda * dRC/dz to the given rows of `m` (the batch's factors).
void RobustnessStep(Eigen::MatrixXd& m, const std::vector<int32_t>& rows, double step) {
  if (rows.size() < 2 || step == 0) return;
  Eigen::MatrixXd z(static_cast<Eigen::Index>(rows.size()), m.cols());
  for (size_t r = 0; r < rows.size(); ++r) z.row(static_cast<Eigen::Index>(r)) = m.row(rows[r]);
  Eigen::MatrixXd g;
  RobustnessLoss(z, &g);
  for (size_t r = 0; r < rows.size(); ++r)
    m.row(rows[r]) -= step * g.row(static_cast<Eigen::Index>(r));
}

// One pass over the users in batches of o.batch: the auto-encoder
// reconstruction (Eq. 8) and the alignment lambda_A || z_S - z_T ||^2 (Eq. 9)
// with z_S = W_e r; both sides of the alignment learn. Per user once an
// epoch (not per BPR batch) keeps the cost at O(users x source items x dim).
void TransferEpoch(const Eigen::MatrixXd& fake, const TargetOptions& o, random::Csprng& rng,
                   Eigen::MatrixXd& enc, Eigen::MatrixXd& dec, Eigen::MatrixXd& user) {
  std::vector<int32_t> order(static_cast<size_t>(fake.rows()));
  for (size_t u = 0; u < order.size(); ++u) order[u] = static_cast<int32_t>(u);
  std::shuffle(order.begin(), order.end(), rng);
  const double lr = o.learning_rate;
  for (size_t start = 0; start < order.size(); start += static_cast<size_t>(o.batch)) {
    const size_t end = std::min(order.size(), start + static_cast<size_t>(o.batch));
    const auto n = static_cast<Eigen::Index>(end - start);
    Eigen::MatrixXd r(fake.cols(), n), zt(user.cols(), n);
    for (Eigen::Index k = 0; k < n; ++k) {
      r.col(k) = fake.row(order[start + k]).transpose();
      zt.col(k) = user.row(order[start + k]).transpose();
    }
    const Eigen::MatrixXd z = enc * r;
    const Eigen::MatrixXd err = dec * z - r;
    const Eigen::MatrixXd gap = z - zt;
    const Eigen::MatrixXd dz =
        2 * o.recon_weight * (dec.transpose() * err) + 2 * o.lambda_align * gap;
    const double scale = lr / static_cast<double>(n);
    dec -= scale * 2 * o.recon_weight * err * z.transpose();
    enc -= scale * dz * r.transpose();
    for (Eigen::Index k = 0; k < n; ++k) {
      user.row(order[start + k]) += lr * 2 * o.lambda_align * gap.col(k).transpose();
    }
  }
}

}  // namespace

double RobustnessLoss(const Eigen::MatrixXd& z, Eigen::MatrixXd* gradient) {
  const Eigen::Index k = z.cols();
  Eigen::MatrixXd c = z.rowwise() - z.colwise().mean();
  Eigen::VectorXd norms = c.colwise().norm().transpose();
  Eigen::MatrixXd n = c;
  std::vector<bool> live(static_cast<size_t>(k));
  for (Eigen::Index i = 0; i < k; ++i) {
    live[i] = norms(i) > 1e-12;
    if (live[i]) {
      n.col(i) /= norms(i);
    } else {
      n.col(i).setZero();
    }
  }
  Eigen::MatrixXd corr = n.transpose() * n;
  Eigen::MatrixXd diff = corr - Eigen::MatrixXd::Identity(k, k);
  for (Eigen::Index i = 0; i < k; ++i) {
    if (!live[i]) diff.row(i).setZero(), diff.col(i).setZero();
  }
  const double loss = diff.squaredNorm();
  if (gradient != nullptr) {
    // d||N^T N - I||^2 / dN = 4 N (N^T N - I); through n = c / ||c|| and the centring.
    Eigen::MatrixXd dn = 4 * n * diff;
    Eigen::MatrixXd dc = Eigen::MatrixXd::Zero(z.rows(), k);
    for (Eigen::Index i = 0; i < k; ++i) {
      if (!live[i]) continue;
      dc.col(i) = (dn.col(i) - n.col(i) * n.col(i).dot(dn.col(i))) / norms(i);
    }
    *gradient = dc.rowwise() - dc.colwise().mean();
  }
  return loss;
}

absl::StatusOr<TargetModel> TrainTarget(const CrossDomainData& data,
                                        const Eigen::MatrixXd* fake_source,
                                        const TargetOptions& o) {
  if (o.dim < 1 || o.epochs < 0 || o.batch < 1 || !(o.learning_rate > 0) || !(o.l2 >= 0)) {
    return absl::InvalidArgumentError(
        "target model: dim and batch must be >= 1, epochs >= 0, learning rate > 0, l2 >= 0");
  }
  const bool transfer = fake_source != nullptr && (o.lambda_align > 0 || o.lambda_rc > 0);
  if (fake_source != nullptr &&
      (fake_source->rows() != data.num_users || fake_source->cols() != data.num_source_items)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "fake source preferences are %dx%d, expected users x source items = %dx%d",
        fake_source->rows(), fake_source->cols(), data.num_users, data.num_source_items));
  }
  random::Csprng rng = random::Csprng::FromSeed(o.seed).Fork("cdr/target");
  TargetModel m;
  m.user = RandomMatrix(rng, data.num_users, o.dim, o.init_scale);
  m.item = RandomMatrix(rng, data.num_target_items, o.dim, o.init_scale);
  m.item_bias = Eigen::VectorXd::Zero(data.num_target_items);

  // Auto-encoder of the unit-normalised fake preferences (Eq. 8): z_S = W_e r.
  Eigen::MatrixXd fake;
  Eigen::MatrixXd enc, dec;
  if (transfer) {
    fake = *fake_source;
    for (Eigen::Index u = 0; u < fake.rows(); ++u) {
      const double n = fake.row(u).norm();
      if (n > 0) fake.row(u) /= n;
    }
    enc = RandomMatrix(rng, o.dim, data.num_source_items, o.init_scale);
    dec = RandomMatrix(rng, data.num_source_items, o.dim, o.init_scale);
  }

  std::vector<std::pair<int32_t, int32_t>> pairs;
  for (int32_t u = 0; u < data.num_users; ++u) {
    for (int32_t i : data.target_train[u]) pairs.emplace_back(u, i);
  }
  if (pairs.empty()) return absl::FailedPreconditionError("target model: no training positives");
  auto is_positive = [&](int32_t u, int32_t j) {
    const auto& t = data.target_train[u];
    return std::binary_search(t.begin(), t.end(), j);
  };

  const double lr = o.learning_rate;
  std::vector<int32_t> batch_users, batch_items;
  absl::flat_hash_map<int32_t, bool> seen_user, seen_item;
  for (int32_t epoch = 0; epoch < o.epochs; ++epoch) {
    std::shuffle(pairs.begin(), pairs.end(), rng);
    for (size_t start = 0; start < pairs.size(); start += static_cast<size_t>(o.batch)) {
      const size_t end = std::min(pairs.size(), start + static_cast<size_t>(o.batch));
      batch_users.clear();
      batch_items.clear();
      seen_user.clear();
      seen_item.clear();
      for (size_t p = start; p < end; ++p) {
        const auto [u, i] = pairs[p];
        int32_t j;
        do {
          j = static_cast<int32_t>(rng.UniformInt(data.num_target_items));
        } while (is_positive(u, j));
        // BPR: minimise -log sigmoid(s(u,i) - s(u,j)).
        const double x = m.Score(u, i) - m.Score(u, j);
        const double w = Sigmoid(-x);
        const Eigen::RowVectorXd pu = m.user.row(u);
        m.user.row(u) += lr * (w * (m.item.row(i) - m.item.row(j)) - o.l2 * pu);
        m.item.row(i) += lr * (w * pu - o.l2 * m.item.row(i));
        m.item.row(j) += lr * (-w * pu - o.l2 * m.item.row(j));
        m.item_bias(i) += lr * (w - o.l2 * m.item_bias(i));
        m.item_bias(j) += lr * (-w - o.l2 * m.item_bias(j));
        if (seen_user.emplace(u, true).second) batch_users.push_back(u);
        if (seen_item.emplace(i, true).second) batch_items.push_back(i);
        if (seen_item.emplace(j, true).second) batch_items.push_back(j);
      }
      if (!transfer) continue;
      // Robustness conductor (Eq. 11) on the batch's user and item factors.
      RobustnessStep(m.user, batch_users, lr * o.lambda_rc);
      RobustnessStep(m.item, batch_items, lr * o.lambda_rc);
    }
    if (transfer) TransferEpoch(fake, o, rng, enc, dec, m.user);
  }
  return m;
}

}  // namespace fedmf::cdr
