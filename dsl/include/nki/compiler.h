/**
 * \file nki.compiler's allocators: where an on-chip array lives (sbuf / psum alloc and
 * mod_alloc), passed to nl::ndarray in place of a buffer:
 *   namespace ncc = nki::compiler;
 *   auto x = nl::ndarray({4, nl::par_dim(128), 512}, nl::float32, ncc::sbuf::mod_alloc({.base_addr = 0, .num_free_tiles = {2}}));
 * The dimensions before par_dim are block dimensions. mod_alloc gives block dimension d
 * num_free_tiles[d] (PSUM: num_bank_tiles[d]) physical blocks, block b at b mod that many, so
 * blocks b and b + n share memory as on the hardware: both executors see the aliasing.
 * docs/reference.md ("Allocation") gives the rules and the errors.
 */
#pragma once

#include <cstdint>
#include <functional>
#include <source_location>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "nki/language.h"

namespace nki::compiler {

/** A placement rule for one on-chip array (made by the functions below; read by nl::ndarray). */
struct allocation {
  language::buffer memory = language::buffer::sbuf;
  bool modulo = true;                           ///< mod_alloc; else `func` places each block
  std::int64_t base_addr = 0, base_partition = 0, base_bank = 0;
  std::vector<std::int64_t> num_par_tiles, num_tiles;  ///< num_tiles: num_free_tiles (SBUF) / num_bank_tiles (PSUM)
  /// alloc(func): (block index, partitions of a block, bytes per partition of a block) ->
  /// (bank, start partition, byte address); the bank is 0 for SBUF.
  std::function<std::tuple<std::int64_t, std::int64_t, std::int64_t>(std::span<const std::int64_t>, std::int64_t,
                                                                     std::int64_t)>
      func;
};

namespace sbuf {
/** Keyword arguments of nki.compiler.sbuf.mod_alloc. */
struct mod_alloc_options {
  std::int64_t base_addr = 0;
  std::int64_t base_partition = 0;
  std::vector<std::int64_t> num_par_tiles = {};
  std::vector<std::int64_t> num_free_tiles = {};
};
/** sbuf.mod_alloc: block b at byte base_addr + (b mod num_free_tiles, flattened) * bytes per block. */
allocation mod_alloc(const mod_alloc_options& opt);
/** sbuf.alloc(func): func(block index, pdim_size, fdim_size bytes) -> (start_partition, byte_addr). */
allocation alloc(std::function<std::pair<std::int64_t, std::int64_t>(std::span<const std::int64_t>, std::int64_t,
                                                                     std::int64_t)>
                     func);
}  // namespace sbuf

namespace psum {
/** Keyword arguments of nki.compiler.psum.mod_alloc. */
struct mod_alloc_options {
  std::int64_t base_bank = 0;
  std::int64_t base_addr = 0;
  std::int64_t base_partition = 0;
  std::vector<std::int64_t> num_bank_tiles = {};
  std::vector<std::int64_t> num_par_tiles = {};
};
/** psum.mod_alloc: block b in bank base_bank + (b mod num_bank_tiles, flattened), at byte base_addr of it. */
allocation mod_alloc(const mod_alloc_options& opt);
/** psum.alloc(func): func(block index, pdim_size, fdim_size bytes) -> (bank, start_partition, byte_addr). */
allocation alloc(std::function<std::tuple<std::int64_t, std::int64_t, std::int64_t>(std::span<const std::int64_t>,
                                                                                    std::int64_t, std::int64_t)>
                     func);
}  // namespace psum

}  // namespace nki::compiler

namespace nki::language {
/** nl.ndarray(shape, dtype, buffer=<an nki.compiler allocation>): an on-chip array placed by hand. */
tensor ndarray(const shape_spec& shape, DType dtype, const compiler::allocation& buf, const std::string& name = "",
               source_location loc = source_location::current());
/** nl.zeros with a placement: the array starts at zero wherever it is placed. */
tensor zeros(const shape_spec& shape, DType dtype, const compiler::allocation& buf, const std::string& name = "",
             source_location loc = source_location::current());
}  // namespace nki::language
