#include "analysis/scaling.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace scaleprof::analysis {

SampleStats sample_stats(std::vector<double> values) {
  std::erase_if(values, [](double v) { return std::isnan(v); });
  SampleStats s;
  s.count = static_cast<int64_t>(values.size());
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.sum = std::accumulate(values.begin(), values.end(), 0.0);
  s.mean = s.sum / static_cast<double>(values.size());
  s.min = values.front();
  s.max = values.back();
  const size_t mid = values.size() / 2;
  s.median = values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2.0;
  if (values.size() >= 2) {
    double m2 = 0;
    for (double v : values) m2 += (v - s.mean) * (v - s.mean);
    s.std = std::sqrt(m2 / static_cast<double>(values.size() - 1));
  }
  return s;
}

std::vector<tables::EpochTime> skip_warmup(std::vector<tables::EpochTime> epochs, int skip) {
  std::stable_sort(epochs.begin(), epochs.end(),
                   [](const tables::EpochTime& a, const tables::EpochTime& b) { return a.epoch < b.epoch; });
  const size_t drop = std::min(epochs.size(), static_cast<size_t>(std::max(skip, 0)));
  epochs.erase(epochs.begin(), epochs.begin() + static_cast<std::ptrdiff_t>(drop));
  return epochs;
}

std::vector<ScalingRow> relative_scaling(std::vector<ScalePoint> points) {
  std::stable_sort(points.begin(), points.end(),
                   [](const ScalePoint& a, const ScalePoint& b) { return a.workers < b.workers; });
  std::vector<ScalingRow> rows;
  rows.reserve(points.size());
  if (points.empty()) return rows;
  const ScalePoint base = points.front();
  for (const ScalePoint& p : points) {
    ScalingRow r;
    r.workers = p.workers;
    r.seconds = p.seconds;
    if (base.workers > 0 && p.seconds > 0 && base.seconds > 0) {
      r.speedup = base.seconds / p.seconds;
      r.ideal_speedup = static_cast<double>(p.workers) / static_cast<double>(base.workers);
      r.efficiency = r.speedup / r.ideal_speedup;
    }
    rows.push_back(r);
  }
  return rows;
}

AmdahlFit fit_amdahl(std::span<const ScalePoint> points) {
  AmdahlFit fit;
  std::vector<ScalePoint> used;
  for (const ScalePoint& p : points) {
    if (p.workers > 0 && std::isfinite(p.seconds)) used.push_back(p);
  }
  fit.points = static_cast<int64_t>(used.size());
  if (used.empty()) return fit;
  int64_t lo = used.front().workers;
  int64_t hi = lo;
  for (const ScalePoint& p : used) {
    lo = std::min(lo, p.workers);
    hi = std::max(hi, p.workers);
  }
  fit.base_workers = lo;
  fit.max_workers = hi;
  if (lo == hi) return fit;  // one worker count: nothing to fit
  const auto n = static_cast<double>(used.size());
  double mx = 0;
  double mt = 0;
  for (const ScalePoint& p : used) {
    mx += 1.0 / static_cast<double>(p.workers);
    mt += p.seconds;
  }
  mx /= n;
  mt /= n;
  double sxx = 0;
  double sxt = 0;
  for (const ScalePoint& p : used) {
    const double dx = 1.0 / static_cast<double>(p.workers) - mx;
    sxx += dx * dx;
    sxt += dx * (p.seconds - mt);
  }
  double b = sxt / sxx;
  double a = mt - b * mx;
  if (a < 0) {  // faster than linear: the best fit with no serial part
    double xt = 0;
    double xx = 0;
    for (const ScalePoint& p : used) {
      const double x = 1.0 / static_cast<double>(p.workers);
      xt += x * p.seconds;
      xx += x * x;
    }
    a = 0;
    b = xt / xx;
    fit.constrained = true;
  } else if (b < 0) {  // slower with more workers: nothing parallel at all
    a = mt;
    b = 0;
    fit.constrained = true;
  }
  fit.ok = true;
  fit.serial_s = a;
  fit.parallel_s = b;
  fit.serial_fraction = a + b > 0 ? a / (a + b) : tables::kNaN;
  double ss = 0;
  for (const ScalePoint& p : used) {
    const double r = p.seconds - amdahl_time(fit, static_cast<double>(p.workers));
    ss += r * r;
  }
  fit.rms_residual_s = std::sqrt(ss / n);
  return fit;
}

double amdahl_time(const AmdahlFit& fit, double workers) {
  if (!fit.ok || workers <= 0) return tables::kNaN;
  return fit.serial_s + fit.parallel_s / workers;
}

double amdahl_speedup(const AmdahlFit& fit, double workers) {
  const double t = amdahl_time(fit, workers);
  const double t0 = amdahl_time(fit, static_cast<double>(fit.base_workers));
  return t > 0 ? t0 / t : tables::kNaN;
}

double trapezoid_energy_j(std::span<const double> time_s, std::span<const double> power_w) {
  double energy = 0;
  bool have_prev = false;
  double prev_t = 0;
  double prev_p = 0;
  const size_t n = std::min(time_s.size(), power_w.size());
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(power_w[i]) || std::isnan(time_s[i])) continue;
    if (have_prev) energy += (prev_p + power_w[i]) / 2.0 * (time_s[i] - prev_t);
    prev_t = time_s[i];
    prev_p = power_w[i];
    have_prev = true;
  }
  return energy;
}

double counter_energy_j(std::span<const double> energy_j) {
  double first = tables::kNaN;
  double last = tables::kNaN;
  for (double e : energy_j) {
    if (std::isnan(e)) continue;
    if (std::isnan(first)) first = e;
    last = e;
  }
  return last - first;
}

double rectangle_energy_j(std::span<const double> power_w, double probing_interval_s) {
  double sum = 0;
  for (double p : power_w) {
    if (!std::isnan(p)) sum += p;
  }
  return sum * probing_interval_s;
}

LossAttribution attribute_efficiency_loss(int64_t n0, double t0, std::span<const double> f0, int64_t n1, double t1,
                                          std::span<const double> f1, bool weak) {
  LossAttribution out;
  const size_t k = std::max(f0.size(), f1.size());
  out.parts.assign(k, tables::kNaN);
  out.excess_s.assign(k, tables::kNaN);
  if (n0 <= 0 || n1 <= 0 || !(t0 > 0) || !(t1 > 0)) return out;
  const double shrink = weak ? 1.0 : static_cast<double>(n0) / static_cast<double>(n1);
  out.efficiency = t0 * shrink / t1;
  out.lost = 1.0 - out.efficiency;
  double explained = 0;
  for (size_t i = 0; i < k; ++i) {
    const double a = i < f0.size() ? f0[i] : tables::kNaN;
    const double b = i < f1.size() ? f1[i] : tables::kNaN;
    if (std::isnan(a) || std::isnan(b)) continue;
    out.excess_s[i] = t1 * b - t0 * a * shrink;
    out.parts[i] = out.excess_s[i] / t1;
    explained += out.parts[i];
  }
  out.rest = out.lost - explained;
  return out;
}

std::vector<BestAtScale> best_strategy_per_scale(std::span<const StrategyTime> times) {
  std::map<int64_t, std::vector<const StrategyTime*>> by_workers;
  for (const StrategyTime& t : times) {
    if (!std::isnan(t.seconds)) by_workers[t.workers].push_back(&t);
  }
  std::vector<BestAtScale> out;
  out.reserve(by_workers.size());
  for (auto& [workers, list] : by_workers) {
    std::stable_sort(list.begin(), list.end(), [](const StrategyTime* a, const StrategyTime* b) {
      if (a->seconds != b->seconds) return a->seconds < b->seconds;
      return a->strategy < b->strategy;
    });
    BestAtScale b;
    b.workers = workers;
    b.strategy = list[0]->strategy;
    b.seconds = list[0]->seconds;
    b.candidates = static_cast<int64_t>(list.size());
    if (list.size() > 1) {
      b.runner_up = list[1]->strategy;
      b.runner_up_seconds = list[1]->seconds;
    }
    out.push_back(b);
  }
  return out;
}

}  // namespace scaleprof::analysis
