/**
 * \file Collectives on simulated NeuronCores against host references, bit for bit (fp32 and
 * bf16), and the errors raised before any core starts. The same file runs on both backends:
 * in the in-process suite (one process runs every device) and in the MPI suite under
 * mpirun -np 2 and -np 4 (each rank runs its share of the devices, tests/mpi/).
 */
#include <bit>
#include <cmath>
#include <cstring>

#include "nki/collectives.h"
#include "nki/communicator.h"
#include "nki/sharded_tensor.h"
#include "test_support.h"

namespace {

using Buffers = std::vector<nki::Tensor>;

const nki::sim::Device& eight_cores() {
  static const nki::sim::Device device("trn2", 8);
  return device;
}

const nki::Mesh xy = nki::Mesh::iota({2, 4}, {"x", "y"});

/** Device i's values: random, with NaN, infinities and signed zeros sprinkled in at different places per device. */
std::vector<float> values_of(int device, std::size_t n) {
  std::vector<float> v = test::random_floats(n, 1000 + static_cast<std::uint32_t>(device), -100.0f, 100.0f);
  for (std::size_t i = static_cast<std::size_t>(device); i < n; i += 37) v[i] *= 1e-3f;
  if (n > 40) {
    v[(7 * static_cast<std::size_t>(device) + 3) % n] = std::bit_cast<float>(0x7fa00001u);  // a signalling NaN
    v[(11 * static_cast<std::size_t>(device) + 5) % n] = device % 2 ? INFINITY : -INFINITY;
    v[(13 * static_cast<std::size_t>(device) + 1) % n] = -0.0f;
  }
  return v;
}

/** The world devices this process runs: rank r of n runs [r*devices/n, (r+1)*devices/n). */
struct Share {
  int first = 0, count = 0;
  bool has(int d) const { return d >= first && d < first + count; }
};
Share share_of(int devices) {
  const nki::Communicator& c = nki::communicator();
  REQUIRE(devices % c.ranks() == 0);
  return {c.rank() * devices / c.ranks(), devices / c.ranks()};
}

/** This process's buffers out of the world's. */
Buffers local(const Buffers& world) {
  const Share s = share_of(static_cast<int>(world.size()));
  return Buffers(world.begin() + s.first, world.begin() + s.first + s.count);
}

/** A collective's outputs by world device id: only this process's devices are present. */
struct Outputs {
  Share share;
  Buffers mine;
  bool has(int d) const { return share.has(d); }
  const nki::Tensor& operator[](int d) const { return mine.at(static_cast<std::size_t>(d - share.first)); }
};

/** Runs `collective` on this process's share of the world's buffers. */
template <class F>
Outputs run_local(const Buffers& world, F collective) {
  Outputs o{share_of(static_cast<int>(world.size())), collective(local(world))};
  REQUIRE(o.mine.size() == static_cast<std::size_t>(o.share.count));
  return o;
}

/** Every world device's input (each process can make them all: they are a function of the id). */
Buffers make_buffers(int devices, const nki::Shape& shape, nki::DType dtype) {
  Buffers b;
  for (int d = 0; d < devices; ++d) {
    b.push_back(nki::Tensor::from_floats(shape, dtype, values_of(d, static_cast<std::size_t>(nki::shape_elements(shape))),
                                         eight_cores()));
  }
  return b;
}

// ---- the host reference: one element, one group, left to right in group order ----

float host_combine(nki::ReduceOp op, float a, float b) {
  switch (op) {
    case nki::ReduceOp::sum: return a + b;
    case nki::ReduceOp::max: return std::isnan(a) ? a : std::isnan(b) ? b : (a >= b ? a : b);
    case nki::ReduceOp::min: return std::isnan(a) ? a : std::isnan(b) ? b : (a <= b ? a : b);
  }
  return a;
}

/** Float copies of every buffer, read once (to_floats is per call). */
std::vector<std::vector<float>> floats_of(const Buffers& in) {
  std::vector<std::vector<float>> f;
  for (const nki::Tensor& t : in) f.push_back(t.to_floats());
  return f;
}

std::vector<std::uint8_t> element_bits(const nki::Tensor& t, std::int64_t e) {
  const int eb = nki::dtype_bytes(t.dtype());
  const auto* p = reinterpret_cast<const std::uint8_t*>(t.data()) + e * eb;
  return {p, p + eb};
}

/** The bits of `v` rounded to `dtype` (nearest even). */
std::vector<std::uint8_t> bits_in(float v, nki::DType dtype) {
  std::vector<std::uint8_t> bits(static_cast<std::size_t>(nki::dtype_bytes(dtype)));
  nki::store_element(bits.data(), dtype, v);
  return bits;
}

int group_of(const nki::GroupList& groups, int device, std::size_t* position) {
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (std::size_t k = 0; k < groups[g].size(); ++k)
      if (groups[g][k] == device) {
        *position = k;
        return static_cast<int>(g);
      }
  FAIL("device not in any group");
  return -1;
}

const nki::DType kDtypes[] = {nki::DType::fp32, nki::DType::bf16};

}  // namespace

TEST_CASE("all_reduce: sum, max and min are bit-identical to the host reference in group order, fp32 and bf16") {
  for (const nki::DType dtype : kDtypes) {
    for (const nki::ReduceOp op : {nki::ReduceOp::sum, nki::ReduceOp::max, nki::ReduceOp::min}) {
      for (const std::vector<std::string>& axes : std::vector<std::vector<std::string>>{{"y"}, {"x"}, {"y", "x"}, {}}) {
        std::vector<nki::AxisRef> refs;
        for (const std::string& a : axes) refs.push_back(nki::AxisRef::parse(a));
        const nki::GroupList groups = nki::replica_groups(xy, refs).groups;
        CAPTURE(nki::dtype_name(dtype));
        CAPTURE(static_cast<int>(op));
        CAPTURE(axes.size());
        const Buffers in = make_buffers(8, {37, 29}, dtype);
        const Outputs out = run_local(in, [&](const Buffers& b) { return nki::all_reduce(b, op, groups); });
        const auto f = floats_of(in);
        for (int d = 0; d < 8; ++d) {
          if (!out.has(d)) continue;
          std::size_t pos = 0;
          const std::vector<int>& group = groups[static_cast<std::size_t>(group_of(groups, d, &pos))];
          CHECK(out[d].shape() == nki::Shape{37, 29});
          for (std::int64_t e = 0; e < 37 * 29; ++e) {
            float acc = f[static_cast<std::size_t>(group[0])][static_cast<std::size_t>(e)];
            for (std::size_t k = 1; k < group.size(); ++k)
              acc = host_combine(op, acc, f[static_cast<std::size_t>(group[k])][static_cast<std::size_t>(e)]);
            if (std::isnan(acc)) acc = std::bit_cast<float>(0x7fc00000u);
            REQUIRE_MESSAGE(element_bits(out[d], e) == bits_in(acc, dtype), "device " << d << " element " << e);
          }
        }
      }
    }
  }
}

TEST_CASE("all_reduce: the sum is taken in group order, the first member first") {
  // (1e8 + 1) - 1e8 + 1 in fp32: 1e8 + 1 rounds to 1e8, so the result is 1, not 2.
  const float vals[] = {1e8f, 1.0f, -1e8f, 1.0f};
  Buffers in;
  for (float v : vals) in.push_back(nki::Tensor::from_floats({1}, nki::DType::fp32, std::vector<float>{v}, eight_cores()));
  for (const nki::Tensor& t : nki::all_reduce(local(in), nki::ReduceOp::sum)) CHECK(t.to_floats()[0] == 1.0f);
  for (const nki::Tensor& t : nki::all_reduce(local(in), nki::ReduceOp::sum, {{1, 3, 0, 2}}))
    CHECK(t.to_floats()[0] == 0.0f);
}

TEST_CASE("all_reduce: a sharded tensor's shards over mesh axis x, from mark_sharding") {
  const nki::Tensor t = nki::Tensor::from_floats({8, 4}, nki::DType::fp32, test::random_floats(32, 5), eight_cores());
  const nki::ShardedTensor st = nki::mark_sharding(t, xy, nki::PartitionSpec::parse("('x', 'y')"));
  const Outputs out = run_local(st.shards(), [](const Buffers& b) {
    return nki::all_reduce(b, nki::ReduceOp::sum, nki::replica_groups(xy, {nki::AxisRef{"x"}}).groups);
  });
  // Device x*4 + y holds rows [4x, 4x+4) col y; over x it gets rows r + rows r+4 of column y.
  const std::vector<float> v = t.to_floats();
  for (int d = 0; d < 8; ++d) {
    if (!out.has(d)) continue;
    const int y = d % 4;
    const std::vector<float> got = out[d].to_floats();
    for (int r = 0; r < 4; ++r) CHECK(got[static_cast<std::size_t>(r)] == v[static_cast<std::size_t>(r * 4 + y)] + v[static_cast<std::size_t>((r + 4) * 4 + y)]);
  }
}

TEST_CASE("all_gather: concatenating and stacking, group order, fp32 and bf16") {
  const nki::GroupList groups = nki::replica_groups(xy, {nki::AxisRef{"x"}}).groups;  // {0,4},{1,5},...
  for (const nki::DType dtype : kDtypes) {
    const Buffers in = make_buffers(8, {3, 5}, dtype);
    SUBCASE("concat dim 0") {
      const Outputs out = run_local(in, [&](const Buffers& b) { return nki::all_gather(b, 0, groups); });
      for (int d = 0; d < 8; ++d) {
        if (!out.has(d)) continue;
        CHECK(out[d].shape() == nki::Shape{6, 5});
        const int lo = d % 4, hi = lo + 4;
        for (std::int64_t e = 0; e < 15; ++e) {
          CHECK(element_bits(out[d], e) == element_bits(in[lo], e));
          CHECK(element_bits(out[d], 15 + e) == element_bits(in[hi], e));
        }
      }
    }
    SUBCASE("concat dim 1") {
      const Outputs out = run_local(in, [&](const Buffers& b) { return nki::all_gather(b, 1, groups); });
      CHECK(out.mine.front().shape() == nki::Shape{3, 10});
      if (out.has(6))
        for (std::int64_t r = 0; r < 3; ++r)
        for (std::int64_t c = 0; c < 10; ++c)
          CHECK(element_bits(out[6], r * 10 + c) == element_bits(in[c < 5 ? 2 : 6], r * 5 + c % 5));
    }
    SUBCASE("stack dim 1") {
      const Outputs out =
          run_local(in, [&](const Buffers& b) { return nki::all_gather(b, 1, groups, nki::GatherMode::stack); });
      CHECK(out.mine.front().shape() == nki::Shape{3, 2, 5});
      if (out.has(1))
        for (std::int64_t r = 0; r < 3; ++r)
        for (std::int64_t k = 0; k < 2; ++k)
          for (std::int64_t c = 0; c < 5; ++c)
            CHECK(element_bits(out[1], (r * 2 + k) * 5 + c) == element_bits(in[k == 0 ? 1 : 5], r * 5 + c));
    }
    SUBCASE("stack at the end") {
      const Outputs out = run_local(in, [](const Buffers& b) { return nki::all_gather(b, 2, {}, nki::GatherMode::stack); });
      CHECK(out.mine.front().shape() == nki::Shape{3, 5, 8});
      if (out.has(3))
        for (std::int64_t e = 0; e < 15; ++e)
        for (std::int64_t k = 0; k < 8; ++k) CHECK(element_bits(out[3], e * 8 + k) == element_bits(in[k], e));
    }
  }
}

TEST_CASE("all_gather: gathering the shards of a sharded tensor over both axes rebuilds it on every device") {
  const nki::Tensor t = nki::Tensor::from_floats({8, 4}, nki::DType::bf16, test::random_floats(32, 9), eight_cores());
  const nki::ShardedTensor st = nki::mark_sharding(t, xy, nki::PartitionSpec::parse("(('x', 'y'), None)"));
  for (const nki::Tensor& whole : nki::all_gather(local(st.shards()), 0)) CHECK(test::bytes_of(whole) == test::bytes_of(t));
}

TEST_CASE("reduce_scatter: the member at position p gets part p of the reduction, fp32 and bf16") {
  const nki::GroupList groups = nki::replica_groups(xy, {nki::AxisRef{"y"}}).groups;  // {0,1,2,3},{4,5,6,7}
  for (const nki::DType dtype : kDtypes) {
    for (const nki::ReduceOp op : {nki::ReduceOp::sum, nki::ReduceOp::max}) {
      const Buffers in = make_buffers(8, {3, 8, 5}, dtype);
      const Outputs out = run_local(in, [&](const Buffers& b) { return nki::reduce_scatter(b, op, 1, groups); });
      const auto f = floats_of(in);
      for (int d = 0; d < 8; ++d) {
        if (!out.has(d)) continue;
        CHECK(out[d].shape() == nki::Shape{3, 2, 5});
        const std::vector<int>& group = groups[static_cast<std::size_t>(d / 4)];
        const int p = d % 4;
        for (std::int64_t a = 0; a < 3; ++a)
          for (std::int64_t b = 0; b < 2; ++b)
            for (std::int64_t c = 0; c < 5; ++c) {
              const std::size_t src = static_cast<std::size_t>((a * 8 + p * 2 + b) * 5 + c);
              float acc = f[static_cast<std::size_t>(group[0])][src];
              for (std::size_t k = 1; k < group.size(); ++k) acc = host_combine(op, acc, f[static_cast<std::size_t>(group[k])][src]);
              if (std::isnan(acc)) acc = std::bit_cast<float>(0x7fc00000u);
              REQUIRE(element_bits(out[d], (a * 2 + b) * 5 + c) == bits_in(acc, dtype));
            }
      }
    }
  }
}

TEST_CASE("all_to_all: part p of every member goes to member p, concatenated in group order, fp32 and bf16") {
  const nki::GroupList groups = nki::replica_groups(xy, {nki::AxisRef{"y"}}).groups;
  for (const nki::DType dtype : kDtypes) {
    const Buffers in = make_buffers(8, {8, 3}, dtype);
    SUBCASE("split 0, concat 1") {
      const Outputs out = run_local(in, [&](const Buffers& b) { return nki::all_to_all(b, 0, 1, groups); });
      for (int d = 0; d < 8; ++d) {
        if (!out.has(d)) continue;
        CHECK(out[d].shape() == nki::Shape{2, 12});
        const int p = d % 4, base = d / 4 * 4;
        for (std::int64_t r = 0; r < 2; ++r)
          for (std::int64_t c = 0; c < 12; ++c)
            CHECK(element_bits(out[d], r * 12 + c) == element_bits(in[base + c / 3], (p * 2 + r) * 3 + c % 3));
      }
    }
    SUBCASE("split 0, concat 0") {
      const Outputs out = run_local(in, [&](const Buffers& b) { return nki::all_to_all(b, 0, 0, groups); });
      CHECK(out.mine.front().shape() == nki::Shape{8, 3});
      if (out.has(5))
        for (std::int64_t r = 0; r < 8; ++r)
        for (std::int64_t c = 0; c < 3; ++c)
          CHECK(element_bits(out[5], r * 3 + c) == element_bits(in[4 + r / 2], (1 * 2 + r % 2) * 3 + c));
    }
  }
}

TEST_CASE("collective_permute: targets get their source's buffer, devices no pair names get zeros") {
  for (const nki::DType dtype : kDtypes) {
    const Buffers in = make_buffers(4, {6, 2}, dtype);
    const Outputs out = run_local(in, [](const Buffers& b) { return nki::collective_permute(b, {{0, 1}, {1, 2}, {2, 3}}); });
    for (int d = 1; d < 4; ++d)
      if (out.has(d)) CHECK(test::bytes_of(out[d]) == test::bytes_of(in[d - 1]));
    if (out.has(0)) CHECK(test::bytes_of(out[0]) == std::vector<std::uint8_t>(static_cast<std::size_t>(in[0].bytes()), 0));
  }
}

TEST_CASE("collectives: buffers of different shapes or dtypes are refused before any core starts") {
  Buffers in = make_buffers(4, {4, 4}, nki::DType::fp32);
  in[2] = nki::Tensor::from_floats({4, 5}, nki::DType::fp32, std::vector<float>(20, 1.0f), eight_cores());
  CHECK(test::user_error_of([&] { nki::all_reduce(local(in), nki::ReduceOp::sum); }) ==
        "all_reduce: err_collective_shape_mismatch: device 2's buffer is fp32[4,5] but device 0's is fp32[4,4]; every "
        "device must pass the same shape and dtype");
  in[2] = nki::Tensor::from_floats({4, 4}, nki::DType::bf16, std::vector<float>(16, 1.0f), eight_cores());
  CHECK(test::user_error_of([&] { nki::all_gather(local(in), 0); }) ==
        "all_gather: err_collective_shape_mismatch: device 2's buffer is bf16[4,4] but device 0's is fp32[4,4]; every "
        "device must pass the same shape and dtype");
  CHECK(test::user_error_of([&] { nki::collective_permute(local(in), {{0, 1}}); }) ==
        "collective_permute: err_collective_shape_mismatch: device 2's buffer is bf16[4,4] but device 0's is "
        "fp32[4,4]; every device must pass the same shape and dtype");
  CHECK(test::user_error_of([] { nki::all_reduce({}, nki::ReduceOp::sum); }) ==
        "all_reduce: err_collective_shape_mismatch: no buffers given; pass one per device");
}

TEST_CASE("collectives: groups that are not a partition of the devices into equal groups are refused") {
  const Buffers in = make_buffers(4, {4, 4}, nki::DType::fp32);
  using test::user_error_of;
  CHECK(user_error_of([&] { nki::all_reduce(local(in), nki::ReduceOp::sum, {{0, 1}, {1, 2}}); }) ==
        "all_reduce: err_invalid_replica_groups: device 1 appears twice in [[0,1],[1,2]] (groups 0 and 1)");
  CHECK(user_error_of([&] { nki::all_reduce(local(in), nki::ReduceOp::sum, {{0, 1}, {2}}); }) ==
        "all_reduce: err_invalid_replica_groups: groups [[0,1],[2]] differ in size: group 0 has 2 devices, group 1 has 1");
  CHECK(user_error_of([&] { nki::reduce_scatter(local(in), nki::ReduceOp::sum, 0, {{0, 1}, {2, 4}}); }) ==
        "reduce_scatter: err_invalid_replica_groups: device 4 in group 1 of [[0,1],[2,4]] is out of range: 4 buffers "
        "were given (devices 0 to 3)");
  CHECK(user_error_of([&] { nki::all_to_all(local(in), 0, 1, {{0, 1}, {3, 2}, {}}); }) ==
        "all_to_all: err_invalid_replica_groups: group 2 of [[0,1],[3,2],[]] is empty");
  CHECK(user_error_of([&] { nki::all_gather(local(in), 0, {{0, 1}}); }) ==
        "all_gather: err_invalid_replica_groups: device 2 is in no group of [[0,1]]; with 4 buffers every device 0 to 3 "
        "must be in one");
}

TEST_CASE("collectives: dimensions out of range, or not divisible by the group size, are refused") {
  const Buffers in = make_buffers(4, {6, 4}, nki::DType::fp32);
  using test::user_error_of;
  CHECK(user_error_of([&] { nki::all_gather(local(in), 2); }) ==
        "all_gather: err_collective_invalid_dim: dim 2 is out of range for buffers of shape [6,4] (0 to 1)");
  CHECK(user_error_of([&] { nki::all_gather(local(in), 3, {}, nki::GatherMode::stack); }) ==
        "all_gather: err_collective_invalid_dim: stack dim 3 is out of range for buffers of shape [6,4] (0 to 2)");
  CHECK(user_error_of([&] { nki::reduce_scatter(local(in), nki::ReduceOp::sum, 0); }) ==
        "reduce_scatter: err_collective_invalid_dim: dim 0 has size 6, which does not split into 4 equal parts (the "
        "group size); buffers are [6,4]");
  CHECK(user_error_of([&] { nki::all_to_all(local(in), 0, 1); }) ==
        "all_to_all: err_collective_invalid_dim: split_dim 0 has size 6, which does not split into 4 equal parts (the "
        "group size); buffers are [6,4]");
  CHECK(user_error_of([&] { nki::all_to_all(local(in), 1, -1); }) ==
        "all_to_all: err_collective_invalid_dim: concat_dim -1 is out of range for buffers of shape [6,4] (0 to 1)");
}

TEST_CASE("collective_permute: pairs out of range, or naming a target or source twice, are refused") {
  const Buffers in = make_buffers(4, {2}, nki::DType::fp32);
  using test::user_error_of;
  CHECK(user_error_of([&] { nki::collective_permute(local(in), {{0, 4}}); }) ==
        "collective_permute: err_invalid_source_target_pairs: pair (0,4) names device 4, out of range: 4 buffers were "
        "given (devices 0 to 3)");
  CHECK(user_error_of([&] { nki::collective_permute(local(in), {{1, 3}, {2, 3}}); }) ==
        "collective_permute: err_invalid_source_target_pairs: device 3 is the target of pairs (1,3) and (2,3); a device "
        "receives at most once");
  CHECK(user_error_of([&] { nki::collective_permute(local(in), {{1, 2}, {1, 3}}); }) ==
        "collective_permute: err_invalid_source_target_pairs: device 1 is the source of two pairs; a device sends at "
        "most once");
}
