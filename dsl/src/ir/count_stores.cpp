/** \file Analysis: which tensors a kernel writes, and how often. */
#include "nki/ir/passes.h"

namespace nki::ir {

std::vector<int> count_stores(const KernelIR& k) {
  std::vector<int> n(k.tensors.size(), 0);
  for (const Op& op : k.body)
    if (const auto* s = std::get_if<StoreOp>(&op)) ++n[static_cast<std::size_t>(s->dst.tensor)];
    else if (const auto* r = std::get_if<RegisterOp>(&op); r && r->kind == RegisterOp::Kind::store)
      ++n[static_cast<std::size_t>(r->mem.tensor)];  // register_store writes the tensor too
    else if (const auto* c = std::get_if<CollectiveOp>(&op)) {
      for (int d : c->dsts) ++n[static_cast<std::size_t>(d)];  // so does a collective, each dst whole
      if (writes_metadata(*c)) ++n[static_cast<std::size_t>(c->metadata)];  // and a _v kind's received counts
    }
  // A reshape / view(dtype) shares its tensor's storage: a store through either writes both.
  for (const TensorDecl& t : k.tensors)
    if (t.view_of >= 0) n[static_cast<std::size_t>(t.view_of)] += n[static_cast<std::size_t>(t.id)];
  for (const TensorDecl& t : k.tensors)
    if (t.view_of >= 0) n[static_cast<std::size_t>(t.id)] = n[static_cast<std::size_t>(t.view_of)];
  return n;
}

}  // namespace nki::ir
