#include "common/cdr/generator.h"

#include <cmath>

namespace fedmf::cdr {
namespace {

Eigen::MatrixXd Init(random::Csprng& rng, Eigen::Index rows, Eigen::Index cols, double scale) {
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = (2 * rng.NextDouble() - 1) * scale;
  return m;
}

// Glorot-uniform scale of a layer with these fan-in / fan-out.
double Glorot(Eigen::Index in, Eigen::Index out) {
  return std::sqrt(6.0 / static_cast<double>(in + out));
}

}  // namespace

void RmsProp::Step(Eigen::MatrixXd& param, const Eigen::MatrixXd& grad, double lr, double decay,
                   double eps) {
  if (mean_square.rows() != param.rows() || mean_square.cols() != param.cols()) {
    mean_square = Eigen::MatrixXd::Zero(param.rows(), param.cols());
  }
  mean_square = decay * mean_square + (1 - decay) * grad.cwiseProduct(grad);
  param.array() -= lr * grad.array() / (mean_square.array().sqrt() + eps);
}

Generator::Generator(int32_t num_users, int32_t num_items, int32_t latent, int32_t hidden,
                     random::Csprng& rng)
    : embedding_(Init(rng, num_users, latent, 1.0)),
      w1_(Init(rng, hidden, latent, Glorot(latent, hidden))),
      b1_(Eigen::MatrixXd::Zero(hidden, 1)),
      w2_(Init(rng, num_items, hidden, Glorot(hidden, num_items))),
      b2_(Eigen::MatrixXd::Zero(num_items, 1)) {}

Eigen::MatrixXd Generator::Forward(const std::vector<int32_t>& users) const {
  Eigen::MatrixXd e(embedding_.cols(), static_cast<Eigen::Index>(users.size()));
  for (size_t k = 0; k < users.size(); ++k)
    e.col(static_cast<Eigen::Index>(k)) = embedding_.row(users[k]).transpose();
  Eigen::MatrixXd h = ((w1_ * e).colwise() + b1_.col(0)).cwiseMax(0.0);
  Eigen::MatrixXd pre = (w2_ * h).colwise() + b2_.col(0);
  return pre.unaryExpr([](double v) { return 1.0 / (1.0 + std::exp(-v)); });
}

Eigen::MatrixXd Generator::GenerateAll() const {
  std::vector<int32_t> all(static_cast<size_t>(num_users()));
  for (int32_t u = 0; u < num_users(); ++u) all[u] = u;
  return Forward(all).transpose();
}

void Generator::Backward(const std::vector<int32_t>& users, const Eigen::MatrixXd& output_grad,
                         double lr) {
  const auto n = static_cast<Eigen::Index>(users.size());
  Eigen::MatrixXd e(embedding_.cols(), n);
  for (Eigen::Index k = 0; k < n; ++k) e.col(k) = embedding_.row(users[k]).transpose();
  Eigen::MatrixXd pre1 = (w1_ * e).colwise() + b1_.col(0);
  Eigen::MatrixXd h = pre1.cwiseMax(0.0);
  Eigen::MatrixXd out = ((w2_ * h).colwise() + b2_.col(0)).unaryExpr([](double v) {
    return 1.0 / (1.0 + std::exp(-v));
  });
  Eigen::MatrixXd d2 = output_grad.cwiseProduct(out.cwiseProduct((1.0 - out.array()).matrix()));
  Eigen::MatrixXd gw2 = d2 * h.transpose();
  Eigen::MatrixXd gb2 = d2.rowwise().sum();
  Eigen::MatrixXd d1 = (w2_.transpose() * d2).cwiseProduct(pre1.unaryExpr([](double v) {
    return v > 0 ? 1.0 : 0.0;
  }));
  Eigen::MatrixXd gw1 = d1 * e.transpose();
  Eigen::MatrixXd gb1 = d1.rowwise().sum();
  Eigen::MatrixXd de = w1_.transpose() * d1;
  Eigen::MatrixXd ge = Eigen::MatrixXd::Zero(embedding_.rows(), embedding_.cols());
  for (Eigen::Index k = 0; k < n; ++k) ge.row(users[k]) += de.col(k).transpose();
  opt_[0].Step(embedding_, ge, lr);
  opt_[1].Step(w1_, gw1, lr);
  opt_[2].Step(b1_, gb1, lr);
  opt_[3].Step(w2_, gw2, lr);
  opt_[4].Step(b2_, gb2, lr);
}

Discriminator::Discriminator(int32_t num_users, int32_t num_items, int32_t hidden,
                             random::Csprng& rng)
    : a_(Init(rng, hidden, num_items, Glorot(num_items, hidden))),
      b_(Init(rng, hidden, num_users, 0.1)),
      b1_(Eigen::MatrixXd::Zero(hidden, 1)),
      w2_(Init(rng, hidden, 1, Glorot(hidden, 1))),
      b2_(Eigen::MatrixXd::Zero(1, 1)) {}

namespace {

Eigen::MatrixXd Condition(const Eigen::MatrixXd& b, const std::vector<int32_t>& users) {
  Eigen::MatrixXd c(b.rows(), static_cast<Eigen::Index>(users.size()));
  for (size_t k = 0; k < users.size(); ++k) c.col(static_cast<Eigen::Index>(k)) = b.col(users[k]);
  return c;
}

}  // namespace

Eigen::VectorXd Discriminator::Forward(const Eigen::MatrixXd& x,
                                       const std::vector<int32_t>& users) const {
  Eigen::MatrixXd h = ((a_ * x + Condition(b_, users)).colwise() + b1_.col(0)).cwiseMax(0.0);
  return (h.transpose() * w2_.col(0)).array() + b2_(0, 0);
}

Eigen::MatrixXd Discriminator::InputGradient(const Eigen::MatrixXd& x,
                                             const std::vector<int32_t>& users) const {
  Eigen::MatrixXd pre = (a_ * x + Condition(b_, users)).colwise() + b1_.col(0);
  Eigen::MatrixXd d = pre.unaryExpr([](double v) { return v > 0 ? 1.0 : 0.0; });
  d = d.array().colwise() * w2_.col(0).array();
  return a_.transpose() * d;
}

double Discriminator::TrainStep(const Eigen::MatrixXd& real, const Eigen::MatrixXd& fake,
                                const std::vector<int32_t>& users, double tau, double lr,
                                double weight_clip) {
  const auto n = static_cast<double>(users.size());
  Eigen::MatrixXd ga = Eigen::MatrixXd::Zero(a_.rows(), a_.cols());
  Eigen::MatrixXd gb = Eigen::MatrixXd::Zero(b_.rows(), b_.cols());
  Eigen::MatrixXd gb1 = Eigen::MatrixXd::Zero(b1_.rows(), 1);
  Eigen::MatrixXd gw2 = Eigen::MatrixXd::Zero(w2_.rows(), 1);
  Eigen::MatrixXd gb2 = Eigen::MatrixXd::Zero(1, 1);
  double loss = 0;
  for (int side = 0; side < 2; ++side) {
    const Eigen::MatrixXd& x = side == 0 ? real : fake;
    const double sign = side == 0 ? -1.0 : 1.0;
    Eigen::MatrixXd pre = (a_ * x + Condition(b_, users)).colwise() + b1_.col(0);
    Eigen::MatrixXd h = pre.cwiseMax(0.0);
    Eigen::VectorXd dv = (h.transpose() * w2_.col(0)).array() + b2_(0, 0);
    loss += sign * dv.mean() + tau / 2 * dv.squaredNorm() / n;
    // d loss / d D_i.
    Eigen::VectorXd dd = ((sign + tau * dv.array()) / n).matrix();
    gw2 += h * dd;
    gb2(0, 0) += dd.sum();
    Eigen::MatrixXd dpre = (w2_.col(0) * dd.transpose()).cwiseProduct(pre.unaryExpr([](double v) {
      return v > 0 ? 1.0 : 0.0;
    }));
    ga += dpre * x.transpose();
    gb1 += dpre.rowwise().sum();
    for (size_t k = 0; k < users.size(); ++k)
      gb.col(users[k]) += dpre.col(static_cast<Eigen::Index>(k));
  }
  opt_[0].Step(a_, ga, lr);
  opt_[1].Step(b_, gb, lr);
  opt_[2].Step(b1_, gb1, lr);
  opt_[3].Step(w2_, gw2, lr);
  opt_[4].Step(b2_, gb2, lr);
  if (weight_clip > 0) {
    for (Eigen::MatrixXd* p : {&a_, &b_, &b1_, &w2_, &b2_}) {
      *p = p->cwiseMax(-weight_clip).cwiseMin(weight_clip);
    }
  }
  return loss;
}

}  // namespace fedmf::cdr
