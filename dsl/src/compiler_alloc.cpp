/** \file nki.compiler's allocators (sbuf / psum alloc and mod_alloc): placements and their checks. */
#include "compiler_alloc.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "nki/tile_limits.h"

namespace nki::compiler {

namespace {

constexpr std::int64_t kPsumBankBytes = tile_limits::psum_partition_bytes / 8;  // 2 KiB
constexpr std::int64_t kPsumBanks = 8;
/** alloc(func) is called once per block at trace time; more blocks than this is refused, not a hang. */
constexpr std::int64_t kMaxAllocBlocks = 1 << 16;

bool is_psum_allocation(const allocation& a) { return a.memory == language::buffer::psum; }

const char* allocator_name(const allocation& a) {
  if (is_psum_allocation(a)) return a.modulo ? "nki.compiler.psum.mod_alloc" : "nki.compiler.psum.alloc";
  return a.modulo ? "nki.compiler.sbuf.mod_alloc" : "nki.compiler.sbuf.alloc";
}

/** Bytes per partition of one block: the dimensions after the partition dimension. */
std::int64_t block_bytes(const Shape& shape, int par, DType dtype) {
  std::int64_t n = dtype_bytes(dtype);
  for (std::size_t d = static_cast<std::size_t>(par) + 1; d < shape.size(); ++d) n *= shape[d];
  return n;
}

/** Physical blocks of a placement: the product of its storage's block dimensions. */
std::int64_t physical_blocks(const ir::TensorDecl& t) {
  std::int64_t n = 1;
  for (int d = 0; d < t.par_dim; ++d) n *= t.placement.storage[static_cast<std::size_t>(d)];
  return n;
}

/** Where a placed array is, per partition: partitions [p0, p1); SBUF bytes or PSUM banks [b0, b1) with bytes [a0, a1) in each. */
struct PlacedRange {
  std::int64_t p0, p1, b0, b1, a0, a1;
};

PlacedRange placed_range(const ir::TensorDecl& t) {
  const ir::Placement& p = t.placement;
  const std::int64_t parts = t.shape[static_cast<std::size_t>(t.par_dim)];
  const std::int64_t bytes = block_bytes(t.shape, t.par_dim, t.dtype);
  const std::int64_t n = physical_blocks(t);
  if (t.memory == ir::Memory::psum) return {p.partition, p.partition + parts, p.bank, p.bank + n, p.address, p.address + bytes};
  return {p.partition, p.partition + parts, 0, 1, p.address, p.address + n * bytes};
}

std::string range_str(const ir::TensorDecl& t) {
  const PlacedRange r = placed_range(t);
  if (t.memory == ir::Memory::psum)
    return fmt::format("partitions [{}, {}) banks [{}, {}) bytes [{}, {}) of each bank", r.p0, r.p1, r.b0, r.b1, r.a0, r.a1);
  return fmt::format("partitions [{}, {}) bytes [{}, {})", r.p0, r.p1, r.a0, r.a1);
}

std::string array_str(const ir::TensorDecl& t) {
  return fmt::format("tensor {} {}{}", t.name, dtype_name(t.dtype), shape_str(t.shape));
}

[[noreturn]] void refuse_func(Trace& t, const allocation& a, const SourceLoc& loc, const std::string& why) {
  t.fail("err_unsupported_allocation", loc,
         fmt::format("{}: {}; supported are a modulo placement (block b at b mod n along each block dimension) "
                     "and a one-to-one placement of the blocks side by side",
                     allocator_name(a), why));
}

/**
 * alloc(func): evaluates func for every block and reads it as a modulo placement. Blocks at one
 * address share memory; those classes must be the classes of b mod n (n per block dimension),
 * and the distinct addresses must lie side by side (SBUF: one block's bytes apart; PSUM: one
 * bank apart at one byte offset). Which physical block holds which class does not matter: no
 * other array shares the range, so a permutation of blocks cannot be observed.
 */
ir::Placement place_by_func(Trace& t, const allocation& a, const Shape& shape, int par, DType dtype,
                            const SourceLoc& loc) {
  const bool psum = is_psum_allocation(a);
  const Shape blocks(shape.begin(), shape.begin() + par);
  const std::int64_t count = shape_elements(blocks);
  if (count > kMaxAllocBlocks)
    refuse_func(t, a, loc, fmt::format("the array has {} blocks, more than the {} evaluated at trace time", count, kMaxAllocBlocks));
  const std::int64_t pdim = shape[static_cast<std::size_t>(par)];
  const std::int64_t fbytes = block_bytes(shape, par, dtype);
  std::vector<std::int64_t> linear(static_cast<std::size_t>(count));
  std::vector<std::int64_t> idx(blocks.size(), 0);
  std::int64_t partition = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    std::int64_t rest = i;
    for (std::size_t d = blocks.size(); d-- > 0;) {
      idx[d] = rest % blocks[d];
      rest /= blocks[d];
    }
    const auto [bank, part, addr] = a.func(idx, pdim, fbytes);
    if (i == 0) partition = part;
    if (part != partition)
      refuse_func(t, a, loc, fmt::format("block [{}] starts at partition {}, block 0 at {}: blocks tiled along partitions are not supported",
                                         fmt::join(idx, ","), part, partition));
    if (bank < 0 || addr < 0 || part < 0)
      t.fail("err_invalid_allocation", loc,
             fmt::format("{}: block [{}] is placed at {}partition {}, byte {}; each must be >= 0", allocator_name(a),
                         fmt::join(idx, ","), psum ? fmt::format("bank {}, ", bank) : "", part, addr));
    linear[static_cast<std::size_t>(i)] = psum ? bank * kPsumBankBytes + addr : addr;
  }
  // The period along each block dimension: the first block there back at block 0's address.
  const std::vector<std::int64_t> strides = row_major_strides(blocks);
  Shape storage = shape;
  for (std::size_t d = 0; d < blocks.size(); ++d) {
    for (std::int64_t k = 1; k < blocks[d]; ++k) {
      if (linear[static_cast<std::size_t>(k * strides[d])] == linear[0]) {
        storage[d] = k;
        break;
      }
    }
  }
  const Shape physical(storage.begin(), storage.begin() + par);
  const std::vector<std::int64_t> pstrides = row_major_strides(physical);
  std::map<std::int64_t, std::pair<std::int64_t, std::string>> slot_of;  // address -> physical block, first block there
  for (std::int64_t i = 0; i < count; ++i) {
    std::int64_t rest = i, phys = 0;
    for (std::size_t d = blocks.size(); d-- > 0;) {
      idx[d] = rest % blocks[d];
      rest /= blocks[d];
      phys += idx[d] % physical[d] * pstrides[d];
    }
    const std::int64_t at = linear[static_cast<std::size_t>(i)];
    const auto [it, fresh] = slot_of.emplace(at, std::pair{phys, fmt::format("[{}]", fmt::join(idx, ","))});
    if (!fresh && it->second.first != phys)
      refuse_func(t, a, loc, fmt::format("blocks {} and [{}] share address {} but differ modulo {}", it->second.second,
                                         fmt::join(idx, ","), at, shape_str(physical)));
  }
  if (static_cast<std::int64_t>(slot_of.size()) != shape_elements(physical))
    refuse_func(t, a, loc, fmt::format("{} blocks modulo {} take {} addresses, not one each", count, shape_str(physical),
                                       slot_of.size()));
  const std::int64_t step = psum ? kPsumBankBytes : fbytes;
  const std::int64_t lo = slot_of.begin()->first;
  std::int64_t prev = lo;
  for (const auto& entry : slot_of) {
    const std::int64_t at = entry.first;
    if (at != lo && at != prev + step)
      refuse_func(t, a, loc, fmt::format("the blocks' addresses are not side by side: after {} comes {}, one block "
                                         "({} bytes) further is {}",
                                         prev, at, step, prev + step));
    prev = at;
  }
  ir::Placement p;
  p.placed = true;
  p.partition = partition;
  p.bank = psum ? lo / kPsumBankBytes : 0;
  p.address = psum ? lo % kPsumBankBytes : lo;
  p.storage = storage;
  return p;
}

}  // namespace

allocation sbuf::mod_alloc(const mod_alloc_options& opt) {
  allocation a;
  a.memory = language::buffer::sbuf;
  a.base_addr = opt.base_addr;
  a.base_partition = opt.base_partition;
  a.num_par_tiles = opt.num_par_tiles;
  a.num_tiles = opt.num_free_tiles;
  return a;
}

allocation sbuf::alloc(std::function<std::pair<std::int64_t, std::int64_t>(std::span<const std::int64_t>, std::int64_t,
                                                                           std::int64_t)>
                           func) {
  allocation a;
  a.memory = language::buffer::sbuf;
  a.modulo = false;
  a.func = [f = std::move(func)](std::span<const std::int64_t> idx, std::int64_t pdim, std::int64_t fdim) {
    const auto [part, addr] = f(idx, pdim, fdim);
    return std::tuple<std::int64_t, std::int64_t, std::int64_t>{0, part, addr};
  };
  return a;
}

allocation psum::mod_alloc(const mod_alloc_options& opt) {
  allocation a;
  a.memory = language::buffer::psum;
  a.base_bank = opt.base_bank;
  a.base_addr = opt.base_addr;
  a.base_partition = opt.base_partition;
  a.num_par_tiles = opt.num_par_tiles;
  a.num_tiles = opt.num_bank_tiles;
  return a;
}

allocation psum::alloc(std::function<std::tuple<std::int64_t, std::int64_t, std::int64_t>(std::span<const std::int64_t>,
                                                                                          std::int64_t, std::int64_t)>
                           func) {
  allocation a;
  a.memory = language::buffer::psum;
  a.modulo = false;
  a.func = std::move(func);
  return a;
}

namespace detail {

ir::Placement place(Trace& t, const allocation& a, const Shape& shape, int par, DType dtype, const char* op,
                    const SourceLoc& loc) {
  if (!a.modulo) {
    if (!a.func) t.fail("err_invalid_allocation", loc, fmt::format("{}: no placement function", allocator_name(a)));
    return place_by_func(t, a, shape, par, dtype, loc);
  }
  const bool psum = is_psum_allocation(a);
  if (a.base_addr < 0 || a.base_partition < 0 || a.base_bank < 0) {
    t.fail("err_invalid_allocation", loc,
           fmt::format("{} for nl::{}: {}base_addr {}, base_partition {}; each must be >= 0", allocator_name(a), op,
                       psum ? fmt::format("base_bank {}, ", a.base_bank) : "", a.base_addr, a.base_partition));
  }
  if (std::any_of(a.num_par_tiles.begin(), a.num_par_tiles.end(), [](std::int64_t n) { return n != 1; })) {
    t.fail("err_unsupported_allocation", loc,
           fmt::format("{} for nl::{}: num_par_tiles ({}) tiles blocks along partitions, which is not supported; "
                       "leave it empty",
                       allocator_name(a), op, fmt::join(a.num_par_tiles, ", ")));
  }
  Shape storage = shape;
  for (std::size_t d = 0; d < a.num_tiles.size(); ++d) {
    const std::int64_t n = a.num_tiles[d];
    if (n <= 0) {
      t.fail("err_invalid_allocation", loc,
             fmt::format("{} for nl::{}: {} ({}) has a count of {}; each must be >= 1", allocator_name(a), op,
                         psum ? "num_bank_tiles" : "num_free_tiles", fmt::join(a.num_tiles, ", "), n));
    }
    // Entry d is block dimension d; entries past the block dimensions find a single block there.
    if (static_cast<int>(d) < par) storage[d] = std::min(shape[d], n);
  }
  ir::Placement p;
  p.placed = true;
  p.partition = a.base_partition;
  p.address = a.base_addr;
  p.bank = psum ? a.base_bank : 0;
  p.storage = storage;
  return p;
}

void check_placement(Trace& t, int id) {
  const ir::KernelIR& k = t.ir();
  const ir::TensorDecl& x = k.tensors.at(static_cast<std::size_t>(id));
  const PlacedRange r = placed_range(x);
  const bool psum = x.memory == ir::Memory::psum;
  const char* mem = psum ? "PSUM" : "SBUF";
  if (r.p1 > tile_limits::pmax) {
    t.fail("err_allocation_out_of_range", x.loc,
           fmt::format("{} is placed at {}: {} has {} partitions", array_str(x), range_str(x), mem, tile_limits::pmax));
  }
  if (psum && r.a1 > kPsumBankBytes) {
    t.fail("err_allocation_out_of_range", x.loc,
           fmt::format("{} is placed at {}: a PSUM bank has {} bytes per partition", array_str(x), range_str(x),
                       kPsumBankBytes));
  }
  if (psum && r.b1 > kPsumBanks) {
    t.fail("err_allocation_out_of_range", x.loc,
           fmt::format("{} is placed at {}: PSUM has {} banks", array_str(x), range_str(x), kPsumBanks));
  }
  if (!psum && r.a1 > tile_limits::sbuf_partition_bytes) {
    t.fail("err_allocation_out_of_range", x.loc,
           fmt::format("{} is placed at {}: SBUF has {} bytes per partition", array_str(x), range_str(x),
                       tile_limits::sbuf_partition_bytes));
  }
  for (const ir::TensorDecl& y : k.tensors) {
    if (y.id == id || !y.placement.placed || y.memory != x.memory) continue;
    const PlacedRange s = placed_range(y);
    const bool meet = r.p0 < s.p1 && s.p0 < r.p1 && r.b0 < s.b1 && s.b0 < r.b1 && r.a0 < s.a1 && s.a0 < r.a1;
    if (!meet) continue;
    t.fail("err_allocation_overlap", x.loc,
           fmt::format("{} at {} of {} overlaps {} at {} (placed at {}); the executors keep arrays apart, so placed "
                       "arrays must not share memory",
                       array_str(x), range_str(x), mem, array_str(y), range_str(y), y.loc.str()));
  }
}

}  // namespace detail

}  // namespace nki::compiler
