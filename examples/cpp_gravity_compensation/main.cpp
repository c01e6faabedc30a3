// Computed-torque control of a simulated arm at 1 kHz, on a generated dynamics header.
//
// The controller: tau = M(q) (qdd_ref + Kp e + Kd de) + h(q, qd) (computed torque, Siciliano et
// al. 2009, eq. 8.57), which is gravity compensation g(q) plus the inertial and velocity terms;
// the plant: the same header's forward dynamics, integrated by semi-implicit Euler.  The
// reference moves every joint by 0.3 rad with a smooth (cosine) profile over one second, then
// holds.  With the model exact, the tracking error obeys e'' + Kd e' + Kp e = 0: it stays small,
// and the program fails (exit 1) if it does not.
#include <cmath>
#include <cstdio>

#include "arm_dynamics.hpp"

namespace {

constexpr int N = ARM_DOF;
constexpr double kDt = 1e-3, kKp = 400.0, kKd = 40.0, kPi = 3.14159265358979323846;

// The reference at time t: position, velocity and acceleration of each joint.
void reference(double t, const double *q0, double *qr, double *qdr, double *qddr) {
  const double s = t < 1.0 ? t : 1.0, w = kPi;
  for (int i = 0; i < N; ++i) {
    qr[i] = q0[i] + 0.15 * (1.0 - std::cos(w * s));
    qdr[i] = t < 1.0 ? 0.15 * w * std::sin(w * s) : 0.0;
    qddr[i] = t < 1.0 ? 0.15 * w * w * std::cos(w * s) : 0.0;
  }
}

// One control step, as a ros2_control controller's update() would run it: no allocation.
void computed_torque(const double *q, const double *qd, const double *qr, const double *qdr,
                     const double *qddr, double *tau) {
  double M[N * N], h[N], a[N];
  arm_mass_matrix(q, M);
  arm_nonlinear_effects(q, qd, h);
  for (int i = 0; i < N; ++i) a[i] = qddr[i] + kKp * (qr[i] - q[i]) + kKd * (qdr[i] - qd[i]);
  for (int i = 0; i < N; ++i) {
    tau[i] = h[i];
    for (int j = 0; j < N; ++j) tau[i] += M[i * N + j] * a[j];
  }
}

}  // namespace

int main() {
  double q[N], qd[N] = {}, q0[N], qr[N], qdr[N], qddr[N], tau[N], qdd[N], g[N];
  for (int i = 0; i < N; ++i) {  // start inside the limits, near their middle
    const double lo = arm_lower_limits[i], hi = arm_upper_limits[i];
    q0[i] = q[i] = (std::isfinite(lo) && std::isfinite(hi)) ? 0.5 * (lo + hi) : 0.0;
  }
  arm_gravity_torques(q, g);
  double worst = 0.0, peak = 0.0;
  for (int k = 0; k < 2000; ++k) {
    reference(k * kDt, q0, qr, qdr, qddr);
    computed_torque(q, qd, qr, qdr, qddr, tau);
    arm_forward_dynamics(q, qd, tau, qdd);  // the plant: the same model
    for (int i = 0; i < N; ++i) {
      qd[i] += kDt * qdd[i];
      q[i] += kDt * qd[i];
      worst = std::fmax(worst, std::fabs(qr[i] - q[i]));
      peak = std::fmax(peak, std::fabs(tau[i]));
    }
  }
  std::printf("%s (%d joints, description %.12s): holding torques at start", arm_name(),
              arm_dof(), arm_description_hash());
  for (int i = 0; i < N; ++i) std::printf(" %.3f", g[i]);
  std::printf("\nmax tracking error %.2e rad over 2 s at 1 kHz, peak torque %.1f\n", worst,
              peak);
  return worst < 1e-2 ? 0 : 1;
}
