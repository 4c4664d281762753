/**
 * \file Google Benchmark suite: the attention-forward and fused-mamba tutorial kernels against
 * plain C++ fp32 baselines (bench/attention_mamba_baseline.cpp) in the same run.
 *
 *   attn_fwd_launch            attention_versions()' kAttnVersion on q, k, v [128, kSeqlen] fp32,
 *                              no grid (one instance, one simulated core). Host wall time of the
 *                              whole launch through the Halide executor.
 *   attn_fwd_version_launch/i context: version i of attention_versions() (the tiled ones but v3,
 *                              which stops at seqlen 512) at the same size; the label names it.
 *   attention_baseline_1thread out = softmax(q^T k) v^T in fp32, one thread (the launch runs on one
 *                              core): register-blocked matmuls, scalar std::exp.
 *   attn_fwd_over_baseline     the two alternated in one loop: counter ratio = baseline time /
 *                              kernel time (1 = as fast as the baseline, 0.1 = ten times slower).
 *   mamba_v3_launch            mamba_v3 on delta, u [1, 256, 2048], A [256, 16], B, C [1, 16, 2048]
 *                              fp32, no grid (one core).
 *   mamba_baseline_1thread     the same selective scan in fp32 on one thread, vectorized across
 *                              channels, scalar std::exp.
 *   mamba_v3_over_baseline     alternated: ratio = baseline time / kernel time.
 * Counter GFLOPs (attention) = 4 seqlen^2 d_head / time, the two matmuls' FLOPs.
 * Each kernel (and each baseline) is checked once against its float64 host reference (allclose)
 * before it is timed.
 */
#include <benchmark/benchmark.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "alternate.h"
#include "attention_mamba_baseline.h"
#include "check_once.h"
#include "nki/attention_kernels.h"
#include "nki/kernel_references.h"
#include "nki/mamba.h"
#include "nki/mamba_reference.h"
#include "nki/nki.h"

namespace nl = nki::language;
namespace nk = nki::kernels;
namespace ref = nki::kernels::reference;

namespace {

constexpr const char* kAttnVersion = "attn_fwd_v6";
constexpr std::int64_t kDHead = 128, kSeqlen = 1024;
const nk::MambaDims kMamba{1, 256, 2048, 16};

std::vector<float> ramp(std::int64_t n, std::uint32_t seed, float lo, float hi) {
  std::vector<float> v(static_cast<std::size_t>(n));
  std::uint32_t x = seed;
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = lo + static_cast<float>(x >> 8) / static_cast<float>(1u << 24) * (hi - lo);  // [lo, hi)
  }
  return v;
}

const nk::AttentionVersion& attention_version() {
  for (const nk::AttentionVersion& a : nk::attention_versions())
    if (std::string(a.name) == kAttnVersion) return a;
  throw std::runtime_error(std::string("no attention version ") + kAttnVersion);
}

struct AttentionCase {
  nki::Tensor q, k, v;
  std::vector<float> qf, kf, vf;  ///< the same values for the baseline
  nki::GridSpec grid;
  std::vector<double> want;
};
const AttentionCase& attention_case() {
  static const AttentionCase c = [] {
    const std::int64_t n = kDHead * kSeqlen;
    AttentionCase a{nki::Tensor::from_floats({kDHead, kSeqlen}, nl::float32, ramp(n, 1, -1, 1)),
                    nki::Tensor::from_floats({kDHead, kSeqlen}, nl::float32, ramp(n, 2, -1, 1)),
                    nki::Tensor::from_floats({kDHead, kSeqlen}, nl::float32, ramp(n, 3, -1, 1)),
                    {}, {}, {}, {}, {}};
    a.qf = a.q.to_floats();
    a.kf = a.k.to_floats();
    a.vf = a.v.to_floats();
    a.grid = nk::attention_grid(kAttnVersion, {a.q.shape(), a.k.shape(), a.v.shape()});
    a.want = ref::attention_forward(a.q.to_values(), a.k.to_values(), a.v.to_values(), kDHead, kSeqlen);
    return a;
  }();
  return c;
}
/** The version's own tolerance (docs/kernels.md): atol 1e-2 once it rounds to bf16 inside, else 1e-5; rtol 1e-3. */
ref::Tolerance attention_tolerance() { return {attention_version().bf16_inside ? 1e-2 : 1e-5, 1e-3}; }

nki::LaunchResult attention_launch(const AttentionCase& c) {
  return attention_version().kernel().launch(c.grid).run({c.q, c.k, c.v});
}
void attention_baseline(const AttentionCase& c, std::vector<float>& out, nki_bench::AttentionScratch& scratch) {
  nki_bench::attention_forward_f32(c.qf.data(), c.kf.data(), c.vf.data(), out.data(), kDHead, kSeqlen, scratch);
  benchmark::DoNotOptimize(out.data());
}

struct MambaCase {
  std::vector<nki::Tensor> args;  ///< delta, u, A, B, C
  std::vector<std::vector<float>> f;
  nki::GridSpec grid;
  std::vector<double> want;
};
const MambaCase& mamba_case() {
  static const MambaCase c = [] {
    const nk::MambaDims& d = kMamba;
    const nki::Shape sd{d.batch, d.channels, d.seq_len}, sa{d.channels, d.state_size}, sb{d.batch, d.state_size, d.seq_len};
    const std::int64_t nd = d.batch * d.channels * d.seq_len, na = d.channels * d.state_size,
                       nb = d.batch * d.state_size * d.seq_len;
    MambaCase m;
    // The tutorial's ranges: delta a softplus output (> 0), A negative (the state decays).
    m.args = {nki::Tensor::from_floats(sd, nl::float32, ramp(nd, 1, 0.0f, 0.2f)),
              nki::Tensor::from_floats(sd, nl::float32, ramp(nd, 2, -1.0f, 1.0f)),
              nki::Tensor::from_floats(sa, nl::float32, ramp(na, 3, -2.0f, -0.1f)),
              nki::Tensor::from_floats(sb, nl::float32, ramp(nb, 4, -1.0f, 1.0f)),
              nki::Tensor::from_floats(sb, nl::float32, ramp(nb, 5, -1.0f, 1.0f))};
    for (const nki::Tensor& t : m.args) m.f.push_back(t.to_floats());
    m.grid = nk::mamba_v3_grid({sd, sd, sa, sb, sb});
    m.want = ref::mamba(m.args[0].to_values(), m.args[1].to_values(), m.args[2].to_values(), m.args[3].to_values(),
                        m.args[4].to_values(), d);
    return m;
  }();
  return c;
}
nki::LaunchResult mamba_launch(const MambaCase& c) { return nk::mamba_v3().launch(c.grid).run(c.args); }
void mamba_baseline(const MambaCase& c, std::vector<float>& out, nki_bench::MambaScratch& scratch) {
  const nk::MambaDims& d = kMamba;
  nki_bench::mamba_f32(c.f[0].data(), c.f[1].data(), c.f[2].data(), c.f[3].data(), c.f[4].data(), out.data(), d.batch,
                       d.channels, d.seq_len, d.state_size, scratch);
  benchmark::DoNotOptimize(out.data());
}
constexpr ref::Tolerance kMambaTolerance{1e-5, 1e-3};

/** Once per process: the kernel's and the baseline's outputs allclose to the reference; else the benchmark stops. */
bool checked(benchmark::State& state, const char* name, const std::function<std::string()>& check) {
  const std::string& mismatch = nki_bench::check_once(name, check);
  if (mismatch.empty()) return true;
  state.SkipWithError((std::string(name) + ": " + mismatch).c_str());
  return false;
}
bool attention_checked(benchmark::State& state) {
  return checked(state, "attention", [] {
    const AttentionCase& c = attention_case();
    std::string m = ref::allclose_mismatch(attention_launch(c).outputs.at(0).to_values(), c.want, attention_tolerance());
    if (!m.empty()) return std::string(kAttnVersion) + ": " + m;
    std::vector<float> out(static_cast<std::size_t>(kSeqlen * kDHead));
    nki_bench::AttentionScratch scratch;
    attention_baseline(c, out, scratch);
    m = ref::allclose_mismatch({out.begin(), out.end()}, c.want, {1e-5, 1e-3});
    return m.empty() ? m : "attention baseline: " + m;
  });
}
bool mamba_checked(benchmark::State& state) {
  return checked(state, "mamba", [] {
    const MambaCase& c = mamba_case();
    std::string m = ref::allclose_mismatch(mamba_launch(c).outputs.at(0).to_values(), c.want, kMambaTolerance);
    if (!m.empty()) return "mamba_v3: " + m;
    std::vector<float> out(c.want.size());
    nki_bench::MambaScratch scratch;
    mamba_baseline(c, out, scratch);
    m = ref::allclose_mismatch({out.begin(), out.end()}, c.want, kMambaTolerance);
    return m.empty() ? m : "mamba baseline: " + m;
  });
}

void attention_flops(benchmark::State& state) {
  state.counters["GFLOPs"] = benchmark::Counter(4.0 * kSeqlen * kSeqlen * kDHead, benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}

void attn_fwd_launch(benchmark::State& state) {
  if (!attention_checked(state)) return;
  const AttentionCase& c = attention_case();
  state.SetLabel(std::string(kAttnVersion) + ", seqlen " + std::to_string(kSeqlen));
  for (auto _ : state) benchmark::DoNotOptimize(attention_launch(c));
  attention_flops(state);
}
BENCHMARK(attn_fwd_launch)->Unit(benchmark::kMillisecond)->UseRealTime();

/** Context: every tiled version (seqlen a multiple of 512) at the same size, each checked once with its own tolerance. */
void attn_fwd_version_launch(benchmark::State& state) {
  const nk::AttentionVersion& a = nk::attention_versions().at(static_cast<std::size_t>(state.range(0)));
  const AttentionCase& c = attention_case();
  state.SetLabel(a.name);
  nki::GridSpec grid;
  try {
    grid = nk::attention_grid(a.name, {c.q.shape(), c.k.shape(), c.v.shape()});
    if (!checked(state, a.name, [&] {
          return ref::allclose_mismatch(a.kernel().launch(grid).run({c.q, c.k, c.v}).outputs.at(0).to_values(), c.want,
                                        {a.bf16_inside ? 1e-2 : 1e-5, 1e-3});
        }))
      return;
  } catch (const std::exception& e) {  // the version refuses the shape
    state.SkipWithError((std::string(a.name) + ": " + e.what()).c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(a.kernel().launch(grid).run({c.q, c.k, c.v}));
  attention_flops(state);
}
/** The tiled versions but v3, whose one PSUM array of all q tiles' blocks does not fit past seqlen 512. */
void tiled_versions(benchmark::internal::Benchmark* b) {
  for (std::size_t i = 0; i < nk::attention_versions().size(); ++i) {
    const nk::AttentionVersion& a = nk::attention_versions()[i];
    if (a.min_seqlen > 128 && (kSeqlen <= 512 || std::string(a.name) != "attn_fwd_v3")) b->Arg(static_cast<std::int64_t>(i));
  }
}
BENCHMARK(attn_fwd_version_launch)->Apply(tiled_versions)->Unit(benchmark::kMillisecond)->UseRealTime();

void attention_baseline_1thread(benchmark::State& state) {
  if (!attention_checked(state)) return;
  const AttentionCase& c = attention_case();
  std::vector<float> out(static_cast<std::size_t>(kSeqlen * kDHead));
  nki_bench::AttentionScratch scratch;
  for (auto _ : state) attention_baseline(c, out, scratch);
  attention_flops(state);
}
BENCHMARK(attention_baseline_1thread)->Unit(benchmark::kMillisecond)->UseRealTime();

void mamba_v3_launch(benchmark::State& state) {
  if (!mamba_checked(state)) return;
  const MambaCase& c = mamba_case();
  for (auto _ : state) benchmark::DoNotOptimize(mamba_launch(c));
}
BENCHMARK(mamba_v3_launch)->Unit(benchmark::kMillisecond)->UseRealTime();

void mamba_baseline_1thread(benchmark::State& state) {
  if (!mamba_checked(state)) return;
  const MambaCase& c = mamba_case();
  std::vector<float> out(c.want.size());
  nki_bench::MambaScratch scratch;
  for (auto _ : state) mamba_baseline(c, out, scratch);
}
BENCHMARK(mamba_baseline_1thread)->Unit(benchmark::kMillisecond)->UseRealTime();

void attn_fwd_over_baseline(benchmark::State& state) {
  if (!attention_checked(state)) return;
  const AttentionCase& c = attention_case();
  std::vector<float> out(static_cast<std::size_t>(kSeqlen * kDHead));
  nki_bench::AttentionScratch scratch;
  nki_bench::alternate(
      state, [&] { benchmark::DoNotOptimize(attention_launch(c)); }, [&] { attention_baseline(c, out, scratch); });
}
BENCHMARK(attn_fwd_over_baseline)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(6);

void mamba_v3_over_baseline(benchmark::State& state) {
  if (!mamba_checked(state)) return;
  const MambaCase& c = mamba_case();
  std::vector<float> out(c.want.size());
  nki_bench::MambaScratch scratch;
  nki_bench::alternate(state, [&] { benchmark::DoNotOptimize(mamba_launch(c)); }, [&] { mamba_baseline(c, out, scratch); });
}
BENCHMARK(mamba_v3_over_baseline)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(6);

}  // namespace

BENCHMARK_MAIN();
