/** \file Affine index expression arithmetic and printing. */
#include "nki/ir/index_expr.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace nki::ir {

IndexExpr IndexExpr::constant_of(std::int64_t c) {
  IndexExpr e;
  e.constant = c;
  return e;
}

IndexExpr IndexExpr::symbol(Sym s, std::int64_t coeff) {
  IndexExpr e;
  if (coeff != 0) e.terms.push_back({s, coeff});
  return e;
}

std::int64_t IndexExpr::coeff_of(Sym s) const {
  for (const Term& t : terms)
    if (t.sym == s) return t.coeff;
  return 0;
}

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  if (a.size() != b.size()) return std::nullopt;
  Shape out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i] || b[i] == 1) out[i] = a[i];
    else if (a[i] == 1) out[i] = b[i];
    else return std::nullopt;
  }
  return out;
}

IndexExpr add(const IndexExpr& a, const IndexExpr& b) {
  auto shape = broadcast_shapes(a.shape, b.shape);
  if (!shape) {
    throw std::invalid_argument(
        fmt::format("index shapes {} and {} do not broadcast", shape_str(a.shape), shape_str(b.shape)));
  }
  IndexExpr out;
  out.constant = a.constant + b.constant;
  out.shape = *shape;
  out.unexpanded_arange = a.unexpanded_arange ? a.unexpanded_arange : b.unexpanded_arange;
  out.terms = a.terms;
  for (const Term& t : b.terms) {
    auto it = std::find_if(out.terms.begin(), out.terms.end(), [&](const Term& x) { return x.sym == t.sym; });
    if (it != out.terms.end()) it->coeff += t.coeff;
    else out.terms.push_back(t);
  }
  std::erase_if(out.terms, [](const Term& t) { return t.coeff == 0; });
  std::sort(out.terms.begin(), out.terms.end(), [](const Term& x, const Term& y) { return x.sym < y.sym; });
  return out;
}

IndexExpr scale(const IndexExpr& a, std::int64_t k) {
  IndexExpr out = a;
  out.constant *= k;
  for (Term& t : out.terms) t.coeff *= k;
  if (k == 0) out.terms.clear();
  return out;
}

std::int64_t evaluate(const IndexExpr& e, std::span<const std::int64_t> pid, std::span<const std::int64_t> loop,
                      std::span<const std::int64_t> coord, std::int64_t rank) {
  std::int64_t v = e.constant;
  for (const Term& t : e.terms) {
    const auto i = static_cast<std::size_t>(t.sym.index);
    switch (t.sym.kind) {
      case Sym::Kind::program_id: v += t.coeff * pid[i]; break;
      case Sym::Kind::loop: v += t.coeff * loop[i]; break;
      case Sym::Kind::axis: v += e.shape[i] == 1 ? 0 : t.coeff * coord[i]; break;
      case Sym::Kind::rank: v += t.coeff * rank; break;
    }
  }
  return v;
}

bool has_symbol(const IndexExpr& e, Sym::Kind k) {
  for (const Term& t : e.terms)
    if (t.sym.kind == k) return true;
  return false;
}

IndexExpr bake_rank(const IndexExpr& e, std::int64_t rank) {
  IndexExpr out = e;
  out.terms.clear();
  for (const Term& t : e.terms) {
    if (t.sym.kind == Sym::Kind::rank) out.constant += t.coeff * rank;
    else out.terms.push_back(t);
  }
  return out;
}

std::string to_string(const IndexExpr& e, const char* axis_prefix) {
  std::string out;
  auto append = [&](std::int64_t coeff, const std::string& name) {
    const bool neg = coeff < 0;
    const std::int64_t mag = neg ? -coeff : coeff;
    if (out.empty()) out += neg ? "-" : "";
    else out += neg ? " - " : " + ";
    if (name.empty()) out += std::to_string(mag);
    else if (mag == 1) out += name;
    else out += fmt::format("{}*{}", mag, name);
  };
  for (const Term& t : e.terms) {
    const std::string name = t.sym.kind == Sym::Kind::program_id ? fmt::format("pid{}", t.sym.index)
                             : t.sym.kind == Sym::Kind::loop     ? fmt::format("l{}", t.sym.index)
                             : t.sym.kind == Sym::Kind::rank     ? std::string("rank")
                                                                 : fmt::format("{}{}", axis_prefix, t.sym.index);
    append(t.coeff, name);
  }
  if (e.constant != 0 || out.empty()) append(e.constant, "");
  return out;
}

}  // namespace nki::ir
