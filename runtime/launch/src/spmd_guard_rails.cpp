/** \file SPMD guard rails: rank constants in the IR, and one artifact per kernel IR across cores. */
#include "nki/spmd_guard_rails.h"

#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <string_view>

#include "nki/error.h"

namespace nki {

bool spmd_strict() {
  const char* v = std::getenv("NKI_SPMD_STRICT");
  if (v == nullptr || *v == '\0') return false;
  const std::string_view s(v);
  if (s == "1" || s == "true") return true;
  if (s == "0" || s == "false") return false;
  throw UserError("err_invalid_env", "", {}, fmt::format("NKI_SPMD_STRICT='{}'; expected 1 or 0", s));
}

void check_single_artifact(const std::string& kernel, const std::vector<ArtifactUse>& uses) {
  std::map<std::string, std::map<std::string, std::vector<int>>> by_ir;  // ir -> key -> ranks
  for (const ArtifactUse& u : uses) by_ir[u.ir_hash][u.key].push_back(u.rank);
  for (const auto& [ir, keys] : by_ir) {
    if (keys.size() <= 1) continue;
    std::vector<std::string> parts;
    for (const auto& [key, ranks] : keys) parts.push_back(fmt::format("{} staged by ranks {}", key, fmt::join(ranks, ",")));
    const std::string detail =
        fmt::format("kernel IR {} resolved to {} artifacts instead of one shared by every core: {}; launch SPMD "
                    "(the default) so the rank is a run-time value",
                    ir, keys.size(), fmt::join(parts, "; "));
    if (spmd_strict()) throw UserError("err_spmd_artifact_splinter", kernel, {}, detail);
    fmt::print(stderr, "nki: warning: {}: {}\n", kernel, detail);
  }
}

namespace {
/** Whether `e` reads a run-time id: a program id or the rank (rank_id). */
bool reads_program_ids(const ir::IndexExpr& e) {
  return ir::has_symbol(e, ir::Sym::Kind::program_id) || ir::has_symbol(e, ir::Sym::Kind::rank);
}
}  // namespace

void check_rank_constants(const ir::KernelIR& k) {
  bool uses_pid = false;
  const bool uses_rank = ir::reads_rank(k);
  std::vector<const ir::Access*> accesses;
  for (const ir::Op& op : k.body) {
    const ir::Access* a = nullptr;
    if (const auto* l = std::get_if<ir::LoadOp>(&op)) a = &l->src;
    else if (const auto* s = std::get_if<ir::StoreOp>(&op)) a = &s->dst;
    else if (const auto* i = std::get_if<ir::IotaOp>(&op)) uses_pid = uses_pid || reads_program_ids(i->expr);
    if (a == nullptr) continue;
    accesses.push_back(a);
    for (const ir::IndexExpr& e : a->indices) uses_pid = uses_pid || reads_program_ids(e);
  }
  if (!uses_pid) return;
  const char* reads = uses_rank ? "rank_id" : "program_id";
  for (const ir::Access* a : accesses) {
    const ir::TensorDecl& t = k.tensors.at(static_cast<std::size_t>(a->tensor));
    if (!ir::is_hbm(t.memory)) continue;
    for (std::size_t d = 0; d < a->indices.size(); ++d) {
      const ir::IndexExpr& e = a->indices[d];
      if (e.constant == 0) continue;
      bool varies_by_instance = false;
      std::int64_t extent = 1;  // how many elements of this dimension one access covers
      for (const ir::Term& term : e.terms) {
        if (term.sym.kind != ir::Sym::Kind::axis) varies_by_instance = true;
        else extent = std::max(extent, term.coeff * (e.shape.at(static_cast<std::size_t>(term.sym.index)) - 1) + 1);
      }
      if (varies_by_instance || t.shape[d] <= extent || e.constant % extent != 0) continue;
      const std::string detail = fmt::format(
          "index of tensor {} on dimension {} starts at the constant {} (tile {} of {}) while the kernel also reads "
          "{}: a rank or program id captured as a C++ integer at trace time gives every rank its own "
          "artifact; index with {} instead",
          t.name, d, e.constant, e.constant / extent, t.shape[d] / extent, reads, uses_rank ? "collectives::rank_id()" : "nl::program_id");
      if (spmd_strict()) throw UserError("err_spmd_rank_constant", k.name, a->loc, detail);
      fmt::print(stderr, "nki: warning: {} ({}:{}): {}\n", k.name, a->loc.file, a->loc.line, detail);
    }
  }
}

}  // namespace nki
