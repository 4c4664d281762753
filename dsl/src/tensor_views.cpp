/** \file tensor.reshape and tensor.view(dtype): tensors over another tensor's HBM storage. */
#include <fmt/format.h>

#include "nki/language.h"
#include "nki/trace.h"

namespace nki::language {

namespace {

/** The reinterpreted tensor's storage: HBM only (NKI's original API has no on-chip views). */
void check_view_memory(Trace& t, const ir::TensorDecl& d, const char* op, const SourceLoc& loc) {
  if (ir::is_hbm(d.memory) && d.memory != ir::Memory::private_hbm) return;
  t.fail("err_unsupported_memory", loc,
         fmt::format("{} of tensor {} {} in {}: only kernel arguments, shared_hbm ndarrays and shared constants can be "
                     "reinterpreted",
                     op, d.name, shape_str(d.shape), ir::memory_name(d.memory)));
}

/** A tensor over the storage of `of` (the tensor that owns it), with its own shape and dtype. */
tensor add_view(Trace& t, const ir::TensorDecl& of, Shape shape, DType dtype, const char* suffix, const SourceLoc& loc) {
  const int root = of.view_of >= 0 ? of.view_of : of.id;
  const ir::Memory memory = of.memory;
  const std::string name = fmt::format("{}.{}", of.name, suffix);
  const int id = t.add_tensor(name, std::move(shape), dtype, memory, loc);
  t.ir().tensors[static_cast<std::size_t>(id)].view_of = root;
  return tensor(id);
}

}  // namespace

tensor tensor::reshape(const Shape& shape, source_location sl) const {
  Trace& t = Trace::current("tensor.reshape", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  const ir::TensorDecl d = t.ir().tensors.at(static_cast<std::size_t>(id_));
  check_view_memory(t, d, "tensor.reshape", loc);
  std::int64_t n = 1;
  for (std::int64_t s : shape) {
    if (s <= 0) {
      t.fail("err_invalid_shape", loc,
             fmt::format("tensor.reshape of tensor {} {} to {}: every dimension must be a positive size", d.name,
                         shape_str(d.shape), shape_str(shape)));
    }
    n *= s;
  }
  if (shape.empty() || n != shape_elements(d.shape)) {
    t.fail("err_invalid_shape", loc,
           fmt::format("tensor.reshape of tensor {} {} ({} elements) to {} ({} elements): the element counts differ",
                       d.name, shape_str(d.shape), shape_elements(d.shape), shape_str(shape), shape.empty() ? 0 : n));
  }
  return add_view(t, d, shape, d.dtype, "reshape", loc);
}

tensor tensor::view(DType dtype, source_location sl) const {
  Trace& t = Trace::current("tensor.view", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  const ir::TensorDecl d = t.ir().tensors.at(static_cast<std::size_t>(id_));
  check_view_memory(t, d, "tensor.view", loc);
  const std::int64_t from = dtype_bytes(d.dtype), to = dtype_bytes(dtype);
  Shape shape = d.shape;
  std::int64_t& last = shape.back();
  if (to <= from) {
    last = last * (from / to);
  } else if (last * from % to != 0) {
    t.fail("err_invalid_shape", loc,
           fmt::format("tensor.view of tensor {} {} {} as {}: the last dimension holds {} bytes, not a multiple of "
                       "{}'s {} bytes",
                       d.name, dtype_name(d.dtype), shape_str(d.shape), dtype_name(dtype), last * from,
                       dtype_name(dtype), to));
  } else {
    last = last * from / to;
  }
  return add_view(t, d, std::move(shape), dtype, "view", loc);
}

}  // namespace nki::language
