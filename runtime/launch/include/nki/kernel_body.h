/** \file How nki::jit calls a kernel's body: its arity, and its returned tensors as output ids. */
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "nki/language.h"

namespace nki {

namespace detail {

template <class F, class = void>
struct arity_of : arity_of<decltype(&F::operator())> {};
template <class C, class R, class... A>
struct arity_of<R (C::*)(A...) const> {
  static constexpr std::size_t value = sizeof...(A);
};
template <class C, class R, class... A>
struct arity_of<R (C::*)(A...)> {
  static constexpr std::size_t value = sizeof...(A);
};
template <class R, class... A>
struct arity_of<R (*)(A...)> {
  static constexpr std::size_t value = sizeof...(A);
};

inline std::vector<int> output_ids(const language::tensor& t) { return {t.id()}; }
template <class... T>
std::vector<int> output_ids(const std::tuple<T...>& t) {
  return std::apply([](const auto&... x) { return std::vector<int>{x.id()...}; }, t);
}

template <class F, std::size_t... I>
std::vector<int> call_body(F& f, const std::vector<language::tensor>& args, std::index_sequence<I...>) {
  using R = decltype(f(args[I]...));
  if constexpr (std::is_void_v<R>) {
    f(args[I]...);
    return {};
  } else {
    return output_ids(f(args[I]...));
  }
}

}  // namespace detail

}  // namespace nki
