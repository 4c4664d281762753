/** \file Compiling a kernel's module with non-temporal ("streaming") stores where the lowering asks for them. */
#include "streaming_stores.h"

#include <Halide.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

namespace nki {

namespace {

/** Whether TBAA node `md` (an access tag or type node) names the buffer `name` anywhere up its chain. */
bool names_buffer(const llvm::MDNode* md, const std::string& name, int depth = 0) {
  if (md == nullptr || depth > 16) return false;
  for (const llvm::MDOperand& op : md->operands()) {
    if (const auto* s = llvm::dyn_cast_or_null<llvm::MDString>(op.get()); s != nullptr && s->getString() == name) return true;
    if (const auto* n = llvm::dyn_cast_or_null<llvm::MDNode>(op.get()); n != nullptr && n != md && names_buffer(n, name, depth + 1))
      return true;
  }
  return false;
}

}  // namespace

std::vector<char> compile_with_streaming_stores(const Halide::Module& module, const std::set<std::string>& streaming,
                                                const std::string& output_buffer) {
  if (streaming.empty()) {
    const Halide::Buffer<uint8_t> object = module.compile_to_buffer();
    const auto* data = reinterpret_cast<const char*>(object.data());
    return {data, data + object.size_in_bytes()};
  }
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> m = Halide::compile_module_to_llvm_module(module, context);
  // Halide tags every load and store with TBAA metadata naming its buffer: the stores into the
  // step's output buffer are the ones to stream. (A step's own scratch and stack stores are not.)
  llvm::MDNode* one = llvm::MDNode::get(context, {llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), 1))});
  for (llvm::Function& f : *m) {
    bool wanted = false;
    for (const std::string& s : streaming) wanted = wanted || f.getName() == s || f.getName().startswith(s + ".");
    if (!wanted) continue;
    for (llvm::BasicBlock& b : f) {
      for (llvm::Instruction& i : b) {
        auto* st = llvm::dyn_cast<llvm::StoreInst>(&i);
        if (st == nullptr || !st->getValueOperand()->getType()->isVectorTy()) continue;
        if (!names_buffer(st->getMetadata(llvm::LLVMContext::MD_tbaa), output_buffer)) continue;
        st->setMetadata(llvm::LLVMContext::MD_nontemporal, one);
        // A narrowed value would be stored by a truncating store (vpmovdw to memory), which has
        // no streaming form: LLVM drops the hint. A freeze between them keeps the two apart.
        if (llvm::isa<llvm::TruncInst>(st->getValueOperand())) {
          auto* frozen = new llvm::FreezeInst(st->getValueOperand(), "stream", st);
          st->setOperand(0, frozen);
        }
      }
    }
  }
  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream out(bytes);
  Halide::compile_llvm_module_to_object(*m, out);
  return {bytes.begin(), bytes.end()};
}

}  // namespace nki
