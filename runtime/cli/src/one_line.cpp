/** \file Error messages on one line. */
#include "cli/one_line.h"

namespace nki::cli {

std::string one_line(std::string_view what) {
  std::string s;
  for (char ch : what) {
    if (ch == '\n') {
      if (!s.empty() && s.back() != ' ') s += "; ";
    } else {
      s += ch;
    }
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == ';')) s.pop_back();
  return s;
}

}  // namespace nki::cli
