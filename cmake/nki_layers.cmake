# The layers, bottom up, and what each may use besides itself: one table for the include check
# (check_layers.cmake) and the link check (NkiLayers.cmake). README, "Architecture", draws it.
set(NKI_LAYERS dsl simulator core compile dist launch tune kernels cli python)
set(NKI_LAYER_DIR_dsl dsl)
set(NKI_LAYER_DIR_simulator simulator)
set(NKI_LAYER_DIR_core runtime/core)
set(NKI_LAYER_DIR_compile runtime/compile)
set(NKI_LAYER_DIR_dist runtime/dist)
set(NKI_LAYER_DIR_launch runtime/launch)
set(NKI_LAYER_DIR_tune runtime/tune)
set(NKI_LAYER_DIR_kernels kernels)
set(NKI_LAYER_DIR_cli runtime/cli)
set(NKI_LAYER_DIR_python runtime/python)
set(NKI_LAYER_USES_dsl "")
set(NKI_LAYER_USES_simulator dsl)
set(NKI_LAYER_USES_core dsl simulator)
set(NKI_LAYER_USES_compile dsl simulator core)
set(NKI_LAYER_USES_dist dsl simulator core)  # beside compile: collectives never compile
set(NKI_LAYER_USES_launch dsl simulator core compile dist)
set(NKI_LAYER_USES_tune dsl simulator core compile dist launch)
set(NKI_LAYER_USES_kernels dsl simulator core compile dist launch tune)
set(NKI_LAYER_USES_cli dsl simulator core compile dist launch tune kernels)
set(NKI_LAYER_USES_python dsl simulator core compile dist launch tune kernels cli)  # built when Python is found
