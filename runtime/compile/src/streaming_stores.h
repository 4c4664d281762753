/** \file Non-temporal ("streaming") stores: compiling a kernel's module with them where the lowering asks. */
#pragma once

#include <set>
#include <string>
#include <vector>

namespace Halide {
class Module;
}

namespace nki {

/**
 * The object code of `module`, as Halide::Module::compile_to_buffer makes it, except that in the
 * functions named in `streaming` every vector store into the buffer `output_buffer` is
 * non-temporal (LLVM's !nontemporal: x86 vmovntdq): it goes to memory without first reading the
 * line into the caches, which a plain store does (bench/README.md, "Streaming stores").
 */
std::vector<char> compile_with_streaming_stores(const Halide::Module& module, const std::set<std::string>& streaming,
                                                const std::string& output_buffer);

}  // namespace nki
