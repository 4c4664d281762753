/** \file Binding a launch's HBM tensors: arguments, fresh ndarrays, shared constants. */
#include "launch_tensors.h"

#include <algorithm>
#include <cstring>

namespace nki {

namespace {

/** The tensors a collective at the kernel's top level writes whole before any other op touches them. */
std::vector<bool> written_whole_first(const ir::KernelIR& ir) {
  std::vector<bool> whole(ir.tensors.size(), false), touched(ir.tensors.size(), false);
  int depth = 0;
  for (const ir::Op& op : ir.body) {
    if (std::holds_alternative<ir::LoopOp>(op)) ++depth;
    if (std::holds_alternative<ir::LoopEndOp>(op)) --depth;
    // A _v kind writes only the chunks its metadata gives, not its whole dst.
    if (const auto* c = std::get_if<ir::CollectiveOp>(&op); c != nullptr && depth == 0 && c->metadata < 0) {
      for (int t : c->dsts) whole[static_cast<std::size_t>(t)] = whole[static_cast<std::size_t>(t)] || !touched[static_cast<std::size_t>(t)];
      for (int t : c->srcs) touched[static_cast<std::size_t>(t)] = true;
      for (int t : c->dsts) touched[static_cast<std::size_t>(t)] = true;
      continue;
    }
    auto touch = [&](const ir::Access& a) {
      if (a.tensor >= 0) touched[static_cast<std::size_t>(a.tensor)] = true;  // -1: an op without this access
    };
    std::visit([&](const auto& o) {
      if constexpr (requires { o.src.tensor; }) touch(o.src);
      if constexpr (requires { o.dst.tensor; }) touch(o.dst);
      if constexpr (requires { o.mem.tensor; }) touch(o.mem);
    }, op);
    if (const auto* c = std::get_if<ir::CollectiveOp>(&op)) {  // in a loop: may not run
      for (int t : c->srcs) touched[static_cast<std::size_t>(t)] = true;
      for (int t : c->dsts) touched[static_cast<std::size_t>(t)] = true;
    }
  }
  return whole;
}

}  // namespace

LaunchTensors bind_launch_tensors(const ir::KernelIR& ir, const std::vector<Tensor>& args, const sim::Device& device,
                                  const std::vector<bool>& stored_whole, bool spanning_ranks) {
  LaunchTensors out;
  std::vector<bool> whole(ir.tensors.size(), false);
  if (!spanning_ranks) {
    whole = written_whole_first(ir);
    for (std::size_t i = 0; i < whole.size() && i < stored_whole.size(); ++i) whole[i] = whole[i] || stored_whole[i];
  }
  out.storage.resize(ir.tensors.size());
  for (const ir::TensorDecl& t : ir.tensors) {
    std::optional<Tensor>& s = out.storage[static_cast<std::size_t>(t.id)];
    if (t.view_of >= 0) {  // reshape / view(dtype): the bytes of the tensor it reinterprets, row-major
      const Tensor& of = *out.storage[static_cast<std::size_t>(t.view_of)];
      out.bindings.push_back({const_cast<std::byte*>(of.data()), t.shape, row_major_strides(t.shape), t.dtype});
      if (std::find(ir.outputs.begin(), ir.outputs.end(), t.id) != ir.outputs.end()) {
        s.emplace(t.shape, t.dtype, device);  // a returned view: a copy of the bytes (copy_view_outputs)
        std::memcpy(s->data(), of.data(), static_cast<std::size_t>(of.bytes()));
      }
      continue;
    }
    if (t.memory == ir::Memory::hbm_input) {
      const auto pos = std::find(ir.params.begin(), ir.params.end(), t.id) - ir.params.begin();
      s = args[static_cast<std::size_t>(pos)];
    } else if (t.memory == ir::Memory::shared_hbm) {
      Tensor& o = s.emplace(t.shape, t.dtype, device);
      if (t.fill || !whole[static_cast<std::size_t>(t.id)])
        fill_elements(o.data(), o.dtype(), o.elements(), t.fill.value_or(0.0));
    } else if (t.memory == ir::Memory::constant_hbm) {
      // nl::shared_constant: the values the IR carries, in HBM before any instance runs.
      Tensor& c = s.emplace(t.shape, t.dtype, device);
      std::byte* data = c.data();
      const int eb = dtype_bytes(t.dtype);
      for (std::size_t i = 0; i < t.values.size(); ++i) store_element(data + static_cast<std::ptrdiff_t>(i) * eb, t.dtype, t.values[i]);
    }
    out.bindings.push_back(s ? TensorBinding{const_cast<std::byte*>(s->data()), s->shape(), s->strides(), s->dtype()}
                             : TensorBinding{nullptr, t.shape, row_major_strides(t.shape), t.dtype});
  }
  return out;
}

void copy_view_outputs(const ir::KernelIR& ir, LaunchTensors& tensors) {
  for (int id : ir.outputs) {
    const ir::TensorDecl& t = ir.tensors[static_cast<std::size_t>(id)];
    if (t.view_of < 0) continue;
    Tensor& out = *tensors.storage[static_cast<std::size_t>(id)];
    std::memcpy(out.data(), tensors.storage[static_cast<std::size_t>(t.view_of)]->data(), static_cast<std::size_t>(out.bytes()));
  }
}

}  // namespace nki
