/**
 * \file nki.collectives inside kernels: rank_id and the collectives among the ranks of a world
 * launch (nki/world_launch.h), on whole HBM (or SBUF) tensors, over a ReplicaGroup.
 *
 * A collective is traced into one ir::CollectiveOp. When the kernel runs, the executor stops
 * the instance at it until every rank of its group has reached the same collective, then
 * writes each rank's dsts from the group's srcs. Every rank must make the same collectives in
 * the same order: a rank that makes another, or finishes while its group waits, is
 * err_collective_mismatch, never a hang. A plain launch is a world of one rank (rank 0).
 */
#pragma once

#include <initializer_list>
#include <source_location>
#include <string>
#include <utility>
#include <vector>

#include "nki/language.h"

namespace nki::collectives {

namespace nl = nki::language;

/**
 * nki.collectives.ReplicaGroup: which ranks meet in a collective. Either explicit groups of
 * world ranks (`{.groups = {{0, 1, 2, 3}, {4, 5, 6, 7}}}`: equal sizes, no rank twice), or
 * axes of the launch's mesh (`{.axes = {"tensor"}}`, sub-axes written `"y":(1)2`), whose
 * groups are the mesh's replica groups over those axes (nki::replica_groups). Neither: one
 * group of every rank.
 */
struct ReplicaGroup {
  std::vector<std::vector<int>> groups;
  std::vector<std::string> axes;
};

/** Options every collective takes (NKI's priority= and name=, which change no value here). */
struct collective_options {
  int priority = -1;  ///< DMA QoS 0-3 (NeuronCore-v4+); -1: none
  std::string name;
};

/**
 * rank_id(): the world rank that runs the instance (its device id in the launch's mesh; 0 in a
 * plain launch), as an affine index like nl::program_id: `x[rank_id() * 128 + i_p, i_f]`. A
 * run-time value, so one artifact serves every rank; in MPMD mode each rank's artifact has its
 * own baked in as a constant. (NKI returns a register for dynamic access patterns; here
 * dynamic addressing is affine indices, and isa::iota turns the index into a tile.)
 */
nl::index rank_id(std::source_location loc = std::source_location::current());

/**
 * all_reduce: every dst = `op` (nl::add, nl::maximum or nl::minimum) over the group's srcs,
 * element by element (fp32 accumulation in group order, rounded once). Each dst has its
 * src's shape and dtype. Several (coalesced) buffers only in HBM.
 */
void all_reduce(const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts, const ReplicaGroup& group,
                const nl::binary_fn& op, const collective_options& o = {},
                std::source_location loc = std::source_location::current());

/**
 * all_gather: every dst = the group's srcs in group order, concatenated along
 * `collective_dim` (0 in HBM; 0 or 1 for 2-D SBUF tensors): dst's size there is the group
 * size times src's.
 */
void all_gather(const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts, const ReplicaGroup& group,
                int collective_dim, const collective_options& o = {},
                std::source_location loc = std::source_location::current());

/**
 * reduce_scatter: the group's reduction split into group-size equal parts along
 * `collective_dim` (0); the rank at position p of its group gets part p.
 */
void reduce_scatter(const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts, const ReplicaGroup& group,
                    int collective_dim, const nl::binary_fn& op, const collective_options& o = {},
                    std::source_location loc = std::source_location::current());

/**
 * all_to_all: every src split into group-size parts along `collective_dim` (0); the rank at
 * position p gets part p of every member, concatenated in group order. HBM only.
 */
void all_to_all(const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts, const ReplicaGroup& group,
                int collective_dim, const collective_options& o = {},
                std::source_location loc = std::source_location::current());

/**
 * collective_permute: for each (source, target) pair of world ranks, the target's dst = the
 * source's src; a rank that is no pair's target keeps its dst. One src and one dst, in HBM;
 * every rank of the world takes part.
 */
void collective_permute(const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts,
                        const std::vector<std::pair<int, int>>& source_target_pairs, const collective_options& o = {},
                        std::source_location loc = std::source_location::current());

/**
 * collective_permute_implicit: each rank's dst = its predecessor's src in the ring of its
 * group (the group's order; the first member's predecessor is the last). One channel (0):
 * `srcs_by_channel` and `dsts_by_channel` hold one list of one HBM tensor each.
 */
void collective_permute_implicit(const std::vector<std::vector<nl::tensor>>& srcs_by_channel,
                                 const std::vector<std::vector<nl::tensor>>& dsts_by_channel,
                                 const ReplicaGroup& group, const std::vector<int>& channel_ids = {0},
                                 const collective_options& o = {},
                                 std::source_location loc = std::source_location::current());

/**
 * collective_permute_implicit_reduce: each rank's dst = `op` of its ring predecessor's two srcs
 * (element by element, fp32, rounded once), the predecessor in its group's order as for
 * collective_permute_implicit. One channel, one HBM tensor in each list.
 */
void collective_permute_implicit_reduce(const std::vector<std::vector<nl::tensor>>& srcs0_by_channel,
                                        const std::vector<std::vector<nl::tensor>>& srcs1_by_channel,
                                        const std::vector<std::vector<nl::tensor>>& dsts_by_channel,
                                        const ReplicaGroup& group, const nl::binary_fn& op,
                                        const std::vector<int>& channel_ids = {0}, const collective_options& o = {},
                                        std::source_location loc = std::source_location::current());

/** Keyword arguments of all_gather_v and all_to_all_v. */
struct v_options {
  bool recv_counts_known = false;  ///< leave the metadata's row 2 as it is (else the received counts are written there)
  bool has_rdispls = false;        ///< all_to_all_v: row 3 gives where each sender's chunk lands in dst
};

/**
 * all_gather_v: flat buffers of sizes known at run time. Each rank sends the chunk
 * src[send_displ, send_displ + send_count) (row 1 and row 0, first column, of its uint32
 * `metadata`: HBM [3, G] or SBUF [1, 3, G]) to every rank of its group; the chunk of the sender
 * at position q lands at dst[q * S, q * S + count), S = dst's elements / G; row 2 gets each
 * sender's count unless recv_counts_known. One HBM src and dst of one dtype (their sizes may
 * differ). has_rdispls is not supported (as in NKI). A chunk that does not fit is an error when it runs.
 */
void all_gather_v(const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts, const ReplicaGroup& group,
                  const nl::tensor& metadata, const v_options& v = {}, const collective_options& o = {},
                  std::source_location loc = std::source_location::current());

/**
 * all_to_all_v: each rank sends src[send_displs[r], + send_counts[r]) (rows 1 and 0 of its
 * metadata, column r = the receiver's position) to the rank at position r; the chunk from the
 * sender at position q lands at dst[recv_displs[q], ...) with has_rdispls (row 3: metadata [4, G]),
 * else at q * S, S = dst's elements / G; row 2 gets the received counts unless recv_counts_known.
 */
void all_to_all_v(const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts, const ReplicaGroup& group,
                  const nl::tensor& metadata, const v_options& v = {}, const collective_options& o = {},
                  std::source_location loc = std::source_location::current());

}  // namespace nki::collectives
