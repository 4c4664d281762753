/** \file seed_pipeline_options: the whole translation table, the mesh and its replica groups, every refusal. */
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "nki/driver_options.h"
#include "test_support.h"

namespace {

using nki::DriverFlags;
using nki::PipelineOptions;

/** How the strategy is spelled on the command line: not at all, by name, or by the boolean flag. */
enum class Spelling { none, fsdp, nemo, llm_training, llm_training_flag };

DriverFlags flags_for(const std::string& target, std::optional<int> lnc, bool spmd, Spelling s,
                      std::optional<int> unroll) {
  DriverFlags f;
  f.target = target;
  if (lnc) f.lnc = std::to_string(*lnc);
  f.spmd = spmd;
  switch (s) {
    case Spelling::none: break;
    case Spelling::fsdp: f.distribution_strategy = "fsdp"; break;
    case Spelling::nemo: f.distribution_strategy = "nemo"; break;
    case Spelling::llm_training: f.distribution_strategy = "llm-training"; break;
    case Spelling::llm_training_flag: f.distribution_type_llm_training = true; break;
  }
  if (unroll) f.layer_unroll_factor = std::to_string(*unroll);
  return f;
}

/** {pipeline, data, tensor} of a strategy's default split of `n` logical cores, as docs/compile.md tabulates it. */
std::vector<std::int64_t> documented_split(Spelling s, std::int64_t n) {
  switch (s) {
    case Spelling::none:
    case Spelling::fsdp: return {1, n, 1};
    case Spelling::llm_training:
    case Spelling::llm_training_flag:
      if (n == 1) return {1, 1, 1};
      if (n == 2) return {1, 1, 2};
      if (n == 4) return {1, 1, 4};
      if (n == 8) return {1, 1, 8};
      break;
    case Spelling::nemo:
      if (n == 1) return {1, 1, 1};
      if (n == 2) return {1, 1, 2};
      if (n == 4) return {1, 1, 4};
      if (n == 8) return {1, 1, 8};
      break;
  }
  FAIL("no documented split for " << n << " logical cores");
  return {};
}

std::vector<std::int64_t> sizes_of(const PipelineOptions& o) {
  std::vector<std::int64_t> s;
  for (const nki::MeshAxisSize& a : o.mesh) s.push_back(a.size);
  return s;
}

}  // namespace

TEST_CASE("driver options: every strategy x spmd x lnc x target x user-set unroll") {
  const Spelling spellings[] = {Spelling::none, Spelling::fsdp, Spelling::nemo, Spelling::llm_training,
                                Spelling::llm_training_flag};
  int seeded = 0, refused = 0;
  for (const std::string target : {"trn1", "inf2", "trn2", "trn3"}) {
    for (const std::optional<int> lnc : {std::optional<int>{}, std::optional<int>{1}, std::optional<int>{2}}) {
      for (const bool spmd : {false, true}) {
        for (const Spelling s : spellings) {
          for (const std::optional<int> unroll : {std::optional<int>{}, std::optional<int>{1}, std::optional<int>{3}}) {
            CAPTURE(target);
            CAPTURE(lnc.value_or(0));
            CAPTURE(spmd);
            CAPTURE(static_cast<int>(s));
            CAPTURE(unroll.value_or(0));
            const DriverFlags f = flags_for(target, lnc, spmd, s, unroll);
            if (lnc == 2 && target != "trn2") {
              CHECK(test::user_error_of([&] { (void)nki::seed_pipeline_options(f); }) ==
                    "err_invalid_lnc: --lnc \"2\" on target " + target +
                        "; expected 1 (a logical core of more than one NeuronCore exists only on trn2)");
              ++refused;
              continue;
            }
            const PipelineOptions o = nki::seed_pipeline_options(f);
            ++seeded;
            const int want_lnc = lnc.value_or(target == "trn2" ? 2 : 1);
            const int want_cores = target == "trn1" || target == "inf2" ? 2 : 8;
            CHECK(o.target == target);
            CHECK(o.lnc == want_lnc);
            CHECK(o.cores == want_cores);
            CHECK(o.spmd == spmd);
            CHECK(o.enable_internal_spmd_opt == (spmd && want_lnc == 2));
            CHECK(o.unannotated_cores() == (spmd && want_lnc == 2 ? 2 : 1));
            CHECK(o.layer_unroll_factor == unroll.value_or(s == Spelling::fsdp ? 4 : 1));
            std::vector<std::string> fe;
            if (s == Spelling::llm_training || s == Spelling::llm_training_flag) fe = {"distribution-type-llm-training"};
            if (s == Spelling::nemo) fe = {"distribution-type-llm-training", "model-type=transformer"};
            if (spmd) fe.push_back("spmd");
            CHECK(o.frontend_options == fe);
            const std::optional<std::string> strategy =
                s == Spelling::none   ? std::nullopt
                : s == Spelling::fsdp ? std::optional<std::string>("fsdp")
                : s == Spelling::nemo ? std::optional<std::string>("nemo")
                                      : std::optional<std::string>("llm-training");
            CHECK(o.distribution_strategy == strategy);
            REQUIRE(o.mesh.size() == 3);
            CHECK(o.mesh[0].name == "pipeline");
            CHECK(o.mesh[1].name == "data");
            CHECK(o.mesh[2].name == "tensor");
            CHECK(sizes_of(o) == documented_split(s, want_cores / want_lnc));
          }
        }
      }
    }
  }
  CHECK(seeded == 4 * 3 * 2 * 5 * 3 - 3 * 2 * 5 * 3);
  CHECK(refused == 3 * 2 * 5 * 3);
}

TEST_CASE("driver options: the two llm-training spellings give byte-identical options") {
  for (const bool spmd : {false, true}) {
    for (const std::string target : {"trn1", "trn2"}) {
      DriverFlags by_name, by_flag, both;
      by_name.target = by_flag.target = both.target = target;
      by_name.spmd = by_flag.spmd = both.spmd = spmd;
      by_name.distribution_strategy = "llm-training";
      by_flag.distribution_type_llm_training = true;
      both.distribution_strategy = "llm-training";
      both.distribution_type_llm_training = true;
      const std::string a = nki::pipeline_options_json(nki::seed_pipeline_options(by_name));
      CHECK(a == nki::pipeline_options_json(nki::seed_pipeline_options(by_flag)));
      CHECK(a == nki::pipeline_options_json(nki::seed_pipeline_options(both)));
    }
  }
}

TEST_CASE("driver options: --mesh without --cores sizes the world, one logical core per mesh device") {
  DriverFlags f;
  f.mesh = "data=2,tensor=4";
  const nki::PipelineOptions o = nki::seed_pipeline_options(f);
  CHECK(o.lnc == 2);
  CHECK(o.cores == 16);
  CHECK(o.device_mesh().str() == "{\"pipeline\"=1, \"data\"=2, \"tensor\"=4}");
  CHECK(o.replica_groups.at("tensor") == nki::GroupList{{0, 1, 2, 3}, {4, 5, 6, 7}});
  f.lnc = "1";
  CHECK(nki::seed_pipeline_options(f).cores == 8);
  f.mesh = "data=65536,tensor=2";
  CHECK(test::user_error_of([&] { (void)nki::seed_pipeline_options(f); }) == "err_invalid_mesh: --mesh \"data=65536,tensor=2\": 131072 logical cores of 1 NeuronCores; at most "
                      "65536 NeuronCores");
}

TEST_CASE("driver options: the JSON fields, in order, with the mesh's replica groups") {
  DriverFlags f;
  f.spmd = true;
  f.cores = "16";
  f.distribution_strategy = "nemo";
  f.mesh = "tensor=2,pipeline=2,data=2";  // any order; the mesh is always pipeline, data, tensor
  CHECK(nki::pipeline_options_json(nki::seed_pipeline_options(f)) == R"({
  "target": "trn2",
  "lnc": 2,
  "cores": 16,
  "spmd": true,
  "enable_internal_spmd_opt": true,
  "distribution_strategy": "nemo",
  "layer_unroll_factor": 1,
  "frontend_options": [
    "distribution-type-llm-training",
    "model-type=transformer",
    "spmd"
  ],
  "mesh": {
    "axes": [
      {
        "name": "pipeline",
        "size": 2
      },
      {
        "name": "data",
        "size": 2
      },
      {
        "name": "tensor",
        "size": 2
      }
    ],
    "replica_groups": {
      "pipeline": [
        [
          0,
          4
        ],
        [
          1,
          5
        ],
        [
          2,
          6
        ],
        [
          3,
          7
        ]
      ],
      "data": [
        [
          0,
          2
        ],
        [
          1,
          3
        ],
        [
          4,
          6
        ],
        [
          5,
          7
        ]
      ],
      "tensor": [
        [
          0,
          1
        ],
        [
          2,
          3
        ],
        [
          4,
          5
        ],
        [
          6,
          7
        ]
      ]
    }
  }
}
)");
  DriverFlags none;
  none.target = "trn1";
  const PipelineOptions o = nki::seed_pipeline_options(none);
  CHECK(nki::pipeline_options_json(o).find("\"distribution_strategy\": null,") != std::string::npos);
  CHECK(o.replica_groups.at("data") == nki::GroupList{{0, 1}});
  CHECK(o.replica_groups.at("tensor") == nki::GroupList{{0}, {1}});
}

TEST_CASE("driver options: each preset's default split of a larger world, and --mesh overriding it") {
  auto sizes = [](const char* strategy, const char* cores, std::optional<std::string> mesh = std::nullopt) {
    DriverFlags f;
    if (strategy[0] != '\0') f.distribution_strategy = strategy;
    f.cores = cores;
    f.mesh = std::move(mesh);
    return sizes_of(nki::seed_pipeline_options(f));
  };
  // 32 NeuronCores at lnc 2: 16 logical cores.
  CHECK(sizes("", "32") == std::vector<std::int64_t>{1, 16, 1});
  CHECK(sizes("fsdp", "32") == std::vector<std::int64_t>{1, 16, 1});
  CHECK(sizes("llm-training", "32") == std::vector<std::int64_t>{1, 2, 8});
  CHECK(sizes("nemo", "32") == std::vector<std::int64_t>{2, 1, 8});
  CHECK(sizes("nemo", "48") == std::vector<std::int64_t>{1, 3, 8});   // 24 = 3 x 8: no even split left for pipeline
  CHECK(sizes("llm-training", "12") == std::vector<std::int64_t>{1, 3, 2});  // 6 logical cores: gcd(6, 8) = 2
  CHECK(sizes("nemo", "32", "data=4,tensor=4") == std::vector<std::int64_t>{1, 4, 4});
  CHECK(sizes("fsdp", "32", "pipeline=16") == std::vector<std::int64_t>{16, 1, 1});
}

TEST_CASE("driver options: every refused flag and combination, in one line naming the value") {
  auto refusal = [](DriverFlags f) { return test::user_error_of([&] { (void)nki::seed_pipeline_options(f); }); };
  DriverFlags f;
  f.target = "trn4";
  CHECK(refusal(f) == "err_unknown_target: unknown --target \"trn4\"; expected one of trn1, inf2, trn2, trn3");
  f = {};
  f.lnc = "4";
  CHECK(refusal(f) == "err_invalid_lnc: --lnc \"4\" on target trn2; expected 1 or 2");
  f.lnc = "0";
  CHECK(refusal(f) == "err_invalid_lnc: --lnc \"0\" on target trn2; expected 1 or 2");
  f.lnc = "two";
  CHECK(refusal(f) == "err_invalid_lnc: --lnc \"two\" on target trn2; expected 1 or 2");
  f = {};
  f.target = "trn3";
  f.lnc = "2";
  CHECK(refusal(f) == "err_invalid_lnc: --lnc \"2\" on target trn3; expected 1 (a logical core of more than one "
                      "NeuronCore exists only on trn2)");
  f = {};
  f.distribution_strategy = "ddp";
  CHECK(refusal(f) == "err_unknown_distribution_strategy: unknown --distribution-strategy \"ddp\"; expected one of "
                      "fsdp, nemo, llm-training");
  f.distribution_strategy = "LLM-training";
  CHECK(refusal(f) == "err_unknown_distribution_strategy: unknown --distribution-strategy \"LLM-training\"; expected "
                      "one of fsdp, nemo, llm-training");
  for (const char* other : {"fsdp", "nemo"}) {
    f = {};
    f.distribution_strategy = other;
    f.distribution_type_llm_training = true;
    CHECK(refusal(f) == std::string("err_conflicting_flags: --distribution-type-llm-training means "
                                    "--distribution-strategy llm-training, but --distribution-strategy ") +
                            other + " was given");
  }
  f = {};
  for (const char* bad : {"0", "65", "-1", "2.5", ""}) {
    f.layer_unroll_factor = bad;
    CHECK(refusal(f) == std::string("err_invalid_unroll_factor: --layer-unroll-factor \"") + bad +
                            "\"; expected an integer from 1 to 64");
  }
  f = {};
  f.cores = "0";
  CHECK(refusal(f) == "err_invalid_cores: --cores \"0\"; expected a number of NeuronCores from 1 to 65536");
  f.cores = "eight";
  CHECK(refusal(f) == "err_invalid_cores: --cores \"eight\"; expected a number of NeuronCores from 1 to 65536");
  f.cores = "7";
  CHECK(refusal(f) == "err_invalid_cores: --cores 7 is not a multiple of --lnc 2; expected whole logical cores of 2 "
                      "NeuronCores");
  f = {};
  f.cores = "8";
  f.mesh = "data=3";
  CHECK(refusal(f) == "err_invalid_mesh: --mesh \"data=3\": the axis sizes multiply to 3; expected 4 (--cores 8 / "
                      "--lnc 2 logical cores)");
  f.cores.reset();
  f.mesh = "data=2,expert=2";
  CHECK(refusal(f) == "err_invalid_mesh: --mesh \"data=2,expert=2\": unknown axis \"expert\"; expected data, tensor "
                      "or pipeline");
  f.mesh = "data=2,data=2";
  CHECK(refusal(f) == "err_invalid_mesh: --mesh \"data=2,data=2\": axis data is named twice");
  f.mesh = "data4";
  CHECK(refusal(f) == "err_invalid_mesh: --mesh \"data4\": \"data4\" is not NAME=SIZE; expected "
                      "data=D,tensor=T,pipeline=P");
  f.mesh = "";
  CHECK(refusal(f) == "err_invalid_mesh: --mesh \"\": \"\" is not NAME=SIZE; expected data=D,tensor=T,pipeline=P");
  f.mesh = "data=4,tensor=0";
  CHECK(refusal(f) == "err_invalid_mesh: --mesh \"data=4,tensor=0\": size \"0\" of axis tensor is not an integer "
                      "from 1 to 65536");
}
