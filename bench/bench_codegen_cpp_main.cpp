// The C++ program of bench/bench_codegen_cpp.py: generated headers against Pinocchio's C++.
// The script fills in the robots (headers, Pinocchio models, states) and the cases; it prints one
// JSON line per robot and function: min and median ns per call over the blocks of each side, and
// the largest relative difference between the two over the states.
// Without WITH_PINOCCHIO (the --quick mode) only the generated side is built and timed.
#ifdef WITH_PINOCCHIO
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/multibody.hpp>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

// @ROBOTS@

struct Generated {
  void (*rnea)(const double *, const double *, const double *, double *);
  void (*gravity)(const double *, double *);
  void (*mass_matrix)(const double *, double *);
  void (*forward_dynamics)(const double *, const double *, const double *, double *);
  void (*forward_dynamics_aba)(const double *, const double *, const double *, double *);
  void (*forward_dynamics_ldlt)(const double *, const double *, const double *, double *);
};

static volatile double sink;
static const int kStates = 64;

static double now_ns() {
  return std::chrono::duration<double, std::nano>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ns per call of one block: reps passes over the states
template <class F> static double block(F call, int reps) {
  double acc = 0.0;
  const double start = now_ns();
  for (int r = 0; r < reps; ++r)
    for (int s = 0; s < kStates; ++s) acc += call(s);
  const double elapsed = now_ns() - start;
  sink = sink + acc;
  return elapsed / (double(reps) * kStates);
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

#ifndef WITH_PINOCCHIO
template <class G>
static void alone(const char *robot, const char *function, G gen, int reps, int blocks) {
  std::vector<double> tg;
  block(gen, 1);
  for (int b = 0; b < blocks; ++b) tg.push_back(block(gen, reps));
  std::printf("{\"robot\": \"%s\", \"function\": \"%s\", \"generated\": [%.2f, %.2f]}\n",
              robot, function, *std::min_element(tg.begin(), tg.end()), median(tg));
}

template <int N>
static void run_robot(const char *name, int, const double *q, const double *qd,
                      const double *qdd, const double *tau, Generated g, int reps, int blocks) {
  double out[N * N];
  alone(name, "rnea", [&](int s) { g.rnea(q + s * N, qd + s * N, qdd + s * N, out); return out[0]; }, reps, blocks);
  alone(name, "gravity", [&](int s) { g.gravity(q + s * N, out); return out[0]; }, reps, blocks);
  alone(name, "mass_matrix", [&](int s) { g.mass_matrix(q + s * N, out); return out[N]; }, reps, blocks);
  alone(name, "forward_dynamics",
        [&](int s) { g.forward_dynamics(q + s * N, qd + s * N, tau + s * N, out); return out[0]; }, reps, blocks);
  alone(name, "forward_dynamics_aba",
        [&](int s) { g.forward_dynamics_aba(q + s * N, qd + s * N, tau + s * N, out); return out[0]; }, reps, blocks);
  alone(name, "forward_dynamics_ldlt",
        [&](int s) { g.forward_dynamics_ldlt(q + s * N, qd + s * N, tau + s * N, out); return out[0]; }, reps, blocks);
}
#else
template <class G, class P>
static void compare(const char *robot, const char *function, G gen, P pin, double error,
                    int reps, int blocks) {
  std::vector<double> tg, tp;
  block(gen, 1), block(pin, 1);  // warm-up
  for (int b = 0; b < blocks; ++b) {  // alternate the sides, so that both see the same load
    if (b % 2 == 0) { tg.push_back(block(gen, reps)); tp.push_back(block(pin, reps)); }
    else { tp.push_back(block(pin, reps)); tg.push_back(block(gen, reps)); }
  }
  std::printf("{\"robot\": \"%s\", \"function\": \"%s\", \"generated\": [%.2f, %.2f], "
              "\"pinocchio\": [%.2f, %.2f], \"error\": %.3e}\n", robot, function,
              *std::min_element(tg.begin(), tg.end()), median(tg),
              *std::min_element(tp.begin(), tp.end()), median(tp), error);
}

static double relative(const double *ours, const double *theirs, int size) {
  double diff = 0.0, scale = 1e-9;
  for (int i = 0; i < size; ++i) {
    diff = std::max(diff, std::fabs(ours[i] - theirs[i]));
    scale = std::max(scale, std::fabs(theirs[i]));
  }
  return diff / scale;
}

template <int N>
static void run_robot(const char *name, const pinocchio::Model &model, const double *q,
                      const double *qd, const double *qdd, const double *tau, Generated g,
                      int reps, int blocks) {
  pinocchio::Data data(model);
  std::vector<Eigen::VectorXd> Q, V, A, T;
  for (int s = 0; s < kStates; ++s) {
    Q.push_back(Eigen::Map<const Eigen::VectorXd>(q + s * N, N));
    V.push_back(Eigen::Map<const Eigen::VectorXd>(qd + s * N, N));
    A.push_back(Eigen::Map<const Eigen::VectorXd>(qdd + s * N, N));
    T.push_back(Eigen::Map<const Eigen::VectorXd>(tau + s * N, N));
  }
  double out[N * N];
  double err[6] = {0, 0, 0, 0, 0, 0};
  for (int s = 0; s < kStates; ++s) {  // agreement first, on every state
    g.rnea(q + s * N, qd + s * N, qdd + s * N, out);
    err[0] = std::max(err[0], relative(out, pinocchio::rnea(model, data, Q[s], V[s], A[s]).data(), N));
    g.gravity(q + s * N, out);
    err[1] = std::max(err[1], relative(out, pinocchio::computeGeneralizedGravity(model, data, Q[s]).data(), N));
    g.mass_matrix(q + s * N, out);
    pinocchio::crba(model, data, Q[s]);
    data.M.triangularView<Eigen::StrictlyLower>() = data.M.transpose().triangularView<Eigen::StrictlyLower>();
    Eigen::Matrix<double, N, N, Eigen::RowMajor> M = data.M;
    err[2] = std::max(err[2], relative(out, M.data(), N * N));
    g.forward_dynamics(q + s * N, qd + s * N, tau + s * N, out);
    err[3] = std::max(err[3], relative(out, pinocchio::aba(model, data, Q[s], V[s], T[s]).data(), N));
    g.forward_dynamics_aba(q + s * N, qd + s * N, tau + s * N, out);
    err[4] = std::max(err[4], relative(out, pinocchio::aba(model, data, Q[s], V[s], T[s]).data(), N));
    g.forward_dynamics_ldlt(q + s * N, qd + s * N, tau + s * N, out);
    err[5] = std::max(err[5], relative(out, pinocchio::aba(model, data, Q[s], V[s], T[s]).data(), N));
  }
  compare(name, "rnea", [&](int s) { g.rnea(q + s * N, qd + s * N, qdd + s * N, out); return out[0]; },
          [&](int s) { return pinocchio::rnea(model, data, Q[s], V[s], A[s])[0]; }, err[0], reps, blocks);
  compare(name, "gravity", [&](int s) { g.gravity(q + s * N, out); return out[0]; },
          [&](int s) { return pinocchio::computeGeneralizedGravity(model, data, Q[s])[0]; }, err[1], reps, blocks);
  compare(name, "mass_matrix", [&](int s) { g.mass_matrix(q + s * N, out); return out[N]; },
          [&](int s) {
            pinocchio::crba(model, data, Q[s]);
            data.M.triangularView<Eigen::StrictlyLower>() = data.M.transpose().triangularView<Eigen::StrictlyLower>();
            return data.M(1, 0);
          }, err[2], reps, blocks);
  compare(name, "forward_dynamics",
          [&](int s) { g.forward_dynamics(q + s * N, qd + s * N, tau + s * N, out); return out[0]; },
          [&](int s) { return pinocchio::aba(model, data, Q[s], V[s], T[s])[0]; }, err[3], reps, blocks);
  compare(name, "forward_dynamics_aba",
          [&](int s) { g.forward_dynamics_aba(q + s * N, qd + s * N, tau + s * N, out); return out[0]; },
          [&](int s) { return pinocchio::aba(model, data, Q[s], V[s], T[s])[0]; }, err[4], reps, blocks);
  compare(name, "forward_dynamics_ldlt",
          [&](int s) { g.forward_dynamics_ldlt(q + s * N, qd + s * N, tau + s * N, out); return out[0]; },
          [&](int s) { return pinocchio::aba(model, data, Q[s], V[s], T[s])[0]; }, err[5], reps, blocks);
}

#endif

int main(int argc, char **argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 100;
  const int blocks = argc > 2 ? std::atoi(argv[2]) : 11;
  // @CASES@
  return 0;
}
