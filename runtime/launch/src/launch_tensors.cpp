/** \file Binding a launch's HBM tensors: arguments, fresh ndarrays, shared constants. */
#include "launch_tensors.h"

#include <algorithm>

namespace nki {

LaunchTensors bind_launch_tensors(const ir::KernelIR& ir, const std::vector<Tensor>& args, const sim::Device& device,
                                  bool zero_outputs) {
  LaunchTensors out;
  out.storage.resize(ir.tensors.size());
  for (const ir::TensorDecl& t : ir.tensors) {
    std::optional<Tensor>& s = out.storage[static_cast<std::size_t>(t.id)];
    if (t.memory == ir::Memory::hbm_input) {
      const auto pos = std::find(ir.params.begin(), ir.params.end(), t.id) - ir.params.begin();
      s = args[static_cast<std::size_t>(pos)];
    } else if (t.memory == ir::Memory::shared_hbm) {
      Tensor& o = s.emplace(t.shape, t.dtype, device);
      if (t.fill || zero_outputs) fill_elements(o.data(), o.dtype(), o.elements(), t.fill.value_or(0.0));
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

}  // namespace nki
