/** \file Must not compile: `|` of two masks is err_unsupported_expression_in_mask (a static_assert). */
#include "nki/language.h"

namespace nl = nki::language;

nl::predicate either(const nl::index& ip) { return (ip < 10) | (ip >= 100); }
